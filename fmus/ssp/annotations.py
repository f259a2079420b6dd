"""Vendor annotations: cosim's own and OMSimulator's step size and solver settings.

``ssc:Annotation`` elements of other types, and settings of these two that have no
meaning here, are read past with a note (:attr:`SSPSystem.notes <fmus.ssp.SSPSystem>`),
never an error.

OMSimulator (``type="org.openmodelica"``, ``oms:Annotations/oms:SimulationInformation``)
writes two dialects, both read:

* OMSimulator 2 puts one solver element inside ``SimulationInformation`` on a system:
  ``oms:FixedStepMaster stepSize relativeTolerance`` (a co-simulation system:
  the macro step, and the tolerance passed to the FMUs), ``oms:VariableStepMaster
  initialStepSize minimumStepSize maximumStepSize relativeTolerance`` (a step-controlled
  master), ``oms:VariableStepSolver description="cvode"|"euler" relativeTolerance
  minimumStepSize maximumStepSize initialStepSize`` or ``oms:FixedStepSolver`` (a
  strongly coupled system: its Model Exchange FMUs integrated together).
* OMSimulator 3 defines named solvers on a system (``SimulationInformation name=
  method= tolerance|relativeTolerance= fixedStepSize= initialStepSize= ...``, methods
  ``euler``, ``cvode``, ``oms_ma``, ``oms_mav``, ``oms_mav2``) and components refer to one
  by ``SimulationInformation name=``.

Mapping to cosim: a co-simulation master's fixed step is the macro step; a variable-step
master becomes a :class:`~cosim.step_control.StepController` (``"extrapolation"`` error
estimate, OMSimulator's own estimate differs); ``cvode`` becomes cosim's ``bdf`` (scipy's
variable-order BDF, the nearest method cosim has; ``atol = rtol`` as OMSimulator sets
it, ``max_step`` = ``maximumStepSize``; the minimum and initial step are not used) and
``euler`` cosim's ``euler`` with ``dt`` = the solver's step (OMSimulator 2 steps by
``maximumStepSize``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import ANNOTATION_TYPE, COSIM_NS, NS, OMS_TYPE, SSPSolver
from .values import double

if TYPE_CHECKING:
    from .reading import _Reader

#: OMSimulator's solver methods: co-simulation masters and Model Exchange solvers
OMS_MASTERS = {"oms-ma": "fixed", "oms_ma": "fixed", "oms-mav": "variable",
               "oms_mav": "variable", "oms-mav2": "variable", "oms_mav2": "variable"}
OMS_SOLVERS = ("cvode", "euler")
_EXPERIMENT_KEYS = ("resultFile", "loggingInterval", "bufferSize", "signalFilter")


def _local(el: Any) -> str:
    return el.tag.rpartition("}")[2] if isinstance(el.tag, str) else ""


def annotations(parent: Any) -> list:
    """The ``ssc:Annotation`` elements in ``parent``'s ``ssd:Annotations``."""
    return list(parent.iterfind("ssd:Annotations/ssc:Annotation", NS))


def _num(reader: _Reader, el: Any, attrs: tuple, what: str) -> float | None:
    for a in attrs:
        if el.get(a) is not None:
            try:
                return double(el.get(a))
            except ValueError:
                raise reader.fail(el, f"{what}: {a}={el.get(a)!r} is not a number") from None
    return None


def _oms_solver(reader: _Reader, el: Any, method: str, where: str) -> SSPSolver:
    """An OMSimulator Model Exchange solver setting as an :class:`SSPSolver`."""
    what = f"{where}: OMSimulator solver {method!r}"
    rtol = _num(reader, el, ("relativeTolerance", "tolerance"), what)
    if method == "cvode":
        unused = [a for a in ("minimumStepSize", "initialStepSize") if el.get(a) is not None]
        if unused:
            reader.note(f"{reader.file} line {el.sourceline}: {where}: cvode's "
                        f"{' and '.join(unused)} are not used (cosim's bdf chooses its steps)")
        reader.note(f"{reader.file} line {el.sourceline}: {where}: OMSimulator's cvode runs as "
                    "cosim's 'bdf' (scipy BDF)")
        return SSPSolver("bdf", None, rtol, rtol,
                         _num(reader, el, ("maximumStepSize",), what),
                         origin=f"{reader.file} line {el.sourceline}")
    dt = _num(reader, el, ("fixedStepSize", "stepSize", "maximumStepSize", "initialStepSize"),
              what)
    if dt is None or dt <= 0:
        raise reader.fail(el, f"{what} needs a positive step (fixedStepSize, stepSize or "
                              "maximumStepSize)")
    return SSPSolver("euler", dt, origin=f"{reader.file} line {el.sourceline}")


def _master(reader: _Reader, el: Any, kind: str, where: str) -> dict:
    what = f"{where}: OMSimulator master"
    out: dict = {"tolerance": _num(reader, el, ("relativeTolerance", "tolerance"), what),
                 "line": el.sourceline}
    if kind == "fixed":
        out["step_s"] = _num(reader, el, ("stepSize", "fixedStepSize"), what)
        if out["step_s"] is None or out["step_s"] <= 0:
            raise reader.fail(el, f"{what}: a fixed-step master needs a positive stepSize")
    else:
        out["step_control"] = {
            "h0": _num(reader, el, ("initialStepSize",), what),
            "h_min": _num(reader, el, ("minimumStepSize",), what),
            "h_max": _num(reader, el, ("maximumStepSize",), what),
            "rtol": out["tolerance"]}
    return out


def system_settings(reader: _Reader, sys_el: Any, where: str) -> dict:
    """Solver settings of a system's annotations.

    ``{"master": {...} | None, "solver": SSPSolver | None, "named": {name: SSPSolver |
    master dict}}``; everything else becomes a note.
    """
    out: dict = {"master": None, "solver": None, "named": {}}
    for ann in annotations(sys_el):
        typ = ann.get("type")
        if typ == ANNOTATION_TYPE:
            continue  # cosim's own: read by the caller at the top level
        if typ != OMS_TYPE:
            reader.note(f"{reader.file} line {ann.sourceline}: {where}: annotation of type "
                        f"{typ!r} ignored")
            continue
        for info in ann.iter():
            if _local(info) != "SimulationInformation":
                continue
            children = [c for c in info if isinstance(c.tag, str)]
            for c in children:
                tag = _local(c)
                if tag in ("FixedStepMaster", "VariableStepMaster"):
                    out["master"] = _master(reader, c, "fixed" if tag[0] == "F" else "variable",
                                            where)
                elif tag in ("VariableStepSolver", "FixedStepSolver"):
                    method = (c.get("description") or "").strip() or (
                        "euler" if tag == "FixedStepSolver" else "cvode")
                    if method not in OMS_SOLVERS:
                        raise reader.fail(c, f"{where}: OMSimulator solver {method!r} is not "
                                             f"known; cosim maps {', '.join(OMS_SOLVERS)}")
                    out["solver"] = _oms_solver(reader, c, method, where)
                else:
                    reader.note(f"{reader.file} line {c.sourceline}: {where}: OMSimulator "
                                f"setting {tag!r} ignored")
            name, method = info.get("name"), info.get("method")
            if name and method:
                m = method.strip()
                if m in OMS_MASTERS:
                    out["named"][name] = _master(reader, info, OMS_MASTERS[m], where)
                elif m in OMS_SOLVERS:
                    out["named"][name] = _oms_solver(reader, info, m, where)
                else:
                    raise reader.fail(info, f"{where}: OMSimulator solver {name!r} has method "
                                            f"{m!r}; cosim maps "
                                            f"{', '.join(OMS_SOLVERS + tuple(OMS_MASTERS))}")
            elif not children:
                reader.note(f"{reader.file} line {info.sourceline}: {where}: OMSimulator "
                            f"SimulationInformation {dict(info.attrib)} ignored")
    return out


def component_solver(reader: _Reader, comp_el: Any, where: str) -> str | None:
    """The OMSimulator 3 solver name a component refers to (``SimulationInformation name``)."""
    ref = None
    for ann in annotations(comp_el):
        if ann.get("type") != OMS_TYPE:
            if ann.get("type") != ANNOTATION_TYPE:
                reader.note(f"{reader.file} line {ann.sourceline}: {where}: annotation of "
                            f"type {ann.get('type')!r} ignored")
            continue
        for info in ann.iter():
            if _local(info) == "SimulationInformation" and info.get("name"):
                ref = info.get("name")
    return ref


def experiment_notes(reader: _Reader, exp_el: Any) -> None:
    """Notes for the DefaultExperiment's annotations (result files and the like)."""
    for ann in annotations(exp_el):
        if ann.get("type") != OMS_TYPE:
            reader.note(f"{reader.file} line {ann.sourceline}: DefaultExperiment: annotation "
                        f"of type {ann.get('type')!r} ignored")
            continue
        for info in ann.iter():
            if _local(info) == "SimulationInformation":
                keys = [k for k in info.attrib if k in _EXPERIMENT_KEYS]
                other = [k for k in info.attrib if k not in _EXPERIMENT_KEYS]
                reader.note(f"{reader.file} line {info.sourceline}: DefaultExperiment: "
                            f"OMSimulator's {', '.join(keys + other) or 'settings'} ignored "
                            "(cosim returns results in memory)")


def cosim_settings(reader: _Reader, doc: Any) -> dict:
    """cosim's own annotation at the root: ``{"step_s", "tolerance", "units"}``.

    ``units`` is ``{unit: (SSPSolver, [component names])}`` for the Model Exchange units.
    """
    out: dict = {"step_s": None, "tolerance": None, "units": {}}
    for ann in annotations(doc):
        m = ann.find(f"{{{COSIM_NS}}}Master")
        if ann.get("type") != ANNOTATION_TYPE:
            if ann.get("type") != OMS_TYPE:
                reader.note(f"{reader.file} line {ann.sourceline}: annotation of type "
                            f"{ann.get('type')!r} ignored")
            continue
        if m is None:
            continue
        for key, attr in (("step_s", "stepSize"), ("tolerance", "tolerance")):
            if m.get(attr):
                try:
                    out[key] = double(m.get(attr))
                except ValueError:
                    raise reader.fail(m, f"bad {attr} {m.get(attr)!r}") from None
        for u in m.iterfind(f"{{{COSIM_NS}}}ModelExchange"):
            name = u.get("name")
            if not name:
                raise reader.fail(u, "a cosim ModelExchange unit needs a name")
            opts = {}
            for k in ("dt", "rtol", "atol", "max_step"):
                if u.get(k) is not None:
                    try:
                        opts[k] = double(u.get(k))
                    except ValueError:
                        raise reader.fail(u, f"bad {k} {u.get(k)!r}") from None
            comps = [c.get("name") for c in u.iterfind(f"{{{COSIM_NS}}}Component")]
            out["units"][name] = (SSPSolver(u.get("solver") or "bdf", origin=f"{reader.file} "
                                            f"line {u.sourceline}", **opts), comps)
    return out
