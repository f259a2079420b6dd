"""RK4's look-ahead in the compiled Simulator's C (:mod:`cosim.codegen.time_cache`): the
time-only outputs the derivatives read, evaluated at the step's two new times together.

The class: diagrams under RK4 with time-only ops the derivatives read, on both paths that
evaluate them at stage times (the Runge-Kutta stages, ``cosim_rk_step``, also taken by event
location and partial steps; the exact linear step, ``cosim_prop_step``).  A generated corpus:
sources (sine, step and ramp with off-grid times, whose branches read the mode time,
constants) through chains of nonlinear time-only blocks (translated functions, saturations,
tables, products, sums), some read only by recorded outputs (the other key), into either an
all-linear continuous part (propagated) or a nonlinear one with state feedback (stages), some
with a zero crossing located in the step.  And the core-block corpus under RK4.

Oracles: the same C without the look-ahead (:data:`~cosim.codegen.time_cache.LOOKAHEAD`
off), bit for bit: the same ops are evaluated the same times with the same arguments; and
the Python loop, to 1e-12 of each signal's range (bit for bit where nothing is fused).
Exported Co-Simulation FMUs (FMI 2 and 3, the same C core) are run by FMPy both ways.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import blocks as bl
from cosim import DiagramBuilder, FunctionBlock, Simulator
from cosim.codegen import csource, time_cache
from tests.corpus.core_diagrams import core_diagram
from tests.corpus.event_diagrams import LevelCounter
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]

_FNS = (lambda a: math.tanh(1.7 * a) + 0.05 * a * a,
        lambda a: math.sin(3.0 * a) - 0.2 * a,
        lambda a: math.atan(a) * 1.3 + math.exp(-a * a),
        lambda a: a * abs(a) - 0.5 * a)


def timeonly_builder(seed: int, level: float | None = None):
    """A random time-only part into a linear (even seeds: propagated) or a nonlinear
    continuous part, with a counter of the state ``z`` crossing ``level`` if given;
    ``(builder, recorded ports, z's output)``."""
    rng = np.random.default_rng(1000 + seed)
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    b = DiagramBuilder(f"ahead{seed}")
    sig = [b.add(bl.Sine("sine", u(0.5, 2), u(0.5, 4), u(0, 3))).y,
           b.add(bl.Step("step", round(u(0.05, 0.3), 4) + 0.00013, u(-1, 1), u(-2, 2))).y,
           b.add(bl.Ramp("ramp", u(-1, 1), round(u(0.0, 0.2), 4) + 0.00021)).y,
           b.add(bl.Constant("c", u(-1, 1))).y]
    for i in range(int(rng.integers(2, 9))):
        kind = int(rng.integers(5))
        a = sig[int(rng.integers(len(sig)))]
        if kind == 0:
            blk = b.add(FunctionBlock(f"f{i}", _FNS[int(rng.integers(len(_FNS)))]))
            b.connect(a, blk.in_ports[0])
            sig.append(blk.out_ports[0])
        elif kind == 1:
            blk = b.add(bl.Saturation(f"sat{i}", -u(0.2, 1), u(0.2, 1)))
            b.connect(a, blk.u)
            sig.append(blk.y)
        elif kind == 2:
            xs = np.sort(rng.uniform(-2, 2, 5))
            blk = b.add(bl.Table1D(f"tab{i}", xs, rng.uniform(-1, 1, 5)))
            b.connect(a, blk.u)
            sig.append(blk.y_port)
        else:
            blk = b.add(bl.Product(f"p{i}") if kind == 3 else bl.Sum(f"s{i}", "+-"))
            b.connect(a, blk.ins[0])
            b.connect(sig[int(rng.integers(len(sig)))], blk.ins[1])
            sig.append(blk.y)
    drive = sig[-1]
    record = [sig[int(rng.integers(len(sig)))]]  # (maybe read by nothing else: key 1)
    if seed % 2 == 0:  # all linear: the exact step
        lag = b.add(bl.FirstOrderLag("lag", u(0.02, 0.3)))
        z = b.add(bl.Integrator("z"))
        b.connect(drive, lag.u)
        b.connect(lag.y, z.u)
        record += [lag.y, z.y]
    else:  # z' = drive - z |z|: the stages
        z = b.add(bl.Integrator("z"))
        fb = b.add(FunctionBlock("fb", lambda a: a * abs(a)))
        s = b.add(bl.Sum("sum", "+-"))
        b.connect(drive, s.ins[0])
        b.connect(z.y, fb.in_ports[0])
        b.connect(fb.out_ports[0], s.ins[1])
        b.connect(s.y, z.u)
        record += [z.y]
    if level is not None:  # a crossing of the state, located inside steps
        lc = b.add(LevelCounter("lc", level=level, direction=0))
        b.connect(z.y, lc.u)
        record += [lc.count]
    return b, record, z.y


def _mid_level(seed: int, t_end: float) -> float | None:
    """Every third seed: the middle of ``z``'s range over the run (the Python loop)."""
    if seed % 3:
        return None
    b, _, zy = timeonly_builder(seed)
    y = Simulator(b.build(), solver="rk4", dt=1e-3, record=[zy],
                  compiled=False).run(t_end)[zy.path]
    return 0.5 * (float(np.min(y)) + float(np.max(y)))


def _run(make, monkeypatch, ahead, compiled=True, fuse=True, t_end=0.5):
    monkeypatch.setattr(time_cache, "LOOKAHEAD", ahead)
    made = []
    real = csource.lookahead

    def spy(*a):
        made.append(len(a[0]))
        return real(*a)

    monkeypatch.setattr(csource, "lookahead", spy)
    d, record = make()
    sim = Simulator(d, solver="rk4", dt=1e-3, record=record, compiled=compiled,
                    fuse_linear=fuse)
    return sim.run(t_end), sim, made


def _bits(a, b):
    assert np.array_equal(a.time, b.time)
    assert set(a.signals) == set(b.signals)
    for k in a.signals:
        assert np.array_equal(a[k], b[k]), k


@pytest.mark.parametrize("seed", range(24))
def test_the_lookahead_changes_no_bit_on_generated_time_only_parts(seed, monkeypatch):
    t_end = 0.5 + 0.00031 * (seed % 2)  # (odd: a partial last step, by the stages)
    level = _mid_level(seed, t_end)

    def make():
        b, record, _ = timeonly_builder(seed, level)
        return b.build(), record

    on, sim, made = _run(make, monkeypatch, True, t_end=t_end)
    assert on.diagnostics["compiled"] is True and made and made[0] > 0, \
        "the corpus must be of the class: time-only ops the derivatives read"
    # (where events are located neither loop propagates: test_compiled_propagator)
    assert sim.route.run.propagates == (seed % 2 == 0 and seed % 3 != 0)
    off, _, made_off = _run(make, monkeypatch, False, t_end=t_end)
    assert made_off == []
    _bits(on, off)
    for key in ("steps", "partial_steps", "rhs_evals", "events"):
        assert on.diagnostics.get(key) == off.diagnostics.get(key), key
    if seed % 3 == 0:
        assert on.diagnostics["events"] > 0, "the corpus must cross"
    py, _, _ = _run(make, monkeypatch, True, compiled=False, t_end=t_end)
    _compare(py, on)


@pytest.mark.parametrize("seed", range(1, 24, 2))
def test_the_stages_with_the_lookahead_equal_the_python_loop_bit_for_bit(seed, monkeypatch):
    """Nothing fused (``fuse_linear=False``): the C does the Python loop's arithmetic."""
    level = _mid_level(seed, 0.5)

    def make():
        b, record, _ = timeonly_builder(seed, level)
        return b.build(), record

    c, sim, made = _run(make, monkeypatch, True, fuse=False)
    assert c.diagnostics["compiled"] is True and made and not sim.route.run.propagates
    py, _, _ = _run(make, monkeypatch, True, compiled=False, fuse=False)
    _bits(py, c)


@pytest.mark.parametrize("seed", range(0, 48, 3))
def test_the_lookahead_changes_no_bit_on_the_core_corpus(seed, monkeypatch):
    def run(ahead):
        monkeypatch.setattr(time_cache, "LOOKAHEAD", ahead)
        sim = Simulator(core_diagram(seed), solver="rk4", dt=1e-3, compiled=True)
        r = sim.run(0.5)
        assert r.diagnostics["compiled"] is True
        return r

    _bits(run(True), run(False))


def test_the_nonlinear_chain_evaluates_both_times_in_one_function(monkeypatch):
    """bench core's model C: a sine through 20 translated functions into an integrator: the
    look-ahead holds the 21 time-only ops twice (at each of its two times) and the run
    equals the one without it bit for bit."""
    from bench import models as md

    def make():
        b = DiagramBuilder("nl")
        prev = b.add(bl.Sine("src", 1.0, md.NL_FREQ)).y
        for i in range(20):
            fb = b.add(FunctionBlock(f"f{i}", md.nl_map))
            b.connect(prev, fb.in_ports[0])
            prev = fb.out_ports[0]
        z = b.add(bl.Integrator("z"))
        b.connect(prev, z.u)
        return b.build(), [z.y]

    texts = []
    real = csource.model_source
    monkeypatch.setattr(csource, "model_source",
                        lambda *a, **k: texts.append(real(*a, **k)) or texts[-1])
    on, sim, made = _run(make, monkeypatch, True, t_end=0.2)
    assert made == [21] and sim.route.run.propagates
    ahead = texts[-1].split("static void cosim_tc_ahead", 1)[1].split("\n}\n", 1)[0]
    assert ahead.count(" at ta */") == 21 and ahead.count(" at tb */") == 21
    off, _, _ = _run(make, monkeypatch, False, t_end=0.2)
    assert "static void cosim_tc_ahead" not in texts[-1]
    assert "#define COSIM_TC_AHEAD 0" in texts[-1]
    _bits(on, off)


@pytest.mark.parametrize("version", ["2.0", "3.0"])
@pytest.mark.parametrize("seed", [1, 3, 4, 7])
def test_exported_co_simulation_fmus_change_no_bit(seed, version, monkeypatch, tmp_path):
    """The exported FMU's RK4 step (the same C core) run by FMPy, an independent host, with
    the look-ahead and without: the same bits at every communication point; and the
    Python loop's values to 1e-12 of each signal's range.  (Seeds whose time-only drive
    changes within a step: where it is piecewise constant a stale value would not show;
    with the take's copy removed these fail, seeds 2 and 5 pass.)"""
    import zipfile

    fmpy = pytest.importorskip("fmpy")
    from fmus.export import export_fmu

    def make():
        b, record, _ = timeonly_builder(seed)
        for i, p in enumerate(record):
            b.export_output(p.path, f"o{i}")
        return b.build(), [f"o{i}" for i in range(len(record))], record

    got = {}
    for ahead in (True, False):
        monkeypatch.setattr(time_cache, "LOOKAHEAD", ahead)
        d, names, _ = make()
        path = export_fmu(d, tmp_path / f"m{int(ahead)}.fmu", version, "cs", step=1e-3)
        with zipfile.ZipFile(path) as z:
            text = "".join(z.read(n).decode() for n in z.namelist() if n.endswith((".h", ".c")))
        assert ("static void cosim_tc_ahead" in text) is ahead
        got[ahead] = fmpy.simulate_fmu(str(path), stop_time=0.5, output_interval=0.01,
                                       output=names)
    assert np.array_equal(got[True]["time"], got[False]["time"])
    for k in names:
        assert np.array_equal(got[True][k], got[False][k]), k
    d, names, record = make()
    py = Simulator(d, solver="rk4", dt=1e-3, record=record, compiled=False).run(0.5)
    rows = [int(np.argmin(np.abs(py.time - t))) for t in got[True]["time"]]
    assert np.allclose(py.time[rows], got[True]["time"], rtol=0, atol=1e-12)
    for k, p in zip(names, record, strict=True):
        a, b = np.asarray(py[p.path])[rows], got[True][k]
        scale = max(float(np.max(np.abs(a))), 1e-300)
        assert np.max(np.abs(a - b)) <= 1e-12 * scale, k
