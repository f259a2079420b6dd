"""Generated-C FMU export (fmus.export.export_fmu) against the Simulator, analytic
solutions, fmpy and a C host with no Python.

For FMI 2.0 and 3.0, Co-Simulation and Model Exchange:

* every FMU passes ``fmpy.validation.validate_fmu``;
* fmpy's ``simulate_fmu`` of the FMU agrees with a Simulator run of the same
  diagram driven the same way: Co-Simulation RK4 against the Simulator's RK4 at
  the same internal step, Model Exchange with fmpy's Euler against the
  Simulator's Euler at the same step (both to rounding, <= 1e-12), and Model
  Exchange with CVode against a fine RK4 reference;
* the exact zero-order-hold integrator agrees with ``scipy.linalg.expm``
  stepping (<= 1e-12), also with irregular communication steps;
* get/set FMU state and serialize/deserialize replay bit-identically;
* two instances with different parameters run interleaved in one process;
* a small C program (compiled here, dlopen, no Python) runs the FMU binary and
  prints the same outputs.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from blocks import (
    PID,
    DiscreteIntegrator,
    DiscretePID,
    DiscreteTransferFunction,
    FirstOrderLag,
    Gain,
    Product,
    RateLimiter,
    Relay,
    Saturation,
    Sine,
    StateSpace,
    Step,
    Sum,
    Table1D,
    Table2D,
    UnitDelay,
)
from cosim import DiagramBuilder, Simulator

fmpy = pytest.importorskip("fmpy")
if shutil.which("gcc") is None:  # pragma: no cover - gcc is in CI
    pytest.skip("gcc is needed to compile generated FMUs", allow_module_level=True)

from fmpy import extract, read_model_description, simulate_fmu  # noqa: E402
from fmpy.fmi2 import FMU2Slave  # noqa: E402
from fmpy.fmi3 import FMU3Slave  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

from fmus.export import export_fmu  # noqa: E402

VERSIONS = ["2.0", "3.0"]
INCLUDE = Path(__file__).resolve().parents[2] / "fmus" / "cgen" / "include"


# ------------------------------------------------------------------ diagrams
def pid_loop(upper: float = 2.5):
    """Continuous, nonlinear: PID with limits and anti-windup, saturation, a
    second-order plant (fused with the error sum), a lookup table; units."""
    b = DiagramBuilder("pidloop")
    b.add(Sum("err", "+-", unit="m"))
    b.add(PID("pid", kp=4.0, ki=2.0, kd=0.3, derivative_filter_rad_s=50.0, lower=-3,
              upper=3, input_unit="m", unit="N"))
    b.add(Saturation("sat", -2.5, upper, unit="N"))
    b.add(StateSpace("plant", [[0, 1], [-4, -0.8]], [[0], [1]], [[1, 0]], input_unit="N",
                     unit="m"))
    b.add(Table1D("tab", [-1, 0, 0.5, 2], [0, 1, 3, 4], input_unit="m", unit="V"))
    b.connect("err.y", "pid.e")
    b.connect("pid.u", "sat.u")
    b.connect("sat.y", "plant.u")
    b.connect("plant.y", "err.u1")
    b.connect("plant.y", "tab.u")
    b.export_input("err.u0", "r")
    b.export_output("plant.y", "y")
    b.export_output("tab.y", "v")
    b.export_output("pid.u", "u")
    return b.build()


def hybrid():
    """Sampled controllers at two rates on a continuous plant, a time event (Step),
    discrete filters, a relay, a rate limiter, a 2-D table."""
    b = DiagramBuilder("hybrid")
    b.add(Sine("ref", amplitude=1.0, frequency_hz=0.7))
    b.add(Sum("err", "+-"))
    b.add(DiscretePID("pid", 0.01, kp=3.0, ki=1.5, kd=0.1, derivative_filter_rad_s=40,
                      lower=-2, upper=2, method="tustin"))
    b.add(DiscretePID("pid2", 0.02, kp=1.0, ki=0.5, anti_windup="clamping", lower=-1, upper=1))
    b.add(RateLimiter("rl", 20.0, 10.0, 0.01))
    b.add(StateSpace("plant", [[0, 1], [-4, -0.8]], [[0], [1]], [[1, 0]]))
    b.add(UnitDelay("ud", 0.02, initial=0.5))
    b.add(DiscreteIntegrator("di", 0.01, gain=2.0, method="trapezoidal", lower=-0.3,
                             upper=0.3))
    b.add(DiscreteTransferFunction("dtf", [0.1, 0.05], [1, -0.9], period_s=0.01))
    b.add(Relay("relay", 0.3, -0.3, 1.0, -1.0, period_s=0.01))
    b.add(Table2D("t2", [0, 1, 2], [-1, 1], [[0, 1], [2, 3], [4, 6]]))
    b.add(Step("st", time_s=0.355, final=2.0))
    b.add(Product("prod", "**"))
    b.connect("ref.y", "err.u0")
    b.connect("plant.y", "err.u1")
    b.connect("err.y", "pid.e")
    b.connect("pid.u", "rl.u")
    b.connect("rl.y", "plant.u")
    b.connect("plant.y", "ud.u")
    b.connect("err.y", "di.u")
    b.connect("err.y", "dtf.u")
    b.connect("err.y", "relay.u")
    b.connect("ud.y", "pid2.e")
    b.connect("st.y", "t2.u0")
    b.connect("plant.y", "t2.u1")
    b.connect("t2.y", "prod.u0")
    b.connect("relay.y", "prod.u1")
    for o in HYBRID_OUT:
        b.export_output(o.replace("_", ".", 1), o)
    return b.build()


HYBRID_OUT = ["plant_y", "ud_y", "di_y", "dtf_y", "relay_y", "pid2_u", "prod_y", "rl_y"]
PID_OUT = ["y", "v", "u"]


def r_of_t(t: float) -> float:
    return (1.0 if t >= 0.1 else 0.0) + 0.2 * np.sin(4.0 * t)


# ---------------------------------------------------------------- references
def simulator_cs(d, inputs, t_end, h, dt, outputs, solver="rk4", params=None,
                 after_input=False):
    """The Simulator driven as fmpy drives an FMU: inputs sampled at the
    communication points and held; outputs recorded at each point (``after_input``:
    after the next input is applied, as fmpy's Model Exchange loop does)."""
    ctx = d.create_context()
    for k, v in (params or {}).items():
        ctx.set_param(k, v)
    n = int(round(t_end / h))
    ts = [k * h for k in range(n + 1)]
    for nm, fn in inputs.items():
        ctx.fix_input(nm, fn(0.0))
    sim = Simulator(d, ctx, solver=solver, dt=dt, record=False)
    sim.initialize()
    out = {o: [ctx.output(d.output(o))] for o in outputs}
    for k in range(n):
        for nm, fn in inputs.items():
            ctx.fix_input(nm, fn(ts[k]))
        sim.advance_to(ts[k + 1])
        if after_input and inputs:
            for nm, fn in inputs.items():
                ctx.fix_input(nm, fn(ts[k + 1]))
            sim.evaluate_outputs()
        for o in outputs:
            out[o].append(ctx.output(d.output(o)))
    return np.array(ts), {o: np.asarray(v, dtype=float) for o, v in out.items()}


def fmpy_run(path, inputs, t_end, h, outputs, **kw):
    sig = None
    if inputs:
        ts = np.arange(int(round(t_end / h)) + 2) * h
        sig = np.zeros(len(ts), dtype=[("time", float)] + [(nm, float) for nm in inputs])
        sig["time"] = ts
        for nm, fn in inputs.items():
            sig[nm] = [fn(t) for t in ts]
    r = simulate_fmu(str(path), stop_time=t_end, output_interval=h, input=sig, output=outputs,
                     **kw)
    return r["time"], {o: r[o] for o in outputs}


def max_err(a: dict, b: dict) -> float:
    return max(float(np.max(np.abs(np.asarray(a[k]) - b[k]))) for k in b)


class Slave:
    """Manual stepping of an FMI 2 or 3 Co-Simulation FMU through fmpy."""

    def __init__(self, path, name="inst", params=None):
        md = read_model_description(str(path))
        self.v3 = md.fmiVersion.startswith("3")
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.dir = extract(str(path))
        cls = FMU3Slave if self.v3 else FMU2Slave
        self.fmu = cls(guid=md.guid, unzipDirectory=self.dir,
                       modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
        self.fmu.instantiate()
        if self.v3:
            self.fmu.enterInitializationMode(startTime=0.0)
        else:
            self.fmu.setupExperiment(startTime=0.0)
            self.fmu.enterInitializationMode()
        for k, v in (params or {}).items():
            self.set([k], [v])
        self.fmu.exitInitializationMode()

    def set(self, names, values):
        vrs = [self.vr[n] for n in names]
        (self.fmu.setFloat64 if self.v3 else self.fmu.setReal)(vrs, list(values))

    def get(self, names):
        vrs = [self.vr[n] for n in names]
        return list((self.fmu.getFloat64 if self.v3 else self.fmu.getReal)(vrs))

    def step(self, t, h):
        self.fmu.doStep(t, h)

    def get_state(self):
        return self.fmu.getFMUState() if self.v3 else self.fmu.getFMUstate()

    def set_state(self, s):
        (self.fmu.setFMUState if self.v3 else self.fmu.setFMUstate)(s)

    def serialize(self, s):
        return (self.fmu.serializeFMUState if self.v3 else self.fmu.serializeFMUstate)(s)

    def deserialize(self, data):
        return (self.fmu.deserializeFMUState if self.v3 else self.fmu.deSerializeFMUstate)(data)

    def free_state(self, s):
        (self.fmu.freeFMUState if self.v3 else self.fmu.freeFMUstate)(s)

    def close(self):
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


# ----------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    """Exported once per module: {(diagram, version, kind): path}."""
    out = tmp_path_factory.mktemp("fmus")
    d_pid, d_hyb = pid_loop(), hybrid()
    made = {"diagrams": {"pid": d_pid, "hybrid": d_hyb}}
    for v in VERSIONS:
        tag = v[0]
        made["pid", v, "cs"] = export_fmu(d_pid, out / f"pid{tag}cs.fmu", v, "cs", step=1e-3)
        made["pid", v, "me"] = export_fmu(d_pid, out / f"pid{tag}me.fmu", v, "me")
        made["hybrid", v, "both"] = export_fmu(d_hyb, out / f"hyb{tag}.fmu", v, "both",
                                               step=1e-3)
    return made


# -------------------------------------------------------------------- tests
@pytest.mark.parametrize("version", VERSIONS)
def test_every_export_validates(fmus, version):
    for key, path in fmus.items():
        if key != "diagrams" and key[1] == version:
            assert validate_fmu(str(path)) == [], key
            md = read_model_description(str(path))
            assert md.fmiVersion == version


@pytest.mark.parametrize("version", VERSIONS)
def test_co_simulation_matches_simulator_rk4(fmus, version):
    d = fmus["diagrams"]["pid"]
    inp = {"r": r_of_t}
    _, got = fmpy_run(fmus["pid", version, "cs"], inp, 3.0, 0.01, PID_OUT)
    _, ref = simulator_cs(d, inp, 3.0, 0.01, 1e-3, PID_OUT)
    err = max_err(got, ref)
    print(f"\nFMI {version} CS pid loop vs Simulator rk4: max |diff| = {err:.3g}")
    assert err <= 1e-12
    d = fmus["diagrams"]["hybrid"]
    _, got = fmpy_run(fmus["hybrid", version, "both"], {}, 2.0, 0.01, HYBRID_OUT,
                      fmi_type="CoSimulation")
    _, ref = simulator_cs(d, {}, 2.0, 0.01, 1e-3, HYBRID_OUT)
    err = max_err(got, ref)
    print(f"FMI {version} CS hybrid (2 rates, time event) vs Simulator rk4: "
          f"max |diff| = {err:.3g}")
    assert err <= 1e-12


@pytest.mark.parametrize("version", VERSIONS)
def test_model_exchange_matches_simulator_euler(fmus, version):
    # fmpy's Euler: one step per output interval, time events from nextEventTime
    d = fmus["diagrams"]["hybrid"]
    _, got = fmpy_run(fmus["hybrid", version, "both"], {}, 2.0, 1e-3, HYBRID_OUT,
                      fmi_type="ModelExchange", solver="Euler", step_size=1e-3,
                      record_events=False)
    _, ref = simulator_cs(d, {}, 2.0, 1e-3, 1e-3, HYBRID_OUT, solver="euler")
    err = max_err(got, ref)
    print(f"\nFMI {version} ME hybrid, fmpy Euler vs Simulator euler: max |diff| = {err:.3g}")
    assert err <= 1e-12
    d = fmus["diagrams"]["pid"]
    inp = {"r": r_of_t}
    _, got = fmpy_run(fmus["pid", version, "me"], inp, 2.0, 1e-3, PID_OUT,
                      solver="Euler", step_size=1e-3, record_events=False)
    _, ref = simulator_cs(d, inp, 2.0, 1e-3, 1e-3, PID_OUT, solver="euler", after_input=True)
    err = max_err(got, ref)
    print(f"FMI {version} ME pid loop, fmpy Euler vs Simulator euler: max |diff| = {err:.3g}")
    assert err <= 1e-12


@pytest.mark.parametrize("version", VERSIONS)
def test_model_exchange_with_cvode(fmus, version):
    d = fmus["diagrams"]["pid"]
    inp = {"r": lambda t: 1.0}
    _, got = fmpy_run(fmus["pid", version, "me"], inp, 3.0, 0.01, PID_OUT,
                      relative_tolerance=1e-9)
    _, ref = simulator_cs(d, inp, 3.0, 0.01, 1e-4, PID_OUT)
    err = max_err(got, ref)
    print(f"\nFMI {version} ME pid loop, CVode rtol 1e-9 vs Simulator rk4 0.1 ms: "
          f"max |diff| = {err:.3g}")
    assert err <= 1e-5
    # sampled blocks and a time event through nextEventTime, with a variable-step solver
    d = fmus["diagrams"]["hybrid"]
    _, got = fmpy_run(fmus["hybrid", version, "both"], {}, 2.0, 0.01, HYBRID_OUT,
                      fmi_type="ModelExchange", relative_tolerance=1e-10,
                      record_events=False)
    _, ref = simulator_cs(d, {}, 2.0, 0.01, 1e-4, HYBRID_OUT)
    err = max_err(got, ref)
    print(f"FMI {version} ME hybrid, CVode rtol 1e-10 vs Simulator rk4 0.1 ms: "
          f"max |diff| = {err:.3g}")
    assert err <= 1e-6


def zoh_diagram():
    b = DiagramBuilder("zoh")
    b.add(StateSpace("plant", [[0, 1], [-25, -0.6]], [[0], [25.0]], [[1.0, 0]], x0=[0.2, 0.0]))
    b.add(Gain("g", 0.5))
    b.add(Sum("s", "++"))
    b.add(FirstOrderLag("lag", 0.05))
    b.connect("s.y", "g.u")
    b.connect("g.y", "plant.u")
    b.connect("plant.y", "lag.u")
    b.export_input("s.u0", "u1")
    b.export_input("s.u1", "u2")
    b.export_output("plant.y", "y")
    b.export_output("lag.y", "z")
    return b.build()


@pytest.mark.parametrize("version", VERSIONS)
def test_zoh_integrator_is_exact(tmp_path, version):
    from scipy.linalg import expm
    path = export_fmu(zoh_diagram(), tmp_path / "zoh.fmu", version, "cs", integrator="zoh")
    assert validate_fmu(str(path)) == []
    A = np.array([[0, 1, 0], [-25, -0.6, 0], [20.0, 0, -20.0]])
    B = np.array([[0], [12.5], [0]])
    rng = np.random.default_rng(1)
    # step lengths on the FMU's 1 ns time grid (whole microseconds here)
    hs = np.concatenate([np.full(20, 0.05), rng.integers(100, 200_000, 30) * 1e-6])
    s = Slave(path)
    x = np.array([0.2, 0.0, 0.0])
    t, err = 0.0, 0.0
    try:
        for k, h in enumerate(hs):
            u = np.sin(3 * t) + 0.3
            s.set(["u1", "u2"], [np.sin(3 * t), 0.3])
            s.step(t, h)
            M = np.zeros((4, 4))
            M[:3, :3], M[:3, 3:] = A * h, B * h
            E = expm(M)
            x = E[:3, :3] @ x + E[:3, 3] * u
            t = round(float(np.sum(hs[:k + 1])), 9)
            y, z = s.get(["y", "z"])
            err = max(err, abs(y - x[0]), abs(z - x[2]))
    finally:
        s.close()
    print(f"\nFMI {version} CS zoh, 50 steps (30 of random length) vs scipy expm: "
          f"max |diff| = {err:.3g}")
    assert err <= 1e-12


@pytest.mark.parametrize("version", VERSIONS)
def test_state_save_restore_replays_identically(fmus, version):
    path = fmus["hybrid", version, "both"]
    s, s2 = Slave(path, "a"), Slave(path, "b")
    h = 0.01
    try:
        for k in range(40):
            s.step(k * h, h)
        st = s.get_state()
        first = []
        for k in range(40, 100):
            s.step(k * h, h)
            first.append(s.get(HYBRID_OUT))
        s.set_state(st)
        again = []
        for k in range(40, 100):
            s.step(k * h, h)
            again.append(s.get(HYBRID_OUT))
        assert np.array_equal(np.array(first), np.array(again))
        # serialized into another instance: the same continuation
        data = s.serialize(st)
        st2 = s2.deserialize(data)
        s2.set_state(st2)
        other = []
        for k in range(40, 100):
            s2.step(k * h, h)
            other.append(s2.get(HYBRID_OUT))
        assert np.array_equal(np.array(first), np.array(other))
        s.free_state(st)
        s2.free_state(st2)
        print(f"\nFMI {version}: restore replay and deserialized state "
              f"({len(data)} bytes) bit-identical over 60 steps")
    finally:
        s.close()
        s2.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_two_instances_with_different_parameters(fmus, version):
    # pid.kp is a block parameter in Python too; sat.upper only in the FMU (the
    # reference for instance b is a diagram built with that limit)
    path = fmus["pid", version, "cs"]
    a = Slave(path, "a", {"pid.kp": 4.0})
    b = Slave(path, "b", {"pid.kp": 1.5, "sat.upper": 1.0})
    h, n = 0.01, 200
    ya, yb = [a.get(PID_OUT)], [b.get(PID_OUT)]
    try:
        for k in range(n):
            for s, ys in ((a, ya), (b, yb)):
                s.set(["r"], [r_of_t(k * h)])
                s.step(k * h, h)
                ys.append(s.get(PID_OUT))
    finally:
        a.close()
        b.close()
    inp = {"r": r_of_t}
    _, ra = simulator_cs(pid_loop(), inp, n * h, h, 1e-3, PID_OUT)
    _, rb = simulator_cs(pid_loop(upper=1.0), inp, n * h, h, 1e-3, PID_OUT,
                         params={"pid.kp": 1.5})
    ya, yb = np.array(ya), np.array(yb)
    ea = max(float(np.max(np.abs(ya[:, i] - ra[o]))) for i, o in enumerate(PID_OUT))
    eb = max(float(np.max(np.abs(yb[:, i] - rb[o]))) for i, o in enumerate(PID_OUT))
    print(f"\nFMI {version}: two interleaved instances (kp 4 / 1.5) vs Simulator: "
          f"{ea:.3g}, {eb:.3g}")
    assert ea <= 1e-12 and eb <= 1e-12
    assert np.max(np.abs(ya[:, 0] - yb[:, 0])) > 0.05  # the parameters did take effect


HOST2 = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fmi2Functions.h"
static void logger(fmi2ComponentEnvironment e, fmi2String n, fmi2Status s, fmi2String c,
                   fmi2String m, ...) { (void)e; fprintf(stderr, "%s %d %s %s\n", n, s, c, m); }
#define LOAD(n) n##TYPE *n = (n##TYPE *)dlsym(h, #n); if (!n) return 3;
int main(int argc, char **argv) {
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/binaries/linux64/%s.so", argv[1], argv[2]);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    LOAD(fmi2Instantiate) LOAD(fmi2SetupExperiment) LOAD(fmi2EnterInitializationMode)
    LOAD(fmi2ExitInitializationMode) LOAD(fmi2SetReal) LOAD(fmi2GetReal) LOAD(fmi2DoStep)
    LOAD(fmi2FreeInstance)
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("host", fmi2CoSimulation, argv[3], "", &cb, 0, 0);
    if (!c) return 4;
    fmi2ValueReference vr_in = atoi(argv[4]), vr_out = atoi(argv[5]);
    int n = atoi(argv[6]);
    double hh = atof(argv[7]), r = 1.0, y;
    fmi2SetupExperiment(c, 0, 0, 0, 0, 0);
    fmi2EnterInitializationMode(c);
    fmi2SetReal(c, &vr_in, 1, &r);
    if (fmi2ExitInitializationMode(c)) return 5;
    for (int k = 0; k < n; k++) {
        if (fmi2DoStep(c, k * hh, hh, 1)) return 6;
        fmi2GetReal(c, &vr_out, 1, &y);
        printf("%.17g %.17g\n", (k + 1) * hh, y);
    }
    fmi2FreeInstance(c);
    return 0;
}
"""

HOST3 = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fmi3Functions.h"
#define LOAD(n) n##TYPE *n = (n##TYPE *)dlsym(h, #n); if (!n) return 3;
int main(int argc, char **argv) {
    char lib[4096];
    snprintf(lib, sizeof lib, "%s/binaries/x86_64-linux/%s.so", argv[1], argv[2]);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
    LOAD(fmi3InstantiateCoSimulation) LOAD(fmi3EnterInitializationMode)
    LOAD(fmi3ExitInitializationMode) LOAD(fmi3SetFloat64) LOAD(fmi3GetFloat64)
    LOAD(fmi3DoStep) LOAD(fmi3FreeInstance)
    fmi3Instance c = fmi3InstantiateCoSimulation("host", argv[3], "", 0, 0, 0, 0, NULL, 0,
                                                 NULL, NULL, NULL);
    if (!c) return 4;
    fmi3ValueReference vr_in = atoi(argv[4]), vr_out = atoi(argv[5]);
    int n = atoi(argv[6]);
    double hh = atof(argv[7]), r = 1.0, y, last;
    fmi3Boolean ev, term, early;
    fmi3EnterInitializationMode(c, 0, 0, 0, 0, 0);
    fmi3SetFloat64(c, &vr_in, 1, &r, 1);
    if (fmi3ExitInitializationMode(c)) return 5;
    for (int k = 0; k < n; k++) {
        if (fmi3DoStep(c, k * hh, hh, 1, &ev, &term, &early, &last)) return 6;
        fmi3GetFloat64(c, &vr_out, 1, &y, 1);
        printf("%.17g %.17g\n", last, y);
    }
    fmi3FreeInstance(c);
    return 0;
}
"""


@pytest.mark.parametrize("version", VERSIONS)
def test_c_host_runs_the_fmu_without_python(fmus, version, tmp_path):
    src = tmp_path / "host.c"
    src.write_text(HOST2 if version == "2.0" else HOST3)
    exe = tmp_path / "host"
    subprocess.run(["gcc", "-O2", "-std=c99", f"-I{INCLUDE}", str(src), "-o", str(exe),
                    "-ldl"], check=True, capture_output=True, text=True)
    path = fmus["pid", version, "cs"]
    unz = tmp_path / "fmu"
    with zipfile.ZipFile(path) as zf:
        zf.extractall(unz)
    md = read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    ident = md.coSimulation.modelIdentifier
    # the binary needs only libc and libm (no libpython)
    so = next((unz / "binaries").rglob("*.so"))
    assert "python" not in subprocess.run(["ldd", str(so)], capture_output=True,
                                          text=True).stdout
    proc = subprocess.run([str(exe), str(unz), ident, md.guid, str(vr["r"]), str(vr["y"]),
                           "300", "0.01"], capture_output=True, text=True, env={})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = np.array([[float(x) for x in line.split()] for line in proc.stdout.splitlines()])
    _, ref = simulator_cs(fmus["diagrams"]["pid"], {"r": lambda t: 1.0}, 3.0, 0.01, 1e-3,
                          ["y"])
    err = float(np.max(np.abs(rows[:, 1] - ref["y"][1:])))
    print(f"\nFMI {version} C host (dlopen, no Python), 300 steps: max |diff| vs Simulator = "
          f"{err:.3g}, y(3 s) = {rows[-1, 1]:.12f}")
    assert np.allclose(rows[:, 0], np.arange(1, 301) * 0.01, rtol=0, atol=1e-12)
    assert err <= 1e-12


@pytest.mark.timing
@pytest.mark.parametrize("version", VERSIONS)
def test_cost_per_step_from_python(fmus, version):
    s = Slave(fmus["pid", version, "cs"])
    fmu = s.fmu
    h = 1e-3
    times = []
    try:
        for k in range(5000):
            t0 = time.perf_counter_ns()
            fmu.doStep(k * h, h)
            times.append(time.perf_counter_ns() - t0)
    finally:
        s.close()
    med = float(np.median(times[500:])) / 1e3
    print(f"\nFMI {version} CS pid loop (4 states, 1 RK4 step per 1 ms doStep): "
          f"median {med:.2f} us per doStep through fmpy")
    from tests.timing_plugin import judge_figure  # gross bound only: machines are shared
    judge_figure(med < 200.0, f"median {med:.1f} us per doStep, at most 200 us")
