"""The FMI rules :mod:`fmus.description` checks, each broken one a :class:`Problem`.

Two passes:

* :func:`reference_problems` reads the raw XML before fmpy does and finds what
  fmpy cannot read past or reads wrongly without a word: a variable without a
  name or ``valueReference`` (or one that is no unsigned integer), FMI 3 value
  references used twice (fmpy keeps the last one and resolves the model
  structure to it), and references that point nowhere (FMI 2 ``index`` and
  ``dependencies``, FMI 3 ``valueReference``/``dependencies`` in
  ``ModelStructure``, ``derivative``, ``clocks``, ``Dimension``).  Each problem
  names the variable or element and its line.
* :func:`check_rules` checks the rules the import relies on against the
  variables read (names, start values, bounds, states, model structure,
  interfaces).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Problem", "check_rules", "reference_problems"]

VR_RULE_2 = "every variable has a valueReference (FMI 2.0 section 2.2.7)"
VR_RULE_3 = "every variable has a valueReference (FMI 3.0 section 2.4.7)"


@dataclass
class Problem:
    """One broken rule of the model description."""

    rule: str
    message: str
    variable: str | None = None
    line: int | None = None
    # "error": import refused; "warning": import goes on with a warning; "info": listed in
    # FMUInfo.problems only (a rule the import does not rely on)
    severity: str = "error"

    def __str__(self) -> str:
        where = f"variable '{self.variable}'" if self.variable else "model description"
        line = f" (line {self.line})" if self.line else ""
        return f"{where}{line}: {self.message} [rule: {self.rule}]"


def fmt(v: Any) -> str:
    """A value for a table or a message (short floats, hex bytes, the head of arrays)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex() if v else "0x (empty)"
    if isinstance(v, np.ndarray):
        return "[" + " ".join(f"{x:.4g}" for x in v.ravel()[:4]) + (" ..]" if v.size > 4
                                                                    else "]")
    return str(v)


# ------------------------------------------------------------ raw references
def _uint(text: str | None) -> int | None:
    if text is None or not re.fullmatch(r"\s*\d+\s*", text):
        return None
    return int(text)


def reference_problems(tree: Any, major: int) -> list[Problem]:
    """Names and value references fmpy needs to read the model description (see the
    module docstring); every problem is an error."""
    root = tree.getroot()
    mv = root.find("ModelVariables")
    if mv is None:
        return []
    rule = VR_RULE_2 if major == 2 else VR_RULE_3
    out: list[Problem] = []
    elements = [el for el in mv if isinstance(el.tag, str)]
    by_vr: dict[int, list] = {}
    for el in elements:
        name, line = el.get("name"), el.sourceline
        if name is None:
            out.append(Problem("every variable has a name", f"<{el.tag}> without a name "
                               "attribute", None, line))
            continue
        raw = el.get("valueReference")
        if raw is None:
            out.append(Problem(rule, "no valueReference attribute", name, line))
            continue
        vr = _uint(raw)
        if vr is None or vr > 0xFFFFFFFF:
            out.append(Problem(rule, f"valueReference={raw!r} is not an unsigned 32-bit "
                               "integer", name, line))
            continue
        by_vr.setdefault(vr, []).append(el)
    if out:  # a variable without a usable value reference: its references dangle too
        return out
    if major >= 3:
        for vr, els in by_vr.items():
            if len(els) > 1:
                who = " and ".join(f"{e.get('name')!r} (line {e.sourceline})" for e in els)
                out.append(Problem("value references must be unique (FMI 3.0 section 2.4.7)",
                                   f"valueReference {vr} is shared by {who}",
                                   els[-1].get("name"), els[-1].sourceline))
        out += _dangling3(root, elements, set(by_vr))
    else:
        out += _dangling2(root, elements)
    return out


def _dangling3(root: Any, elements: list, known: set) -> list[Problem]:
    out = []

    def check(text: str | None, what: str, var: str | None, line: int | None) -> None:
        for tok in (text or "").split():
            vr = _uint(tok)
            if vr is None or vr not in known:
                out.append(Problem("references name an existing valueReference (FMI 3.0 "
                                   "section 2.4.8)", f"{what} refers to valueReference "
                                   f"{tok!r}, which no variable has", var, line))

    for el in elements:
        name = el.get("name")
        check(el.get("derivative"), "derivative", name, el.sourceline)
        check(el.get("clocks"), "clocks", name, el.sourceline)
        for dim in el.iterfind("Dimension"):
            if dim.get("valueReference") is not None:
                check(dim.get("valueReference"), "<Dimension>", name, dim.sourceline)
    ms = root.find("ModelStructure")
    for u in (ms if ms is not None else []):
        if not isinstance(u.tag, str):
            continue
        what = f"ModelStructure <{u.tag}>"
        if u.get("valueReference") is None:
            out.append(Problem(VR_RULE_3, f"{what} has no valueReference", None, u.sourceline))
        check(u.get("valueReference"), what, None, u.sourceline)
        check(u.get("dependencies"), f"{what} dependencies", None, u.sourceline)
    return out


def _dangling2(root: Any, elements: list) -> list[Problem]:
    n = len(elements)
    out = []

    def check(text: str | None, what: str, var: str | None, line: int | None) -> None:
        for tok in (text or "").split():
            i = _uint(tok)
            if i is None or not 1 <= i <= n:
                out.append(Problem("indices name an existing ScalarVariable, 1 to "
                                   f"{n} (FMI 2.0 section 2.2.8)", f"{what} refers to index "
                                   f"{tok!r}, which no variable has", var, line))

    for el in elements:
        for child in el:
            if isinstance(child.tag, str) and child.get("derivative") is not None:
                check(child.get("derivative"), "derivative", el.get("name"), el.sourceline)
    for u in root.iterfind("ModelStructure/*/Unknown"):
        what = f"ModelStructure/{u.getparent().tag} <Unknown>"
        if u.get("index") is None:
            out.append(Problem("ModelStructure unknowns have an index (FMI 2.0 section 2.2.8)",
                               f"{what} has no index", None, u.sourceline))
        check(u.get("index"), what, None, u.sourceline)
        check(u.get("dependencies"), f"{what} dependencies", None, u.sourceline)
    return out


# ----------------------------------------------------------- semantic rules
def check_rules(info: Any, md: Any) -> None:
    """The FMI rules the import relies on (each problem names variable and rule)."""
    P = info.problems.append
    major = info.fmi_major
    seen: dict[str, Any] = {}
    for v in info.variables:
        if v.name in seen:
            P(Problem("variable names must be unique (FMI 2.0 section 2.2.7)",
                      f"name used twice (also on line {seen[v.name].line})", v.name, v.line))
        seen[v.name] = v
        no_start = v.start is None and not v.bad_start
        # clocks have no start value (FMI 3.0 section 2.4.7.5)
        if v.causality == "input" and no_start and v.kind != "clock":
            P(Problem("inputs must have a start value (FMI 2.0 section 2.2.7, 3.0 2.4.7.4)",
                      "input has no start value", v.name, v.line))
        if v.initial in ("exact", "approx") and no_start and v.kind != "clock":
            P(Problem("initial='exact'/'approx' needs a start value",
                      f"initial={v.initial!r} but no start value", v.name, v.line))
        if v.causality == "independent" and v.start is not None:
            P(Problem("the independent variable has no start value", "start given", v.name,
                      v.line))
        if v.min is not None and v.max is not None and v.min > v.max:
            P(Problem("min <= max", f"min = {v.min} > max = {v.max}", v.name, v.line))
        s = v.start
        if s is not None and v.kind in ("real", "int") and np.size(s):
            lo = v.min if v.min is not None else -math.inf
            hi = v.max if v.max is not None else math.inf
            if v.kind == "int":  # exact for Int64/UInt64 beyond 2**53
                vals = np.ravel(np.asarray(s, dtype=object)).tolist()
                outside = any(x < lo or x > hi for x in vals)
            else:
                arr = np.asarray(s, dtype=float)
                outside = bool(np.any(arr < lo) or np.any(arr > hi))
            if outside:
                P(Problem("min <= start <= max (FMI 2.0 section 2.2.7)",
                          f"start = {fmt(s)} outside [{lo}, {hi}]", v.name, v.line))
        if v.kind != "real" and v.variability == "continuous":
            P(Problem("only Real/Float variables can be continuous",
                      f"type {v.type} with variability='continuous'", v.name, v.line))
    if sum(v.causality == "independent" for v in info.variables) > 1:
        P(Problem("at most one independent variable",
                  "more than one variable has causality='independent'"))
    if major == 3 and not any(v.causality == "independent" for v in info.variables):
        P(Problem("FMI 3 needs exactly one independent variable (section 2.4.7)",
                  "no variable has causality='independent'", severity="warning"))
    _check_states(info, P)
    _check_structure(info, md, P)
    _check_interfaces(info, P)


def _check_states(info: Any, P: Any) -> None:
    for dv in info.derivatives:
        st = dv.derivative_of
        if st is None:
            P(Problem("ModelStructure derivatives must have a 'derivative' attribute",
                      "listed as a state derivative but names no state", dv.name, dv.line))
        elif st.kind != "real" or dv.kind != "real":
            P(Problem("states and derivatives are Real/Float variables",
                      f"state {st.name!r} of type {st.type}", dv.name, dv.line))
        elif st.shape != dv.shape:
            P(Problem("a state and its derivative have the same shape",
                      f"state {st.name!r} {st.shape} vs derivative {dv.shape}", dv.name,
                      dv.line))


def _check_structure(info: Any, md: Any, P: Any) -> None:
    listed = set(info.feedthrough)
    for v in info.outputs:
        if v.name not in listed:
            P(Problem("ModelStructure must list every output (FMI 2.0 section 2.2.8)",
                      "output missing from ModelStructure/Outputs", v.name, v.line))
    names = {v.name: v for v in info.variables}
    for out in listed:
        if out in names and names[out].causality != "output":
            P(Problem("ModelStructure/Outputs lists outputs only",
                      f"listed but has causality={names[out].causality!r}", out,
                      names[out].line))
    # InitialUnknowns completeness (info: the import does not rely on it)
    if info.fmi_major == 2 and md.initialUnknowns is not None:
        have = {u.variable.name for u in md.initialUnknowns if u.variable is not None}
        need = {v.name for v in info.outputs if v.initial in ("approx", "calculated")}
        need |= {v.name for v in info.variables if v.causality == "calculatedParameter"}
        for name in sorted(need - have):
            P(Problem("ModelStructure/InitialUnknowns lists every output with initial "
                      "'approx'/'calculated' (FMI 2.0 section 2.2.8)",
                      "missing from ModelStructure/InitialUnknowns", name,
                      names[name].line if name in names else None, "info"))


def _check_interfaces(info: Any, P: Any) -> None:
    itfs = ("ModelExchange", "CoSimulation", "ScheduledExecution")
    if not any(i in info.interfaces for i in itfs):
        P(Problem("an FMU implements ModelExchange, CoSimulation or (FMI 3) "
                  "ScheduledExecution", "no interface is declared"))
    for itf in itfs:
        mid = info.capability(itf, "modelIdentifier", None)
        if itf in info.interfaces and not (mid and re.fullmatch(r"[A-Za-z_]\w*", mid)):
            P(Problem("modelIdentifier is a valid C identifier (FMI 2.0 section 2.2.1)",
                      f"{itf} modelIdentifier {mid!r}"))
