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
    pi = b.add(PID("pi", kp=4.0, ki=2.0, input_unit="m", unit="m/s"))
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


def mixed():
    """Array, integer and bool ports (FMI 3 export; FMI 2 refuses the arrays).

    Inputs ``v`` (2,) [m/s] and integer ``k``; outputs ``x`` (2,) [m] (x' = v, x(0) =
    (0, 1)), bool ``ahead`` (x[0] > x[1]) and integer ``k2`` (2 k, direct feedthrough).
    """
    from cosim import FunctionBlock
    b = DiagramBuilder("mixed")
    i = b.add(Integrator("i", x0=[0.0, 1.0], shape=(2,), unit="m", input_unit="m/s"))
    f = b.add(FunctionBlock("f", lambda x, k: (bool(x[0] > x[1]), 2 * int(k)),
                            inputs=[{"name": "x", "shape": (2,), "unit": "m"},
                                    {"name": "k", "dtype": int}],
                            outputs=[{"name": "ahead", "dtype": bool},
                                     {"name": "k2", "dtype": int}]))
    b.connect(i.y, f.input("x"))
    b.export_input(i.u, "v")
    b.export_input(f.input("k"), "k")
    b.export_output(i.y, "x")
    b.export_output(f.output("ahead"), "ahead")
    b.export_output(f.output("k2"), "k2")
    return b.build()


def complex_port():
    """A diagram with a complex output (no FMI type for it: refused by the export)."""
    from cosim import FunctionBlock
    b = DiagramBuilder("complex_port")
    f = b.add(FunctionBlock("f", lambda u: complex(u, 1.0),
                            outputs=[{"name": "z", "dtype": complex}]))
    b.export_input(f.input("u"), "u")
    b.export_output(f.output("z"), "z")
    return b.build()
