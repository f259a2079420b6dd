"""Issue 31: the project's generated-C FMUs as first-class citizens of other tools.

* input interpolation: FMI 2 ``canInterpolateInputs`` with ``fmi2SetRealInputDerivatives``
  (orders 1..3, the Taylor polynomial at every Runge-Kutta stage), FMI 3 intermediate update
  at every stage; the inputs held where the option is off or cannot take effect;
* ``providesDirectionalDerivative(s)``: equal to finite differences of the FMU's own outputs
  and state derivatives over a generated corpus of diagrams (linear ones exactly);
* FMPy's validation accepts every interface with these capabilities.

The order test of the master with these FMUs is in tests/system/test_master_fmu_coupling.py.
"""

from __future__ import annotations

import ctypes
import shutil

import numpy as np
import pytest

from blocks import (
    Abs,
    FirstOrderLag,
    Gain,
    Integrator,
    Product,
    Saturation,
    StateSpace,
    Sum,
)
from cosim import Block, DiagramBuilder
from fmus.cgen import CModel, CZeroCrossing, FMUExportError
from fmus.export import export_fmu
from fmus.fmu_file import as_fmu

fmpy = pytest.importorskip("fmpy")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


# ----------------------------------------------------------------- helpers
def integrator_diagram():
    """y = integral of u (and u passed through): RK4 integrates a cubic in t exactly."""
    b = DiagramBuilder("integ")
    b.add(Integrator("i", 0.0))
    b.add(Gain("pass", 1.0))
    b.export_input("i.u", "u")
    b.connect("i.y", "pass.u")
    b.export_output("pass.y", "y")
    return b.build()


def _slave(path, kind="cs"):
    """An fmpy instance of ``path`` (FMI 2 or 3, CS or ME), initialized at t = 0."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Model, FMU2Slave
    from fmpy.fmi3 import FMU3Model, FMU3Slave
    md = read_model_description(str(path))
    v3 = md.fmiVersion.startswith("3")
    iface = md.coSimulation if kind == "cs" else md.modelExchange
    cls = {(False, "cs"): FMU2Slave, (False, "me"): FMU2Model, (True, "cs"): FMU3Slave,
           (True, "me"): FMU3Model}[v3, kind]
    fmu = cls(guid=md.guid, unzipDirectory=extract(str(path)),
              modelIdentifier=iface.modelIdentifier, instanceName="x")
    if v3:
        fmu.instantiate()
        fmu.enterInitializationMode(startTime=0.0)
    else:
        fmu.instantiate()
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    return md, fmu, v3


# ------------------------------------------------------ input interpolation
@needs_gcc
def test_fmi2_input_derivatives_make_the_step_follow_the_taylor_polynomial(tmp_path):
    """y(H) = a H + b H^2/2 + c H^3/6 + d H^4/24 exactly (RK4 on a cubic in t); the next
    step without derivatives holds u at its end-of-step value.  Before issue 31:
    ``fmi2SetRealInputDerivatives`` returned fmi2Error ("inputs are held over a step")."""
    from fmpy import read_model_description
    path = export_fmu(integrator_diagram(), tmp_path / "i2.fmu", "2.0", step=0.05)
    md = read_model_description(str(path))
    assert md.coSimulation.canInterpolateInputs
    vr = {v.name: v.valueReference for v in md.modelVariables}
    _, fmu, _ = _slave(path)
    a, b, c, d, h = 1.5, -2.0, 3.0, 4.0, 0.2
    fmu.setReal([vr["u"]], [a])
    for order, val in ((1, b), (2, c), (3, d)):
        fmu.setRealInputDerivatives([vr["u"]], [order], [val])
    fmu.doStep(0.0, h)
    y = fmu.getReal([vr["y"]])[0]
    exact = a * h + b * h**2 / 2 + c * h**3 / 6 + d * h**4 / 24
    assert y == pytest.approx(exact, rel=1e-14, abs=1e-15)
    u_end = a + b * h + c * h**2 / 2 + d * h**3 / 6
    assert fmu.getReal([vr["u"]])[0] == pytest.approx(u_end, rel=1e-14)
    fmu.doStep(h, h)  # derivatives used up: held at u_end
    assert fmu.getReal([vr["y"]])[0] == pytest.approx(exact + u_end * h, rel=1e-13)
    with pytest.raises(Exception, match="FMI|fmi2"):  # noqa: PT011 - fmpy's call exception
        fmu.setRealInputDerivatives([vr["u"]], [4], [1.0])
    fmu.terminate()
    fmu.freeInstance()


@needs_gcc
def test_fmi3_intermediate_update_sets_the_inputs_at_every_stage(tmp_path):
    """The FMI 3 mechanism (no input derivatives in FMI 3 Co-Simulation): the importer's
    intermediate-update callback sets the inputs flagged ``intermediateUpdate`` at each
    stage; the project's own importer gives the master's polynomial there."""
    from fmpy import read_model_description

    from fmus import load_fmu
    path = export_fmu(integrator_diagram(), tmp_path / "i3.fmu", "3.0", step=0.05)
    md = read_model_description(str(path))
    assert md.coSimulation.providesIntermediateUpdate
    sub = load_fmu(path, name="f")
    assert [v.intermediate_update for v in sub.info.inputs] == [True]  # fmpy does not read it
    assert sub.max_input_order == {"u": 3}
    sub.initialize(0)
    coeffs = (1.5, -2.0, 3.0 / 2, 4.0 / 6)  # the master's polynomial in (t - t0)
    sub.set_inputs(0.0, {"u": coeffs})
    h = 0.2
    sub.do_step(0, 200_000_000)
    exact = sum(ck * h ** (k + 1) / (k + 1) for k, ck in enumerate(coeffs))
    assert sub.get_outputs()["y"] == pytest.approx(exact, rel=1e-13)
    sub.free()


@needs_gcc
@pytest.mark.parametrize("version", ["2.0", "3.0"])
def test_held_inputs_where_asked_or_where_interpolation_cannot_take_effect(tmp_path, version):
    from fmpy import read_model_description

    def caps(path):
        cs = read_model_description(str(path)).coSimulation
        return bool(getattr(cs, "canInterpolateInputs", False)
                    or getattr(cs, "providesIntermediateUpdate", False))
    d = integrator_diagram()
    assert caps(export_fmu(d, tmp_path / "a.fmu", version, step=0.05, compile=False))
    assert not caps(export_fmu(d, tmp_path / "b.fmu", version, step=0.05, compile=False,
                               interpolate_inputs=False))
    assert not caps(export_fmu(d, tmp_path / "c.fmu", version, integrator="zoh",
                               compile=False))
    with pytest.raises(FMUExportError, match=r"integrator='zoh' takes the exact step"):
        export_fmu(d, tmp_path / "d.fmu", version, integrator="zoh", interpolate_inputs=True)
    with pytest.raises(FMUExportError, match=r"input interpolation is a Co-Simulation feature"):
        export_fmu(d, tmp_path / "e.fmu", version, "me", interpolate_inputs=True)


# --------------------------------------------------- directional derivatives
def random_diagram(seed: int):
    """A generated diagram: 1-3 inputs, 4-9 blocks wired at random (linear: Gain, Sum,
    StateSpace with feedthrough, Integrator, FirstOrderLag; nonlinear: Product,
    Saturation, Abs), 1-3 outputs.  Returns ``(diagram, linear)``."""
    rng = np.random.default_rng(seed)
    b = DiagramBuilder(f"rand{seed}")
    n_in = int(rng.integers(1, 4))
    linear_only = seed % 3 == 0
    sources = []  # output paths
    for i in range(n_in):
        g = b.add(Gain(f"in{i}", 1.0))
        b.export_input(g.u, f"u{i}")
        sources.append(f"in{i}.y")
    kinds = ["gain", "sum", "ss", "integ", "lag"] + ([] if linear_only else
                                                     ["prod", "sat", "abs"])
    linear = True
    for k in range(int(rng.integers(4, 10))):
        kind = str(rng.choice(kinds))
        pick = [str(rng.choice(sources)) for _ in range(2)]
        name = f"b{k}"
        if kind == "gain":
            b.add(Gain(name, float(rng.uniform(-2, 2))))
            b.connect(pick[0], f"{name}.u")
        elif kind == "sum":
            b.add(Sum(name, "+-"))
            b.connect(pick[0], f"{name}.u0")
            b.connect(pick[1], f"{name}.u1")
        elif kind == "ss":
            a = -float(rng.uniform(0.5, 3))
            b.add(StateSpace(name, [[a]], [[1.0]], [[float(rng.uniform(-1, 1))]],
                             [[float(rng.uniform(-1, 1))]], x0=[float(rng.uniform(-1, 1))]))
            b.connect(pick[0], f"{name}.u")
        elif kind == "integ":
            b.add(Integrator(name, float(rng.uniform(-1, 1))))
            b.connect(pick[0], f"{name}.u")
        elif kind == "lag":
            b.add(FirstOrderLag(name, float(rng.uniform(0.1, 1)), y0=float(rng.uniform(-1, 1))))
            b.connect(pick[0], f"{name}.u")
        elif kind == "prod":
            linear = False
            b.add(Product(name, "**"))
            b.connect(pick[0], f"{name}.u0")
            b.connect(pick[1], f"{name}.u1")
        elif kind == "sat":
            linear = False
            b.add(Saturation(name, -0.8, 0.9))
            b.connect(pick[0], f"{name}.u")
        else:
            linear = False
            b.add(Abs(name))
            b.connect(pick[0], f"{name}.u")
        sources.append(f"{name}.y")
    outs = sources[n_in:]
    chosen = sorted({str(x) for x in rng.choice(outs, size=min(3, len(outs)), replace=False)})
    for j, src in enumerate(chosen):
        b.export_output(src, f"y{j}")
    return b.build(), linear


CORPUS = range(12)


def _check_directional(md, fmu, v3, kind, linear, fused, rng):
    """Directional derivatives along unit and random seeds against central differences of
    the FMU's own outputs (and state derivatives in ME)."""
    ins = [v for v in md.modelVariables if v.causality == "input"]
    outs = [v for v in md.modelVariables if v.causality == "output"]
    ders = [v for v in md.modelVariables if v.derivative] if kind == "me" else []
    states = [v.derivative for v in ders]
    knowns = ins + states
    unknowns = outs + ders
    get = fmu.getFloat64 if v3 else fmu.getReal
    put = fmu.setFloat64 if v3 else fmu.setReal
    u = [float(x) for x in rng.uniform(-1.2, 1.2, len(ins))]
    if ins:
        put([v.valueReference for v in ins], u)
    x = [float(a) for a in get([v.valueReference for v in states])] if states else []

    def f(vals):
        if ins:
            put([v.valueReference for v in ins], [float(a) for a in vals[:len(ins)]])
        if states:
            xs = [float(a) for a in vals[len(ins):]]
            fmu.setContinuousStates((ctypes.c_double * len(xs))(*xs), len(xs))
        return np.array(get([v.valueReference for v in unknowns]))

    base = np.array(u + x, dtype=float)
    seeds = list(np.eye(len(knowns))) + [rng.uniform(-1, 1, len(knowns))]
    for seed in seeds:
        kv = [v.valueReference for v in knowns]
        uv = [v.valueReference for v in unknowns]
        f(base)  # the point of the derivative
        dd = np.array(fmu.getDirectionalDerivative(uv, kv, list(seed)))
        eps = 1e-6
        fd = (f(base + eps * seed) - f(base - eps * seed)) / (2 * eps)
        f(base)
        np.testing.assert_allclose(dd, fd, rtol=1e-6, atol=1e-6)
        if linear:  # a unit step of the linear map: exact through the fused matrices,
            exact = f(base + seed) - f(base)  # to rounding by the blocks' differences
            f(base)
            tol = 1e-12 if fused else 1e-9
            np.testing.assert_allclose(dd, exact, rtol=tol, atol=tol)


@needs_gcc
@pytest.mark.parametrize("version", ["2.0", "3.0"])
@pytest.mark.parametrize("kind", ["cs", "me"])
def test_directional_derivatives_equal_finite_differences_over_a_corpus(tmp_path, version,
                                                                         kind):
    """12 generated diagrams (every third all-linear; odd seeds exported with
    ``fuse_linear=False``, so every block goes through its central difference), after a few
    steps with random inputs; before issue 31 ``getDirectionalDerivative`` returned an error
    ("not provided")."""
    rng = np.random.default_rng(31)
    n_linear = 0
    for seed in CORPUS:
        d, linear = random_diagram(seed)
        n_linear += linear
        fused = seed % 2 == 0
        path = export_fmu(d, tmp_path / f"r{seed}_{version}_{kind}.fmu", version, kind,
                          step=0.01, fuse_linear=fused)
        md, fmu, v3 = _slave(path, kind)
        caps = as_fmu(path).info.interfaces["CoSimulation" if kind == "cs" else
                                            "ModelExchange"]
        assert caps["providesDirectionalDerivative"]  # fmpy 0.3.32 reads it for FMI 2 only
        if kind == "cs":
            ins = [v.valueReference for v in md.modelVariables if v.causality == "input"]
            for k in range(5):
                if ins:
                    (fmu.setFloat64 if v3 else fmu.setReal)(ins, list(rng.uniform(-1, 1,
                                                                                   len(ins))))
                fmu.doStep(k * 0.1, 0.1)
        else:
            fmu.enterContinuousTimeMode()
            fmu.setTime(0.3)
        _check_directional(md, fmu, v3, kind, linear, fused, rng)
        fmu.terminate()
        fmu.freeInstance()
    assert 0 < n_linear < len(CORPUS)


# ----------------------------------------------------------- FMPy accepts
@pytest.mark.parametrize("version", ["2.0", "3.0"])
@pytest.mark.parametrize("kind", ["cs", "me", "both"])
def test_fmpy_validation_accepts_the_new_capabilities(tmp_path, version, kind):
    from fmpy.validation import validate_fmu
    d, _ = random_diagram(1)
    path = export_fmu(d, tmp_path / "v.fmu", version, kind, step=0.01, compile=False)
    assert validate_fmu(str(path)) == []


# ------------------------------------------------------- state events (ME)
class Ball(Block):
    """A bouncing ball with a C description of its zero crossing (falling through h = 0:
    v <- -e v, h <- 0)."""

    def __init__(self, name, h0=10.0, e=0.8, g=9.81):
        super().__init__(name)
        self.e, self.g = e, g
        self.x = self.declare_continuous_state("x", [h0, 0.0])
        self.height = self.declare_output("height", lambda ctx: float(ctx.state(self.x)[0]),
                                          unit="m", depends_on=())
        self.velocity = self.declare_output("velocity",
                                            lambda ctx: float(ctx.state(self.x)[1]),
                                            unit="m/s", depends_on=())
        self.declare_zero_crossing(lambda ctx: ctx.state(self.x)[0], self._impact,
                                   direction=-1, name="impact")

    def derivatives(self, ctx):
        return np.array([ctx.state(self.x)[1], -self.g])

    def _impact(self, ctx):
        _, v = ctx.state(self.x)
        ctx.set_state(self.x, [0.0, -self.e * v])

    def c_model(self, cg):
        h, v = cg.x(self.x, 0), cg.x(self.x, 1)
        return CModel(
            outputs={"height": f"{cg.y(self.height)} = {h};",
                     "velocity": f"{cg.y(self.velocity)} = {v};"},
            derivatives=f"{cg.dx(self.x, 0)} = {v};\n{cg.dx(self.x, 1)} = {-self.g!r};",
            zero_crossings={"impact": CZeroCrossing(
                witness=h, handler=f"{h} = 0.0;\n{v} = {-self.e!r} * {v};")})


def ball_diagram():
    b = DiagramBuilder("ball")
    b.add(Ball("ball"))
    b.export_output("ball.height", "h")
    b.export_output("ball.velocity", "v")
    return b.build()


def _impacts(t, h, v):
    """Impact times: the rows just after an impact (h put back at exactly 0, rising); the
    Simulator records only those by default, FMPy records both sides."""
    t, h, v = np.asarray(t), np.asarray(h), np.asarray(v)
    return np.unique(t[(h == 0.0) & (v > 0.0)])


def test_zero_crossings_in_co_simulation_are_refused_in_words(tmp_path):
    with pytest.raises(FMUExportError, match=r"declares zero crossings.*Model Exchange only.*"
                                             r"kind='me'"):
        export_fmu(ball_diagram(), tmp_path / "b.fmu", "2.0", "cs", step=1e-3)


def test_a_zero_crossing_without_c_is_named(tmp_path):
    class Bare(Ball):
        def c_model(self, cg):
            cm = super().c_model(cg)
            cm.zero_crossings = {}
            return cm
    b = DiagramBuilder("bare")
    b.add(Bare("ball"))
    b.export_output("ball.height", "h")
    with pytest.raises(FMUExportError, match=r"no C for its zero crossing 'impact'"):
        export_fmu(b.build(), tmp_path / "b.fmu", "2.0", "me")


@needs_gcc
@pytest.mark.parametrize("version", ["2.0", "3.0"])
def test_state_events_in_model_exchange_agree_with_the_native_diagram(tmp_path, version):
    """The event FMU's impact times (FMPy's CVode, and the project's own ME import in the
    Simulator) against the native diagram's and the analytic ones.  Before issue 31 the
    export refused every block with zero crossings."""
    from fmpy import simulate_fmu
    from fmpy.validation import validate_fmu

    from blocks.benchmarks.bouncing_ball import analytic_impacts
    from cosim import Simulator
    from fmus import load_fmu
    exact = analytic_impacts(n=4)
    t_end = round(exact[-1] + 0.2, 3)
    path = export_fmu(ball_diagram(), tmp_path / "ball.fmu", version, "me")
    assert validate_fmu(str(path)) == []
    r = simulate_fmu(str(path), fmi_type="ModelExchange", stop_time=t_end,
                     output_interval=1e-3, relative_tolerance=1e-10, output=["h", "v"])
    fmpy_t = _impacts(r["time"], r["h"], r["v"])
    native = Simulator(ball_diagram(), solver="rk45", rtol=1e-10, atol=1e-12).run(t_end)
    native_t = _impacts(native.time, native["ball.height"], native["ball.velocity"])
    b = DiagramBuilder("host")
    b.add(load_fmu(path, name="ball"))
    ours = Simulator(b.build(), solver="rk45", rtol=1e-10, atol=1e-12).run(t_end)
    ours_t = _impacts(ours.time, ours["ball.h"], ours["ball.v"])
    print(f"\nFMI {version}: exact {np.round(exact, 6)}\n  fmpy {fmpy_t}\n  native {native_t}"
          f"\n  ours {ours_t}")
    for got in (fmpy_t, native_t, ours_t):
        assert len(got) == 4
        np.testing.assert_allclose(got, exact, atol=1e-6)
    np.testing.assert_allclose(ours_t, native_t, atol=1e-7)


class Thermostat(Block):
    """T' = P mode - k (T - Ta); crossings: ``hot`` (T rises through T_hi: mode 0),
    ``cold`` (T falls through T_lo: mode 1), ``stop`` (terminal, t rises through
    ``t_stop``, no handler)."""

    def __init__(self, name, T0=18.0, lo=19.0, hi=21.0, P=3.0, k=0.2, Ta=10.0, t_stop=None):
        super().__init__(name)
        self.lo, self.hi, self.P, self.k, self.Ta, self.t_stop = lo, hi, P, k, Ta, t_stop
        self.T = self.declare_continuous_state("T", T0)
        self.mode = self.declare_discrete_state("mode", 1.0)
        self.temp = self.declare_output("temp", lambda ctx: float(ctx.state(self.T)),
                                        depends_on=())
        self.on = self.declare_output("on", lambda ctx: float(ctx.discrete(self.mode)),
                                      depends_on=())
        self.declare_zero_crossing(lambda ctx: float(ctx.state(self.T)) - hi,
                                   lambda ctx: ctx.set_discrete(self.mode, 0.0),
                                   direction=1, name="hot")
        self.declare_zero_crossing(lambda ctx: float(ctx.state(self.T)) - lo,
                                   lambda ctx: ctx.set_discrete(self.mode, 1.0),
                                   direction=-1, name="cold")
        if t_stop is not None:
            self.declare_zero_crossing(lambda ctx: ctx.time - t_stop, None, direction=1,
                                       name="stop", terminal=True)

    def derivatives(self, ctx):
        T = float(ctx.state(self.T))
        return self.P * float(ctx.discrete(self.mode)) - self.k * (T - self.Ta)

    def c_model(self, cg):
        T, m = cg.x(self.T), cg.xd(self.mode)
        zc = {"hot": CZeroCrossing(f"{T} - {self.hi!r}", f"{m} = 0.0;"),
              "cold": CZeroCrossing(f"{T} - {self.lo!r}", f"{m} = 1.0;")}
        if self.t_stop is not None:
            zc["stop"] = CZeroCrossing(f"{cg.t} - {self.t_stop!r}")
        return CModel(outputs={"temp": f"{cg.y(self.temp)} = {T};",
                               "on": f"{cg.y(self.on)} = {m};"},
                      derivatives=f"{cg.dx(self.T)} = {self.P!r} * {m} - {self.k!r} * "
                                  f"({T} - {self.Ta!r});",
                      zero_crossings=zc)


def thermostat_diagram(**kw):
    b = DiagramBuilder("thermo")
    b.add(Thermostat("th", **kw))
    b.export_output("th.temp", "T")
    b.export_output("th.on", "on")
    return b.build()


def _switches(t, on):
    """Times where ``on`` changes (event rows: two rows at one time)."""
    t, on = np.asarray(t), np.asarray(on)
    return t[np.flatnonzero(np.diff(on) != 0) + 1]


@needs_gcc
@pytest.mark.parametrize("version", ["2.0", "3.0"])
@pytest.mark.parametrize("case", ["relay", "relay_terminal", "ball_soft", "ball_moon"])
def test_event_fmus_switch_when_the_native_diagram_does(tmp_path, version, case):
    """A corpus of event FMUs: rising and falling crossings with discrete-state handlers,
    a terminal crossing without handler, balls of other parameters; the event times of
    FMPy and of the project's ME import against the native diagram."""
    from fmpy import simulate_fmu

    from cosim import Simulator
    from fmus import load_fmu
    if case.startswith("relay"):
        def make():
            return thermostat_diagram(t_stop=23.5 if case == "relay_terminal" else None)
        t_end, sigs = 30.0, ("T", "on")

        def find(t, sig):
            return _switches(t, sig("on"))
    else:
        h0, e, g = (5.0, 0.6, 9.81) if case == "ball_soft" else (3.0, 0.9, 1.62)

        def make():
            b = DiagramBuilder("ball")
            b.add(Ball("ball", h0, e, g))
            b.export_output("ball.height", "h")
            b.export_output("ball.velocity", "v")
            return b.build()
        t_end, sigs = (3.5 if case == "ball_soft" else 12.0), ("h", "v")

        def find(t, sig):
            return _impacts(t, sig("h"), sig("v"))
    path = export_fmu(make(), tmp_path / f"{case}.fmu", version, "me")
    native = Simulator(make(), solver="rk45", rtol=1e-10, atol=1e-12).run(t_end)
    d = make()
    want = find(native.time, lambda o: native[d.output_map[d.output(o)].path])
    r = simulate_fmu(str(path), fmi_type="ModelExchange", stop_time=t_end,
                     output_interval=1e-2, relative_tolerance=1e-10, output=list(sigs))
    got_fmpy = find(r["time"], lambda o: r[o])
    b = DiagramBuilder("host")
    b.add(load_fmu(path, name="f"))
    ours = Simulator(b.build(), solver="rk45", rtol=1e-10, atol=1e-12).run(t_end)
    got_ours = find(ours.time, lambda o: ours[f"f.{o}"])
    print(f"\n{case} FMI {version}: {len(want)} events; ends native {native.time[-1]}, "
          f"fmpy {r['time'][-1]}, ours {ours.time[-1]}")
    assert len(want) >= 3 and len(got_fmpy) == len(want) and len(got_ours) == len(want)
    print(f"  max |t_fmpy - t_native| {np.max(np.abs(got_fmpy - want)):.1e}, "
          f"max |t_ours - t_native| {np.max(np.abs(got_ours - want)):.1e}")
    np.testing.assert_allclose(got_fmpy, want, atol=1e-6)
    np.testing.assert_allclose(got_ours, want, atol=1e-7)
    assert r["time"][-1] == pytest.approx(native.time[-1], abs=1e-6)
    assert ours.time[-1] == pytest.approx(native.time[-1], abs=1e-6)


@needs_gcc
@pytest.mark.parametrize("version", ["2.0", "3.0"])
def test_fmpy_results_are_those_of_held_inputs(tmp_path, version):
    """FMPy's ``simulate_fmu`` sets no input derivatives and sets no inputs in intermediate
    update, so an interpolating FMU gives FMPy exactly the held-input results (which
    tests/unit/fmus/test_cgen_export.py checks against the Simulator)."""
    from fmpy import simulate_fmu
    d, _ = random_diagram(4)
    names = sorted(d.inputs)
    outs = sorted(d.outputs)
    ts = np.linspace(0.0, 2.0, 41)
    sig = np.zeros(len(ts), dtype=[("time", float)] + [(n, float) for n in names])
    sig["time"] = ts
    for i, n in enumerate(names):
        sig[n] = np.sin((i + 1) * ts)
    runs = []
    for interp in (None, False):
        path = export_fmu(d, tmp_path / f"f{interp}.fmu", version, step=0.01,
                          interpolate_inputs=interp)
        runs.append(simulate_fmu(str(path), stop_time=2.0, output_interval=0.05, input=sig,
                                 output=outs))
    assert names and outs
    for o in outs:
        np.testing.assert_array_equal(runs[0][o], runs[1][o])
