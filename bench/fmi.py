"""Suite ``fmi``: the cost of FMU steps, ours beside fmpy's raw calls (issue 6).

Model: the position servo of ``tests/system/fmu_models.py`` (PI + integrator, 2 states,
one input, two outputs), exported as an FMI 2.0 Co-Simulation FMU, RK4 1 ms inside.
Cases (all measured over many 1 ms communication steps; medians of repeats):

``cs/generated-c/ours``
    :class:`fmus.FMUSubsystem` on the generated-C FMU, stepped as the master steps it
    (``set_inputs``, ``do_step``, ``get_outputs``), against the "peer" fmpy's own ctypes
    path on the same FMU (``setReal``, ``doStep``, ``getReal``).  The difference per step
    is our overhead (target <= 8 us; fmpy's path itself costs 5.6-9 us on these machines,
    anchors-hil-fmi.md B2).
``cs/pythonfmu``
    The same diagram exported through pythonfmu (:func:`fmus.pyexport.export_python_fmu`),
    fmpy's raw cycle, in a child process (pythonfmu allows one instance per process):
    the per-step cost of running our simulator behind pythonfmu's wrapper, beside the
    generated C's.
``cs/out-of-process``
    The generated-C FMU stepped by :class:`fmus.FMUSubsystem` in out-of-process mode
    (:mod:`fmus.remote`, one round trip to the child per step) against in-process: the
    price of the watchdog.
``conformance`` (a target, not timed)
    The Modelica Reference FMUs built from the vendored sources (``tests/conformance``)
    through every interface they offer, by the import API and by ``cosim fmu simulate``,
    against upstream's results and exact or independent references: cases failed (goal 0);
    the per-case errors are in the JSON under ``conformance``.
``other_exporters`` (a target, not timed)
    FMUs written by five other exporters (pythonfmu, pythonfmu3, unifmu, FMPy's container
    writer, fmu-manipulation-toolbox; ``tests/corpus``), every FMU x interface by the API and
    the CLI, against FMPy's ``simulate_fmu`` (or the exact answer where FMPy has a named
    defect): cases agreeing / total (goal all) and the number of exporters (goal >= 4); the
    per-case results are in the JSON under ``other_exporters``.
``me/rk4-step``
    The C test FMU ``Oscillator`` (tests/fmu_sources, FMI 2.0 ME) as an
    :class:`fmus.FMUBlock` in a diagram run by cosim's RK4 at 1 ms (constant input),
    against a hand-written RK4 loop over fmpy's low-level calls (``fmi2SetTime``,
    ``fmi2SetContinuousStates``, ``fmi2SetReal``, ``fmi2GetDerivatives``, preallocated
    ctypes buffers): our overhead per integration step of a Model Exchange FMU.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Any

from .harness import make_case, make_target, measure

NAME = "fmi"
DESCRIPTION = "FMU step costs: our FMU subsystem vs fmpy's raw calls; generated C vs pythonfmu"
PACKAGES = ("fmpy", "pythonfmu", "pythonfmu3", "fmu-manipulation-toolbox", "unifmu")

H = 1e-3
ROOT = pathlib.Path(__file__).resolve().parents[1]


def _servo():
    sys.path.insert(0, str(ROOT))
    from tests.system.fmu_models import servo
    return servo()


def build_fmus(tmp: str) -> dict:
    """The servo as a generated-C FMU and as a pythonfmu FMU, in ``tmp``."""
    from fmus.export import export_fmu
    from fmus.pyexport import export_python_fmu
    c = export_fmu(_servo(), os.path.join(tmp, "servo_c.fmu"), fmi_version="2.0", kind="cs",
                   step=H, integrator="rk4")
    p = export_python_fmu("tests.system.fmu_models:servo", os.path.join(tmp, "servo_py.fmu"),
                          solver="rk4", solver_dt=H)
    return {"c": str(c), "py": str(p)}


def _u(k: int) -> float:
    return 1.0 if k * H >= 0.01 else 0.0


def fmpy_raw_loop(path: str, n: int) -> float:
    """Seconds for ``n`` set/doStep/get cycles with fmpy's FMU2Slave."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    md = read_model_description(path)
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=extract(path),
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="raw")
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    vr = {v.name: v.valueReference for v in md.modelVariables}
    vu, vy = [vr["u"]], [vr["y"], vr["e"]]
    w = time.perf_counter()
    for k in range(n):
        fmu.setReal(vu, [_u(k)])
        fmu.doStep(currentCommunicationPoint=k * H, communicationStepSize=H)
        fmu.getReal(vy)
    wall = time.perf_counter() - w
    fmu.terminate()
    fmu.fmi2FreeInstance(fmu.component)  # keep the library loaded (pythonfmu, reuse)
    return wall


def ours_loop(path: str, n: int, out_of_process: bool = False) -> float:
    """Seconds for ``n`` communication steps of :class:`fmus.FMUSubsystem` (in a child
    process with ``out_of_process``)."""
    from fmus.subsystem import FMUSubsystem
    sub = FMUSubsystem(path, name="servo", out_of_process=out_of_process)
    sub.initialize(0)
    hk = round(H * 1e9)
    try:
        w = time.perf_counter()
        for k in range(n):
            sub.set_inputs(k * H, {"u": (_u(k),)})
            sub.do_step(k * hk, hk)
            sub.get_outputs()
        return time.perf_counter() - w
    finally:
        sub.free()


def oscillator_fmu(tmp: str) -> str:
    sys.path.insert(0, str(ROOT))
    from tests.fmu_builders import build_c_fmu
    return str(build_c_fmu("oscillator", pathlib.Path(tmp)))


def me_raw_rk4_loop(path: str, n: int) -> float:
    """Seconds for ``n`` RK4 steps (1 ms) over fmpy's low-level ME calls."""
    import ctypes

    import numpy as np
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Model
    md = read_model_description(path)
    me = FMU2Model(guid=md.guid, unzipDirectory=extract(path),
                   modelIdentifier=md.modelExchange.modelIdentifier, instanceName="me")
    me.instantiate()
    me.setupExperiment(startTime=0.0)
    me.enterInitializationMode()
    me.exitInitializationMode()
    me.newDiscreteStates()
    me.enterContinuousTimeMode()
    c = me.component
    vr = {v.name: v.valueReference for v in md.modelVariables}
    vr_in = (ctypes.c_uint * 1)(vr["F"])
    val_in = (ctypes.c_double * 1)()
    x = (ctypes.c_double * 2)()
    dx = (ctypes.c_double * 2)()

    def f(t: float, xs: Any, u: float) -> Any:
        me.fmi2SetTime(c, t)
        x[0], x[1] = xs
        me.fmi2SetContinuousStates(c, x, 2)
        val_in[0] = u
        me.fmi2SetReal(c, vr_in, 1, val_in)
        me.fmi2GetDerivatives(c, dx, 2)
        return np.array(dx[:])

    xs = np.array([0.1, 0.0])
    w = time.perf_counter()
    for k in range(n):
        t = k * H
        k1 = f(t, xs, 0.5)
        k2 = f(t + H / 2, xs + H / 2 * k1, 0.5)
        k3 = f(t + H / 2, xs + H / 2 * k2, 0.5)
        k4 = f(t + H, xs + H * k3, 0.5)
        xs = xs + H / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    wall = time.perf_counter() - w
    me.terminate()
    me.fmi2FreeInstance(c)
    return wall


def me_ours_rk4(path: str, n: int) -> float:
    """Seconds for ``n`` RK4 steps (1 ms) of the FMU block in a cosim diagram (time
    events off the measured span: the Oscillator's force step is at 0.5 s)."""
    from blocks.sources import Constant
    from cosim import DiagramBuilder, Simulator
    from fmus import FMU
    b = DiagramBuilder("bench")
    src = b.add(Constant("F", 0.5, unit="N"))
    blk = b.add(FMU(path).block("osc", parameters={"t_step": 1e6}))
    b.connect(src.y, blk.input("F"))
    sim = Simulator(b.build(), solver="rk4", dt=H, record=False)
    sim.advance_to(0.01)
    w = time.perf_counter()
    sim.advance_to(round(0.01 + n * H, 9))
    wall = time.perf_counter() - w
    blk.free()
    return wall


def pythonfmu_cost(path: str, n: int) -> float:
    """Seconds per raw fmpy cycle of the pythonfmu FMU, measured in a child process."""
    code = (f"import sys, json; sys.path.insert(0, {str(ROOT)!r})\n"
            "from bench.fmi import fmpy_raw_loop\n"
            f"print(json.dumps(fmpy_raw_loop({path!r}, {n})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-500:])
    return json.loads(out.stdout.strip().splitlines()[-1]) / n


def run(options) -> dict:
    n = 2000 if options.quick else 20000
    reps = 5 if options.quick else 7
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        fmus = build_fmus(tmp)

        def ours():
            return None, ours_loop(fmus["c"], n), {}

        def raw():
            return None, fmpy_raw_loop(fmus["c"], n), {}
        mo = measure(ours, repeats=reps, steps=n, blocks=1)
        mr = measure(raw, repeats=reps, steps=n, blocks=1)
        cases.append(make_case("cs/generated-c/ours", mo, {"fmpy-raw": mr}))
        npy = max(200, n // 10)

        def py():
            return None, pythonfmu_cost(fmus["py"], npy) * n, {}
        mp = measure(py, repeats=1, steps=n, blocks=1, basis=f"{npy} steps in a child process")
        cases.append(make_case("cs/pythonfmu/fmpy-raw", mp, {"generated-c/fmpy-raw": mr}))
        noop = max(200, n // 4)

        def oop():
            return None, ours_loop(fmus["c"], noop, out_of_process=True) * n / noop, {}
        mq = measure(oop, repeats=reps, steps=n, blocks=1, basis=f"{noop} steps, scaled")
        cases.append(make_case("cs/out-of-process", mq, {"in-process": mo}))
        osc = oscillator_fmu(tmp)

        def me_ours():
            return None, me_ours_rk4(osc, n), {}

        def me_raw():
            return None, me_raw_rk4_loop(osc, n), {}
        mm = measure(me_ours, repeats=reps, steps=n, blocks=1)
        mmr = measure(me_raw, repeats=reps, steps=n, blocks=1)
        cases.append(make_case("me/rk4-step", mm, {"fmpy-raw-rk4": mmr}))
        conformance = run_conformance(pathlib.Path(tmp))
        other = run_other_exporters(pathlib.Path(tmp))
    return {"cases": cases, "targets": targets(cases, conformance, other),
            "conformance": conformance, "other_exporters": other}


def run_conformance(tmp: pathlib.Path) -> dict:
    """The Modelica Reference FMUs, built from the vendored sources, through every
    interface they offer, by the API and the CLI (``tests/conformance``): cases passed."""
    from tests.conformance.build import MODELS, BuildUnavailable, build
    from tests.conformance.cases import run_all
    from tests.conformance.conftest import CACHE
    fmus = {}
    try:
        for v in MODELS:
            fmus.update({(v, m): p for m, p in build(v, CACHE / f"fmi{v}").items()})
    except BuildUnavailable as exc:
        return {"status": f"skipped: {exc}", "passed": None, "total": None, "cases": []}
    outcomes = run_all(fmus, tmp / "conformance")
    return {"status": "ok", "passed": sum(o.passed for o in outcomes), "total": len(outcomes),
            "cases": [{"case": o.case.id, "via": o.via, "error": o.error, "tol": o.case.tol,
                       "passed": o.passed, "detail": o.detail} for o in outcomes]}


def run_other_exporters(tmp: pathlib.Path) -> dict:
    """The corpus of other exporters' FMUs (``tests/corpus``) against FMPy, by the API and
    the CLI: cases agreeing, total, exporters whose FMUs were built."""
    from tests.conformance.build import build_all
    from tests.conformance.conftest import CACHE
    from tests.corpus.cases import cases as corpus_cases
    from tests.corpus.cases import run_case
    from tests.corpus.exporters import build_corpus
    corpus = build_corpus(tmp / "corpus", build_all(CACHE))
    rows = []
    for case in corpus_cases():
        entry = corpus[case.fmu]
        for via in ("api", "cli"):
            if entry.skip or entry.error:
                rows.append({"case": case.id, "via": via, "exporter": entry.exporter,
                             "agrees": False, "skipped": entry.skip, "detail": entry.error})
                continue
            o = run_case(case, entry.path, via, tmp / "corpus-out" / f"{case.id}-{via}")
            rows.append({"case": case.id, "via": via, "exporter": entry.exporter,
                         "oracle": o.oracle, "error": o.error, "agrees": o.passed,
                         "detail": o.detail, "expected_failure": case.xfail.get(via, "")})
    exporters = sorted({e.exporter for e in corpus.values() if not (e.skip or e.error)})
    return {"agree": sum(r["agrees"] for r in rows), "total": len(rows),
            "exporters": exporters, "cases": rows}


def targets(cases: list[dict], conformance: dict | None = None,
            other: dict | None = None) -> list[dict]:
    by = {c["case"]: c for c in cases}
    conf = conformance or {}
    fails = conf["total"] - conf["passed"] if conf.get("total") is not None else None
    failed = [f"{c['case']} ({c['via']})" for c in conf.get("cases", []) if not c["passed"]]
    ours = by.get("cs/generated-c/ours")
    over = None
    if ours and ours["ours"].get("us_per_block_step") is not None:
        raw = ours["peers"]["fmpy-raw"].get("us_per_block_step")
        if raw is not None:
            over = ours["ours"]["us_per_block_step"] - raw
    return [
        make_target("our overhead per FMU step over fmpy's raw calls [us]", over, "<=", "8",
                    note="FMUSubsystem set_inputs/do_step/get_outputs vs setReal/doStep/"
                         "getReal, generated-C FMU; the pythonfmu FMU's cost is a case"),
        make_target("conformance: Reference FMU cases failed", fails, "<=", "0",
                    note=(f"{conf['passed']} of {conf['total']} passed (models x FMI 2/3 x "
                          "every interface offered x API and CLI)" if fails is not None
                          else conf.get("status", "not run"))
                    + (": " + ", ".join(failed[:8]) if failed else "")),
        *other_exporter_targets(other),
    ]


def other_exporter_targets(other: dict | None) -> list[dict]:
    """Cases of the other exporters' corpus agreeing with FMPy (goal: all), exporters (>= 4)."""
    if not other:
        return [make_target("other exporters: cases agreeing with FMPy or the exact answer",
                            None, ">=", "1", note="not run"),
                make_target("other exporters: exporters in the corpus", None, ">=", "4",
                            note="not run")]
    off = [f"{r['case']} ({r['via']})" for r in other["cases"] if not r["agrees"]]
    return [
        make_target("other exporters: cases agreeing with FMPy or the exact answer",
                    other["agree"], ">=", str(other["total"]),
                    note=f"{other['agree']} of {other['total']} (FMU x interface x API/CLI)"
                    + (": not agreeing " + ", ".join(off[:8]) + (" ..." if len(off) > 8 else "")
                       if off else "")),
        make_target("other exporters: exporters in the corpus", len(other["exporters"]), ">=",
                    "4", note=", ".join(other["exporters"])),
    ]
