"""IFToMM A01 simple pendulum against the exact solution, for every formulation.

Reference (anchors-domain.md §1.3, mpmath at 30 digits): 1 kg point mass on a
massless 1 m link, g = 9.81, released horizontally at rest from x = +1 m;
period 4 sqrt(L/g) K(1/2) = 2.367841947576237 s; P at t = 1, 10, 20 s below.
The model is a particle plus a distance constraint to a ground point.
"""

import math

import numpy as np
import pytest
from scipy.special import ellipk

from blocks.multibody import Mechanism, MultibodyBlock
from cosim import DiagramBuilder, Simulator

REF = {1.0: (-0.986291751131875, -0.165010853125541),
       10.0: (0.275087462576117, -0.961419205099125),
       20.0: (-0.996907173990992, -0.0785880808093338)}
PERIOD = 2.367841947576237


def pendulum():
    m = Mechanism("A01", dim=2, gravity=(0.0, -9.81))
    bob = m.add_particle("bob", 1.0, (1.0, 0.0))
    m.add_joint("distance", "link", m.ground.marker("O"), bob.marker("cm"), length=1.0)
    return m


def _run(form, t_end=20.0, dt=1e-3, **kw):
    b = DiagramBuilder("A01")
    blk = b.add(MultibodyBlock("pend", pendulum(), form, markers=["bob.cm"],
                               reactions=["link"], **kw))
    b.export_output(blk.output("bob_cm_pos"), "P")
    b.export_output(blk.output("link_reaction"), "lam")
    return Simulator(b.build(), solver="rk4", dt=dt).run(t_end)


FORMS = [("lagrange", {"alpha": 5.0, "beta": 5.0}), ("lagrange", {}),
         ("penalty", {"penalty": 1e7, "omega": 10.0, "mu": 1.0}),
         ("augmented_lagrangian", {"penalty": 1e5, "omega": 10.0, "mu": 1.0, "iterations": 3}),
         ("projection", {"project_every_s": 1e-3}),
         ("partitioning", {"project_every_s": 1e-3})]


def test_reference_period_is_the_elliptic_integral():
    assert 4 * math.sqrt(1 / 9.81) * ellipk(0.5) == pytest.approx(PERIOD, rel=1e-15)


@pytest.mark.parametrize("form, kw", FORMS, ids=[f[0] + ("-baumgarte" if f[1].get("alpha")
                                                         else "") for f in FORMS])
def test_positions_match_the_exact_solution(form, kw):
    res = _run(form, **kw)
    P, t = res["A01.P"], res.time
    for tt, ref in REF.items():
        i = int(np.argmin(np.abs(t - tt)))
        assert abs(t[i] - tt) < 1e-9
        err = float(np.max(np.abs(P[i] - np.array(ref))))
        # penalty: the constraint is a stiff spring, its compliance shows at 1e-7
        assert err < 1e-6, (form, tt, err)
    drift = float(np.max(np.abs(np.linalg.norm(P, axis=1) - 1.0)))
    assert drift < (1e-7 if form != "lagrange" or kw else 1e-6), drift


def test_period_from_the_zero_crossings_of_x():
    res = _run("lagrange", t_end=6.0, alpha=5.0, beta=5.0)
    x, t = res["A01.P"][:, 0], res.time
    # x passes +1 -> -1 -> +1 once per period; successive maxima are one period apart
    up = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    tz = [t[i] - x[i] * (t[i + 1] - t[i]) / (x[i + 1] - x[i]) for i in up]
    assert np.diff(tz) == pytest.approx(PERIOD, abs=1e-6)


def test_link_tension_is_the_centripetal_plus_gravity_force():
    """lambda * 2 |d| is the rod force; at the bottom T = m g + m v^2 / L = 3 m g."""
    res = _run("lagrange", t_end=0.7, alpha=5.0, beta=5.0)
    P, lam = res["A01.P"], res["A01.lam"][:, 0]
    i = int(np.argmin(P[:, 1]))  # lowest point: v^2 = 2 g L
    # Phi = |d|^2 - L^2: the force on the bob is -J' lambda = -2 d lambda, |.| = 2 L lambda
    assert 2.0 * abs(lam[i]) == pytest.approx(3 * 9.81, rel=1e-4)


def test_drift_monitor_stops_plain_lagrange_when_it_leaves_the_manifold():
    """Plain index-1 Lagrange (no stabilization) drifts quadratically; before issue 24 it
    drifted without a word until it diverged (t = 990 s at RK4 10 ms); the drift monitor
    stops it where the rod length is off by drift_tol (1e-3 of the length by default)."""
    from cosim.errors import StepError
    with pytest.raises(StepError, match=r"left its constraint manifold \(relative violation "
                                        r"0.001\d* > drift_tol = 0.001 in 'link.distance'\)"):
        _run("lagrange", t_end=200.0, dt=1e-2)
    res = _run("lagrange", t_end=200.0, dt=1e-2, drift_tol=None)  # off: it goes on
    drift = np.max(np.abs(np.linalg.norm(res["A01.P"], axis=1) - 1.0))
    assert drift > 1e-3  # and drifts beyond the tolerance the monitor enforces
