"""The oracle of the compiled Simulator's tests: the same diagram run by the Python loop
(``compiled=False``) and in C (``compiled=True``)."""

from __future__ import annotations

import numpy as np

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


def check_without_c_form(make, cls_name: str, t_end: float, **kw) -> str:
    """A diagram (``make()``) with a block of class ``cls_name`` that has lost its C form, run
    with ``compiled=True``: never silently in C.  A block that can be called back in Python
    (:mod:`cosim.codegen.pycall`) is, and ``diagnostics["called_back"]`` names it; one that
    cannot (continuous states, zero crossings, monitors) is refused, named.  Returns which
    ("called back" or "refused")."""
    from cosim.codegen.pycall import callback_reason
    from cosim.errors import BuildError
    d = make()
    blocks = [b for b in d.compile().blocks if type(b).__name__ == cls_name]
    assert blocks, cls_name
    expect = "refused" if any(callback_reason(b) for b in blocks) else "called back"
    try:
        res = Simulator(d, compiled=True, **kw).run(t_end)
    except BuildError as exc:
        assert "without a C form" in str(exc) and f"({cls_name})" in str(exc), str(exc)
        got = "refused"
    else:
        assert res.diagnostics["compiled"] is True
        assert any(f"({cls_name})" in n for n in res.diagnostics["called_back"]), \
            res.diagnostics.get("called_back")
        got = "called back"
    assert got == expect, (cls_name, got, expect)
    return got


def same_results(r0, r1, paths, exact: bool, what: str) -> None:
    """Results ``r1`` equal ``r0`` on ``paths`` at the same times: bit for bit (``exact``) or
    to 1e-12 of each signal's range (a fused linear group summed in another order)."""
    assert np.array_equal(r0.time, r1.time), what
    for path in paths:
        a, b = np.asarray(r0[path]), np.asarray(r1[path])
        if exact:
            assert np.array_equal(a, b), (what, path, np.max(np.abs(a - b)))
        else:
            span = max(float(np.ptp(a)), 1e-300)
            assert np.max(np.abs(a - b)) <= 1e-12 * span, (what, path, np.max(np.abs(a - b)))
