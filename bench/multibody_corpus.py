r"""Issue 32's differential-testing corpus: every mechanism against an independent reference,
run by every formulation, stepper and integrator of ``blocks.multibody``.

A *cell* is (mechanism, formulation).  :func:`run_cell` builds the mechanism with the
library, runs it ``t_end`` seconds at step ``h`` and compares the positions of tracked
points (markers, in metres) with an **independent reference**: the mechanism's equations
of motion in minimal coordinates, written in this module without the library's classes
(closed-form or Newton loop closure, velocity and acceleration ratios by implicit
differentiation), integrated by ``scipy.integrate.solve_ivp`` (DOP853, rtol = atol =
1e-12), or the exact solution where one exists (the A02 chain).  Its verdict:

``PASS``     finished with finite states, max over time of the largest tracked-point
             error within the case's tolerance: :data:`TOL_M` (1e-4 m), scaled with the
             mechanism for the 1 cm and 1 mm four-bars (1e-6 m and 1e-7 m: the same motion
             as the 1 m four-bar, scaled; an absolute 1e-4 m would pass the 1 mm four-bar
             with a 3 % error, a check that is not invariant to the units);
``REFUSED``  a ``BuildError``/``StepError`` whose message names what to use instead, for a
             cell listed in :data:`REFUSALS` (a documented, principled limitation);
``FAIL``     anything else: a crash, NaN, a stop on a regular position, an undocumented
             refusal, or an error above 1e-4 m.

Step: ``h`` = 1 ms, or the formulation's documented step (:data:`DOCUMENTED_STEP`:
``Index3Stepper`` 0.5 ms, the step its tests give for the IFToMM A01 tolerance; it is
second order where RK4 is fourth; ``staggered_integrate``, second order too: 1 ms with
index-1 and projection, 0.25 ms with PCST and projection, 0.125 ms without projection,
where the drift sets the step).

Also reported: ``error_rel`` (the error over the mechanism's size), ``energy_rel``
(``max |E - E_0| / max T`` of the library's states, kinetic + gravity + springs, computed
by ``bench.multibody_models.energy``; every mechanism here is undamped) and ``wall_s``.

Mechanisms (:data:`CASES`; builders use the library, references do not)
------------------------------------------------------------------------
``four-bar 1 m``, ``1 cm``, ``1 mm``
    ``bench.multibody_models.scaled_four_bar(k, w0=3)``, k = 1, 1e-2, 1e-3: crank :
    coupler : rocker : ground = 1 : 2.5 : 2 : 3 (times k metres), 1 kg bars, gravity
    ``9.81 k`` m/s^2, the crank turning over the top from 3 rad/s at 60 deg
    (:data:`FOUR_BAR_W0`: why not 1 rad/s) (the same motion at every size, in the same
    time: the positions scale with k, so ``error_rel`` must not grow as k shrinks).
    Reference: :class:`FourBarRef`.
``slider-crank``
    ``bench.multibody_models.slider_crank()``: the crank turns full revolutions through
    both dead centres.  Reference: :class:`SliderCrankRef` (the same equations as the
    independent ``slider_crank_reference`` there, written here in the corpus' form).
``parallelogram 3 cranks``
    three equal parallel cranks and one coupler (Grübler count 0, one degree of freedom:
    one revolute row is redundant), swinging about the hanging position.  Builder
    :func:`parallelogram` (from ``tests/system/test_multibody_finite.py``); reference
    :class:`ParallelogramRef`.
``Sarrus 6R``
    the Sarrus linkage, a spatial overconstrained 6R loop: ground and top plate joined by
    two limbs of three parallel revolute axes (limb A axes along x, limb B along y); the
    plate translates vertically on a spring.  Grübler count 0, mobility 1.  Builder
    :func:`sarrus`, reference :class:`SarrusRef`.
``RSSR``
    spatial four-bar: revolute crank on the ground (axis x), massless spherical-spherical
    coupler (a ``distance`` joint), revolute rocker about a skew axis.  Builder
    :func:`rssr`, reference :class:`RSSRRef`.
``cart double pendulum``
    a cart on a horizontal rail (prismatic joint) carrying a double pendulum of two bars,
    three degrees of freedom, small swing (quasi-periodic, not chaotic).  Builder
    :func:`cart_double_pendulum`, reference :class:`CartDoublePendulumRef` (Lagrangian of
    the open chain).
``A02 chain N=2``
    ``bench.multibody_chain.four_bar_chain(2)``, through its singular positions (all bars
    on the ground line, twice per turn); reference: the exact elliptic-function solution
    ``ChainExact`` there (written from the geometry, no library code).

Formulations (:data:`FORMULATIONS`, ten per mechanism)
------------------------------------------------------
``MultibodyBlock`` in a ``Simulator`` (RK4 at ``h``) with ``lagrange`` (Baumgarte
alpha = beta = 10 /s), ``penalty`` (1e7, omega 10, mu 1), ``augmented_lagrangian`` (1e5,
3 iterations), ``projection`` and ``partitioning`` (``project_every_s = h``): the
constants of ``bench.multibody_models.formulations``; default monitors.
``Index3Stepper`` (step ``h``, defaults); ``staggered_integrate`` with
``constraints="index1"`` / ``"pcst"``, each with ``project=False`` / ``True`` (defaults
otherwise).

The references' equations: :mod:`bench.multibody_corpus_refs`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .multibody_corpus_refs import (
    DEG50,
    DEG60,
    E2,
    CartDoublePendulumRef,
    ChainRef,
    FourBarRef,
    G,
    ParallelogramRef,
    Reference,
    RSSRRef,
    SarrusRef,
    SliderCrankRef,
    _e,
    sarrus_rest_length,
)

TOL_M = 1e-4  #: a cell passes within this position error [m]


# ======================================================================================
# builders (library mechanisms)
# ======================================================================================
def parallelogram(cranks: int = 3, r: float = 0.2, a: float = 0.5, theta0: float = -1.0,
                  w0: float = 0.0, m_crank: float = 0.2, m_coupler: float = 1.0):
    """``cranks`` equal parallel cranks on the ground, their tips joined by one coupler
    (three or more: redundant constraints; two: a regular parallelogram); markers
    ``crank{k}.Q`` = tips.  Also the tests' parallelogram
    (``tests/system/test_multibody_finite.py``, ``tests/unit/multibody/test_analysis.py``)."""
    from blocks.multibody import Mechanism
    mech = Mechanism("parallelogram", dim=2, gravity=(0.0, -G))
    tip = r * _e(theta0)
    v_tip = w0 * E2 @ tip
    span = a * (cranks - 1)
    coupler = mech.add_body("coupler", m_coupler, span ** 2 / 12 + 1e-3,
                            tip + np.array([span / 2, 0.0]), 0.0, velocity=v_tip,
                            angular_velocity=0.0)
    for k in range(cranks):
        x = a * k
        c = mech.add_body(f"crank{k}", m_crank, m_crank * r * r / 12,
                          np.array([x, 0.0]) + tip / 2, theta0, velocity=v_tip / 2,
                          angular_velocity=w0)
        c.marker("P", (-r / 2, 0.0))
        c.marker("Q", (r / 2, 0.0))
        mech.add_joint("revolute", f"G{k}", mech.ground.marker(f"g{k}", (x, 0.0)),
                       c.marker("P"))
        mech.add_joint("revolute", f"T{k}", c.marker("Q"),
                       coupler.marker(f"t{k}", (x - span / 2, 0.0)))
    return mech


def _frame(x, z) -> np.ndarray:
    """Rotation matrix with columns ``x``, ``z x x``, ``z`` (``x``, ``z`` orthonormal)."""
    x = np.asarray(x, float) / np.linalg.norm(x)
    z = np.asarray(z, float) / np.linalg.norm(z)
    return np.column_stack([x, np.cross(z, x), z])


def sarrus(l=0.3, w=0.2, m_link=0.5, m_plate=2.0, k=500.0, alpha_eq=math.pi / 3,
           alpha0=DEG50, w0=0.0):
    """The Sarrus linkage (see :class:`SarrusRef`), assembled at ``alpha0``, ``alpha' = w0``.

    Bodies: ``plate`` (square plate, ``m_plate``), links ``A1, A2`` (limb A, hinge axes
    along x) and ``B1, B2`` (limb B, along y): slender bars of length ``l`` (body x along
    the bar, body z along its hinge axis; markers ``P`` at the lower, ``Q`` at the upper
    end of the bar's x axis).  Joints: six revolutes ``A0, A1, A2, B0, B1, B2`` (ground -
    first link - second link - plate), spring ``lift`` (ground origin to plate centre).
    """
    from blocks.multibody import Mechanism
    s, c = math.sin(alpha0), math.cos(alpha0)
    L0 = sarrus_rest_length(l, m_link, m_plate, k, alpha_eq)
    mech = Mechanism("sarrus", dim=3, gravity=(0.0, 0.0, -G))
    z = 2 * l * c
    plate = mech.add_body("plate", m_plate, (0.02, 0.02, 0.04), (0.0, 0.0, z), np.eye(3),
                          velocity=(0.0, 0.0, -2 * l * s * w0))
    J = (1e-4 * m_link * l * l, m_link * l * l / 12, m_link * l * l / 12)
    ex, ey = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    for limb, axis, out, hinge, sign in (("A", ex, -ey, -w * ey, 1.0),
                                         ("B", ey, -ex, -w * ex, -1.0)):
        # link directions: first (out s, c), second (-out s, c) in (out, z) coordinates
        d1 = out * s + np.array([0.0, 0.0, c])
        d2 = -out * s + np.array([0.0, 0.0, c])
        dd1 = (out * c - np.array([0.0, 0.0, s])) * w0   # d1' (alpha' = w0)
        dd2 = (-out * c - np.array([0.0, 0.0, s])) * w0
        # angular velocities: d' = w x d; limb A: w1 = +w0 e_x, limb B: w1 = -w0 e_y
        w1 = sign * w0 * axis
        first = mech.add_body(f"{limb}1", m_link, J, hinge + 0.5 * l * d1, _frame(d1, axis),
                              velocity=0.5 * l * dd1, angular_velocity=w1)
        second = mech.add_body(f"{limb}2", m_link, J, hinge + l * d1 + 0.5 * l * d2,
                               _frame(d2, axis), velocity=l * dd1 + 0.5 * l * dd2,
                               angular_velocity=-w1)
        for b in (first, second):
            b.marker("P", (-0.5 * l, 0.0, 0.0))
            b.marker("Q", (0.5 * l, 0.0, 0.0))
        frame = _frame(np.cross(axis, [0.0, 0.0, 1.0]), axis)
        mech.add_joint("revolute", f"{limb}0", mech.ground.marker(f"{limb}0", hinge, frame),
                       first.marker("P"))
        mech.add_joint("revolute", f"{limb}1", first.marker("Q"), second.marker("P"))
        mech.add_joint("revolute", f"{limb}2", second.marker("Q"),
                       plate.marker(limb, hinge, frame))
    mech.add_spring_damper("lift", mech.ground.marker("O", (0.0, 0.0, 0.0)), "plate.cm",
                           stiffness=k, length0=L0)
    return mech


def rssr(r1=0.1, r3=0.3, L=0.5, O2=(0.25, 0.3, -0.05), a2=(0.3, 1.0, 0.4), m1=1.0, m3=0.8,
         theta0=0.3, w0=4.0):
    """The spatial four-bar RSSR (see :class:`RSSRRef`), at ``theta0``, ``theta' = w0``.

    Bodies ``crank`` and ``rocker``: slender bars (body x along the bar, z along the
    revolute axis; markers ``P`` at the pivot, ``Q`` at the tip).  Joints: revolute ``R1``
    (ground-crank, axis x at the origin), revolute ``R2`` (ground-rocker, axis ``a2`` at
    ``O2``), ``coupler`` a distance joint ``|S1 - S2| = L`` (massless spherical-spherical
    link)."""
    from blocks.multibody import Mechanism
    ref = RSSRRef(r1, r3, L, O2, a2, m1, m3, theta0, w0)
    psi, d1, _ = ref.rocker(theta0)
    ax, u2, w2 = ref.a2, ref.u2, ref.w2
    e = np.array([0.0, math.cos(theta0), math.sin(theta0)])
    de = np.array([0.0, -math.sin(theta0), math.cos(theta0)])
    n = math.cos(psi) * u2 + math.sin(psi) * w2
    t = -math.sin(psi) * u2 + math.cos(psi) * w2
    ex = np.array([1.0, 0.0, 0.0])
    mech = Mechanism("rssr", dim=3, gravity=(0.0, 0.0, -G))
    crank = mech.add_body("crank", m1, (1e-4 * m1 * r1 * r1, m1 * r1 * r1 / 12,
                                        m1 * r1 * r1 / 12), 0.5 * r1 * e, _frame(e, ex),
                          velocity=0.5 * r1 * w0 * de, angular_velocity=w0 * ex)
    rocker = mech.add_body("rocker", m3, (1e-4 * m3 * r3 * r3, m3 * r3 * r3 / 12,
                                          m3 * r3 * r3 / 12), ref.O2 + 0.5 * r3 * n,
                           _frame(n, ax), velocity=0.5 * r3 * d1 * w0 * t,
                           angular_velocity=d1 * w0 * ax)
    for b, h in ((crank, r1), (rocker, r3)):
        b.marker("P", (-0.5 * h, 0.0, 0.0))
        b.marker("Q", (0.5 * h, 0.0, 0.0))
    mech.add_joint("revolute", "R1", mech.ground.marker("R1", (0.0, 0.0, 0.0),
                                                       _frame((0.0, 1.0, 0.0), ex)),
                   crank.marker("P"))
    mech.add_joint("revolute", "R2", mech.ground.marker("R2", ref.O2, _frame(u2, ax)),
                   rocker.marker("P"))
    mech.add_joint("distance", "coupler", crank.marker("Q"), rocker.marker("Q"), length=L)
    return mech


def cart_double_pendulum(mc=1.0, m1=0.6, l1=0.4, m2=0.4, l2=0.3, th1=0.3, th2=-0.2,
                         x0=0.0):
    """A cart on a horizontal rail (planar prismatic joint ``rail``) with a double pendulum
    of two slender bars (revolutes ``hinge1`` cart-bar1, ``hinge2`` bar1-bar2), released
    at rest; see :class:`CartDoublePendulumRef`.  Markers: ``cart.cm``, ``bar1.Q``,
    ``bar2.Q`` (bar ends; ``P`` the upper ends)."""
    from blocks.multibody import Mechanism
    mech = Mechanism("cart_double_pendulum", dim=2, gravity=(0.0, -G))
    cart = mech.add_body("cart", mc, 0.01, (x0, 0.0), 0.0)
    d1 = np.array([math.sin(th1), -math.cos(th1)])
    d2 = np.array([math.sin(th2), -math.cos(th2)])
    bar1 = mech.add_body("bar1", m1, m1 * l1 * l1 / 12, np.array([x0, 0.0]) + 0.5 * l1 * d1,
                         th1 - math.pi / 2)
    bar2 = mech.add_body("bar2", m2, m2 * l2 * l2 / 12,
                         np.array([x0, 0.0]) + l1 * d1 + 0.5 * l2 * d2, th2 - math.pi / 2)
    for b, h in ((bar1, l1), (bar2, l2)):
        b.marker("P", (-0.5 * h, 0.0))
        b.marker("Q", (0.5 * h, 0.0))
    mech.add_joint("prismatic", "rail", mech.ground.marker("rail", (0.0, 0.0)), cart.marker("cm"))
    mech.add_joint("revolute", "hinge1", cart.marker("cm"), bar1.marker("P"))
    mech.add_joint("revolute", "hinge2", bar1.marker("Q"), bar2.marker("P"))
    return mech


# ======================================================================================
# the corpus
# ======================================================================================
@dataclass(frozen=True)
class Case:
    """One mechanism of the corpus: ``build()`` (library), ``reference()`` (independent),
    the tracked ``markers`` (``"body.marker"``, in the order of the reference's points),
    its ``size_m`` (for ``error_rel``), the position tolerance ``tol_m`` of a PASS,
    whether it passes singular positions (declared to ``MultibodyBlock`` as
    ``singular=True``), and what it exercises."""

    name: str
    build: Callable
    reference: Callable
    markers: tuple
    size_m: float
    singular: bool = False
    note: str = ""
    tol_m: float = TOL_M


#: the four-bar's initial crank rate [rad/s]: the crank turns over the top (the crank-rocker's
#: working motion).  At 1 rad/s it swung nearly over the top and back, a motion whose
#: tracked points move 1.9e3 m per unit relative energy error (:func:`sensitivity`; 175 m at
#: 3 rad/s): 1e-4 m over 10 s then demanded 5e-8 of energy accuracy, which only the RK4
#: formulations met (penalty at 1e7 missed by 1.7e-3 m, Index3Stepper by 3.9e-4 m).
FOUR_BAR_W0 = 3.0


def _four_bar_case(k: float, label: str, w0: float = FOUR_BAR_W0) -> Case:
    def build():
        from . import multibody_models as mm
        return mm.scaled_four_bar(k, w0=w0)

    def ref():
        return FourBarRef(a0=3 * k, a1=k, a2=2.5 * k, a3=2 * k, m1=1.0, J1=k * k / 12, m2=1.0,
                          m3=1.0, theta0=DEG60, w0=w0, g=G * k)
    return Case(f"four-bar {label}", build, ref,
                ("crank.Q", "coupler.Q"), 3 * k, tol_m=TOL_M * k,
                note=f"Grashof crank-rocker, crank {label}, gravity 9.81*{k:g} m/s^2, "
                     f"crank turning over the top from {w0:g} rad/s")


def _slider_crank():
    from . import multibody_models as mm
    return mm.slider_crank()


def _chain():
    from .multibody_chain import four_bar_chain
    return four_bar_chain(2)


CASES: dict[str, Case] = {c.name: c for c in (
    _four_bar_case(1.0, "1 m"), _four_bar_case(1e-2, "1 cm"), _four_bar_case(1e-3, "1 mm"),
    Case("slider-crank", _slider_crank, SliderCrankRef, ("crank.A", "rod.B"), 0.65,
         note="full revolutions through both dead centres"),
    Case("parallelogram 3 cranks", parallelogram, ParallelogramRef, ("crank0.Q", "crank2.Q"),
         1.2, note="redundant third crank (Grübler 0, 1 dof)"),
    Case("Sarrus 6R", sarrus, SarrusRef, ("plate.cm", "A1.Q", "B1.Q"), 0.6,
         note="spatial overconstrained loop (Grübler 0, 1 dof)"),
    Case("RSSR", rssr, RSSRRef, ("crank.Q", "rocker.Q"), 0.5,
         note="spatial four-bar, massless coupler (distance joint)"),
    Case("cart double pendulum", cart_double_pendulum, CartDoublePendulumRef,
         ("cart.cm", "bar1.Q", "bar2.Q"), 0.7, note="prismatic + 2 revolutes, 3 dof"),
    Case("A02 chain N=2", _chain, ChainRef, ("crank0.Q", "crank2.Q"), 3.0, singular=True,
         note="IFToMM A02, singular positions twice per turn"),
)}

BLOCK_FORMULATIONS = ("lagrange", "penalty", "augmented_lagrangian", "projection",
                      "partitioning")
STAGGERED = {"staggered index1": ("index1", False), "staggered index1+proj": ("index1", True),
             "staggered pcst": ("pcst", False), "staggered pcst+proj": ("pcst", True)}
FORMULATIONS = BLOCK_FORMULATIONS + ("Index3Stepper",) + tuple(STAGGERED)

_SINGULAR = ("it passes singular positions (all bars on the ground line twice per turn); "
             "MultibodyBlock refuses singular=True at build: its result would depend on "
             "where the steps fall relative to the singular instant")

#: Documented refusals: (mechanism, formulation) -> (what the message must name instead,
#: the reason).  Only principled limitations; a refusal not listed here is a FAIL.
_SINGULAR_STAGGERED = ("it passes singular positions; staggered_integrate (index-1 and PCST "
                       "alike) stops at the first one (singular_tol), naming Index3Stepper")
REFUSALS: dict[tuple[str, str], tuple[str, str]] = {
    **{("A02 chain N=2", f): ("Index3Stepper", _SINGULAR) for f in BLOCK_FORMULATIONS},
    **{("A02 chain N=2", f): ("Index3Stepper", _SINGULAR_STAGGERED) for f in STAGGERED}}


#: The formulations' documented steps (used when run_cell gets no ``h``; else 1 ms), with
#: their source.  ``staggered_integrate``'s: the largest step of the halving ladder 1, 0.5,
#: 0.25, 0.125 ms at which every mechanism of the corpus meets its tolerance over 10 s
#: (measured 2026-11-29; the table in ``blocks/multibody/staggered.py``); the next larger
#: step fails on the mechanism named, which ``tests/system/test_multibody_corpus.py::
#: test_staggered_documented_step_is_the_largest`` checks.
_STAGGERED_STEP = ("blocks/multibody/staggered.py, 'Step': the scheme is second order; "
                   "{why}; at {h2:g} ms the {mech} misses 1e-4 m ({err})")
DOCUMENTED_STEP: dict[str, tuple[float, str]] = {
    "Index3Stepper": (5e-4, "tests/system/test_multibody_index3.py::"
                            "test_a01_second_order_and_the_step_needed: h = 1 ms misses "
                            "the IFToMM A01 tolerance (5e-5 m over 20 s), 0.5 ms meets it"),
    "staggered index1": (1.25e-4, _STAGGERED_STEP.format(
        why="without projection its position drift sets the step", h2=0.25, mech="RSSR",
        err="1.6e-4 m")),
    "staggered pcst": (1.25e-4, _STAGGERED_STEP.format(
        why="without projection its position drift sets the step", h2=0.25,
        mech="Sarrus 6R", err="6.0e-3 m")),
    "staggered pcst+proj": (2.5e-4, _STAGGERED_STEP.format(
        why="its error constant is 20 times index1's on the four-bar (1.2e-3 against "
            "5.5e-5 m at 1 ms, the same for eps_relative 1e-3 to 1e-8)", h2=0.5,
        mech="four-bar 1 m", err="2.9e-4 m")),
}
#: The mechanism that fails at twice the documented step (the step's source).
STEP_WITNESS = {"staggered index1": "RSSR", "staggered pcst": "Sarrus 6R",
                "staggered pcst+proj": "four-bar 1 m"}
H_DEFAULT = 1e-3


def step_for(formulation: str) -> float:
    """The step a cell runs at: the documented one (:data:`DOCUMENTED_STEP`) or 1 ms."""
    return DOCUMENTED_STEP.get(formulation, (H_DEFAULT, ""))[0]


def block_options(formulation: str, h: float) -> dict:
    """The MultibodyBlock options of a formulation (``bench.multibody_models.formulations``)."""
    from . import multibody_models as mm
    return {kind: opts for kind, opts in mm.formulations(h).values()}[formulation]


def _simulate(case: Case, formulation: str, t_end: float, h: float,
              record_every: int) -> tuple:
    """Run one cell; returns ``(mech, t, q, v)`` or raises what the library raised."""
    mech = case.build()
    if formulation in STAGGERED:
        from blocks.multibody import staggered_integrate
        constraints, project = STAGGERED[formulation]
        r = staggered_integrate(mech, t_end, h, constraints=constraints, project=project,
                                record_every=record_every)
        return mech, r["t"], r["q"], r["v"]
    from cosim import DiagramBuilder, Simulator
    b = DiagramBuilder("corpus")
    if formulation == "Index3Stepper":
        from blocks.multibody import Index3Stepper
        blk = b.add(Index3Stepper("mech", mech, h))
    else:
        from blocks.multibody import MultibodyBlock
        blk = b.add(MultibodyBlock("mech", mech, formulation, singular=case.singular,
                                   **block_options(formulation, h)))
    pq, pv = blk.output("q"), blk.output("v")
    res = Simulator(b.build(), solver="rk4", dt=h, record=[pq, pv],
                    record_every=record_every).run(t_end)
    return mech, np.asarray(res.time), res[pq.path], res[pv.path]


def marker_points(mech, markers: tuple, q: np.ndarray) -> np.ndarray:
    """Global positions of ``markers`` along ``q``: shape ``(samples, markers, dim)``."""
    from . import multibody_models as mm
    return np.stack([mm.marker_positions(mech, *m.split("."), q) for m in markers], axis=1)


@dataclass
class Cell:
    """The verdict of one cell (:func:`run_cell`)."""

    mechanism: str
    formulation: str
    status: str
    error_m: float | None = None
    error_rel: float | None = None
    energy_rel: float | None = None
    message: str = ""
    wall_s: float = 0.0
    t_end: float = 0.0
    h: float = 0.0
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("mechanism", "formulation", "status", "error_m",
                                              "error_rel", "energy_rel", "message", "wall_s",
                                              "t_end", "h")}


def _short(exc: BaseException, n: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= n else text[:n - 3] + "..."


def run_cell(mechanism: str, formulation: str, t_end: float = 10.0, h: float | None = None,
             sample_s: float = 0.01) -> dict:
    """Run the cell (``mechanism``, ``formulation``) for ``t_end`` s at step ``h``
    (default: :func:`step_for`) and judge it (module docstring); returns
    ``Cell.as_dict()``: ``status`` (PASS/REFUSED/FAIL), ``error_m`` (max over the samples,
    every ``sample_s``, of the largest tracked point's distance from the reference [m]),
    ``error_rel`` (over the case's size), ``energy_rel``, ``message``, ``wall_s``."""
    from cosim.errors import BuildError, StepError

    from . import multibody_models as mm
    case = CASES[mechanism]
    h = step_for(formulation) if h is None else h
    record_every = max(1, int(round(sample_s / h)))
    cell = Cell(mechanism, formulation, "FAIL", t_end=t_end, h=h)
    t0 = time.perf_counter()
    try:
        mech, t, q, v = _simulate(case, formulation, t_end, h, record_every)
    except (BuildError, StepError) as exc:
        cell.wall_s = time.perf_counter() - t0
        doc = REFUSALS.get((mechanism, formulation))
        if doc is not None and doc[0] in str(exc):
            cell.status, cell.message = "REFUSED", f"use {doc[0]}: {_short(exc)}"
        else:
            cell.message = ("refused, not a documented refusal: " if doc is None else
                            f"refused without naming {doc[0]}: ") + _short(exc)
        return cell.as_dict()
    except Exception as exc:  # a crash is a verdict, not a stop of the corpus
        cell.wall_s = time.perf_counter() - t0
        cell.message = f"crash: {_short(exc)}"
        return cell.as_dict()
    cell.wall_s = time.perf_counter() - t0
    if not (np.isfinite(q).all() and np.isfinite(v).all()):
        cell.message = "non-finite state"
        return cell.as_dict()
    if abs(t[-1] - t_end) > 0.5 * h:
        cell.message = f"stopped at t = {t[-1]:.6g} s without an error"
        return cell.as_dict()
    ref = case.reference().solve(t)
    err = np.linalg.norm(marker_points(mech, case.markers, q) - ref["points"], axis=2)
    cell.error_m = float(np.max(err))
    cell.error_rel = cell.error_m / case.size_m
    cell.energy_rel = mm.energy_error(mech, q, v)
    k = int(np.argmax(np.max(err, axis=1)))
    cell.extra = {"worst_t": float(t[k])}
    if cell.error_m <= case.tol_m:
        cell.status = "PASS"
        if (mechanism, formulation) in REFUSALS:
            cell.message = "documented refusal not raised"
    else:
        cell.message = (f"error {cell.error_m:.3g} m > {case.tol_m:g} m (worst at t = "
                        f"{t[k]:.3g} s)")
    return cell.as_dict()


def _run_job(job: tuple) -> dict:
    return run_cell(*job)


def run_corpus(t_end: float = 10.0, h: float | None = None, mechanisms=None,
               formulations=None, progress: Callable | None = None,
               workers: int = 1) -> list[dict]:
    """Every cell (or those of ``mechanisms`` x ``formulations``), in that order;
    ``progress(cell)`` after each.  ``workers`` > 1: the cells run in that many processes
    (their ``wall_s`` then shares the machine)."""
    jobs = [(m, f, t_end, h) for m in mechanisms or CASES for f in formulations or FORMULATIONS]
    out = []
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(workers) as pool:
            results = pool.map(_run_job, jobs)
            for cell in results:
                if progress is not None:
                    progress(cell)
                out.append(cell)
        return out
    for job in jobs:
        cell = _run_job(job)
        if progress is not None:
            progress(cell)
        out.append(cell)
    return out


def summary(results: list[dict]) -> dict:
    """``{"pass", "refused", "fail", "judged"}`` counts (judged = not refused)."""
    n = {s: sum(r["status"] == s for r in results) for s in ("PASS", "REFUSED", "FAIL")}
    return {"pass": n["PASS"], "refused": n["REFUSED"], "fail": n["FAIL"],
            "judged": n["PASS"] + n["FAIL"]}


def _cell_text(r: dict) -> str:
    if r["status"] == "PASS":
        return f"PASS {r['error_m']:.1e}"
    if r["status"] == "REFUSED":
        return "REFUSED, " + r["message"].split(":", 1)[0]
    return "FAIL"


def _steps(results: list[dict]) -> str:
    hs: dict[float, list[str]] = {}
    for r in results:
        hs.setdefault(r["h"], [])
        if r["formulation"] not in hs[r["h"]]:
            hs[r["h"]].append(r["formulation"])
    if len(hs) == 1:
        return f"h = {next(iter(hs)) * 1e3:g} ms"
    main = max(hs, key=lambda k: len(hs[k]))
    rest = "; ".join(f"{', '.join(f)} at {k * 1e3:g} ms (documented step)"
                     for k, f in hs.items() if k != main)
    return f"h = {main * 1e3:g} ms ({rest})"


def markdown_table(results: list[dict], sensitivities: dict | None = None) -> str:
    """The corpus as a Markdown table (mechanism x formulation) with numbered notes: PASS
    with the position error [m], REFUSED with the alternative it names, FAIL with the
    reason.  ``sensitivities``: :func:`sensitivity` per mechanism (an extra column)."""
    mechs = list(dict.fromkeys(r["mechanism"] for r in results))
    forms = list(dict.fromkeys(r["formulation"] for r in results))
    by = {(r["mechanism"], r["formulation"]): r for r in results}
    notes: dict[str, int] = {}
    extra = ["sensitivity"] if sensitivities else []
    lines = ["| mechanism | tolerance | " + " | ".join(extra + forms) + " |",
             "|---" * (len(forms) + 2 + len(extra)) + "|"]
    for m in mechs:
        cells = [f"{CASES[m].tol_m:.0e} m"]
        if sensitivities:
            cells.append(f"{sensitivities[m]:.1e}" if m in sensitivities else "")
        for f in forms:
            r = by.get((m, f))
            if r is None:
                cells.append("")
                continue
            text = _cell_text(r)
            if r["status"] != "PASS":
                key = r["message"] if r["status"] == "FAIL" else \
                    REFUSALS[(m, f)][1]
                key = key if len(key) <= 240 else key[:237] + "..."
                notes.setdefault(key, len(notes) + 1)
                text = f"{'**FAIL**' if r['status'] == 'FAIL' else text} [{notes[key]}]"
            cells.append(text)
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    s = summary(results)
    t_end = results[0]["t_end"] if results else 0.0
    lines += ["", f"{s['pass']} of {s['judged']} judged cells pass ({s['refused']} documented "
              f"refusals); {t_end:g} s, {_steps(results)}.  Error: max over time of the "
              "largest tracked-point distance from the independent minimal-coordinate "
              "reference [m]; PASS within the tolerance (1e-4 m; scaled with the four-bar)."
              + (" Sensitivity: the largest tracked-point change over the run per unit "
                 "relative energy error of the reference's start [m]." if sensitivities
                 else ""), ""]
    lines += [f"{i}. {text}" for text, i in notes.items()]
    return "\n".join(lines)


def sensitivity(mechanism: str, t_end: float = 10.0, dq: float = 1e-7) -> float | None:
    """How ill-conditioned the case is: the largest change of a tracked point over
    ``t_end`` [m] per unit relative energy change, when the reference starts ``dq`` off
    (relative to the largest kinetic energy; None for the exact chain reference).  A
    formulation whose relative energy error is ``e`` is then off by about ``e`` times
    this; the four-bar swinging nearly over the top reads 2e3 m, the others 0.05-15 m."""
    ref = CASES[mechanism].reference()
    if not isinstance(ref, Reference):
        return None
    t = np.linspace(0.0, t_end, int(round(t_end / 0.005)) + 1)
    base = ref.solve(t)
    kin = max(ref.energy(q, qd) - ref.energy(q, 0 * qd) for q, qd in zip(base["q"],
                                                                         base["qd"]))
    e0 = ref.energy(ref.q0, ref.qd0)
    ref.q0 = ref.q0 + dq
    moved = ref.solve(t)
    de = abs(ref.energy(ref.q0, ref.qd0) - e0) / kin
    return float(np.max(np.linalg.norm(moved["points"] - base["points"], axis=2)) / de)


def text_table(results: list[dict]) -> str:
    """One line per cell: mechanism, formulation, status, error, energy, wall time, message."""
    head = f"{'mechanism':24} {'formulation':22} {'status':8} {'error m':>9} {'rel':>9} " \
           f"{'energy':>9} {'wall s':>7}  message"
    lines = [head, "-" * len(head)]

    def g(x):
        return f"{x:9.2e}" if x is not None else f"{'-':>9}"
    for r in results:
        lines.append(f"{r['mechanism']:24} {r['formulation']:22} {r['status']:8} "
                     f"{g(r['error_m'])} {g(r['error_rel'])} {g(r['energy_rel'])} "
                     f"{r['wall_s']:7.2f}  {r['message'][:160]}")
    return "\n".join(lines)


def main() -> None:
    import argparse
    p = argparse.ArgumentParser(prog="python -m bench.multibody_corpus",
                                description="issue 32's multibody corpus")
    p.add_argument("--t-end", type=float, default=10.0)
    p.add_argument("--h", type=float, default=None,
                   help="step [s] (default: 1 ms or the formulation's documented step)")
    p.add_argument("--mechanism", action="append")
    p.add_argument("--formulation", action="append")
    p.add_argument("--markdown", metavar="PATH", help="also write the Markdown table here")
    p.add_argument("--json", metavar="PATH", help="write the cells as JSON here")
    p.add_argument("--sensitivity", action="store_true",
                   help="add each mechanism's sensitivity() to the Markdown table")
    p.add_argument("--workers", type=int, default=1,
                   help="run the cells in this many processes (default 1)")
    a = p.parse_args()
    res = run_corpus(a.t_end, a.h, a.mechanism, a.formulation,
                     progress=lambda r: print(text_table([r]).splitlines()[-1], flush=True),
                     workers=a.workers)
    print(text_table(res))
    sens = None
    if a.sensitivity:
        sens = {m: sensitivity(m, a.t_end) for m in dict.fromkeys(r["mechanism"] for r in res)}
        sens = {m: v for m, v in sens.items() if v is not None}
    md = markdown_table(res, sens)
    print(md)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(md + "\n")
    if a.json:
        import json
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
