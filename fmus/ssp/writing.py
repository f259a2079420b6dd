"""Writing an ``.ssp``: :func:`export_ssp` and :func:`export_master_ssp`."""

from __future__ import annotations

import datetime
import io
import math
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any

from cosim.block import did_you_mean
from cosim.errors import UnitError
from cosim.master import MasterScheduler
from cosim.units import conversion

from ..errors import FMUError
from ..importer import FMU, as_fmu
from ..instance import check_value
from .checking import settable
from .model import (
    ANNOTATION_TYPE,
    BASE,
    COSIM_NS,
    FMU_TYPE,
    INT_RANGE,
    NS,
    SSD_NAME,
    TYPE_OF_KIND,
    SSPError,
    SSPSolver,
    SSPSystem,
    q,
)


def _fmt(value: Any) -> str:
    """A value as SSP writes it (``xs:double``, ``xs:boolean``...)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "INF" if value > 0 else "-INF"
        return repr(value)
    return str(value)


def _value_type(var: Any, value: Any) -> str:
    """The ``ssv:`` element for ``value``: SSP 1.0's where it can hold the value, else the
    SSP 2.0 integer type of the FMI 3 variable (``Integer`` is a 32-bit ``xs:int``)."""
    typ = TYPE_OF_KIND[var.kind]
    if var.kind == "int":
        lo, hi = INT_RANGE["Integer"]
        if not lo <= int(value) <= hi:
            return var.type if var.type in INT_RANGE else "Int64"
    return typ


def _parameter_set_el(etree: Any, name: str, entries: list, units: dict | None,
                      value_units: dict | None = None) -> Any:
    """An ``ssv:ParameterSet`` of ``[(name, Variable, value)]`` (values in the FMU's units,
    or in ``value_units[name]``).

    The set says ``version="2.0"`` when it holds an SSP 2.0 type (an integer beyond
    ``Integer``'s 32 bits).
    """
    pset = etree.Element(q("ssv", "ParameterSet"), nsmap={"ssv": NS["ssv"], "ssc": NS["ssc"]},
                         version="1.0", name=name)
    params = etree.SubElement(pset, q("ssv", "Parameters"))
    for pname, var, value in entries:
        if var.kind not in TYPE_OF_KIND or var.shape:
            raise SSPError(f"FMU variable '{var.name}' ({var.type}{list(var.shape) or ''}) "
                           "cannot be written as an SSP parameter value")
        typ = _value_type(var, value)
        if typ != TYPE_OF_KIND[var.kind]:
            pset.set("version", "2.0")
        el = etree.SubElement(etree.SubElement(params, q("ssv", "Parameter"), name=pname),
                              q("ssv", typ), value=_fmt(value))
        unit = (value_units or {}).get(pname, var.fmi_unit)
        if var.kind == "real" and unit:
            el.set("unit", unit)
    if units:
        _units_el(etree, pset, "ssv", units)
    return pset


def _units_el(etree: Any, parent: Any, prefix: str, units: dict) -> None:
    u_el = etree.SubElement(parent, q(prefix, "Units"))
    for name, bu in sorted(units.items()):
        u = etree.SubElement(u_el, q("ssc", "Unit"), name=name)
        attrs = {k: str(int(getattr(bu, k))) for k in BASE if int(getattr(bu, k))}
        if float(bu.factor) != 1.0:
            attrs["factor"] = _fmt(float(bu.factor))
        if float(bu.offset) != 0.0:
            attrs["offset"] = _fmt(float(bu.offset))
        etree.SubElement(u, q("ssc", "BaseUnit"), **attrs)


def _connector_el(etree: Any, parent: Any, name: str, kind: str, var: Any,
                  unit: str | None = None) -> None:
    c = etree.SubElement(parent, q("ssd", "Connector"), name=name, kind=kind)
    t = etree.SubElement(c, q("ssc", TYPE_OF_KIND[var.kind]))
    unit = unit or var.fmi_unit
    if var.kind == "real" and unit:
        t.set("unit", unit)


def _ports(fmu: FMU) -> list:
    """The variables an exported component has connectors for (as FMUSubsystem's ports)."""
    return [v for v in fmu.info.variables if v.causality in ("input", "output")
            and v.kind in ("real", "int", "bool") and not v.shape]


def _export_components(label: str, components: dict, parameters: dict | None,
                       model_exchange: dict) -> tuple:
    """``({name: FMU}, {name: {Variable: value}})``, checked."""
    from ..subsystem import FMUSubsystem
    if not isinstance(components, dict) or not components:
        raise SSPError(f"{label}: components must be a non-empty dict {{name: FMU path}}")
    fmus: dict[str, FMU] = {}
    values: dict[str, dict] = {}
    for cname, c in components.items():
        if not isinstance(cname, str) or not cname or "." in cname:
            raise SSPError(f"{label}: component name {cname!r} must be a non-empty string "
                           "without '.' ('/' may separate the levels of a flattened system)")
        sub = c if isinstance(c, FMUSubsystem) else None
        fmus[cname] = sub.fmu if sub is not None else as_fmu(c)
        values[cname] = dict(sub.params) if sub is not None else {}
        need = "ModelExchange" if cname in model_exchange else "CoSimulation"
        if need not in fmus[cname].info.interfaces:
            raise SSPError(f"{label}: component '{cname}': FMU '{fmus[cname].path.name}' has "
                           f"no {need} interface"
                           + ("; name it in model_exchange= to run it through Model Exchange"
                              if need == "CoSimulation" else ""))
    for cname, vals in (parameters or {}).items():
        if cname not in fmus:
            raise SSPError(f"{label}: parameters for unknown component {cname!r}; "
                           + did_you_mean(cname, fmus))
        if not isinstance(vals, dict):
            raise SSPError(f"{label}: parameters['{cname}'] must be a dict {{variable: value}}")
        for vname, value in vals.items():
            try:
                var = fmus[cname].info.variable(vname)
            except FMUError as exc:
                raise SSPError(f"{label}: parameters of component '{cname}': {exc}") from None
            if not settable(var):
                raise SSPError(f"{label}: component '{cname}': {var.name!r} is a "
                               f"{var.variability} {var.causality} with initial={var.initial!r}; "
                               "it cannot be set before initialization")
            values[cname][var] = check_value(var, value, f"{label}: component '{cname}'")
    return fmus, values


def _export_connections(label: str, fmus: dict, connections: list, cunits: dict) -> tuple:
    """``([((comp | None, name), (comp | None, name), transform)], {system connector:
    (kind, Variable)})`` from master-style connection tuples, checked."""
    sys_conns: dict[str, tuple[str, Any]] = {}
    conns = []
    for item in connections:
        if len(item) not in (2, 3):
            raise SSPError(f"{label}: connection {item!r} must be (src, dst) or "
                           "(src, dst, (factor, offset))")
        where = f"{label}: connection {item[0]} -> {item[1]}"
        ends = []
        for ref, want in ((item[0], "output"), (item[1], "input")):
            if not isinstance(ref, str) or not ref:
                raise SSPError(f"{label}: connection end {ref!r} must be 'component.port' or a "
                               "system connector name")
            if "." not in ref:
                ends.append((None, ref))
                continue
            cname, port = ref.split(".", 1)
            if cname not in fmus:
                raise SSPError(f"{where}: unknown component {cname!r}; "
                               + did_you_mean(cname, fmus))
            cands = [v for v in _ports(fmus[cname]) if v.causality == want]
            var = next((v for v in cands if port in (v.name, v.port)), None)
            if var is None:
                raise SSPError(f"{where}: component '{cname}' has no {want} {port!r}; "
                               + did_you_mean(port, [v.name for v in cands]))
            ends.append((cname, var))
        (sc, sv), (dc, dv) = ends
        if sc is None and dc is None:
            raise SSPError(f"{where} joins two system connectors")
        if sc is None or dc is None:  # a system input or output
            sname, kind, var = (sv, "input", dv) if sc is None else (dv, "output", sv)
            prev = sys_conns.get(sname)
            if prev is not None and (kind == "output" or prev[0] != kind
                                     or prev[1].kind != var.kind or prev[1].unit != var.unit):
                raise SSPError(f"{where}: system connector {sname!r} is already used as "
                               f"{prev[0]} {prev[1].type} [{prev[1].unit}]; a system output "
                               "has one source, a system input one type and unit")
            sys_conns[sname] = (kind, var)
        tr = None
        if len(item) == 3 and item[2] is not None:
            tr = tuple(float(x) for x in item[2])
            if len(tr) != 2:
                raise SSPError(f"{where}: the transformation must be (factor, offset)")
            if any(not isinstance(v, str) and v.kind != "real" for v in (sv, dv)):
                raise SSPError(f"{where}: a linear transformation needs Real connectors")
        if sc is not None and dc is not None:
            if sv.kind != dv.kind:
                raise SSPError(f"{where}: {sv.type} to {dv.type}; the types must match")
            try:
                conversion(sv.unit, dv.unit)
            except UnitError as exc:
                raise SSPError(f"{where}: {exc}") from None
        if tr is not None:  # the master's (factor, offset) -> SSP's (conversion first)
            s0, b0 = conversion(sv.unit if sc is not None else cunits.get(sv, (0, dv.unit))[1],
                                dv.unit if dc is not None else cunits.get(dv, (0, sv.unit))[1])
            tr = (tr[0], s0 * tr[1] + (b0 - tr[0] * b0))
        conns.append(((sc, sv if sc is None else sv.name), (dc, dv if dc is None else dv.name),
                      tr))
    return conns, sys_conns


def _export_units(label: str, fmus: dict, values: dict) -> dict:
    """The FMUs' definitions of the units connectors and values use (one global table)."""
    units: dict[str, Any] = {}
    for cname, fmu in fmus.items():
        defs = {u.name: u.baseUnit for u in fmu.info.md.unitDefinitions
                if u.baseUnit is not None}
        used = {v.fmi_unit for v in list(_ports(fmu)) + list(values[cname])
                if v.kind == "real" and v.fmi_unit}
        for u in sorted(used & set(defs)):
            old = units.get(u)
            if old is not None and any(float(getattr(old, k)) != float(getattr(defs[u], k))
                                       for k in BASE + ("factor", "offset")):
                raise SSPError(f"{label}: unit {u!r} is defined differently by two FMUs (one "
                               f"is component '{cname}'); SSP units are global")
            units[u] = defs[u]
    return units


def _add_unit(label: str, units: dict, name: str, unit: Any) -> None:
    """Add a cosim unit to the ``<Units>`` table (as FMI ``BaseUnit`` attributes)."""
    from types import SimpleNamespace
    bu = SimpleNamespace(**dict(zip(BASE, unit.exponents)), factor=unit.factor,
                         offset=unit.offset)
    old = units.get(name)
    if old is not None and any(float(getattr(old, k)) != float(getattr(bu, k))
                               for k in BASE + ("factor", "offset")):
        raise SSPError(f"{label}: unit {name!r} of a system connector is defined differently "
                       "by an FMU; SSP units are global")
    units[name] = bu


def _resource_names(fmus: dict) -> dict:
    """``{real path of the FMU: name under resources/}``, one per distinct FMU."""
    names: dict[Path, str] = {}
    for fmu in fmus.values():
        key = Path(os.path.realpath(fmu.path))
        if key in names:
            continue
        stem = fmu.path.stem if fmu.path.suffix == ".fmu" else fmu.path.name
        rname, k = f"{stem}.fmu", 1
        while rname in names.values():
            k += 1
            rname = f"{stem}_{k}.fmu"
        names[key] = rname
    return names


def export_ssp(dest: str | os.PathLike, components: dict, connections: list = (), *,
               parameters: dict | None = None, name: str = "System", start: float = 0.0,
               stop: float | None = None, step_s: float | None = None,
               inputs: dict | None = None, ssv_files: bool = False,
               description: str = "", model_exchange: dict | None = None,
               solvers: dict | None = None, tolerance: float | None = None,
               connector_units: dict | None = None) -> Path:
    """Write an SSP 1.0 archive (``SystemStructure.ssd`` + ``resources/*.fmu``).

    Parameters
    ----------
    dest : path-like
        The ``.ssp`` file to write (replaced if it exists).
    components : dict
        ``{name: FMU path | FMU | FMUSubsystem}``; a subsystem's parameter values are
        exported too.  Every component gets connectors for its Real/Integer/Boolean
        inputs and outputs, typed (with units) from its model description.
    connections : list
        As for :class:`~cosim.master.MasterScheduler`: ``("A.out", "B.in")`` or
        ``("A.out", "B.in", (factor, offset))`` (the input gets ``factor * out + offset``
        in the output's unit, then converted; written as SSP's ``LinearTransformation``,
        which converts first).  Ports may be given by FMU variable name or cosim port
        name.  An end without a dot is a system connector: ``("u", "A.in")`` a system
        input, ``("A.out", "y")`` a system output.
    parameters : dict, optional
        ``{component: {variable: value}}``: parameters and other start values
        (``initial="exact"/"approx"``), in the FMU's units.
    name, description : str
        The system's name and description.
    start, stop : float
        The ``DefaultExperiment``.
    step_s : float, optional
        The macro step, kept in a cosim annotation (:func:`load_ssp` reads it).
    inputs : dict, optional
        ``{system input: value}`` bound at the system level.
    ssv_files : bool
        Write the values of each component to ``resources/<component>.ssv`` (referenced
        by the binding's ``source``) instead of inline.
    model_exchange : dict, optional
        ``{component: unit}``: components run through Model Exchange
        (``implementation="ModelExchange"``), grouped in units integrated together.
    solvers : dict, optional
        ``{unit: SSPSolver or DiagramSubsystem options}`` (default: cosim's ``bdf``); kept
        with the units in the cosim annotation.
    tolerance : float, optional
        The relative tolerance given to the Co-Simulation FMUs (cosim annotation).
    connector_units : dict, optional
        ``{system connector: (unit name, cosim Unit)}``: a system connector's own unit
        (default: its FMU variable's); input values are given in it.

    Returns
    -------
    Path
        ``dest``.
    """
    from lxml import etree
    dest = Path(dest)
    label = f"export_ssp('{dest.name}')"
    model_exchange = dict(model_exchange or {})
    fmus, values = _export_components(label, components, parameters, model_exchange)
    units_me = _me_units(label, fmus, model_exchange, solvers)
    cunits = dict(connector_units or {})
    conns, sys_conns = _export_connections(label, fmus, connections, cunits)
    for k in (inputs or {}):
        if sys_conns.get(k, ("",))[0] != "input":
            raise SSPError(f"{label}: inputs names {k!r}, which no connection uses as a system "
                           "input; " + did_you_mean(k, [n for n, (kd, _) in sys_conns.items()
                                                         if kd == "input"]))
    units = _export_units(label, fmus, values)
    for cname, (uname, unit) in cunits.items():
        if cname not in sys_conns:
            raise SSPError(f"{label}: connector_units names {cname!r}, which no connection uses "
                           "as a system connector; " + did_you_mean(cname, sys_conns))
        _add_unit(label, units, uname, unit)
    res_names = _resource_names(fmus)

    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc = etree.Element(q("ssd", "SystemStructureDescription"),
                        nsmap={"ssd": NS["ssd"], "ssc": NS["ssc"], "ssv": NS["ssv"]},
                        version="1.0", name=name, generationTool="cosim (fmus.ssp)",
                        generationDateAndTime=now)
    sys_el = etree.SubElement(doc, q("ssd", "System"), name=name)
    if description:
        sys_el.set("description", description)
    if sys_conns:  # element order as the schema wants it
        cs = etree.SubElement(sys_el, q("ssd", "Connectors"))
        for cname, (kind, var) in sys_conns.items():
            _connector_el(etree, cs, cname, kind, var, cunits.get(cname, (None,))[0])
    if inputs:
        entries = [(k, sys_conns[k][1], check_value(sys_conns[k][1], v,
                                                    f"{label}: system input '{k}'"))
                   for k, v in inputs.items()]
        b = etree.SubElement(etree.SubElement(sys_el, q("ssd", "ParameterBindings")),
                             q("ssd", "ParameterBinding"))
        etree.SubElement(b, q("ssd", "ParameterValues")).append(
            _parameter_set_el(etree, f"{name} inputs", entries, None,
                              {k: u for k, (u, _) in cunits.items()}))
    elements = etree.SubElement(sys_el, q("ssd", "Elements"))
    ssv_out: dict[str, bytes] = {}
    for cname, fmu in fmus.items():
        comp = etree.SubElement(elements, q("ssd", "Component"), name=cname, type=FMU_TYPE,
                                source="resources/" + res_names[Path(os.path.realpath(
                                    fmu.path))],
                                implementation="ModelExchange" if cname in model_exchange
                                else "CoSimulation")
        ports = _ports(fmu)
        if ports:
            cs = etree.SubElement(comp, q("ssd", "Connectors"))
            for v in ports:
                _connector_el(etree, cs, v.name, v.causality, v)
        if not values[cname]:
            continue
        entries = [(v.name, v, value) for v, value in values[cname].items()]
        b = etree.SubElement(etree.SubElement(comp, q("ssd", "ParameterBindings")),
                             q("ssd", "ParameterBinding"))
        if ssv_files:  # a stand-alone .ssv defines its own units
            used = {v.fmi_unit for v in values[cname] if v.kind == "real" and v.fmi_unit}
            pset = _parameter_set_el(etree, cname, entries,
                                     {u: units[u] for u in used if u in units})
            b.set("source", f"resources/{cname}.ssv")
            ssv_out[f"resources/{cname}.ssv"] = etree.tostring(
                pset, xml_declaration=True, encoding="UTF-8", pretty_print=True)
        else:
            etree.SubElement(b, q("ssd", "ParameterValues")).append(
                _parameter_set_el(etree, cname, entries, None))
    if conns:
        ce = etree.SubElement(sys_el, q("ssd", "Connections"))
        for (sc, sv), (dc, dv), tr in conns:
            c_el = etree.SubElement(ce, q("ssd", "Connection"), startConnector=sv,
                                    endConnector=dv)
            if sc is not None:
                c_el.set("startElement", sc)
            if dc is not None:
                c_el.set("endElement", dc)
            if tr is not None:
                etree.SubElement(c_el, q("ssc", "LinearTransformation"), factor=_fmt(tr[0]),
                                 offset=_fmt(tr[1]))
    if units:
        _units_el(etree, doc, "ssd", units)
    exp = etree.SubElement(doc, q("ssd", "DefaultExperiment"), startTime=_fmt(float(start)))
    if stop is not None:
        exp.set("stopTime", _fmt(float(stop)))
    if step_s is not None or units_me or tolerance is not None:
        ann = etree.SubElement(etree.SubElement(doc, q("ssd", "Annotations")),
                               q("ssc", "Annotation"), type=ANNOTATION_TYPE)
        m = etree.SubElement(ann, f"{{{COSIM_NS}}}Master", nsmap={"cosim": COSIM_NS})
        if step_s is not None:
            m.set("stepSize", _fmt(float(step_s)))
        if tolerance is not None:
            m.set("tolerance", _fmt(float(tolerance)))
        for unit, (solver, comps) in units_me.items():
            u = etree.SubElement(m, f"{{{COSIM_NS}}}ModelExchange", name=unit,
                                 solver=solver.method)
            for k in ("dt", "rtol", "atol", "max_step"):
                if getattr(solver, k) is not None:
                    u.set(k, _fmt(float(getattr(solver, k))))
            for c in comps:
                etree.SubElement(u, f"{{{COSIM_NS}}}Component", name=c)
    ssd = etree.tostring(doc, xml_declaration=True, encoding="UTF-8", pretty_print=True)

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(SSD_NAME, ssd)
            for fname, data in ssv_out.items():
                zf.writestr(fname, data)
            for src, rname in res_names.items():
                _write_fmu(zf, src, "resources/" + rname)
        shutil.move(str(tmp), dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def _me_units(label: str, fmus: dict, model_exchange: dict, solvers: dict | None) -> dict:
    """``{unit: (SSPSolver, [components])}`` of the Model Exchange components."""
    units: dict = {}
    for cname, unit in model_exchange.items():
        if cname not in fmus:
            raise SSPError(f"{label}: model_exchange names unknown component {cname!r}; "
                           + did_you_mean(cname, fmus))
        if not isinstance(unit, str) or not unit or "." in unit or unit in fmus:
            raise SSPError(f"{label}: Model Exchange unit name {unit!r} of component "
                           f"'{cname}' must be a non-empty string without '.' that no "
                           "component has")
        units.setdefault(unit, []).append(cname)
    out = {}
    for unit, comps in units.items():
        given = (solvers or {}).get(unit)
        if isinstance(given, dict):
            given = SSPSolver(given.get("solver", "bdf"),
                              **{k: given[k] for k in ("dt", "rtol", "atol", "max_step")
                                 if k in given})
        out[unit] = (given or SSPSolver(), comps)
    unknown = set(solvers or {}) - set(units)
    if unknown:
        raise SSPError(f"{label}: solvers names unknown unit(s) {', '.join(sorted(unknown))}; "
                       + did_you_mean(sorted(unknown)[0], units))
    return out


def _write_fmu(zf: zipfile.ZipFile, src: Path, arcname: str) -> None:
    if src.is_dir():  # an extracted FMU: zip it
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as inner:
            for p in sorted(src.rglob("*")):
                if p.is_file():
                    inner.write(p, p.relative_to(src).as_posix())
        zf.writestr(arcname, buf.getvalue())
    else:
        zf.write(src, arcname)


def export_system(system: SSPSystem, dest: str | os.PathLike, **kw: Any) -> Path:
    """Write ``system`` (an :class:`~fmus.ssp.model.SSPSystem`, as :func:`~fmus.ssp.read_ssp`
    gives it) as an ``.ssp``, flattened: :func:`export_ssp` with the system's components,
    connections, bound values, inputs, Model Exchange units, solvers and experiment;
    ``**kw`` overrides any of them (``step_s=`` for a system with a variable-step master).
    """
    opts = dict(parameters={n: dict(c.parameters) for n, c in system.components.items()},
                name=system.name, start=system.start if system.start is not None else 0.0,
                stop=system.stop, step_s=system.step_s, inputs=dict(system.inputs),
                model_exchange={n: c.unit for n, c in system.components.items()
                                if c.unit is not None},
                solvers=dict(system.solvers), tolerance=system.tolerance,
                description=system.description, connector_units=system.connector_units())
    opts.update(kw)
    suppressed = [str(c) for c in system.connections if c.suppress_unit_conversion]
    if suppressed:
        raise SSPError(f"SSP system '{system.name}': export_ssp cannot write "
                       f"suppressUnitConversion (connections {', '.join(suppressed)})")
    if system.step_control is not None and kw.get("step_s") is None:
        raise SSPError(f"SSP system '{system.name}': export_ssp cannot write the variable-"
                       "step master of the annotation; give step_s= to export with a "
                       "fixed macro step")
    return export_ssp(dest, {n: c.fmu or c.path for n, c in system.components.items()},
                      system.master_connections(), **opts)


def export_master_ssp(dest: str | os.PathLike, master: MasterScheduler, *,
                      name: str | None = None, stop: float | None = None, **kw: Any) -> Path:
    """Write the FMU subsystems and connections of ``master`` as an SSP.

    The macro step goes into the cosim annotation; each subsystem's parameter values
    are exported; a connection's ``(factor, offset)`` is recovered from the master's
    scale and bias by removing the unit conversion.  Subsystems that are not
    :class:`~fmus.subsystem.FMUSubsystem` (or have ``rate != 1``) are refused, except in a
    master made by :func:`~fmus.ssp.load_ssp`, whose system (Model Exchange units and
    system connectors included) is written flattened, with the master's macro step.
    """
    from ..subsystem import FMUSubsystem
    ssp = getattr(master, "ssp", None)
    if isinstance(ssp, SSPSystem):
        kw.setdefault("step_s", master.H * 1e-9)
        held = {k: v for s in master.subsystems if type(s).__name__ == "_Sources"
                for k, v in s.values.items() if k in ssp.inputs or ssp.connector(k)}
        if held:  # the inputs the master holds (load_ssp(inputs=...) included)
            kw.setdefault("inputs", {**ssp.inputs, **held})
        if stop is not None:
            kw["stop"] = stop
        return export_system(ssp, dest, name=name or ssp.name, **kw)
    name = name or "System"
    comps = {}
    for s in master.subsystems:
        if not isinstance(s, FMUSubsystem):
            raise SSPError(f"export_master_ssp: subsystem '{s.name}' ({type(s).__name__}) is "
                           "not an FMU; an SSP holds FMUs only (export it with export_fmu "
                           "first)")
        if s.rate != 1:
            raise SSPError(f"export_master_ssp: subsystem '{s.name}' has rate {s.rate}; SSP "
                           "1.0 has no multi-rate stepping")
        comps[s.name] = s
    conns = []
    for (dname, dport), ((sname, sport), scale, bias) in master.sources.items():
        ss, ds = master.by_name[sname], master.by_name[dname]
        s0, b0 = conversion(ss.units[sport], ds.units[dport])
        f, o = scale / s0, (bias - b0) / s0
        tr = None if (f, o) == (1.0, 0.0) else (f, o)
        src = ss.info.variable(sport).name
        dst = ds.info.variable(dport).name
        conns.append((f"{sname}.{src}", f"{dname}.{dst}") + ((tr,) if tr else ()))
    kw.setdefault("step_s", master.H * 1e-9)
    return export_ssp(dest, comps, conns, name=name, stop=stop, **kw)
