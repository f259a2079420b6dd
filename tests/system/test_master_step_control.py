"""Communication-step control by extrapolation defect, and energy residuals of power bonds.

Model: the LIM two-mass oscillator (bench/lim.py).  The power-bond variant
keeps the coupling spring's deflection as M1's own state, so M1 and M2
exchange only force and velocity and the energy the coupling creates is
exactly the integral of the bond's power mismatch: the residual the master
reports must match the drift of the total energy (an independent check).
"""

import numpy as np
import pytest

from bench.lim import (
    CONNECTIONS,
    POWER_CONNECTIONS,
    energy_power,
    exact,
    m1_diagram,
    m1_power_diagram,
    m2_diagram,
)
from cosim import GaussSeidel, Iterative, Jacobi, MasterScheduler, StepController
from cosim.errors import BuildError, PortError
from cosim.subsystem import DiagramSubsystem


def _power(coupling, order, H=1e-3, t_end=2.0, **kw):
    subs = [DiagramSubsystem(m1_power_diagram(), solver="rk4", dt=H / 10),
            DiagramSubsystem(m2_diagram(), solver="rk4", dt=H / 10)]
    master = MasterScheduler(subs, POWER_CONNECTIONS, H, coupling=coupling,
                             extrapolation=order, power_bonds=[("m1.fc", "m2.v2")], **kw)
    return master.run(t_end)


@pytest.mark.parametrize("order", [0, 1, 2])
def test_energy_residual_matches_the_energy_drift_of_the_coupled_system(order):
    res = _power(Jacobi(), order)
    E = energy_power(res)
    drift = E[1:] - E[0]
    cumulative = np.cumsum(res.diagnostics["macro"]["energy_residual"])
    # the drift is large (ZOH: 1.4e3 J of 1e4 J) down to ~0.1 J; the residual follows it
    assert np.max(np.abs(cumulative - drift)) < 0.02 * np.max(np.abs(drift)), order
    assert res.diagnostics["energy_residual_total"] == pytest.approx(cumulative[-1])


def test_energy_residual_vanishes_for_converged_iterative_coupling():
    res = _power(Iterative("broyden"), 3, t_end=0.5)
    jac = _power(Jacobi(), 1, t_end=0.5)
    assert abs(res.diagnostics["energy_residual_total"]) < 1e-3
    assert abs(jac.diagnostics["energy_residual_total"]) > 0.1


@pytest.mark.parametrize("order", [0, 1, 2])
def test_energy_correction_reduces_the_energy_drift_of_jacobi(order):
    drift = {}
    for corr in (False, True):
        E = energy_power(_power(Jacobi(), order, energy_correction=corr))
        drift[corr] = np.max(np.abs(E - E[0]))
    # measured 1422 -> 942 J, 2.33 -> 1.65 J, 1.11 -> 0.56 J
    assert drift[True] < 0.75 * drift[False], drift


def test_energy_correction_needs_power_bonds():
    subs = [DiagramSubsystem(m1_diagram(), dt=1e-4), DiagramSubsystem(m2_diagram(), dt=1e-4)]
    with pytest.raises(BuildError, match="energy_correction=True needs power_bonds"):
        MasterScheduler(subs, CONNECTIONS, 1e-3, energy_correction=True)


def test_energy_tolerance_bounds_the_energy_created_per_step():
    def run(energy_tol):
        ctl = StepController(method="extrapolation", rtol=1.0, atol=1e3, h_min_s=2e-4,
                             h_max_s=1e-2, grid_s=1e-4, energy_tol=energy_tol)
        return _power(Jacobi(), 1, H=1e-3, t_end=0.5, step_control=ctl)
    res, loose = run(1e-3), run(None)  # signal tolerances wide open: energy decides
    per_step = np.abs(res.diagnostics["macro"]["energy_residual"])
    # the first step (zero-order hold: one sample in the history) is taken at h_min and
    # kept above tolerance; it is counted
    assert res.diagnostics["unrecoverable_steps"] == 1
    assert np.sum(per_step > 1e-3) == 1 and np.all(per_step[1:] <= 1e-3)
    E, E_loose = energy_power(res), energy_power(loose)
    assert np.max(np.abs(E - E[0])) < 0.1 * np.max(np.abs(E_loose - E_loose[0]))


def test_power_bond_errors_say_what_to_connect():
    subs = [DiagramSubsystem(m1_power_diagram(), solver="rk4", dt=1e-4),
            DiagramSubsystem(m2_diagram(), solver="rk4", dt=1e-4)]
    with pytest.raises(PortError, match="must feed exactly one input of subsystem 'm1'"):
        MasterScheduler(subs, POWER_CONNECTIONS, 1e-3, power_bonds=[("m1.fc", "m2.x2")])
    with pytest.raises(PortError, match="same subsystem"):
        MasterScheduler(subs, POWER_CONNECTIONS, 1e-3, power_bonds=[("m1.fc", "m1.v1")])


def _defect(rtol, t_end=1.0, save=True, h_min=2e-4):
    subs = [DiagramSubsystem(m1_diagram(), solver="rk4", dt=1e-4),
            DiagramSubsystem(m2_diagram(), solver="rk4", dt=1e-4)]
    if not save:
        for s in subs:
            s.can_save_state = False
    ctl = StepController(method="extrapolation", rtol=rtol, atol=rtol, h_min_s=h_min,
                         h_max_s=1e-2, grid_s=1e-4)
    master = MasterScheduler(subs, CONNECTIONS, 1e-3, coupling=Jacobi(), extrapolation=2,
                             step_control=ctl)
    res = master.run(t_end)
    ref = exact(res.time)
    err = max(np.max(np.abs(res["m1.x1"] - ref[:, 0])),
              np.max(np.abs(res["m2.x2"] - ref[:, 1])))
    return err, res


def test_defect_control_adapts_and_tightens_with_tolerance():
    err_loose, loose = _defect(1e-3)
    err_tight, tight = _defect(1e-4)
    d_loose, d_tight = loose.diagnostics, tight.diagnostics
    assert err_tight < err_loose / 3
    assert len(d_tight["step_sizes_s"]) > len(d_loose["step_sizes_s"])
    sizes = np.array(d_loose["step_sizes_s"])
    assert sizes.max() > 5 * sizes.min()
    # one macro step per attempt: subsystem steps = accepted + rejected attempts
    assert d_loose["subsystem_steps"]["m1"] == len(sizes) + d_loose["rejections"]


def test_defect_control_runs_without_save_restore_and_counts_unrecoverable_steps():
    err_redo, redo = _defect(1e-3, t_end=0.5)
    err_keep, keep = _defect(1e-3, t_end=0.5, save=False)
    assert keep.diagnostics["rollbacks"] == 0 and keep.diagnostics["rejections"] == 0
    assert keep.diagnostics["unrecoverable_steps"] > 1
    assert redo.diagnostics["unrecoverable_steps"] == 1  # the zero-order-hold start at h_min
    assert err_keep < 5 * err_redo  # kept steps are few and the next ones are smaller


def test_defect_control_at_the_minimum_step_is_an_error():
    from cosim.errors import StepError
    with pytest.raises(StepError, match="rejected at the minimum step 200 us"):
        _defect(1e-6, t_end=0.1)


def test_defect_control_can_accept_steps_at_the_minimum_and_counts_them():
    subs = [DiagramSubsystem(m1_diagram(), solver="rk4", dt=1e-4),
            DiagramSubsystem(m2_diagram(), solver="rk4", dt=1e-4)]
    ctl = StepController(method="extrapolation", rtol=1e-6, atol=1e-6, h_min_s=2e-4,
                         h_max_s=1e-2, grid_s=1e-4, at_min_step="accept")
    res = MasterScheduler(subs, CONNECTIONS, 1e-3, coupling=Jacobi(), extrapolation=2,
                          step_control=ctl).run(0.1)
    d = res.diagnostics
    assert d["steps_over_tol_at_h_min"] > 0  # the run went on and says how often
    assert min(d["step_sizes_s"]) == pytest.approx(2e-4)


def test_two_order_control_of_iterative_coupling_uses_predictor_and_corrector():
    """Iterative coupling has no extrapolated input; the error estimate is the predictor
    (extrapolation, order p) against the converged outputs (was: refused)."""
    from bench.lim import exact

    def run(rtol):
        subs = [DiagramSubsystem(m1_diagram(), solver="rk4", dt=1e-4),
                DiagramSubsystem(m2_diagram(), solver="rk4", dt=1e-4)]
        # atol: signals of 1-1000 (m, m/s, N) cross zero; 100 rtol keeps tol there sensible
        ctl = StepController(method="extrapolation", rtol=rtol, atol=100 * rtol, h_min_s=2e-4,
                             h_max_s=1e-2, grid_s=1e-4)
        res = MasterScheduler(subs, CONNECTIONS, 1e-3, coupling=Iterative("newton"),
                              extrapolation=2, step_control=ctl).run(0.5)
        err = np.max(np.abs(res["m2.x2"] - exact(res.time)[:, 1]))
        return err, len(res.diagnostics["step_sizes_s"]), res
    err_loose, n_loose, loose = run(1e-4)
    err_tight, n_tight, _ = run(1e-5)
    assert n_tight > n_loose and err_tight < err_loose
    assert max(loose.diagnostics["step_sizes_s"]) > 2 * min(loose.diagnostics["step_sizes_s"])


def test_gauss_seidel_interpolated_inputs_have_no_defect():
    subs = [DiagramSubsystem(m1_diagram(), solver="rk4", dt=1e-4),
            DiagramSubsystem(m2_diagram(), solver="rk4", dt=1e-4)]
    ctl = StepController(method="extrapolation", rtol=1e-3, atol=1e-3, h_min_s=2e-4,
                         h_max_s=1e-2, grid_s=1e-4)
    gs = MasterScheduler(subs, CONNECTIONS, 1e-3, coupling=GaussSeidel(["m2", "m1"]),
                         extrapolation=2, step_control=ctl)
    gs.run(0.2)
    # only m2's force input is extrapolated; m1's x2, v2 interpolate m2's new sample
    tau = gs.counters.step_sizes[-1]
    for name, hist, *_ in gs._feeds["m1"]:
        from cosim.extrapolation import evaluate
        assert evaluate(gs._fed["m1"][name], tau)[0] == pytest.approx(hist.last_value,
                                                                       rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("kw, match", [({"method": "embedded"}, "richardson"),
                                       ({"rtol": 0.0, "atol": 0.0}, "not both 0"),
                                       ({"h_min_s": 1.0, "h_max_s": 0.1}, "h_min_s <= h_max_s")])
def test_step_controller_rejects_bad_settings(kw, match):
    with pytest.raises(ValueError, match=match):
        StepController(**kw)
