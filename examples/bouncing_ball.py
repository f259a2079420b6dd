"""Authoring a block: a bouncing ball with a zero-crossing event.

A block declares everything in its constructor (ports with units, states,
parameters, events) and implements pure functions of the context.  Run with
``python examples/bouncing_ball.py`` or ``cosim run examples/bouncing_ball.py``.
"""

from __future__ import annotations

import math

import numpy as np

from cosim import Block, DiagramBuilder, Simulator

SIMULATION = dict(t_end=8.0, solver="rk45", dt=0.01)


class BouncingBall(Block):
    """Point mass falling under gravity onto a rigid floor with restitution ``e``.

    .. math::

        \\dot h = v, \\qquad \\dot v = -g; \\qquad
        h = 0,\\ v < 0 \\;\\Rightarrow\\; v \\leftarrow -e\\,v

    Ports
    -----
    out  height    scalar  m     state only
    out  velocity  scalar  m/s   state only
    """

    def __init__(self, name: str, height0_m: float = 10.0, restitution: float = 0.8,
                 gravity_m_s2: float = 9.81) -> None:
        super().__init__(name)
        self.e = self.declare_parameter("restitution", restitution, validate=_unit_interval)
        self.g = gravity_m_s2
        self.x = self.declare_continuous_state("x", [height0_m, 0.0])
        # impact instants: a discrete state (any value), so it lives in the context too
        self.impacts = self.declare_discrete_state("impacts", ())
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
        ctx.set_discrete(self.impacts, ctx.discrete(self.impacts) + (ctx.time,))


def _unit_interval(e):
    if not 0.0 <= e <= 1.0:
        raise ValueError("restitution must lie in [0, 1]")


def build():
    b = DiagramBuilder("bouncing_ball")
    b.add(BouncingBall("ball"))
    return b.build()


def analytic_impacts(h0=10.0, e=0.8, g=9.81, n=4):
    t = math.sqrt(2 * h0 / g)
    out = [t]
    for k in range(1, n):
        out.append(out[-1] + 2 * e ** k * g * math.sqrt(2 * h0 / g) / g)
    return out


def main() -> list[float]:
    d = build()
    ctx = d.create_context()
    res = Simulator(d, ctx, solver="rk45", dt=0.01, rtol=1e-10, atol=1e-12).run(8.0)
    impacts = list(ctx.discrete(d.find("ball").impacts))
    print("impact   simulated [s]   analytic [s]   difference")
    for k, (a, b) in enumerate(zip(impacts, analytic_impacts(n=len(impacts)))):
        print(f"{k + 1:6d}   {a:13.9f}   {b:12.9f}   {a - b: .1e}")
    after = res["ball.height"][res.time > impacts[-1]]
    print(f"highest point after the last impact: {after.max():.4f} m")
    return impacts


if __name__ == "__main__":
    main()
