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

__all__ = ["Problem", "check_rules", "grouped", "reference_problems", "section"]

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
    # what the import takes in place of what the model description leaves out or breaks
    derived: str = ""
    # False: no ``validate`` setting loads it (fmpy cannot read it, or the import cannot
    # run it right); True: ``validate="none"`` goes on (with ``derived`` if given)
    skippable: bool = True

    def __str__(self) -> str:
        where = f"variable '{self.variable}'" if self.variable else "model description"
        line = f" (line {self.line})" if self.line else ""
        then = f"; the import {self.derived}" if self.derived else ""
        return f"{where}{line}: {self.message} [rule: {self.rule}]{then}"


def grouped(problems: list, limit: int = 5) -> list[str]:
    """One line per rule (the variables that break it, what the import takes): a warning
    names each rule once, however many variables break it."""
    by_rule: dict[str, list] = {}
    for p in problems:
        by_rule.setdefault(p.rule, []).append(p)
    lines = []
    for rule, ps in by_rule.items():
        items = []
        for p in ps[:limit]:
            where = f"'{p.variable}'" if p.variable else "model description"
            items.append(f"{where}{f' (line {p.line})' if p.line else ''}: {p.message}")
        more = f"; and {len(ps) - limit} more" if len(ps) > limit else ""
        derived = {p.derived for p in ps}
        then = f"; the import {derived.pop()}" if len(derived) == 1 and "" not in derived \
            else "".join(f"; the import {d} ('{p.variable}')" for p in ps[:limit]
                         if (d := p.derived))
        lines.append(f"[rule: {rule}] " + "; ".join(items) + more + then)
    return lines


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
        for p in out:
            p.skippable = False
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
    for p in out:  # fmpy cannot read past them, or reads them wrongly
        p.skippable = False
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
def section(major: int, fmi2: str, fmi3: str) -> str:
    """The section of the standard the FMU follows (``FMI 2.0 section 2.2.7`` or
    ``FMI 3.0 section 2.4.7``)."""
    return f"FMI 2.0 section {fmi2}" if major == 2 else f"FMI 3.0 section {fmi3}"


def check_rules(info: Any, md: Any, omitted_variability: frozenset = frozenset()) -> None:
    """The FMI rules the import relies on (each problem names variable, rule and the
    section of the FMU's standard).

    What FMPy's ``read_model_description(validate=True)`` reads is a warning, with the
    structure the import derives where the model description leaves it out (the
    problem's ``derived``); what it refuses is an error.  ``omitted_variability``: the
    variables whose XML element has no ``variability`` attribute.
    """
    P = info.problems.append
    major = info.fmi_major
    var_sec = section(major, "2.2.7", "2.4.7")
    seen: dict[str, Any] = {}
    for v in info.variables:
        if v.name in seen:
            P(Problem(f"variable names must be unique ({var_sec})",
                      f"name used twice (also on line {seen[v.name].line})", v.name, v.line))
        seen[v.name] = v
        no_start = v.start is None and not v.bad_start
        # clocks have no start value (FMI 3.0 section 2.4.7.5)
        if v.causality == "input" and no_start and v.kind != "clock":
            P(Problem(f"inputs must have a start value ({var_sec})",
                      "input has no start value", v.name, v.line))
        if v.initial in ("exact", "approx") and no_start and v.kind != "clock":
            P(Problem(f"initial='exact'/'approx' needs a start value ({var_sec})",
                      f"initial={v.initial!r} but no start value", v.name, v.line))
        if v.causality == "independent" and v.start is not None:
            P(Problem(f"the independent variable has no start value ({var_sec})",
                      "start given", v.name, v.line))
        _check_bounds(v, var_sec, P)
        if v.kind != "real" and v.variability == "continuous":
            _check_variability(v, v.name in omitted_variability, var_sec, P)
    n_indep = sum(v.causality == "independent" for v in info.variables)
    if n_indep > 1:  # FMPy refuses it in FMI 3 only
        P(Problem(f"at most one independent variable ({var_sec})",
                  "more than one variable has causality='independent'",
                  severity="error" if major == 3 else "warning"))
    if major == 3 and not n_indep:
        P(Problem("FMI 3 needs exactly one independent variable (FMI 3.0 section 2.4.7)",
                  "no variable has causality='independent'", severity="warning"))
    _check_states(info, P)
    _check_structure(info, md, P)
    _check_interfaces(info, P)


def _check_bounds(v: Any, var_sec: str, P: Any) -> None:
    """``min <= max`` and ``min <= start <= max``: FMPy reads past both, so the import
    does too, without the broken bounds (they would refuse every value, or the start)."""
    if v.min is not None and v.max is not None and v.min > v.max:
        P(Problem(f"min <= max ({var_sec})", f"min = {v.min} > max = {v.max}", v.name,
                  v.line, "warning", derived="ignores the bounds of this variable"))
        v.min = v.max = None
        return
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
            P(Problem(f"min <= start <= max ({var_sec})",
                      f"start = {fmt(s)} outside [{lo}, {hi}]", v.name, v.line, "warning",
                      derived="ignores the bounds of this variable"))
            v.min = v.max = None


def _check_variability(v: Any, omitted: bool, var_sec: str, P: Any) -> None:
    """Only Real/Float variables are continuous.  FMI 2 makes an omitted variability
    ``continuous``, which a non-Real variable cannot be (pythonfmu leaves it out for
    Integer, Boolean and String variables): the import takes ``discrete``, FMI 3's
    default for them.  A declared ``continuous`` is an error (FMPy refuses it too); with
    ``validate='none'`` the import takes ``discrete`` as well: such a variable can only be
    set in Event Mode or at communication points."""
    rule = f"only Real/Float variables can be continuous ({var_sec})"
    if omitted:
        P(Problem(rule, f"type {v.type} without a variability attribute (FMI 2 default "
                  "'continuous')", v.name, v.line, "warning",
                  derived="takes variability='discrete' (FMI 3.0's default for it)"))
    else:
        P(Problem(rule, f"type {v.type} with variability='continuous'", v.name, v.line,
                  derived="takes variability='discrete'"))
    v.variability = "discrete"


def _check_states(info: Any, P: Any) -> None:
    """A state derivative the import cannot pair with its state cannot be worked around
    (the state vector would not match the FMU's): refused whatever ``validate`` says."""
    ms = section(info.fmi_major, "2.2.8", "2.4.8")
    for dv in info.derivatives:
        st = dv.derivative_of
        if st is None:
            P(Problem(f"ModelStructure derivatives must have a 'derivative' attribute ({ms})",
                      "listed as a state derivative but names no state", dv.name, dv.line,
                      skippable=False))
        elif st.kind != "real" or dv.kind != "real":
            P(Problem(f"states and derivatives are Real/Float variables ({ms})",
                      f"state {st.name!r} of type {st.type}", dv.name, dv.line,
                      skippable=False))
        elif st.shape != dv.shape:
            P(Problem(f"a state and its derivative have the same shape ({ms})",
                      f"state {st.name!r} {st.shape} vs derivative {dv.shape}", dv.name,
                      dv.line, skippable=False))


def _check_structure(info: Any, md: Any, P: Any) -> None:
    """``ModelStructure`` outputs (FMPy reads a model structure that misses outputs or
    lists other variables: FMPy's own container writer leaves it empty).  A missing output
    depends on every input (the FMI default when dependencies are not given); a listed
    non-output is ignored."""
    major = info.fmi_major
    ms = section(major, "2.2.8", "2.4.8")
    where = "ModelStructure/Outputs" if major == 2 else "ModelStructure <Output>"
    listed = set(info.feedthrough)
    for v in info.outputs:
        if v.name not in listed:
            P(Problem(f"ModelStructure must list every output ({ms})",
                      f"output missing from {where}", v.name, v.line, "warning",
                      derived="takes it to depend on every input (the FMI default)"))
            info.feedthrough[v.name] = None
    names = {v.name: v for v in info.variables}
    for out in sorted(listed):
        if out in names and names[out].causality != "output":
            P(Problem(f"ModelStructure outputs are variables with causality='output' ({ms})",
                      f"listed in {where} but has causality={names[out].causality!r}", out,
                      names[out].line, "warning", derived="ignores the entry"))
            del info.feedthrough[out]
    # InitialUnknowns completeness (info: the import takes a missing output to depend on
    # every input at initialization, description._initial_feedthrough)
    if major == 2 and md.initialUnknowns is not None:
        have = {u.variable.name for u in md.initialUnknowns if u.variable is not None}
        need = {v.name for v in info.outputs if v.initial in ("approx", "calculated")}
        need |= {v.name for v in info.variables if v.causality == "calculatedParameter"}
        for name in sorted(need - have):
            P(Problem("ModelStructure/InitialUnknowns lists every output with initial "
                      "'approx'/'calculated' (FMI 2.0 section 2.2.8)",
                      "missing from ModelStructure/InitialUnknowns", name,
                      names[name].line if name in names else None, "info"))


def _check_interfaces(info: Any, P: Any) -> None:
    major = info.fmi_major
    itfs = ("ModelExchange", "CoSimulation", "ScheduledExecution")
    if not any(i in info.interfaces for i in itfs):
        P(Problem("an FMU implements ModelExchange, CoSimulation or (FMI 3) "
                  f"ScheduledExecution ({section(major, '2.2.1', '2.4.1')})",
                  "no interface is declared", severity="warning",
                  derived="can describe it only (choosing an interface to run fails)"))
    for itf in itfs:
        mid = info.capability(itf, "modelIdentifier", None)
        if itf in info.interfaces and not (mid and re.fullmatch(r"[A-Za-z_]\w*", mid)):
            # FMPy reads it; the binary's file name is what counts (checked at load)
            P(Problem("modelIdentifier is a valid C identifier "
                      f"({section(major, '3.3 and 4.3', '2.4.1')})",
                      f"{itf} modelIdentifier {mid!r}", severity="warning"))
