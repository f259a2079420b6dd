"""Generated diagrams with zero crossings, for testing the compiled Simulator's event location
against the Python loop on the class rather than on named cases.

Blocks (each with a Python and a C form of the same arithmetic, :class:`cosim.codegen.CModel`
with ``zero_crossings``):

* :class:`RestingBall`: a bouncing ball (``h`` falling through 0: ``v <- -e v``), which comes
  to rest once the rebound speed falls below ``v_rest`` (no Zeno end);
* :class:`Thermostat`: a two-point switch, ``T`` rising through ``hi`` (off) and falling
  through ``lo`` (on), driven by an input;
* :class:`LevelCounter`: counts its input crossing a level in a direction -1, 0 or +1 (no
  continuous state; the witness reads an input);
* :class:`StopIntegrator`: an integrator held at ``hi`` from reaching it until its input turns
  negative (a witness left on zero by an event, the release);
* :class:`Alarm`: ``t`` rising through ``T`` (on the grid or off it), terminal or not, with
  or without a handler.

:func:`event_diagram` draws, from a seed, 1-4 such blocks (two balls with close heights in
some: several events in one step), their sources, and core blocks reading their outputs;
every leaf output is recorded.  Core blocks read the events' outputs: gains, lags, and
zero-order holds feeding lags (held outputs the derivatives read: AB3's restarts at hits).
"""

from __future__ import annotations

import numpy as np

import blocks as bl
from cosim import Block, DiagramBuilder
from cosim.codegen import CModel, CZeroCrossing


class RestingBall(Block):
    """A ball dropped from ``h0``: ``h' = v, v' = -g`` in flight; ``h`` falling through 0:
    ``v <- -e v`` (``h <- 0``), the impacts counted and the last one's time kept; a rebound
    slower than ``v_rest``: at rest (``h = v = 0``, the witness a constant -1).

    Ports
    -----
    out  height, velocity  scalar  state only
    out  impacts           scalar  the count; state only
    out  last              scalar  the last impact's time (-1 before); state only
    """

    def __init__(self, name, h0=1.0, e=0.8, g=9.81, v_rest=0.1):
        super().__init__(name)
        self.e, self.g, self.v_rest = float(e), float(g), float(v_rest)
        self.x = self.declare_continuous_state("x", [float(h0), 0.0])
        self.rest = self.declare_discrete_state("rest", 0.0)
        self.n = self.declare_discrete_state("n", 0.0)
        self.t_last = self.declare_discrete_state("t_last", -1.0)
        self.height = self.declare_output("height", lambda c: float(c.state(self.x)[0]),
                                          depends_on=())
        self.velocity = self.declare_output("velocity", lambda c: float(c.state(self.x)[1]),
                                            depends_on=())
        self.impacts = self.declare_output("impacts", lambda c: float(c.discrete(self.n)),
                                           depends_on=())
        self.last = self.declare_output("last", lambda c: float(c.discrete(self.t_last)),
                                        depends_on=())
        self.declare_zero_crossing(self._witness, self._impact, direction=-1, name="impact")

    def _witness(self, ctx):
        return -1.0 if ctx.discrete(self.rest) else float(ctx.state(self.x)[0])

    def derivatives(self, ctx):
        if ctx.discrete(self.rest):
            return np.array([0.0, 0.0])
        return np.array([ctx.state(self.x)[1], -self.g])

    def _impact(self, ctx):
        v = float(ctx.state(self.x)[1])
        vn = -self.e * v
        if abs(vn) < self.v_rest:
            ctx.set_discrete(self.rest, 1.0)
            ctx.set_state(self.x, [0.0, 0.0])
        else:
            ctx.set_state(self.x, [0.0, vn])
        ctx.set_discrete(self.n, ctx.discrete(self.n) + 1.0)
        ctx.set_discrete(self.t_last, ctx.time)

    def c_model(self, cg):
        h, v = cg.x(self.x, 0), cg.x(self.x, 1)
        rest, n, tl = cg.xd(self.rest), cg.xd(self.n), cg.xd(self.t_last)
        return CModel(
            outputs={"height": f"{cg.y(self.height)} = {h};",
                     "velocity": f"{cg.y(self.velocity)} = {v};",
                     "impacts": f"{cg.y(self.impacts)} = {n};",
                     "last": f"{cg.y(self.last)} = {tl};"},
            derivatives=(f"{cg.dx(self.x, 0)} = {rest} != 0.0 ? 0.0 : {v};\n"
                         f"{cg.dx(self.x, 1)} = {rest} != 0.0 ? 0.0 : {-self.g!r};"),
            zero_crossings={"impact": CZeroCrossing(
                witness=f"({rest} != 0.0 ? -1.0 : {h})",
                handler=(f"double vn = {-self.e!r} * {v};\n"
                         f"if (fabs(vn) < {self.v_rest!r}) {{ {rest} = 1.0; {h} = 0.0; "
                         f"{v} = 0.0; }}\nelse {{ {h} = 0.0; {v} = vn; }}\n"
                         f"{n} = {n} + 1.0;\n{tl} = {cg.t};"))})


class Thermostat(Block):
    """``T' = P m - k (T - u)``; ``T`` rising through ``hi``: ``m <- 0``; falling through
    ``lo``: ``m <- 1``.

    Ports
    -----
    in   u     scalar  ambient
    out  temp  scalar  T; state only
    out  on    scalar  m; state only
    """

    def __init__(self, name, T0=0.0, lo=-0.5, hi=0.5, P=3.0, k=1.0):
        super().__init__(name)
        self.lo, self.hi, self.P, self.k = float(lo), float(hi), float(P), float(k)
        self.u = self.declare_input("u")
        self.T = self.declare_continuous_state("T", float(T0))
        self.mode = self.declare_discrete_state("mode", 1.0)
        self.temp = self.declare_output("temp", lambda c: float(c.state(self.T)),
                                        depends_on=())
        self.on = self.declare_output("on", lambda c: float(c.discrete(self.mode)),
                                      depends_on=())
        self.declare_zero_crossing(lambda c: float(c.state(self.T)) - self.hi,
                                   lambda c: c.set_discrete(self.mode, 0.0), direction=1,
                                   name="hot")
        self.declare_zero_crossing(lambda c: float(c.state(self.T)) - self.lo,
                                   lambda c: c.set_discrete(self.mode, 1.0), direction=-1,
                                   name="cold")

    def derivatives(self, ctx):
        T = float(ctx.state(self.T))
        return self.P * float(ctx.discrete(self.mode)) - self.k * (T - ctx.input(self.u))

    def c_model(self, cg):
        T, m = cg.x(self.T), cg.xd(self.mode)
        return CModel(
            outputs={"temp": f"{cg.y(self.temp)} = {T};", "on": f"{cg.y(self.on)} = {m};"},
            derivatives=(f"{cg.dx(self.T)} = {self.P!r} * {m} - {self.k!r} * "
                         f"({T} - {cg.u(self.u)});"),
            zero_crossings={"hot": CZeroCrossing(f"{T} - {self.hi!r}", f"{m} = 0.0;"),
                            "cold": CZeroCrossing(f"{T} - {self.lo!r}", f"{m} = 1.0;")})


class LevelCounter(Block):
    """Counts ``u`` crossing ``level`` in ``direction`` (-1, 0, +1) and toggles a sign.

    Ports
    -----
    in   u      scalar
    out  count  scalar  state only
    out  sign   scalar  +1/-1, toggled at each crossing; state only
    """

    def __init__(self, name, level=0.0, direction=0):
        super().__init__(name)
        self.level = float(level)
        self.u = self.declare_input("u")
        self.n = self.declare_discrete_state("n", 0.0)
        self.s = self.declare_discrete_state("s", 1.0)
        self.count = self.declare_output("count", lambda c: float(c.discrete(self.n)),
                                         depends_on=())
        self.sign = self.declare_output("sign", lambda c: float(c.discrete(self.s)),
                                        depends_on=())
        self.declare_zero_crossing(lambda c: c.input(self.u) - self.level, self._hit,
                                   direction=int(direction), name="level")

    def _hit(self, ctx):
        ctx.set_discrete(self.n, ctx.discrete(self.n) + 1.0)
        ctx.set_discrete(self.s, -ctx.discrete(self.s))

    def c_model(self, cg):
        n, s = cg.xd(self.n), cg.xd(self.s)
        return CModel(
            outputs={"count": f"{cg.y(self.count)} = {n};", "sign": f"{cg.y(self.sign)} = {s};"},
            zero_crossings={"level": CZeroCrossing(
                f"{cg.u(self.u)} - {self.level!r}", f"{n} = {n} + 1.0;\n{s} = -{s};")})


class StopIntegrator(Block):
    """``x' = u`` until ``x`` reaches ``hi`` (rising): then ``x <- hi`` held (``x' = 0``)
    until ``u`` falls through 0 (the release leaves the first witness on zero).

    Ports
    -----
    in   u     scalar
    out  y     scalar  x; state only
    out  held  scalar  0/1; state only
    """

    def __init__(self, name, x0=0.0, hi=0.5):
        super().__init__(name)
        self.hi = float(hi)
        self.u = self.declare_input("u")
        self.x = self.declare_continuous_state("x", float(x0))
        self.h = self.declare_discrete_state("held", 0.0)
        self.y = self.declare_output("y", lambda c: float(c.state(self.x)), depends_on=())
        self.held = self.declare_output("held", lambda c: float(c.discrete(self.h)),
                                        depends_on=())
        self.declare_zero_crossing(self._top, self._hold, direction=1, name="top")
        self.declare_zero_crossing(self._release_w, self._release, direction=-1,
                                   name="release")

    def _top(self, ctx):
        return -1.0 if ctx.discrete(self.h) else float(ctx.state(self.x)) - self.hi

    def _release_w(self, ctx):
        return ctx.input(self.u) if ctx.discrete(self.h) else 1.0

    def _hold(self, ctx):
        ctx.set_discrete(self.h, 1.0)
        ctx.set_state(self.x, self.hi)

    def _release(self, ctx):
        ctx.set_discrete(self.h, 0.0)

    def derivatives(self, ctx):
        return 0.0 if ctx.discrete(self.h) else ctx.input(self.u)

    def c_model(self, cg):
        x, h, u = cg.x(self.x), cg.xd(self.h), cg.u(self.u)
        return CModel(
            outputs={"y": f"{cg.y(self.y)} = {x};", "held": f"{cg.y(self.held)} = {h};"},
            derivatives=f"{cg.dx(self.x)} = {h} != 0.0 ? 0.0 : {u};",
            zero_crossings={
                "top": CZeroCrossing(f"({h} != 0.0 ? -1.0 : {x} - {self.hi!r})",
                                     f"{h} = 1.0;\n{x} = {self.hi!r};"),
                "release": CZeroCrossing(f"({h} != 0.0 ? {u} : 1.0)", f"{h} = 0.0;")})


class Alarm(Block):
    """``t`` rising through ``T``: ``flag <- 1`` (``handler``), ending the run if ``terminal``.

    Ports
    -----
    out  flag  scalar  state only
    """

    def __init__(self, name, T=0.5, terminal=False, handler=True):
        super().__init__(name)
        self.T, self.with_handler = float(T), handler
        self.f = self.declare_discrete_state("flag", 0.0)
        self.flag = self.declare_output("flag", lambda c: float(c.discrete(self.f)),
                                        depends_on=())
        self.declare_zero_crossing(lambda c: c.time - self.T,
                                   (lambda c: c.set_discrete(self.f, 1.0)) if handler else None,
                                   direction=1, name="alarm", terminal=terminal)

    def c_model(self, cg):
        f = cg.xd(self.f)
        return CModel(outputs={"flag": f"{cg.y(self.flag)} = {f};"},
                      zero_crossings={"alarm": CZeroCrossing(
                          f"{cg.t} - {self.T!r}", f"{f} = 1.0;" if self.with_handler else "")})


def event_diagram(seed: int, t_end: float = 1.0, dt: float = 1e-3):
    """A random closed diagram with zero crossings (module docstring); ``dt``: the step the
    alarms' grid instants are drawn on."""
    rng = np.random.default_rng(seed)
    u = lambda lo, hi: float(rng.uniform(lo, hi))  # noqa: E731
    b = DiagramBuilder(f"events{seed}")
    src = b.add(bl.Sine("src", u(0.3, 1.5), u(1.0, 8.0), u(0, 3), u(-0.3, 0.3)))
    outs = [f"{src.name}.y"]
    kinds = ["ball", "ball2", "thermo", "level", "stop", "alarm"]
    for k in range(int(rng.integers(1, 5))):
        kind = str(rng.choice(kinds))
        name = f"e{k}_{kind}"
        if kind in ("ball", "ball2"):
            scale = float(10 ** rng.uniform(-1.5, 1.5))  # drop heights 3 cm .. 30 m
            g = u(2.0, 20.0)
            h0 = scale
            e = u(0.3, 0.95)
            rest = float(10 ** rng.uniform(-2.7, -1.3))  # small: flights shorter than dt
            v_rest = rest * (2 * g * h0) ** 0.5
            t_fall = (2 * h0 / g) ** 0.5
            if t_fall > t_end:  # the first impact inside the run
                g = 2 * h0 / (0.4 * t_end) ** 2
                v_rest = rest * (2 * g * h0) ** 0.5
            b.add(RestingBall(name, h0, e, g, v_rest))
            outs.append(f"{name}.height")
            if kind == "ball2":  # a twin a hair higher: both impacts in one step
                twin = b.add(RestingBall(name + "_twin", h0 * (1 + u(1e-7, 1e-4)), e, g, v_rest))
                outs.append(f"{twin.name}.velocity")
        elif kind == "thermo":
            b.add(Thermostat(name, u(-0.4, 0.4), -u(0.1, 0.5), u(0.1, 0.5), u(1, 4),
                             u(0.5, 3)))
            b.connect(str(rng.choice(outs)), f"{name}.u")
            outs.append(f"{name}.temp")
        elif kind == "level":
            b.add(LevelCounter(name, u(-0.2, 0.2), int(rng.integers(-1, 2))))
            b.connect(str(rng.choice(outs)), f"{name}.u")
            outs.append(f"{name}.sign")
        elif kind == "stop":
            b.add(StopIntegrator(name, u(-0.2, 0.1), u(0.05, 0.4)))
            b.connect(f"{src.name}.y", f"{name}.u")
            outs.append(f"{name}.y")
        else:
            on_grid = bool(rng.integers(2))
            T = round(u(0.1, 0.9) * t_end / dt) * dt if on_grid else u(0.1, 0.9) * t_end
            b.add(Alarm(name, T, terminal=bool(rng.integers(3) == 0),
                        handler=bool(rng.integers(4))))
            outs.append(f"{name}.flag")
    for k in range(int(rng.integers(1, 4))):  # core blocks reading the events' outputs
        name = f"c{k}"
        kind = int(rng.integers(3))
        if kind == 0:
            b.add(bl.Gain(name, u(-2, 2)))
        elif kind == 1:
            b.add(bl.FirstOrderLag(name, u(0.02, 0.3), u(0.5, 2), 0.0))
        else:  # a held sample of an event output, read by a lag: AB3's restarts at hits
            b.add(bl.ZeroOrderHold(name + "_zoh", dt * int(rng.choice([1, 2, 5]))))
            b.connect(str(rng.choice(outs)), f"{name}_zoh.u")
            b.add(bl.FirstOrderLag(name, u(0.02, 0.3), u(0.5, 2), 0.0))
            b.connect(f"{name}_zoh.y", f"{name}.u")
            outs.append(f"{name}.y")
            continue
        b.connect(str(rng.choice(outs)), f"{name}.u")
        outs.append(f"{name}.y")
    return b.build()
