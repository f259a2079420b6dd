"""Issue 34: iterative coupling in the compiled master loop (:mod:`fmus.compiled_iterative`),
against the Python loop as the oracle.

Corpus: the LIM two-mass oscillator (an algebraic coupling: m1's force reads m2's position
directly) as generated-C FMI 2 FMUs that interpolate their inputs, as the hand-written C FMUs
(``lim_m1``/``lim_m2``, input derivatives), as a native twin beside an FMU, and a pair of
stiff coupled FMUs; methods fixed point, Aitken, Broyden and Newton (its Jacobian computed by
the Python loop in the steps C hands over); extrapolation orders 0-3; macro steps 1 and 4 ms.
Each compiled run must equal the Python loop's: the same sweeps per step, rollbacks, subsystem
steps and Jacobians, and the same results bit for bit at orders 0-1 (1e-12 relative at 2-3:
divided differences).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bench.lim import CONNECTIONS, m1_diagram, m2_diagram
from cosim import Iterative, MasterScheduler
from cosim.errors import CosimWarning, LoopConvergenceError
from cosim.subsystem import DiagramSubsystem

pytest.importorskip("fmpy")

from fmus import load_fmu  # noqa: E402
from fmus.export import export_fmu  # noqa: E402
from tests.fmu_builders import build_c_fmu  # noqa: E402

T_END = 0.2


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("iter_corpus")
    out = {"c1": build_c_fmu("lim_m1", d), "c2": build_c_fmu("lim_m2", d)}
    for H in (1e-3, 4e-3):
        for i, diagram in ((1, m1_diagram), (2, m2_diagram)):
            out[(i, H)] = export_fmu(diagram(), d / f"m{i}_{H:g}.fmu", "2.0", "cs",
                                     step=H / 10, model_name=f"m{i}")
    return out


def _subs(files, kind, H):
    if kind == "generated":
        return [load_fmu(files[(1, H)], name="m1"), load_fmu(files[(2, H)], name="m2")]
    if kind == "c_interpolating":
        return [load_fmu(files["c1"], name="m1"), load_fmu(files["c2"], name="m2")]
    return [DiagramSubsystem(m1_diagram(), solver="rk4", dt=H / 10, name="m1"),
            load_fmu(files[(2, H)], name="m2")]


def _run(files, kind, method, order, H, compiled, t_end=T_END, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)
        m = MasterScheduler(_subs(files, kind, H), CONNECTIONS, H, extrapolation=order,
                            coupling=Iterative(method, **kw), compiled=compiled)
        return m, m.run(t_end)


def _compare(py, cc, order, twin=False, counts=True):
    """``twin``: a native subsystem's C twin sums in another order than NumPy
    (:mod:`fmus.native_twin`): 1e-12 relative at every order; ``counts=False``: the
    iterations may differ (a residual near round-off decides them)."""
    (mp, rp), (mc, rc) = py, cc
    assert rc.diagnostics["compiled"] is True, rc.diagnostics["compiled"]
    np.testing.assert_array_equal(rc.time, rp.time)
    for k in rp.signals:
        scale = max(1e-300, float(np.max(np.abs(rp[k]))))
        diff = float(np.max(np.abs(rc[k] - rp[k]))) / scale
        assert diff <= (0.0 if order <= 1 and not twin else 1e-12), (k, diff)
    assert mc.t == mp.t
    assert mc.counters.exchanges == mp.counters.exchanges
    if not counts:
        return
    for name in ("iterations", "rollbacks", "iteration_total", "steps"):
        assert getattr(mc.counters, name) == getattr(mp.counters, name), name
    assert mc.coupling.jacobians == mp.coupling.jacobians
    assert mc.coupling.jacobian_steps == mp.coupling.jacobian_steps


@pytest.mark.parametrize("H", [1e-3, 4e-3])
@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("method", ["fixed_point", "aitken", "broyden", "newton"])
@pytest.mark.parametrize("kind", ["generated", "c_interpolating", "native_twin"])
def test_iterative_coupling_runs_compiled_equal_to_the_python_loop(files, kind, method,
                                                                   order, H):
    if kind == "native_twin" and H == 4e-3 and order in (0, 2):
        pytest.skip("the corpus is large enough without these")
    py = _run(files, kind, method, order, H, False)
    cc = _run(files, kind, method, order, H, True)
    _compare(py, cc, order, kind == "native_twin")


def test_newton_hands_the_steps_that_need_a_jacobian_to_python(files):
    """A slow-convergence threshold that asks for Jacobians again and again: each of those
    steps is the Python loop's, the others C's, and the counts equal Python's."""
    py = _run(files, "c_interpolating", "newton", 1, 4e-3, False, slow=1e-6, tol=1e-13)
    cc = _run(files, "c_interpolating", "newton", 1, 4e-3, True, slow=1e-6, tol=1e-13)
    assert py[0].coupling.jacobians > 10, py[0].coupling.jacobians
    _compare(py, cc, 1)
    # a twin's residuals near tol = 1e-13 are round-off: its Jacobian steps may differ by one
    py = _run(files, "native_twin", "newton", 1, 4e-3, False, slow=1e-6, tol=1e-13)
    cc = _run(files, "native_twin", "newton", 1, 4e-3, True, slow=1e-6, tol=1e-13)
    assert cc[0].coupling.jacobians > 5
    _compare(py, cc, 1, twin=True, counts=False)


def test_no_convergence_raises_the_python_loops_error_with_the_rows_before(files):
    errors = {}
    for compiled in (False, True):
        with pytest.raises(LoopConvergenceError) as exc:
            _run(files, "generated", "fixed_point", 1, 4e-3, compiled, max_iter=2)
        errors[compiled] = exc.value
    assert str(errors[True]) == str(errors[False])
    rp, rc = errors[False].results, errors[True].results
    np.testing.assert_array_equal(rc.time, rp.time)
    for k in rp.signals:
        np.testing.assert_array_equal(rc[k], rp[k])


def test_the_stepper_iterates_in_c(files):
    H = 1e-3
    _, ref = _run(files, "generated", "newton", 1, H, False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)
        m = MasterScheduler(_subs(files, "generated", H), CONNECTIONS, H, extrapolation=1,
                            coupling=Iterative("newton"), compiled=True)
    st = m.stepper()
    n = round(T_END / H)
    for _ in range(n // 2):
        st.step()
    st.advance_to_ticks(round(T_END * 1e9))
    res = st.results()
    assert res.diagnostics["compiled"] is True
    for k in ref.signals:
        np.testing.assert_array_equal(res[k], ref[k])


@pytest.mark.parametrize("coupling, said", [
    (Iterative("anderson"), "iterative/anderson"),
    (Iterative("newton", reuse_jacobian=False), "reuse_jacobian=False"),
])
def test_what_the_compiled_loop_does_not_iterate_says_why(files, coupling, said):
    m = MasterScheduler(_subs(files, "generated", 1e-3), CONNECTIONS, 1e-3, coupling=coupling,
                        compiled=None)
    assert said in m.compiled_reason, m.compiled_reason


def test_a_streamed_iterative_run_writes_the_rows_it_returns(files, tmp_path):
    """Stream writers with compiled Newton (its first step taken by the Python loop, the
    others by C): the file holds every communication point, equal to the results."""
    from cosim.csv_results import read_csv
    from cosim.writers import CsvWriter
    csv = CsvWriter(tmp_path / "it.csv", chunk=7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)
        m = MasterScheduler(_subs(files, "generated", 1e-3), CONNECTIONS, 1e-3,
                            extrapolation=1, coupling=Iterative("newton"), compiled=True,
                            writers=[csv])
        res = m.run(T_END)
    assert res.diagnostics["compiled"] is True and m.coupling.jacobians == 1
    back = read_csv(csv.path)
    np.testing.assert_array_equal(back.time, res.time)
    for k in res.signals:
        np.testing.assert_array_equal(back[k], res[k])


@pytest.mark.timing  # the subject is a latency (judged on a quiet machine)
def test_ctrl_c_stops_compiled_iterative_coupling_and_keeps_the_completed_steps(tmp_path):
    """Newton over slow FMUs (2000 solver steps per macro step): interrupted, the run keeps
    every macro step C completed, equal to an uninterrupted run to the same time."""
    from tests.system.test_compiled_master_failsafe import _interrupted
    from tests.timing_plugin import judge_figure
    H = 1e-3
    slow = [export_fmu(f(), tmp_path / f"slow_m{i}.fmu", "2.0", "cs", step=H / 2000,
                       model_name=f"m{i}") for i, f in ((1, m1_diagram), (2, m2_diagram))]

    def master():
        return MasterScheduler([load_fmu(slow[0], name="m1"), load_fmu(slow[1], name="m2")],
                               CONNECTIONS, H, extrapolation=1, coupling=Iterative("newton"),
                               compiled=True)
    m = master()
    latency, exc = _interrupted(lambda: m.run(1000.0))
    res = exc.results
    n = len(res.time) - 1
    assert n > 0 and m.t == round(n * H * 1e9) and res.time[-1] == m.t * 1e-9
    ref = master().run(m.t * 1e-9)
    for name in ("m1.x1", "m2.x2"):
        np.testing.assert_array_equal(res[name], ref[name])
    judge_figure(latency <= 0.1, f"Ctrl-C stopped compiled iterative coupling "
                                 f"{latency * 1e3:.1f} ms after the signal, at most 100 ms")
