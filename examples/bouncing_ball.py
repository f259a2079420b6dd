"""Authoring a block: a bouncing ball with a zero-crossing event.

A block declares everything in its constructor (ports with units, states,
parameters, events) and implements pure functions of the context: the block,
:class:`blocks.benchmarks.bouncing_ball.BouncingBall`, lives in the installed
package with its analytic impact times, so docs and tests import it from any
folder.  Run with ``python examples/bouncing_ball.py`` or
``cosim run examples/bouncing_ball.py``.
"""

from __future__ import annotations

from blocks.benchmarks import bouncing_ball
from blocks.benchmarks.bouncing_ball import BouncingBall, analytic_impacts
from cosim import Simulator

SIMULATION = dict(t_end=8.0, solver="rk45", dt=0.01)

__all__ = ["SIMULATION", "BouncingBall", "analytic_impacts", "build", "main"]


def build():
    """The ball dropped from 10 m, restitution 0.8 (the function ``cosim run`` calls)."""
    return bouncing_ball.build()


def main() -> list[float]:
    d = build()
    ctx = d.create_context()
    res = Simulator(d, ctx, solver="rk45", dt=0.01, rtol=1e-10, atol=1e-12).run(8.0)
    impacts = d.find("ball").impact_times(ctx)
    print("impact   simulated [s]   analytic [s]   difference")
    for k, (a, b) in enumerate(zip(impacts, analytic_impacts(n=len(impacts)))):
        print(f"{k + 1:6d}   {a:13.9f}   {b:12.9f}   {a - b: .1e}")
    after = res["ball.height"][res.time > impacts[-1]]
    print(f"highest point after the last impact: {after.max():.4f} m")
    return impacts


if __name__ == "__main__":
    main()
