"""fmus.cgen / fmus.export: the C descriptions of the built-in blocks, the extension API,
the model descriptions (units, dependencies, arrays) and the errors for what cannot
be exported.  The system test (tests/system/test_fmu_export.py) covers the FMI
versions x kinds matrix, state save/restore, two instances and the C host."""

from __future__ import annotations

import math
import shutil
import zipfile

import numpy as np
import pytest

from blocks import (
    PID,
    Abs,
    ClosedFormSource,
    Constant,
    DeadZone,
    Demux,
    DiscretePID,
    FilteredDerivative,
    FirstOrderLag,
    Gain,
    Integrator,
    MinMax,
    Mux,
    Product,
    Ramp,
    RateTransition,
    Saturation,
    Sine,
    StateSpace,
    Sum,
    Switch,
    Table1D,
    TimeSource,
    TransferFunction,
    UnitConversion,
    ZeroOrderHold,
)
from cosim import Block, DiagramBuilder, FunctionBlock, LinearModel, Simulator
from fmus.cgen import CModel, FMUExportError, c_float, register_c_model
from fmus.export import export_fmu

HAS_GCC = shutil.which("gcc") is not None
needs_gcc = pytest.mark.skipif(not HAS_GCC, reason="gcc is needed to compile generated FMUs")


def fmpy_or_skip():
    return pytest.importorskip("fmpy")


# ------------------------------------------------------------------ helpers
def simulate_ref(d, inputs, t_end, h, dt, outputs, fuse_linear=True, solver="rk4"):
    """The Simulator driven as fmpy drives a Co-Simulation FMU."""
    ctx = d.create_context()
    n = int(round(t_end / h))
    for nm, fn in inputs.items():
        ctx.fix_input(nm, fn(0.0))
    sim = Simulator(d, ctx, solver=solver, dt=dt, record=False, fuse_linear=fuse_linear)
    sim.initialize()
    out = {o: [ctx.output(d.output(o))] for o in outputs}
    for k in range(n):
        for nm, fn in inputs.items():
            ctx.fix_input(nm, fn(k * h))
        sim.advance_to((k + 1) * h)
        for o in outputs:
            out[o].append(np.array(ctx.output(d.output(o)), dtype=float))
    return {o: np.array(v, dtype=float) for o, v in out.items()}


def simulate_fmu_cs(path, inputs, t_end, h, outputs, shapes):
    """fmpy simulate_fmu; vector outputs of FMI 2 FMUs are gathered from name[i]."""
    from fmpy import read_model_description, simulate_fmu
    v3 = read_model_description(str(path)).fmiVersion.startswith("3")
    names = []
    for o in outputs:
        names += [f"{o}[{i + 1}]" for i in range(shapes[o][0])] if shapes[o] and not v3 else [o]
    sig = None
    if inputs:
        ts = np.arange(int(round(t_end / h)) + 2) * h
        sig = np.zeros(len(ts), dtype=[("time", float)] + [(nm, float) for nm in inputs])
        sig["time"] = ts
        for nm, fn in inputs.items():
            sig[nm] = [fn(t) for t in ts]
    r = simulate_fmu(str(path), stop_time=t_end, output_interval=h, input=sig, output=names)
    out = {}
    for o in outputs:
        if shapes[o] and not v3:
            out[o] = np.stack([r[f"{o}[{i + 1}]"] for i in range(shapes[o][0])], axis=1)
        else:
            out[o] = np.asarray(r[o], dtype=float)
    return out


def max_err(a, b):
    return max(float(np.max(np.abs(a[k] - b[k]))) for k in b)


def many_blocks():
    """Every stateless/linear/continuous built-in C description, vector ports, a unit
    conversion on a connection (rpm -> rad/s), sampled ZOH/RateTransition, sources."""
    b = DiagramBuilder("many")
    b.add(Mux("mux", 2))
    b.add(Gain("km", [[1.0, 0.5], [-0.3, 2.0]]))
    b.add(StateSpace("ss", [[-1, 0.2], [0, -2]], np.eye(2), np.eye(2), [[0.1, 0], [0, 0]],
                     scalar=False))
    b.add(Demux("dm", 2))
    b.add(Gain("kv", [2.0, -1.0]))
    b.add(Integrator("integ", x0=[0.1, 0.2]))
    b.add(TransferFunction("tf", [1, 2], [1, 3, 2], unit="rpm"))
    b.add(FilteredDerivative("fd", 20.0))
    b.add(PID("pid", kp=1.0, ki=0.4, kd=0.05, derivative_filter_rad_s=30))
    b.add(UnitConversion("uc", "rad/s", "deg/s"))
    b.add(Sum("s3", "+-+"))
    b.add(Saturation("satv", -0.5, 0.5, shape=(2,)))
    b.add(DeadZone("dz", -0.1, 0.2))
    b.add(Abs("ab"))
    b.add(MinMax("mm", "min", 3))
    b.add(Switch("sw", 0.0))
    b.add(Constant("c0", 0.7))
    b.add(Ramp("ramp", 0.5, start_s=0.2, initial=1.0))
    b.add(TimeSource("clock"))
    b.add(Sine("sine", 1.0, 2.0))
    b.add(ZeroOrderHold("zoh", 0.05))
    b.add(RateTransition("rt", 0.1))
    b.add(FirstOrderLag("lag", 0.3, unit="rad/s"))
    b.add(Product("pq", "*/"))
    for src, dst in [("sine.y", "mux.u0"), ("mux.y", "km.u"), ("km.y", "ss.u"),
                     ("ss.y", "dm.u"), ("ss.y", "kv.u"), ("kv.y", "integ.u"),
                     ("integ.y", "satv.u"), ("dm.y0", "tf.u"), ("dm.y1", "fd.u"),
                     ("fd.y", "pid.e"), ("tf.y", "lag.u"), ("lag.y", "uc.u"),
                     ("uc.y", "s3.u0"), ("pid.u", "s3.u1"), ("c0.y", "s3.u2"),
                     ("s3.y", "dz.u"), ("dz.y", "ab.u"), ("ab.y", "mm.u0"),
                     ("ramp.y", "mm.u1"), ("clock.t", "mm.u2"), ("sine.y", "sw.control"),
                     ("mm.y", "sw.u_true"), ("c0.y", "sw.u_false"), ("sw.y", "zoh.u"),
                     ("zoh.y", "rt.u"), ("rt.y", "pq.u0"), ("ramp.y", "pq.u1")]:
        b.connect(src, dst)
    b.export_input("mux.u1", "u")
    for o in MANY_OUT:
        b.export_output(o.replace("_", ".", 1), o)
    return b.build()


MANY_OUT = ["satv_y", "sw_y", "rt_y", "uc_y", "pq_y", "integ_y", "dm_y1", "ss_y"]


# -------------------------------------------------------------- literals
def test_c_float_literals_round_trip():
    for v in (0.1, -2.5e-300, 1 / 3, 1e22, 5.0, -0.0):
        lit = c_float(v)
        assert float(lit.strip("()")) == v
    assert c_float(math.inf) == "HUGE_VAL"
    assert c_float(-math.inf) == "(-HUGE_VAL)"
    assert c_float(math.nan) == "NAN"
    assert c_float(-1.5) == "(-1.5)"  # never "x - -1.5"


# ----------------------------------------------------------------- errors
def test_block_without_c_description_is_named_with_the_remedies(tmp_path):
    b = DiagramBuilder("d")
    b.add(FunctionBlock("square", lambda u: u * len(str(u))))  # does not translate
    b.add(ClosedFormSource("src", lambda t: t * len(str(t))))  # nor does this f(t)
    b.add(Gain("k", 2.0))
    b.connect("src.y", "square.u")
    b.connect("square.y", "k.u")
    b.export_output("k.y", "y")
    with pytest.raises(FMUExportError) as exc:
        export_fmu(b.build(), tmp_path / "x.fmu", compile=False)
    msg = str(exc.value)
    assert "'square' (FunctionBlock): calls 'len' (line " in msg and \
        "'src' (ClosedFormSource): calls 'len' (line " in msg
    for remedy in ("c_model(self, cg)", "register_c_model", "linear_model()", "pythonfmu3"):
        assert remedy in msg
    assert "Gain" in msg  # the list of blocks that do have a C description


def test_unsupported_structures_are_refused(tmp_path, ball_cls):
    # algebraic loop through a nonlinear block
    b = DiagramBuilder("loop")
    b.add(Sum("s", "+-"))
    b.add(Saturation("sat", -1, 1))
    b.connect("s.y", "sat.u")
    b.connect("sat.y", "s.u1")
    b.export_input("s.u0", "r")
    b.export_output("sat.y", "y")
    with pytest.raises(FMUExportError, match="algebraic loop"):
        export_fmu(b.build(), tmp_path / "x.fmu", compile=False)
    # state events
    b = DiagramBuilder("ball")
    b.add(ball_cls("ball"))
    b.export_output("ball.h", "h")
    with pytest.raises(FMUExportError, match="zero crossings"):
        export_fmu(b.build(), tmp_path / "x.fmu", step=1e-3, compile=False)


def test_bad_options_are_refused(tmp_path):
    lag = FirstOrderLag("lag", 0.5)
    b = DiagramBuilder("d")
    b.add(lag)
    b.export_input("lag.u", "u")
    b.export_output("lag.y", "y")
    d = b.build()
    with pytest.raises(FMUExportError, match="give step="):
        export_fmu(d, tmp_path / "x.fmu", compile=False)
    with pytest.raises(FMUExportError, match="fmi_version"):
        export_fmu(d, tmp_path / "x.fmu", "1.0", step=1e-3, compile=False)
    with pytest.raises(FMUExportError, match="kind"):
        export_fmu(d, tmp_path / "x.fmu", kind="hil", step=1e-3, compile=False)
    with pytest.raises(FMUExportError, match="integrator"):
        export_fmu(d, tmp_path / "x.fmu", integrator="rk45", step=1e-3, compile=False)
    with pytest.raises(FMUExportError, match="already belongs to a diagram"):
        export_fmu(lag, tmp_path / "x.fmu", step=1e-3, compile=False)
    other = DiagramBuilder("other")
    other.add(Constant("c", 1.0))
    other.export_output("c.y", "y")
    with pytest.raises(FMUExportError, match="context was made by diagram 'other'"):
        export_fmu(d, tmp_path / "x.fmu", step=1e-3, context=other.build().create_context(),
                   compile=False)
    # Model Exchange needs no step
    export_fmu(d, tmp_path / "me.fmu", kind="me", compile=False)


def test_zoh_refuses_what_it_cannot_step_exactly(tmp_path):
    b = DiagramBuilder("sine_lag")
    b.add(Sine("s", 1.0, 1.0))
    b.add(FirstOrderLag("lag", 0.5))
    b.connect("s.y", "lag.u")
    b.export_output("lag.y", "y")
    with pytest.raises(FMUExportError, match="varies with time within a step"):
        export_fmu(b.build(), tmp_path / "x.fmu", integrator="zoh", compile=False)
    b = DiagramBuilder("nonlinear")
    b.add(PID("pid", kp=1.0, ki=1.0, lower=-1, upper=1))
    b.add(FirstOrderLag("lag", 0.5))
    b.connect("pid.u", "lag.u")
    b.connect("lag.y", "pid.e")
    b.export_output("lag.y", "y")
    with pytest.raises(FMUExportError, match="'pid'"):
        export_fmu(b.build(), tmp_path / "x.fmu", integrator="zoh", compile=False)


# ------------------------------------------------------ model descriptions
def unit_diagram():
    b = DiagramBuilder("motor")
    b.add(Gain("k", 3.0, input_unit="V", unit="rpm"))
    b.add(FirstOrderLag("lag", 0.2, unit="rad/s"))
    b.add(PID("pid", kp=2.0, ki=1.0, input_unit="rad/s", unit="V", lower=-10, upper=10))
    b.add(Sum("e", "+-", unit="rad/s"))
    b.add(Constant("temp", 20.0, unit="degC"))
    b.connect("e.y", "pid.e")
    b.connect("pid.u", "k.u")
    b.connect("k.y", "lag.u")  # rpm -> rad/s on the connection
    b.connect("lag.y", "e.u1")
    b.export_input("e.u0", "w_ref")
    b.export_output("lag.y", "w")
    b.export_output("pid.u", "v")
    b.export_output("temp.y", "temp")
    return b.build()


@pytest.mark.parametrize("version", ["2.0", "3.0"])
def test_model_description_units_and_dependencies(tmp_path, version):
    fmpy_or_skip()
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu
    path = export_fmu(unit_diagram(), tmp_path / "m.fmu", version, "both", step=1e-3,
                      compile=False, stop_time=2.0, fuse_linear=False)
    assert validate_fmu(str(path)) == []
    md = read_model_description(str(path))
    units = {u.name: u.baseUnit for u in md.unitDefinitions}
    assert units["rad/s"].rad == 1 and units["rad/s"].s == -1
    assert units["V"].kg == 1 and units["V"].m == 2 and units["V"].A == -1
    assert units["degC"].K == 1 and units["degC"].offset == pytest.approx(273.15)
    var = {v.name: v for v in md.modelVariables}
    assert var["w_ref"].unit == "rad/s" and var["v"].unit == "V" and var["temp"].unit == "degC"
    assert var["k.k"].unit == "(rpm)/(V)"  # a gain between different units
    assert var["pid.ki"].unit == "(V)/(rad/s)/s" and var["pid.kp"].causality == "parameter"
    assert var["pid.kp"].variability == "tunable" and float(var["pid.kp"].start) == 2.0
    deps = {u.variable.name: sorted(d.name for d in (u.dependencies or []))
            for u in md.outputs}
    # v = pid(w_ref - w): feedthrough from the input and from the states; w from states only
    assert "w_ref" in deps["v"] and "lag.x" in str(deps["v"]) and "pid.i" in str(deps["v"])
    assert "w_ref" not in deps["w"] and deps["temp"] == []
    assert float(md.defaultExperiment.stopTime) == 2.0
    assert md.coSimulation.canHandleVariableCommunicationStepSize
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
    assert "sources/model.c" in names and "sources/model.h" in names
    assert not any(n.startswith("binaries/") for n in names)  # compile=False
    assert ("sources/buildDescription.xml" in names) == (version == "3.0")


def test_fmi3_arrays_and_fmi2_scalars(tmp_path):
    fmpy_or_skip()
    from fmpy import read_model_description
    d = many_blocks()
    m3 = read_model_description(str(export_fmu(d, tmp_path / "a3.fmu", "3.0", step=1e-3,
                                               compile=False, fuse_linear=False)))
    v3 = {v.name: v for v in m3.modelVariables}
    assert [int(x.start) for x in v3["ss_y"].dimensions] == [2]
    assert [int(x.start) for x in v3["km.k"].dimensions] == [2, 2]
    assert float(m3.coSimulation.fixedInternalStepSize) == 1e-3
    m2 = read_model_description(str(export_fmu(d, tmp_path / "a2.fmu", "2.0", step=1e-3,
                                               compile=False, fuse_linear=False)))
    v2 = {v.name for v in m2.modelVariables}
    assert {"ss_y[1]", "ss_y[2]", "km.k[1,1]", "km.k[2,2]"} <= v2


# ------------------------------------------------ blocks against Simulator
@needs_gcc
@pytest.mark.parametrize("version,fuse", [("2.0", True), ("3.0", False)])
def test_builtin_blocks_agree_with_simulator(tmp_path, version, fuse):
    fmpy_or_skip()
    d = many_blocks()
    inp = {"u": lambda t: np.cos(5.0 * t)}
    path = export_fmu(d, tmp_path / "many.fmu", version, step=1e-3, fuse_linear=fuse)
    shapes = {o: d.output(o).shape for o in MANY_OUT}
    got = simulate_fmu_cs(path, inp, 1.0, 0.01, MANY_OUT, shapes)
    ref = simulate_ref(d, inp, 1.0, 0.01, 1e-3, MANY_OUT, fuse_linear=fuse)
    err = max_err(got, ref)
    print(f"\n{len(d.leaf_blocks())} blocks, FMI {version}, fuse_linear={fuse}: "
          f"max |diff| vs Simulator = {err:.3g}")
    assert err <= 1e-12


# -------------------------------------------------------- extension API
class VanDerPol(Block):
    """x'' = mu (1 - x^2) x' - x + u, with a C description of its own."""

    def __init__(self, name, mu=1.5):
        super().__init__(name)
        self.mu = self.declare_parameter("mu", mu)
        self.u = self.declare_input("u")
        self.x = self.declare_continuous_state("x", [2.0, 0.0])
        self.y = self.declare_output("y", lambda ctx: float(ctx.state(self.x)[0]),
                                     depends_on=())

    def derivatives(self, ctx):
        x, v = ctx.state(self.x)
        return np.array([v, ctx.param(self.mu) * (1 - x * x) * v - x + ctx.input(self.u)])

    def c_model(self, cg):
        mu = cg.param("mu", cg.value(self.mu))
        x0, x1 = cg.x(self.x, 0), cg.x(self.x, 1)
        return CModel(outputs={"y": f"{cg.y(self.y)} = {x0};"},
                      derivatives=f"{cg.dx(self.x, 0)} = {x1};\n"
                                  f"{cg.dx(self.x, 1)} = {mu} * (1 - {x0} * {x0}) * {x1} - "
                                  f"{x0} + {cg.u(self.u)};")


class Cube(Block):
    """y = u^3 (described with register_c_model, no method)."""

    def __init__(self, name):
        super().__init__(name)
        self.u = self.declare_input("u")
        self.y = self.declare_output("y", lambda ctx: ctx.input(self.u) ** 3)


class Lag2(Block):
    """A linear block with only a linear_model (the generic C fallback)."""

    def __init__(self, name, tau=0.3):
        super().__init__(name)
        self.tau = tau
        self.u = self.declare_input("u")
        self.x = self.declare_continuous_state("x", 0.0)
        self.y = self.declare_output("y", lambda ctx: ctx.state(self.x), depends_on=())

    def derivatives(self, ctx):
        return (ctx.input(self.u) - ctx.state(self.x)) / self.tau

    def linear_model(self, ctx):
        return LinearModel([[-1 / self.tau]], [[1 / self.tau]], [[1.0]], [[0.0]],
                           [self.u], [self.y], [self.x])


@needs_gcc
def test_extension_api(tmp_path):
    fmpy_or_skip()
    register_c_model(Cube, lambda b, cg: CModel(
        outputs={"y": f"{cg.y(b.y)} = {cg.u(b.u)} * {cg.u(b.u)} * {cg.u(b.u)};"}))
    b = DiagramBuilder("ext")
    b.add(VanDerPol("vdp"))
    b.add(Cube("cube"))
    b.add(Lag2("lag"))
    b.connect("vdp.y", "cube.u")
    b.connect("cube.y", "lag.u")
    b.export_input("vdp.u", "u")
    b.export_output("lag.y", "y")
    b.export_output("vdp.y", "x")
    d = b.build()
    inp = {"u": lambda t: 0.5 * np.sin(t)}
    path = export_fmu(d, tmp_path / "ext.fmu", "2.0", step=1e-3, fuse_linear=False)
    got = simulate_fmu_cs(path, inp, 2.0, 0.01, ["y", "x"], {"y": (), "x": ()})
    ref = simulate_ref(d, inp, 2.0, 0.01, 1e-3, ["y", "x"], fuse_linear=False)
    err = max_err(got, ref)
    print(f"\nextension API (c_model, register_c_model, linear fallback): max |diff| = "
          f"{err:.3g}")
    assert err <= 1e-12
    from fmpy import read_model_description
    names = {v.name for v in read_model_description(str(path)).modelVariables}
    assert "vdp.mu" in names  # the block's own tunable parameter


# ------------------------------------------------------------ behaviours
@needs_gcc
def test_table_error_extrapolation_fails_the_call(tmp_path, capfd):
    fmpy_or_skip()
    from fmpy import simulate_fmu
    from fmpy.fmi1 import FMICallException
    b = DiagramBuilder("tab")
    b.add(Table1D("t", [0, 1, 2], [0, 1, 4], extrapolation="error"))
    b.add(Ramp("r", 1.0))
    b.connect("r.y", "t.u")
    b.export_output("t.y", "y")
    path = export_fmu(b.build(), tmp_path / "t.fmu", "2.0")
    with pytest.raises(FMICallException):  # FMPy's own logger: see the test below
        simulate_fmu(str(path), stop_time=3.0, output_interval=0.1)
    assert "outside the breakpoints" in capfd.readouterr().out


@needs_gcc
def test_leaf_block_nested_diagram_and_locals(tmp_path):
    fmpy_or_skip()
    from fmpy import read_model_description, simulate_fmu
    # a bare block: its ports become the FMU's
    path = export_fmu(DiscretePID("ctrl", 0.01, kp=2.0, ki=1.0), tmp_path / "pid.fmu", "3.0")
    md = read_model_description(str(path))
    assert {v.name for v in md.modelVariables if v.causality in ("input", "output")} == \
        {"e", "u"}
    sig = np.array([(0.0, 1.0), (1.0, 1.0)], dtype=[("time", float), ("e", float)])
    r = simulate_fmu(str(path), stop_time=0.05, output_interval=0.01, input=sig)
    # forward Euler PI at T = 10 ms: u_k = 2 + 0.01 k (the hit at each output point uses
    # the input held over the step that ends there)
    assert np.allclose(r["u"], 2.0 + 0.01 * np.arange(6), rtol=0, atol=1e-12)
    # nested diagram: names follow the block paths; locals exposed on request
    inner = DiagramBuilder("inner")
    inner.add(Gain("g", 2.0))
    inner.add(Saturation("sat", -1.0, 1.0))
    inner.connect("g.y", "sat.u")
    inner.export_input("g.u", "u")
    inner.export_output("sat.y", "y")
    outer = DiagramBuilder("outer")
    outer.add(inner.build())
    outer.add(Constant("c", 0.3))
    outer.connect("c.y", "inner.u")
    outer.export_output("inner.y", "y")
    path = export_fmu(outer.build(), tmp_path / "nested.fmu", "2.0", expose_locals=True,
                      fuse_linear=False)
    md = read_model_description(str(path))
    names = {v.name for v in md.modelVariables}
    assert {"inner.g.k", "inner.sat.lower", "c.value", "inner.g.y", "inner.sat.y"} <= names
    r = simulate_fmu(str(path), stop_time=0.1, output_interval=0.1,
                     start_values={"c.value": 0.2}, output=["y", "inner.g.y"])
    assert r["y"][-1] == pytest.approx(0.4) and r["inner.g.y"][-1] == pytest.approx(0.4)
    # tunable between steps: the outputs follow at once
    from fmpy import extract
    from fmpy.fmi2 import FMU2Slave
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=extract(str(path)),
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="t")
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.doStep(0.0, 0.1)
    assert fmu.getReal([vr["y"]]) == [pytest.approx(0.6)]
    fmu.setReal([vr["inner.g.k"]], [-5.0])
    assert fmu.getReal([vr["y"], vr["inner.g.y"]]) == [-1.0, pytest.approx(-1.5)]
    fmu.terminate()
    fmu.freeInstance()


@needs_gcc
def test_non_finite_state_fails_the_step_with_its_name(tmp_path, capfd):
    fmpy_or_skip()
    from fmpy import simulate_fmu
    from fmpy.fmi1 import FMICallException
    b = DiagramBuilder("unstable")
    b.add(StateSpace("plant", [[1e6]], [[1.0]], [[1.0]], x0=[1.0]))
    b.add(Constant("c", 0.0))
    b.connect("c.y", "plant.u")
    b.export_output("plant.y", "y")
    path = export_fmu(b.build(), tmp_path / "u.fmu", "3.0", step=1e-3)
    with pytest.raises(FMICallException):  # FMPy's own logger: see the test below
        simulate_fmu(str(path), stop_time=1.0, output_interval=0.01)
    out = capfd.readouterr().out
    assert "continuous state 'plant.x[1]' became" in out, out


def test_no_test_gives_fmpy_a_logger_of_its_own():
    """FMPy 0.3.32 keeps one process-wide FMI 1/2 logger (``addLoggerProxy`` in its
    ``logging`` library): ``simulate_fmu(logger=f)`` points it at a ctypes wrapper that dies
    with the call, and every later FMI 2 FMU on FMPy's default callbacks that logs crashes the
    process (measured: a segmentation fault in ``fmi2SetRealInputDerivatives``'s error
    message, tests/unit/fmus/test_cgen_interfaces.py after this file). Tests read FMPy's
    default logger's output (``capfd``) instead."""
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parents[3]
    bad = []
    for f in sorted(p for d in ("tests", "bench", "examples") for p in (root / d).rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if (isinstance(node, ast.Call)
                    and getattr(node.func, "id", getattr(node.func, "attr", None))
                    in ("simulate_fmu", "instantiate_fmu")
                    and any(k.arg == "logger" for k in node.keywords)):
                bad.append(f"{f.relative_to(root)}:{node.lineno}")
    assert not bad, f"FMPy given a logger of its own (use capfd): {bad}"


@needs_gcc
def test_source_fmu_builds_with_fmpy(tmp_path):
    """The source FMU (FMI 3 buildDescription.xml) compiles with fmpy's CMake builder."""
    fmpy_or_skip()
    from fmpy import simulate_fmu
    from fmpy.build import build_platform_binary
    if shutil.which("cmake") is None:
        pytest.skip("cmake not available")
    path = export_fmu(unit_diagram(), tmp_path / "src.fmu", "3.0", step=1e-3, compile=False)
    root = tmp_path / "unz"
    with zipfile.ZipFile(path) as zf:
        zf.extractall(root)
    (tmp_path / "build").mkdir()
    build_platform_binary(root, build_dir=tmp_path / "build",
                          cmake_options={"CMAKE_C_STANDARD_LIBRARIES:STRING": "-lm"})
    r = simulate_fmu(str(root), stop_time=1.0, output_interval=0.1,
                     start_values={"w_ref": 1.0})
    assert 0.0 < r["w"][-1] < 1.0


@needs_gcc
def test_sources_constants_are_their_declared_parameters_in_the_export_context(tmp_path):
    """Ramp's and Sine's constants are declared parameters: a value tuned in the context
    reaches the Simulator and the exported C (read from the export context, not from the
    constructor's closure), and both agree bit for bit."""
    from fmpy import simulate_fmu
    fmpy_or_skip()
    b = DiagramBuilder("src")
    b.add(Ramp("r", 0.5, start_s=0.2, initial=1.0, unit="m"))
    b.add(Sine("s", 1.0, 2.0, phase_rad=0.1, bias=0.3, unit="m"))
    b.export_output("r.y", "ramp")
    b.export_output("s.y", "sine")
    d = b.build()
    ctx = d.create_context()
    tuned = {"r.slope": -2.0, "r.initial": 0.25, "s.amplitude": 3.0, "s.frequency_hz": 0.5,
             "s.phase_rad": -0.7, "s.bias": 1.5}
    for path, v in tuned.items():
        ctx.set_param(path, v)
    sim = Simulator(d, ctx, dt=0.01, record=["r.y", "s.y"])
    ref = sim.run(1.0)
    t = ref.time
    assert np.array_equal(ref["r.y"], 0.25 + -2.0 * np.maximum(0.0, t - 0.2))
    assert np.array_equal(ref["s.y"],
                          [3.0 * math.sin(2 * np.pi * 0.5 * x + -0.7) + 1.5 for x in t])
    fmu = export_fmu(d, tmp_path / "src.fmu", "2.0", context=ctx, step=0.01)
    r = simulate_fmu(str(fmu), stop_time=1.0, output_interval=0.01, output=["ramp", "sine"])
    assert np.array_equal(r["ramp"], ref["r.y"]) and np.array_equal(r["sine"], ref["s.y"])
    with pytest.raises(Exception, match="negative"):
        ctx.set_param("s.frequency_hz", -1.0)
