"""Generated diagrams of core-library blocks, for testing whole-diagram paths (the compiled
Simulator against the Python loop) on the class rather than on named cases.

:func:`core_diagram` draws, from a seed, 6-16 blocks of every kind of the core library
(sources with breakpoints, math, nonlinear, tables, continuous, PID, discrete blocks at
several rates and offsets, rate transitions, a switch), wired at random from earlier
outputs, with a feedback loop through a block without direct feedthrough in some.  Every
parameter is drawn too.  Closed: no exported inputs; every leaf output is recorded.
"""

from __future__ import annotations

import numpy as np

import blocks as bl
from cosim import DiagramBuilder

#: sample periods [s] the discrete blocks draw from (multiples of 1 ms, as a fixed-step run
#: needs; the sources' breakpoints fall between grid points)
PERIODS = (0.002, 0.003, 0.005, 0.01)


def core_diagram(seed: int, t_end: float = 0.5):
    """A random closed diagram of core blocks (module docstring)."""
    rng = np.random.default_rng(seed)
    b = DiagramBuilder(f"core{seed}")
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    outs: list[str] = []
    sources = [
        lambda n: bl.Step(n, round(u(0.05, t_end), 4), u(-2, 2), u(-1, 1)),
        lambda n: bl.Ramp(n, u(-2, 2), round(u(0.0, t_end / 2), 4), u(-1, 1)),
        lambda n: bl.Sine(n, u(0.2, 2), u(0.5, 5), u(0, 3), u(-0.5, 0.5)),
        lambda n: bl.Constant(n, u(-2, 2)),
        lambda n: bl.Ramp(n, 1.0, 0.0),  # the time itself (TimeSource has a unit: s)
    ]
    for i in range(int(rng.integers(1, 4))):
        blk = b.add(sources[int(rng.integers(len(sources)))](f"src{i}"))
        outs.append(f"{blk.name}.{next(iter(blk.outputs))}")
    fb = None
    if seed % 2:  # a feedback loop: closed at the end through a block without feedthrough
        fb = b.add(bl.Sum("fb", "+-"))
        b.connect(outs[0], "fb.u0")
        outs.append("fb.y")

    def period():
        return float(rng.choice(PERIODS))

    def offset(p):
        return float(rng.choice([0.0, 0.0, 0.001]))

    single = {
        "gain": lambda n: bl.Gain(n, u(-2, 2)),
        "sat": lambda n: bl.Saturation(n, u(-1, -0.2), u(0.2, 1)),
        "dead": lambda n: bl.DeadZone(n, u(-0.5, -0.05), u(0.05, 0.5)),
        "abs": lambda n: bl.Abs(n),
        "table": lambda n: bl.Table1D(n, [-2.0, -0.5, 0.0, 1.0, 2.5],
                                      [u(-1, 1) for _ in range(5)],
                                      extrapolation=str(rng.choice(["clip", "linear"]))),
        "ss": lambda n: bl.StateSpace(n, [[-u(0.5, 5)]], [[1.0]], [[u(-1, 1)]], [[u(-1, 1)]],
                                      x0=[u(-1, 1)]),
        "tf": lambda n: bl.TransferFunction(n, [u(0.5, 2)], [1.0, u(1, 4), u(1, 8)]),
        "lag": lambda n: bl.FirstOrderLag(n, u(0.02, 0.5), u(0.5, 2), u(-1, 1)),
        "integ": lambda n: bl.Integrator(n, u(-1, 1)),
        "deriv": lambda n: bl.FilteredDerivative(n, u(5, 40)),
        "pid": lambda n: bl.PID(n, u(0.1, 2), u(0, 1), u(0, 0.1),
                                derivative_filter_rad_s=u(20, 100),
                                lower=-u(0.5, 3), upper=u(0.5, 3)),
        "dint": lambda n: bl.DiscreteIntegrator(n, (p := period()), u(0.5, 2),
                                                method=str(rng.choice(["forward", "backward",
                                                                       "trapezoidal"])),
                                                offset_s=offset(p)),
        "dpid": lambda n: bl.DiscretePID(n, (p := period()), u(0.1, 2), u(0, 1), u(0, 0.05),
                                         lower=-u(0.5, 3), upper=u(0.5, 3), offset_s=offset(p)),
        "delay": lambda n: bl.UnitDelay(n, (p := period()), u(-1, 1), offset_s=offset(p)),
        "zoh": lambda n: bl.ZeroOrderHold(n, (p := period()), offset_s=offset(p)),
        "dtf": lambda n: bl.DiscreteTransferFunction(n, [u(0.05, 0.3)], [1.0, -u(0.3, 0.9)],
                                                     period_s=period()),
        "rate": lambda n: bl.RateTransition(n, period()),
        "limiter": lambda n: bl.RateLimiter(n, u(0.5, 5), u(0.5, 5), period()),
        "relay": lambda n: bl.Relay(n, u(0.1, 0.6), -u(0.1, 0.6), u(0.5, 2), u(-2, -0.5),
                                    period_s=period()),
    }
    double = {
        "sum": lambda n: bl.Sum(n, str(rng.choice(["++", "+-", "-+"]))),
        "prod": lambda n: bl.Product(n, "**"),
        "minmax": lambda n: bl.MinMax(n, str(rng.choice(["min", "max"]))),
    }
    kinds = list(single) + list(double) + ["switch"]
    dynamic: list[str] = []  # outputs without direct feedthrough (a loop may close on them)
    for k in range(int(rng.integers(6, 17))):
        kind = str(rng.choice(kinds))
        name = f"b{k}_{kind}"
        pick = [str(rng.choice(outs)) for _ in range(3)]
        if kind in single:
            blk = b.add(single[kind](name))
            inp = next(iter(blk.inputs))
            b.connect(pick[0], f"{name}.{inp}")
            if kind in ("integ", "lag", "delay", "dint") and \
                    not (kind == "dint" and blk.method != "forward"):
                dynamic.append(f"{name}.y")
        elif kind in double:
            blk = b.add(double[kind](name))
            b.connect(pick[0], f"{name}.u0")
            b.connect(pick[1], f"{name}.u1")
        else:
            blk = b.add(bl.Switch(name, u(-0.5, 0.5)))
            b.connect(pick[0], f"{name}.u_true")
            b.connect(pick[1], f"{name}.control")
            b.connect(pick[2], f"{name}.u_false")
        outs.append(f"{name}.{next(iter(blk.outputs))}")
    if fb is not None:
        if not dynamic:
            b.add(bl.UnitDelay("fb_delay", 0.005))
            b.connect(outs[-1], "fb_delay.u")
            dynamic.append("fb_delay.y")
        b.add(bl.Gain("fb_gain", u(0.1, 0.9)))
        b.connect(str(rng.choice(dynamic)), "fb_gain.u")
        b.connect("fb_gain.y", "fb.u1")
    return b.build()
