"""Diagram factories the FMU export tests build FMUs from (importable by the FMU's slave)."""

from blocks.continuous import Integrator
from blocks.math import Sum
from blocks.pid import PID
from cosim import DiagramBuilder


def servo():
    """Position servo: PI on the error u - y driving an integrator (y' = PI(u - y)).

    Input ``u`` [m], outputs ``y`` [m] and ``e`` [m]; tunable ``pi.kp``, ``pi.ki``.
    """
    b = DiagramBuilder("servo")
    err = b.add(Sum("err", "+-", unit="m"))
    pi = b.add(PID("pi", kp=4.0, ki=2.0, unit_in="m", unit_out="m/s"))
    plant = b.add(Integrator("plant", unit="m", input_unit="m/s"))
    b.connect(err.y, pi.e)
    b.connect(pi.u, plant.u)
    b.connect(plant.y, "err.u1")
    b.export_input(err.ins[0], "u")
    b.export_output(plant.y, "y")
    b.export_output(err.y, "e")
    return b.build()


def vector():
    """A diagram with an array output (refused by the pythonfmu export)."""
    b = DiagramBuilder("vector")
    i = b.add(Integrator("i", x0=[0.0, 1.0]))
    b.export_input(i.u, "u")
    b.export_output(i.y, "y")
    return b.build()
