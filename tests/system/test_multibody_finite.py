"""No stepper of the multibody library returns a NaN or infinite state (issue 32 item 3).

The failing case: a planar parallelogram with a redundant third crank (Grübler's count
says 0 degrees of freedom, it has 1).  ``staggered_integrate`` returned NaN from t = 0.06 s
without an error, and with ``project=True`` raised a raw ``LinAlgError: Singular
matrix``.  Now every step's state is checked (:func:`blocks.multibody.finite.check_state`)
and a non-finite one stops the run with a StepError that names the bodies, the redundant
rows and what to use instead; a singular solve inside the stepper says the same.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from blocks.multibody import Mechanism
from blocks.multibody.staggered import staggered_integrate
from cosim import Block
from cosim.errors import StepError


def parallelogram(cranks: int = 3, r: float = 0.2, a: float = 0.5, theta0: float = 1.0,
                  w0: float = 2.0) -> Mechanism:
    """``cranks`` equal parallel cranks on the ground, their tips joined by one coupler
    (three or more: redundant constraints; two: a regular parallelogram); by default
    turning towards the singular position theta = 0 (``bench.multibody_corpus``)."""
    from bench.multibody_corpus import parallelogram as build
    return build(cranks, r, a, theta0, w0)


@pytest.mark.parametrize("project", [False, True])
@pytest.mark.parametrize("constraints", ["index1", "pcst"])
def test_staggered_never_returns_a_non_finite_state(constraints, project):
    """From theta = 1 rad at 2 rad/s the parallelogram reaches its singular position
    (cranks along the coupler, theta = 0) at t = 0.33 s.  Before: NaN from t = 0.06 s
    without an error, or a raw LinAlgError.  Now the redundant row is handled
    (:mod:`blocks.multibody.redundancy`) and the run stops at the singular position,
    naming the nearly dependent rows and Index3Stepper, as MultibodyBlock does."""
    mech = parallelogram()
    with pytest.raises(StepError) as err:
        staggered_integrate(mech, 1.0, 1e-3, constraints=constraints, project=project)
    text = str(err.value)
    assert "staggered_integrate" in text and "parallelogram" in text
    assert "lost rank" in text and "Index3Stepper" in text, text
    t_stop = float(re.search(r"at t = ([0-9.]+) s", text).group(1))
    assert 0.30 < t_stop < 0.36, text


def test_a_regular_parallelogram_runs():
    """The checks do not stop a regular mechanism (two cranks, swinging about the hanging
    position, away from the singular positions)."""
    run = staggered_integrate(parallelogram(cranks=2, theta0=-1.0, w0=0.0), 0.5, 1e-3)
    assert np.isfinite(run["q"]).all() and run["t"][-1] == pytest.approx(0.5)


def test_check_state_names_the_bodies_and_the_advice():
    from blocks.multibody.finite import check_state
    mech = parallelogram(cranks=2)
    mech.assemble()
    q, v = mech.q_init.copy(), mech.v_init.copy()
    check_state(mech, q, v, 0.0, "here")  # finite: nothing
    lay = mech.layout()
    q[lay["crank1"]["q"]] = np.nan
    with pytest.raises(StepError, match=r"here: mechanism 'parallelogram' at t = 0.001 s: "
                                        r"the step gave a non-finite state .* in crank1"):
        check_state(mech, q, v, 1e-3, "here", last=(mech.q_init, mech.v_init, 0.0))


def _blow_up(t: float) -> dict:
    """A load that turns infinite at t = 0.05 s (a broken input)."""
    return {"push": np.array([np.inf if t >= 0.05 else 0.0, 0.0])}


def _pushed(cranks: int = 2) -> Mechanism:
    mech = parallelogram(cranks, theta0=-1.0, w0=0.0)
    mech.add_load("push", "coupler.t0")
    return mech


@pytest.mark.parametrize("constraints", ["index1", "pcst"])
def test_a_state_that_turns_non_finite_in_the_loop_stops_the_run(constraints):
    with pytest.raises(StepError, match=r"staggered_integrate .* at t = 0.05\d* s: the step "
                                        r"gave a non-finite state .* in coupler"):
        staggered_integrate(_pushed(), 1.0, 1e-3, constraints=constraints, loads=_blow_up)


class _BrokenForce(Block):
    """A force input that turns infinite at t = 0.05 s (a broken sensor, a bad table)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.y = self.declare_output("y", lambda ctx: np.array(
            [np.inf if ctx.time >= 0.05 else 0.0, 0.0]), shape=(2,), unit="N", depends_on=())


def test_index3_stepper_names_a_non_finite_load():
    """Before: ALI3-P reported 'M + h/2 C + beta J'J is not positive definite (a body
    without mass or inertia ...)', which was not the cause."""
    from blocks.multibody import Index3Stepper
    from cosim import DiagramBuilder, Simulator
    b = DiagramBuilder("d")
    st = b.add(Index3Stepper("arm", _pushed(), 1e-3))
    f = b.add(_BrokenForce("f"))
    b.connect(f.y, st.input("push"))
    with pytest.raises(StepError, match=r"block 'arm' at t = 0.05 s: load input 'push' is "
                                        r"\[inf  0.\], not finite"):
        Simulator(b.build(), solver="euler", dt=1e-3).run(0.2)


def test_the_simulator_names_the_body_of_a_non_finite_multibody_state():
    """MultibodyBlock: the Simulator's non-finite check names the body and coordinate."""
    from blocks.multibody import MultibodyBlock
    from cosim import DiagramBuilder, Simulator
    from cosim.errors import NonFiniteError
    b = DiagramBuilder("d")
    mb = b.add(MultibodyBlock("arm", _pushed(), "lagrange", alpha=10.0, beta=10.0))
    f = b.add(_BrokenForce("f"))
    b.connect(f.y, mb.input("push"))
    with pytest.raises(NonFiniteError, match=r"'arm.x'\[\d+\] \((coupler|crank\d)\.\w+\)"):
        Simulator(b.build(), solver="rk4", dt=1e-3).run(0.2)


def _parallelogram_minimal(theta0: float, w0: float, t: np.ndarray, r: float = 0.2) -> np.ndarray:
    """The crank angle of :func:`parallelogram` in its one minimal coordinate (written here
    without the library): ``I theta'' = -g cos(theta) (3 m_c r / 2 + m_cp r)``, ``I`` the
    three cranks about their pivots plus the translating coupler; SciPy at rtol 1e-12."""
    from scipy.integrate import solve_ivp
    mc, mcp, g = 0.2, 1.0, 9.81
    inertia = 3 * (mc * r * r / 12 + mc * (r / 2) ** 2) + mcp * r * r
    sol = solve_ivp(lambda _, y: [y[1], -g * math.cos(y[0]) * (1.5 * mc * r + mcp * r)
                                  / inertia], (0.0, float(t[-1])), [theta0, w0],
                    rtol=1e-12, atol=1e-12, dense_output=True)
    return sol.sol(t)[0]


@pytest.mark.parametrize("form", ["penalty", "augmented_lagrangian"])
def test_the_penalty_formulations_run_the_redundant_parallelogram(form):
    """The formulations the refusals name do run it, against its minimal coordinate.  It
    swings about the hanging position (cranks between -1.57 -+ 0.57 rad), away from the
    parallelogram's singular positions (cranks along the coupler, theta = 0 or pi, where
    the monitor rightly stops a run: a run from theta = 1 rad reaches theta = 0.058 at
    t = 0.33 s and stops there as 'singular')."""
    from blocks.multibody import MultibodyBlock
    from cosim import DiagramBuilder, Simulator
    mech = parallelogram(theta0=-1.0, w0=0.0)
    b = DiagramBuilder("d")
    mb = b.add(MultibodyBlock("arm", mech, form))
    res = Simulator(b.build(), solver="rk4", dt=1e-3, record=[mb.output("q")]).run(2.0)
    q = res["arm.q"]
    theta = q[:, mech.layout()["crank1"]["q"]][:, 2]
    assert np.isfinite(q).all()
    err = np.max(np.abs(theta - _parallelogram_minimal(-1.0, 0.0, np.asarray(res.time))))
    assert err < 1e-6, err  # measured: penalty 1.1e-7, augmented Lagrangian 5.6e-8 rad
    assert np.ptp(theta) > 0.5  # it swung
