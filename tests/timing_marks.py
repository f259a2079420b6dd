"""Which tests depend on timing, read from the test sources (issue 30): a test that runs on
the wall clock must carry the ``timing`` marker (``pytest --collect-only -m timing -q``
lists them).

A test depends on timing when its body, a module-level function it calls, or a fixture it
uses (its own module's, a ``conftest.py``'s above it, or an autouse one), directly or in
turn, does one of :data:`KINDS`: a real-time run (``RealTimeRunner`` without a virtual
``clock=``, ``MonotonicClock``, ``run_hil``, the flagship's ``main``, ``rt_soak``, a
``cosim hil run`` without ``--no-realtime``, a real-time example in a subprocess),
background load (``busy()``), a sleep or a clock reading (``time.sleep``,
``perf_counter``, ``monotonic``, ``time.time``),
or a timeout a slow machine can exceed (a ``timeout=``-like keyword below a minute (one of a
minute or more is a guard against a hang, one of 0 no wait), ``wait_received``,
``wait_open``, ``wait_idle``, ``wait_ready``, a ``.join(seconds)``), or a helper of
:mod:`tests.timing_plugin`.  A line whose comment says ``# not timing: <why>`` is left out
(a duration that is printed, not asserted; a clock read for a unique name).

Limitations: a static reading: a timeout hidden in a library default, or in a helper
imported from another module (other than those named here), is not seen; those tests are
marked by hand, found by running the suite under load.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

#: module-level names whose call is a real-time run (imported from the examples or bench)
REALTIME_CALLS = {"run_hil": "a real-time ACC HIL run (examples.acc_hil.run_hil)",
                  "rt_soak": "a real-time soak (bench.hil.rt_soak)",
                  "busy": "background load (tests.unit.hil.busy.busy)"}
#: modules whose ``main`` is a real-time run
REALTIME_MAINS = ("examples.flagship", "examples.acc_hil", "examples.acc_ecu")
#: strings that start a real-time program in a subprocess
REALTIME_STRINGS = ("flagship.py", "acc_hil.py", "acc_ecu.py")
TIME_CALLS = {"sleep", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time"}
TIMEOUT_KEYWORDS = {"timeout", "timeout_s", "write_timeout", "reconnect_timeout",
                    "read_timeout"}
WAIT_METHODS = {"wait_received", "wait_open", "wait_idle", "wait_ready", "wait_for",
                "judge_timing", "judge_figure", "assert_honest"}
#: a timeout of a minute or more guards against a hang; no machine under load is that slow
HANG_GUARD_S = 60.0
#: a comment that leaves a line's clock reading out (a duration printed, not asserted)
PRAGMA = "# not timing:"
KINDS = ("a real-time run", "background load", "a sleep or a clock reading", "a timeout")


@dataclass
class Module:
    """One parsed test source: its functions, fixtures and timing marks."""

    path: Path
    tree: ast.Module
    functions: dict = field(default_factory=dict)  # name -> FunctionDef (module level)
    fixtures: dict = field(default_factory=dict)  # name -> FunctionDef
    autouse: list = field(default_factory=list)
    marked: bool = False  # pytestmark has timing
    time_names: set = field(default_factory=set)  # names imported from time
    main_is_realtime: bool = False
    pragma_lines: set = field(default_factory=set)


def _is_timing_mark(node: ast.AST) -> bool:
    """``pytest.mark.timing`` (or ``mark.timing``), bare or called, anywhere in ``node``."""
    return any(isinstance(n, ast.Attribute) and n.attr == "timing"
               and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"
               for n in ast.walk(node))


def _fixture(fn: ast.FunctionDef) -> tuple[bool, bool]:
    """(is a fixture, is autouse)."""
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "fixture":
            auto = isinstance(d, ast.Call) and any(
                k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value
                for k in d.keywords)
            return True, auto
    return False, False


def parse(path: Path) -> Module:
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, str(path))
    m = Module(path, tree, pragma_lines={k for k, line in enumerate(text.splitlines(), 1)
                                         if PRAGMA in line})
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            m.functions[node.name] = node
            fix, auto = _fixture(node)
            if fix:
                m.fixtures[node.name] = node
                if auto:
                    m.autouse.append(node.name)
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            m.marked = _is_timing_mark(node.value)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "time":
            m.time_names |= {a.asname or a.name for a in node.names if a.name in TIME_CALLS}
        if isinstance(node, ast.ImportFrom) and node.module in REALTIME_MAINS:
            m.main_is_realtime |= any(a.name == "main" and a.asname is None
                                      for a in node.names)
    return m


def _hang_guard(value: ast.AST) -> bool:
    """A timeout of :data:`HANG_GUARD_S` or more (a constant): a guard against a hang; or
    of 0: no wait at all."""
    return isinstance(value, ast.Constant) and isinstance(value.value, int | float) and \
        (value.value >= HANG_GUARD_S or value.value == 0)


def _refused_calls(node: ast.AST) -> set[int]:
    """The ids of the calls made directly in a ``with pytest.raises(...)`` or
    ``pytest.warns(...)`` block: a constructor refused or warned about runs nothing."""
    out = set()
    for w in ast.walk(node):
        if isinstance(w, ast.With) and any(
                isinstance(i.context_expr, ast.Call) and isinstance(i.context_expr.func,
                                                                    ast.Attribute)
                and i.context_expr.func.attr in ("raises", "warns") for i in w.items):
            out |= {id(s.value) for s in w.body if isinstance(s, ast.Expr)
                    and isinstance(s.value, ast.Call)}
    return out


def _direct(node: ast.AST, m: Module) -> list[str]:
    """The timing uses in ``node`` itself: ``"line N: what"`` (a line that says
    :data:`PRAGMA` in a comment is left out)."""
    found = []
    refused = _refused_calls(node)
    for n in ast.walk(node):
        line = getattr(n, "lineno", 0)
        if line in m.pragma_lines or id(n) in refused:
            continue
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(
                f.value, ast.Name) else None
            if name == "RealTimeRunner" and not any(k.arg == "clock" for k in n.keywords):
                found.append(f"line {line}: RealTimeRunner on the wall clock (no clock=)")
            elif name in REALTIME_CALLS and isinstance(f, ast.Name):
                found.append(f"line {line}: {REALTIME_CALLS[name]}")
            elif name == "main" and isinstance(f, ast.Name) and m.main_is_realtime:
                found.append(f"line {line}: a real-time example's main()")
            elif (owner == "time" and name in TIME_CALLS) or (
                    isinstance(f, ast.Name) and name in m.time_names):
                found.append(f"line {line}: time.{name}()")
            elif name in WAIT_METHODS:
                found.append(f"line {line}: {name}()")
            elif name == "join" and n.args and not isinstance(f.value, ast.Constant) and \
                    isinstance(n.args[0], ast.Constant) and \
                    isinstance(n.args[0].value, int | float):
                found.append(f"line {line}: join({n.args[0].value}) (a timeout)")
            for k in n.keywords:
                if k.arg in TIMEOUT_KEYWORDS and not _hang_guard(k.value):
                    found.append(f"line {line}: {k.arg}= (a timeout)")
        elif isinstance(n, ast.Attribute) and n.attr == "MonotonicClock" or \
                isinstance(n, ast.Name) and n.id == "MonotonicClock":
            found.append(f"line {line}: MonotonicClock")
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and any(
                n.value.endswith(s) for s in REALTIME_STRINGS):
            found.append(f"line {line}: {n.value!r} (a real-time example)")
        elif isinstance(n, ast.List | ast.Tuple):
            words = [e.value for e in n.elts if isinstance(e, ast.Constant)]
            if any(words[i:i + 2] == ["hil", "run"] for i in range(len(words))) and \
                    "--no-realtime" not in words:
                found.append(f"line {line}: cosim hil run")
    return found


class Reader:
    """The timing uses of tests, through the functions and fixtures they use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._conftests: dict[Path, Module] = {}
        self._memo: dict[tuple[Path, str], list[str]] = {}

    def conftests(self, path: Path) -> list[Module]:
        """The conftest.py modules above ``path`` (nearest first)."""
        out = []
        d = path.parent
        while d == self.root or self.root in d.parents:
            c = d / "conftest.py"
            if c.exists():
                if c not in self._conftests:
                    self._conftests[c] = parse(c)
                out.append(self._conftests[c])
            d = d.parent
        return out

    def uses(self, m: Module, fn: ast.FunctionDef, seen: frozenset = frozenset()) -> list[str]:
        """The timing uses of ``fn`` (a test, a function or a fixture of ``m``)."""
        key = (m.path, fn.name)
        if key in self._memo:
            return self._memo[key]
        if key in seen:
            return []
        seen = seen | {key}
        found = _direct(fn, m)
        called = {n.func.id for n in ast.walk(fn)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        for name in sorted(called - {fn.name}):
            if name in m.functions and name not in m.fixtures:
                found += [f"{name}() {u}" for u in self.uses(m, m.functions[name], seen)]
        wanted = [a.arg for a in fn.args.args] + ([] if fn.name in m.fixtures else m.autouse)
        for name in wanted:
            for owner in [m] + self.conftests(m.path):
                if name in owner.fixtures:
                    found += [f"fixture {name}: {u}"
                              for u in self.uses(owner, owner.fixtures[name], seen)]
                    break
        if fn.name not in m.fixtures:  # autouse fixtures of the conftests
            for c in self.conftests(m.path):
                for name in c.autouse:
                    found += [f"fixture {name}: {u}"
                              for u in self.uses(c, c.fixtures[name], seen)]
        self._memo[key] = found
        return found

    def tests(self, m: Module):
        """``(nodeid prefix, FunctionDef, marked)`` of each test function in ``m``."""
        rel = m.path.relative_to(self.root.parent).as_posix()
        for node in m.tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                yield (f"{rel}::{node.name}", node,
                       m.marked or any(_is_timing_mark(d) for d in node.decorator_list))
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                cls_marked = m.marked or any(_is_timing_mark(d) for d in node.decorator_list)
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f.name.startswith("test"):
                        yield (f"{rel}::{node.name}::{f.name}", f, cls_marked or any(
                            _is_timing_mark(d) for d in f.decorator_list))

    def survey(self, paths: list[Path] | None = None) -> dict[str, tuple[bool, list[str]]]:
        """``{test: (marked, timing uses)}`` of every test module under the root."""
        out = {}
        for path in sorted(paths or self.root.rglob("test_*.py")):
            m = parse(path)
            for nodeid, fn, marked in self.tests(m):
                out[nodeid] = (marked, self.uses(m, fn))
        return out


def unmarked(root: Path, paths: list[Path] | None = None) -> list[str]:
    """One line per test that uses timing without the ``timing`` marker."""
    return [f"{t}: {'; '.join(dict.fromkeys(uses))}"
            for t, (marked, uses) in Reader(root).survey(paths).items()
            if uses and not marked]
