"""FMI 2.0 model description and wrapper for a generated-C model.

Variables are ``Real`` scalars (vector ports and matrix parameters are split
into ``name[i]`` elements, 1-based, row-major), naming convention ``flat``.
Parameters are ``tunable``; exported inputs start at 0; outputs are
``calculated`` (``discrete`` when a sampled block holds them); continuous
states are ``local`` with ``initial="exact"``; in Model Exchange each state
has a ``der(...)`` variable.  ``ModelStructure/Outputs`` lists the inputs each
output reads directly (and, for Model Exchange, the states it reads), so a
master sees the feedthrough exactly.

Co-Simulation declares ``canInterpolateInputs`` (``export_fmu(interpolate_inputs=...)``:
by default except with the exact zero-order-hold integrator): the derivatives of orders 1
to 3 set with ``fmi2SetRealInputDerivatives`` before a ``doStep`` make the inputs follow
their Taylor polynomial at every Runge-Kutta stage of that step (FMI 2.0 has no attribute
for the highest order: a higher order is an error that says so).  Both interfaces declare
``providesDirectionalDerivative`` (the tangent program of :mod:`cosim.codegen.tangent`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from cosim.codegen.program import Program

from .xmlutil import default_experiment, num, to_text, unit_definitions, used_units

WRAPPER = "fmi2.c"


def interpolates_inputs(prog: Program) -> bool:
    """Whether the Co-Simulation step follows the inputs' polynomial
    (``export_fmu(interpolate_inputs=...)``)."""
    return prog.interpolate_inputs


def _elem_name(v: Any, i: int, size: int) -> str:
    if size == 1 and not v.shape:
        return v.name
    if v.kind == "der":
        return f"der({v.state}[{i + 1}])"
    return f"{v.name}[{_index(v.shape, i)}]"


def _index(shape: tuple, flat: int) -> str:
    if len(shape) <= 1:
        return str(flat + 1)
    idx = []
    for n in reversed(shape):
        idx.append(flat % n + 1)
        flat //= n
    return ",".join(map(str, reversed(idx)))


def model_description(prog: Program, *, model_name: str, model_identifier: str, guid: str,
                      description: str, kinds: tuple[str, ...], sources: list[str],
                      experiment: dict, generation: dict) -> str:
    """The text of ``modelDescription.xml`` (FMI 2.0)."""
    root = ET.Element("fmiModelDescription", {
        "fmiVersion": "2.0", "modelName": model_name, "guid": guid,
        "description": description, **generation,
        "variableNamingConvention": "flat",
        "numberOfEventIndicators": str(len(prog.zero_crossings))})
    caps = {"modelIdentifier": model_identifier, "canNotUseMemoryManagementFunctions": "true",
            "canGetAndSetFMUstate": "true", "canSerializeFMUstate": "true",
            "providesDirectionalDerivative": "true"}
    for kind in ("me", "cs"):
        if kind not in kinds:
            continue
        if kind == "me":
            el = ET.SubElement(root, "ModelExchange",
                               {**caps, "completedIntegratorStepNotNeeded": "true"})
        else:
            cs = {**caps, "canHandleVariableCommunicationStepSize": "true"}
            if interpolates_inputs(prog):
                cs["canInterpolateInputs"] = "true"
            el = ET.SubElement(root, "CoSimulation", cs)
        files = ET.SubElement(el, "SourceFiles")
        for f in sources:
            ET.SubElement(files, "File", name=f)
    unit_definitions(root, used_units(prog.variables))
    default_experiment(root, experiment)

    mv = ET.SubElement(root, "ModelVariables")
    index: dict[str, int] = {}  # element name -> 1-based index
    rows: list[tuple] = []  # (index, var, element)
    vr = 0
    for v in prog.variables:
        n = v.size if v.shape else 1
        for i in range(n):
            name = _elem_name(v, i, n)
            attrs = {"name": name, "valueReference": str(vr)}
            if v.description:
                attrs["description"] = v.description
            real: dict[str, str] = {}
            if v.kind == "time":
                attrs.update(causality="independent", variability="continuous")
            elif v.kind == "param":
                attrs.update(causality="parameter", variability="tunable", initial="exact")
                real["start"] = num(v.start[i])
            elif v.kind == "input":
                attrs.update(causality="input", variability="continuous")
                real["start"] = num(v.start[i])
            elif v.kind == "output":
                attrs.update(causality="output",
                             variability="discrete" if v.discrete else "continuous",
                             initial="calculated")
            elif v.kind == "state":
                attrs.update(causality="local", variability="continuous", initial="exact")
                real["start"] = num(v.start[i])
            elif v.kind == "der":
                attrs.update(causality="local", variability="continuous")
                real["derivative"] = str(index[_state_elem(v, i, n)])
            else:  # local
                attrs.update(causality="local",
                             variability="discrete" if v.discrete else "continuous",
                             initial="calculated")
            if v.unit and v.kind != "der":
                real["unit"] = v.unit
            sv = ET.SubElement(mv, "ScalarVariable", attrs)
            ET.SubElement(sv, "Real", real)
            vr += 1
            index[name] = vr
            rows.append((vr, v, name, i))

    ms = ET.SubElement(root, "ModelStructure")
    outs = [r for r in rows if r[1].kind == "output"]
    if outs:
        el = ET.SubElement(ms, "Outputs")
        input_index = {}
        for idx, v, _name, _i in rows:
            if v.kind == "input":
                input_index.setdefault(v.name, []).append(idx)
        for idx, v, _name, _i in outs:
            deps = [j for nm in v.deps[0] for j in input_index[nm]]
            if "me" in kinds:
                deps += [index[x] for x in v.deps[1]]
            ET.SubElement(el, "Unknown", index=str(idx),
                          dependencies=" ".join(map(str, sorted(deps))))
    ders = [r for r in rows if r[1].kind == "der"]
    if ders:
        el = ET.SubElement(ms, "Derivatives")
        for idx, *_ in ders:
            ET.SubElement(el, "Unknown", index=str(idx))
    initial = sorted(idx for idx, v, *_ in rows if v.kind in ("output", "der"))
    if initial:
        el = ET.SubElement(ms, "InitialUnknowns")
        for idx in initial:
            ET.SubElement(el, "Unknown", index=str(idx))
    return to_text(root)


def _state_elem(v: Any, i: int, n: int) -> str:
    return v.state if n == 1 and not v.shape else f"{v.state}[{i + 1}]"
