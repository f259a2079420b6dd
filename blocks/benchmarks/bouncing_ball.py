r"""The bouncing ball: a state event with a state reset, against its analytic impacts.

A point mass dropped from rest at height :math:`h_0` onto a rigid floor with restitution
:math:`e`.  The :math:`k`-th impact (:math:`k = 0, 1, \dots`) happens at

.. math::

    t_0 = \sqrt{2 h_0 / g}, \qquad t_k = t_{k-1} + 2 e^k \sqrt{2 h_0 / g}

(the ball leaves each impact at :math:`e^k` times the first impact speed
:math:`\sqrt{2 g h_0}` and flies twice its rise time).  :class:`BouncingBall` locates the
impacts as zero crossings of :math:`h` and records their instants in a discrete state
(:meth:`BouncingBall.impact_times`).
"""

from __future__ import annotations

import math

import numpy as np

from cosim import Block, DiagramBuilder
from cosim.params import FRACTION, POSITIVE


def _unit_interval(e: float) -> None:
    if not 0.0 <= e <= 1.0:
        raise ValueError("restitution must lie in [0, 1]")


class BouncingBall(Block):
    """Point mass falling under gravity onto a rigid floor with restitution ``e``.

    .. math::

        \\dot h = v, \\qquad \\dot v = -g; \\qquad
        h = 0,\\ v < 0 \\;\\Rightarrow\\; v \\leftarrow -e\\,v

    ``restitution`` is a parameter (tunable per context).  The impacts are counted in the
    discrete state ``n_impacts`` and the instants of the first ``max_impacts`` kept in the
    discrete state ``impacts`` (an array of that size, NaN where none yet):
    :meth:`impact_times` gives them as a list.  Numbers only, so the block has a C form
    (:meth:`c_model`) and runs in a compiled Simulator and in an exported FMU.

    Ports
    -----
    out  height    scalar [m]    state only
    out  velocity  scalar [m/s]  state only

    Parameters
    ----------
    height0_m : float
        Initial height (the ball starts at rest).
    restitution : float
        :math:`e` in [0, 1]; the initial value of the tunable parameter.
    gravity_m_s2 : float
        :math:`g`.
    max_impacts : int
        How many impact instants are kept (later impacts are counted only).
    """

    argument_checks = {"restitution": FRACTION, "gravity_m_s2": POSITIVE}

    def __init__(self, name: str, height0_m: float = 10.0, restitution: float = 0.8,
                 gravity_m_s2: float = 9.81, max_impacts: int = 64) -> None:
        super().__init__(name)
        if int(max_impacts) != max_impacts or max_impacts < 1:
            raise ValueError(f"BouncingBall '{name}': max_impacts must be a whole number "
                             f">= 1, got {max_impacts!r}")
        self.e = self.declare_parameter("restitution", restitution, validate=_unit_interval)
        self.g = gravity_m_s2
        self.max_impacts = int(max_impacts)
        self.x = self.declare_continuous_state("x", [height0_m, 0.0])
        # impact instants and count: discrete states, so they live in the context too
        self.impacts = self.declare_discrete_state("impacts",
                                                   np.full(self.max_impacts, np.nan))
        self.n_impacts = self.declare_discrete_state("n_impacts", 0)
        self.height = self.declare_output("height", lambda ctx: float(ctx.state(self.x)[0]),
                                          unit="m", depends_on=())
        self.velocity = self.declare_output("velocity", lambda ctx: float(ctx.state(self.x)[1]),
                                            unit="m/s", depends_on=())
        # witness h(t): falling through zero triggers the impact handler
        self.declare_zero_crossing(lambda ctx: ctx.state(self.x)[0], self._impact,
                                   direction=-1, name="impact")

    def derivatives(self, ctx):
        return np.array([ctx.state(self.x)[1], -self.g])

    def _impact(self, ctx):
        _, v = ctx.state(self.x)
        ctx.set_state(self.x, [0.0, -ctx.param(self.e) * v])
        n = int(ctx.discrete(self.n_impacts))
        times = np.array(ctx.discrete(self.impacts), dtype=float)
        if n < times.size:
            times[n] = ctx.time
        ctx.set_discrete(self.impacts, times)
        ctx.set_discrete(self.n_impacts, n + 1)

    def impact_times(self, ctx) -> list[float]:
        """The kept impact instants [s] in ``ctx``, in order."""
        n = int(ctx.discrete(self.n_impacts))
        return [float(t) for t in ctx.discrete(self.impacts)[:n]]

    def c_model(self, cg):
        """The C form (:mod:`cosim.codegen`): the same arithmetic, the impact as a C zero
        crossing."""
        from cosim.codegen import CModel, CZeroCrossing
        h, v = cg.x(self.x, 0), cg.x(self.x, 1)
        e = cg.param("restitution", float(cg.value(self.e)), unit="1",
                     description=f"restitution of '{self.path}'")
        n, first = cg.xd(self.n_impacts), cg.xd(self.impacts, 0)
        return CModel(
            outputs={"height": f"{cg.y(self.height)} = {h};",
                     "velocity": f"{cg.y(self.velocity)} = {v};"},
            derivatives=f"{cg.dx(self.x, 0)} = {v};\n{cg.dx(self.x, 1)} = {-self.g!r};",
            zero_crossings={"impact": CZeroCrossing(
                witness=h,
                handler=(f"double vn = -({e}) * {v};\n{h} = 0.0;\n{v} = vn;\n"
                         f"if ({n} < {self.max_impacts}.0) (&{first})[(int){n}] = {cg.t};\n"
                         f"{n} = {n} + 1.0;"))})


def build(height0_m: float = 10.0, restitution: float = 0.8, gravity_m_s2: float = 9.81):
    """A diagram ``bouncing_ball`` holding one :class:`BouncingBall` named ``ball``."""
    b = DiagramBuilder("bouncing_ball")
    b.add(BouncingBall("ball", height0_m, restitution, gravity_m_s2))
    return b.build()


def analytic_impacts(h0: float = 10.0, e: float = 0.8, g: float = 9.81,
                     n: int = 4) -> list[float]:
    """The first ``n`` impact instants [s] (module docstring)."""
    t = math.sqrt(2 * h0 / g)
    out = [t]
    for k in range(1, n):
        out.append(out[-1] + 2 * e ** k * g * math.sqrt(2 * h0 / g) / g)
    return out
