"""FMI 3.0 model description, build description and wrapper for a generated-C model.

Variables are ``Float64``; vector ports, vector states and matrix parameters
are arrays (``<Dimension>``, row-major), naming convention ``flat``.  The
Co-Simulation interface declares ``canHandleVariableCommunicationStepSize``,
``fixedInternalStepSize`` (the Runge-Kutta step), ``canGetAndSetFMUState`` and
``canSerializeFMUState``; it has no event mode and never returns early.  With a
Runge-Kutta integrator it declares ``providesIntermediateUpdate`` and flags its inputs
``intermediateUpdate``: before each stage of its internal steps (and at each internal
step's end) it calls the importer's intermediate-update callback, which may set the inputs
to their values at that time (the FMI 3 replacement of FMI 2's input derivatives).  Both
interfaces declare ``providesDirectionalDerivatives`` (:mod:`cosim.codegen.tangent`).
``sources/buildDescription.xml`` lists the single translation unit and ``libm``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from cosim.codegen.program import Program

from .fmi2 import interpolates_inputs
from .xmlutil import default_experiment, num, to_text, unit_definitions, used_units

WRAPPER = "fmi3.c"


def model_description(prog: Program, *, model_name: str, model_identifier: str, token: str,
                      description: str, kinds: tuple[str, ...], experiment: dict,
                      generation: dict) -> str:
    """The text of ``modelDescription.xml`` (FMI 3.0)."""
    root = ET.Element("fmiModelDescription", {
        "fmiVersion": "3.0", "modelName": model_name, "instantiationToken": token,
        "description": description, **generation, "variableNamingConvention": "flat"})
    caps = {"modelIdentifier": model_identifier, "canGetAndSetFMUState": "true",
            "canSerializeFMUState": "true", "providesDirectionalDerivatives": "true"}
    interpolate = "cs" in kinds and interpolates_inputs(prog) and any(
        v.kind == "input" for v in prog.variables)
    if "me" in kinds:
        ET.SubElement(root, "ModelExchange", {**caps, "needsCompletedIntegratorStep": "false"})
    if "cs" in kinds:
        cs = {**caps, "canHandleVariableCommunicationStepSize": "true", "hasEventMode": "false"}
        if interpolate:
            cs["providesIntermediateUpdate"] = "true"
        if prog.step_ticks and prog.integrator != "zoh" and prog.plan.n_continuous:
            cs["fixedInternalStepSize"] = num(prog.step_ticks * 1e-9)
        ET.SubElement(root, "CoSimulation", cs)
    unit_definitions(root, used_units(prog.variables))
    default_experiment(root, experiment)

    mv = ET.SubElement(root, "ModelVariables")
    vr_of: dict[str, int] = {}
    state_var: dict[str, int] = {}  # element name of a state (x_names) -> vr of its variable
    for vr, v in enumerate(prog.variables):
        attrs = {"name": v.name, "valueReference": str(vr)}
        if v.description:
            attrs["description"] = v.description
        if v.kind == "time":
            attrs.update(causality="independent", variability="continuous")
        elif v.kind == "param":
            attrs.update(causality="parameter", variability="tunable", initial="exact")
        elif v.kind == "input":
            attrs.update(causality="input", variability="continuous")
            if interpolate:
                attrs["intermediateUpdate"] = "true"
        elif v.kind == "output":
            attrs.update(causality="output",
                         variability="discrete" if v.discrete else "continuous",
                         initial="calculated")
        elif v.kind == "state":
            attrs.update(causality="local", variability="continuous", initial="exact")
        elif v.kind == "der":
            attrs.update(causality="local", variability="continuous",
                         derivative=str(vr_of[v.state]))
        else:
            attrs.update(causality="local",
                         variability="discrete" if v.discrete else "continuous",
                         initial="calculated")
        if v.unit and v.kind != "der":
            attrs["unit"] = v.unit
        if v.start is not None and v.kind in ("param", "input", "state"):
            attrs["start"] = " ".join(num(x) for x in v.start.reshape(-1))
        el = ET.SubElement(mv, "Float64", attrs)
        for n in v.shape:
            ET.SubElement(el, "Dimension", start=str(n))
        vr_of[v.name] = vr
        if v.kind == "state":
            if v.shape:
                for i in range(v.size):
                    state_var[f"{v.name}[{i + 1}]"] = vr
            else:
                state_var[v.name] = vr

    ms = ET.SubElement(root, "ModelStructure")
    for vr, v in enumerate(prog.variables):
        if v.kind == "output":
            deps = {vr_of[nm] for nm in v.deps[0]}
            if "me" in kinds:
                deps |= {state_var[x] for x in v.deps[1]}
            ET.SubElement(ms, "Output", valueReference=str(vr),
                          dependencies=" ".join(map(str, sorted(deps))))
    for vr, v in enumerate(prog.variables):
        if v.kind == "der":
            ET.SubElement(ms, "ContinuousStateDerivative", valueReference=str(vr))
    for vr, v in enumerate(prog.variables):
        if v.kind in ("output", "der"):
            ET.SubElement(ms, "InitialUnknown", valueReference=str(vr))
    for vr, v in enumerate(prog.variables):
        if v.kind == "indicator":
            ET.SubElement(ms, "EventIndicator", valueReference=str(vr))
    return to_text(root)


def build_description(model_identifier: str, sources: list[str]) -> str:
    """The text of ``sources/buildDescription.xml``."""
    root = ET.Element("fmiBuildDescription", fmiVersion="3.0")
    bc = ET.SubElement(root, "BuildConfiguration", modelIdentifier=model_identifier)
    fs = ET.SubElement(bc, "SourceFileSet", language="C99")
    for f in sources:
        ET.SubElement(fs, "SourceFile", name=f)
    ET.SubElement(bc, "Library", name="m", external="true",
                  description="the C math library (link with -lm)")
    return to_text(root)
