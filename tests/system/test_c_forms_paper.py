"""C forms of the paper-reel blocks (:mod:`blocks.paper._cforms`) against the Python loop.

A generated corpus: the paper_reel example's diagram (machine, shadow and the nip-load fault
monitor with its zero crossings) with seeded random faults set in the context (a valve leak's
magnitude, a force sensor's noise level and bias, the rail friction coefficients of either
side: the tunable parameters the C reads), and force sensors alone with random gains, noise
seeds, bandwidths and numbers of components (NumPy's pairwise sum in its branches: 8,
up to 128, more) and fault ramps, each run with ``compiled=True`` and ``compiled=False``: the
recorded signals equal (``_compare`` of test_compiled_run: 1e-12 of each signal's range;
measured: bit for bit), and so the nip-load alarm and its time.
"""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import blocks as bl
from blocks.paper.faults import FaultRamp
from blocks.paper.sensors import ForceSensor
from cosim import DiagramBuilder, Simulator
from tests.system.test_compiled_run import _compare

pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs a C compiler"),
              pytest.mark.filterwarnings("ignore::cosim.errors.CosimWarning")]


def _reel(seed):
    from examples import paper_reel
    rng = np.random.default_rng(seed)
    d = paper_reel.build(onset_s=round(float(rng.uniform(0.02, 0.1)), 6))
    ctx = d.create_context()
    if rng.integers(2):
        ctx.set_param(d.find("plant/leak_ramp").parameter("magnitude"),
                      float(rng.uniform(0.5e-6, 3e-6)))
    side = str(rng.choice(["A", "B"]))
    sensor = d.find(f"plant/sensor_{side}")
    if rng.integers(2):
        ctx.set_param(sensor.parameter("noise_std"), float(rng.uniform(10.0, 300.0)))
    ctx.set_param(sensor.parameter("bias"), float(rng.uniform(-50.0, 50.0)))
    if rng.integers(2):
        mech = d.find("plant/mech")
        mu = float(rng.uniform(0.02, 0.06))
        ctx.set_param(mech.parameter(f"mu_static_carriage_{side}"), mu)
        ctx.set_param(mech.parameter(f"mu_dynamic_carriage_{side}"), 0.95 * mu)
        ctx.set_param(mech.parameter(f"mu_dynamic_sledge_{side}"), float(rng.uniform(0.001,
                                                                                      0.02)))
    return d, ctx


@pytest.mark.parametrize("seed", range(4))
def test_the_paper_reel_compiled_equals_the_python_loop(seed):
    runs = []
    for compiled in (False, True):
        d, ctx = _reel(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs.append(Simulator(d, ctx, compiled=compiled, solver="rk4", dt=1e-4).run(0.25))
    py, c = runs
    assert c.diagnostics["compiled"] is True
    assert c.diagnostics["events"] == py.diagnostics["events"]
    for k in py.signals:  # (the detection time is NaN before an alarm: equal as NaN)
        assert np.array_equal(py[k], c[k], equal_nan=True), k


def _sensors(seed):
    rng = np.random.default_rng(seed)
    b = DiagramBuilder(f"sensors{seed}")
    b.add(bl.Sine("f", float(rng.uniform(100, 1000)), float(rng.uniform(0.5, 5)), 0.0,
                  float(rng.uniform(-500, 500)), unit="N"))
    b.add(FaultRamp("ramp", onset_s=round(float(rng.uniform(0.05, 0.3)), 6),
                    ramp_s=round(float(rng.uniform(0.05, 0.3)), 6),
                    magnitude=float(rng.uniform(-2, 2))))
    for k, n in enumerate([8, int(rng.integers(9, 129)), int(rng.integers(129, 400))]):
        s = b.add(ForceSensor(f"s{k}", gain=float(rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 2)),
                              noise_bandwidth_hz=float(rng.uniform(5, 100)),
                              seed=int(rng.integers(1000)), n_components=n,
                              noise_std_n=float(rng.uniform(0, 100)),
                              bias_n=float(rng.uniform(-10, 10))))
        b.connect("f.y", s.force)
    b.add(bl.Integrator("i", 0.0))  # a continuous state: the solver's stages read the noise
    b.connect("s1.measured", "i.u")
    return b.build()


@pytest.mark.parametrize("seed", range(6))
def test_force_sensors_and_fault_ramps_compiled_equal_the_python_loop(seed):
    solver = ["rk4", "heun", "ab3"][seed % 3]
    py = Simulator(_sensors(seed), compiled=False, solver=solver, dt=1e-3).run(0.5)
    c = Simulator(_sensors(seed), compiled=True, solver=solver, dt=1e-3).run(0.5)
    assert c.diagnostics["compiled"] is True
    _compare(py, c)
    assert np.array_equal(py["s2.measured"], c["s2.measured"])  # noise: bit for bit
