"""The oracle of the compiled Simulator's tests: the same diagram run by the Python loop
(``compiled=False``) and in C (``compiled=True``)."""

from __future__ import annotations

from cosim import Simulator


def run_both(make, t_end: float, **kw) -> tuple:
    """``(python results, C results)`` of fresh diagrams ``make()``; the C run must have run
    in C and the Python one in Python, and they must agree (``_compare`` of
    tests/system/test_compiled_run.py: identical times, 1e-12 of each signal's range)."""
    from tests.system.test_compiled_run import _compare
    py = Simulator(make(), compiled=False, **kw).run(t_end)
    c = Simulator(make(), compiled=True, **kw).run(t_end)
    assert c.diagnostics["compiled"] is True
    assert py.diagnostics["compiled"] == "compiled=False"
    _compare(py, c)
    return py, c
