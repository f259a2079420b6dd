"""The harmonic oscillator x' = -y, y' = x split into two subsystems (a: x, b: y), for
tests of the master's stepping: exact solution x = cos t, y = sin t."""

from blocks.continuous import Integrator
from blocks.math import Gain
from cosim import Block, DiagramBuilder, DiagramSubsystem, Jacobi, MasterScheduler
from cosim.errors import SimulationTerminated


class Done(Block):
    """Ends the run at ``t`` (an FMU's terminateSimulation, say)."""

    def __init__(self, t):
        super().__init__("done")
        self.declare_dynamic_time_event(lambda ctx: t, self._end)

    def _end(self, ctx):
        raise SimulationTerminated("task complete")


def split_oscillator(coupling=None, rate_b=2, extrapolation=1, stop_at=None, **master_kw):
    """The master of the two halves (b at ``rate_b``); ``stop_at``: a ends the run then."""
    ba = DiagramBuilder("a_d")
    if stop_at is not None:
        ba.add(Done(stop_at))
    ia = ba.add(Integrator("x", 1.0))
    ga = ba.add(Gain("g", -1.0))
    ba.connect(ga.y, ia.u)
    ba.export_input(ga.u, "y")
    ba.export_output(ia.y, "x")
    bb = DiagramBuilder("b_d")
    ib = bb.add(Integrator("y", 0.0))
    bb.export_input(ib.u, "x")
    bb.export_output(ib.y, "y")
    subs = [DiagramSubsystem(ba.build(), solver="rk4", dt=1e-3, name="a"),
            DiagramSubsystem(bb.build(), solver="rk4", dt=1e-3, name="b", rate=rate_b)]
    return MasterScheduler(subs, [("a.x", "b.x"), ("b.y", "a.y")], 1e-3,
                           coupling=coupling or Jacobi(), extrapolation=extrapolation,
                           **master_kw)
