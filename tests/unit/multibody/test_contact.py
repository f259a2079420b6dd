"""Sphere-plane contact against Hertz theory, restitution and Coulomb friction."""

import math

import numpy as np
import pytest

from blocks.multibody import Mechanism, MultibodyBlock
from cosim import DiagramBuilder, Simulator

R, K, MASS = 0.05, 1e7, 1.0


def _ball(v0, restitution=1.0, gravity=0.0, friction=0.0, vx=0.0, y0=None):
    m = Mechanism("ball", dim=2, gravity=(0.0, -gravity))
    ball = m.add_particle("ball", MASS, (0.0, R + 0.002 if y0 is None else y0),
                          velocity=(vx, -v0))
    m.add_contact("floor", ball.marker("cm"), R, (0.0, 0.0), (0.0, 1.0), stiffness=K,
                  restitution=restitution, friction=friction, slip_velocity=1e-4)
    b = DiagramBuilder("d")
    blk = b.add(MultibodyBlock("b", m, markers=["ball.cm"]))
    b.export_output(blk.output("ball_cm_pos"), "P")
    b.export_output(blk.output("ball_cm_vel"), "V")
    return b.build()


def test_elastic_impact_reaches_the_hertz_penetration_and_rebounds_with_its_speed():
    v0 = 1.0
    res = Simulator(_ball(v0), solver="rk4", dt=1e-6).run(0.012)  # contact ends ~7 ms
    depth = R - np.min(res["d.P"][:, 1])
    hertz = (5 * MASS * v0 ** 2 / (4 * K)) ** 0.4  # max penetration, exponent 3/2
    assert depth == pytest.approx(hertz, rel=1e-4)
    assert res["d.V"][-1, 1] == pytest.approx(v0, rel=1e-6)


def _ln_rebound_1dof(e, v0=1.0):
    """The same law in one coordinate (penetration d), integrated by SciPy (independent)."""
    from scipy.integrate import solve_ivp

    def rhs(t, z):
        d, dd = z
        f = K * max(d, 0.0) ** 1.5 * (1 + 0.75 * (1 - e * e) * dd / v0)
        return [dd, -max(f, 0.0) / MASS]
    leave = lambda t, z: z[0] + 1e-12  # noqa: E731
    leave.terminal, leave.direction = True, -1
    sol = solve_ivp(rhs, (0, 0.05), [0.0, v0], rtol=1e-11, atol=1e-14, events=leave)
    return -sol.y[1, -1] / v0


@pytest.mark.parametrize("e", [0.95, 0.8])
def test_lankarani_nikravesh_restitution(e):
    """LN's damping law is derived for e near 1: the effective restitution is e at 0.95
    (within 1 %) and higher than e at 0.8 (0.847, the same for the 1-DOF law in SciPy)."""
    res = Simulator(_ball(1.0, restitution=e), solver="rk4", dt=1e-6).run(0.012)
    ratio = res["d.V"][-1, 1] / 1.0
    assert ratio == pytest.approx(_ln_rebound_1dof(e), rel=1e-5)
    if e >= 0.9:
        assert ratio == pytest.approx(e, rel=0.01)
    else:
        assert e < ratio < e + 0.06


def test_sliding_particle_decelerates_at_mu_g_and_stops():
    mu, g, vx = 0.3, 9.81, 1.0
    static = (MASS * g / K) ** (1 / 1.5)  # resting penetration: K d^1.5 = m g
    d = _ball(0.0, gravity=g, friction=mu, vx=vx, y0=R - static)
    res = Simulator(d, solver="rk4", dt=2e-5).run(0.5)
    t, V = res.time, res["d.V"][:, 0]
    for tt in (0.1, 0.2, 0.3):
        i = np.searchsorted(t, tt)
        assert V[i] == pytest.approx(vx - mu * g * t[i], abs=1e-6)
    stop = vx / (mu * g)
    assert abs(V[np.searchsorted(t, stop + 0.05)]) < 1e-3
    assert math.isclose(t[-1], 0.5)
