"""Multi-rate gain on a stiff pair: current-controlled drive (fast) + flexible drive train (slow).

Model, reference and runs in ``bench/stiff_pair.py``.  Acceptance: the multi-rate
co-simulation meets max state error <= 1e-5 of the amplitude with far fewer
evaluations of the slow (expensive) part than one RK4 integrator over the whole
model at the step the stiff part needs.  Wall times are printed, not asserted
(shared, noisy machine); ``python -m bench.stiff_pair`` measures the ratio.
"""

import math

import numpy as np
import pytest

from bench import stiff_pair as sp

H_SINGLE = 41e-6  # largest single-rate RK4 step meeting 1e-5 (bench.stiff_pair search)


@pytest.fixture(scope="module")
def single_rate():
    return sp.run_single_rate(H_SINGLE)


@pytest.fixture(scope="module")
def multirate():
    return sp.run_multirate(**sp.MULTIRATE)


def test_fast_mode_above_1_khz_and_slow_mode_about_10_hz():
    for x in (None, sp.reference([sp.T_END])[0]):  # at rest and at the final running point
        modes = sp.mode_frequencies_hz(x)
        fast = np.max(np.abs(modes["drive"])) / (2 * math.pi)
        assert fast >= 1e3, fast
        # the drive has further modes above 1 kHz: the current-loop pair (~2.2 kHz)
        assert np.sum(np.abs(modes["drive"]) / (2 * math.pi) >= 1e3) == 3
        osc = [e for e in modes["all"] if abs(e.imag) > 1.0 and abs(e) < 1e3]
        f_slow = max(abs(e.imag) for e in osc) / (2 * math.pi)
        assert 9.0 <= f_slow <= 11.0, f_slow
        # the load alone has no mode faster than 100 Hz: its own step can be large
        assert np.max(np.abs(modes["load"])) / (2 * math.pi) < 100.0


def test_reference_is_accurate_and_amplitudes_are_nonzero():
    t = np.linspace(0.0, sp.T_END, 201)
    a = sp.amplitudes()
    diff = np.max(np.abs(sp.reference(t) - sp.reference(t, method="DOP853")) / a)
    assert diff < 1e-8, diff
    assert np.all(a > 0)


def test_monolithic_diagram_matches_the_numpy_equations():
    d = sp.monolithic_diagram()
    ctx = d.create_context()
    from cosim import Simulator
    sim = Simulator(d, ctx, solver="rk4", dt=H_SINGLE, record=False)
    sim.initialize()
    rng = np.random.default_rng(1)
    x = rng.normal(size=ctx.xc.size)
    ctx.xc = x
    ctx.time = 0.3
    dx = sim.program.rhs(0.3, x)
    # map the diagram's state order to STATES through the exported state outputs
    order = []
    for name in sp.STATES:
        port = sp._find_output(d, name)
        h = port.block.continuous_states[0]
        order.append(sim.plan.cstate_index[h][0])
    np.testing.assert_allclose(dx[order], sp.rhs(0.3, x[order]), rtol=1e-12, atol=1e-9)


def test_multirate_meets_the_accuracy_criterion(multirate):
    wall, err, d = multirate
    assert err <= sp.TOL, d["errors"]
    assert d["drive_propagator"]  # the fused linear drive runs on the exact RK4 propagator


def test_single_rate_at_its_step_meets_it_and_at_twice_the_step_does_not(single_rate):
    _, err, d = single_rate
    assert err <= sp.TOL, d["errors"]
    with np.errstate(over="ignore", invalid="ignore"):  # it blows up: that is the point
        _, err2, d2 = sp.run_single_rate(2 * H_SINGLE)
    assert not err2 <= sp.TOL, d2.get("errors")
    # the stiff sensor pole: RK4 is stable only below 2.785 / |lambda|
    lam = np.max(np.abs(sp.mode_frequencies_hz()["drive"]))
    assert H_SINGLE < 2.785 / lam < 2 * H_SINGLE


def test_multirate_evaluates_the_slow_part_far_less_often(single_rate, multirate):
    w_single, _, ds = single_rate
    w_multi, _, dm = multirate
    assert ds["steps"] >= 10 * dm["slow_steps"], (ds["steps"], dm["slow_steps"])
    assert ds["slow_rhs_evals"] >= 10 * dm["slow_rhs_evals"]
    print(f"\nstiff pair: single-rate RK4 {H_SINGLE * 1e6:.0f} us {w_single:.3f} s, "
          f"multi-rate {w_multi:.3f} s, wall ratio {w_single / w_multi:.2f} "
          f"(CPU {ds['cpu_s'] / dm['cpu_s']:.2f}); slow-part steps {ds['steps']} vs "
          f"{dm['slow_steps']}")
