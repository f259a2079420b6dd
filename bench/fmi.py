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
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from .harness import make_case, make_target, measure

NAME = "fmi"
DESCRIPTION = "FMU step costs: our FMU subsystem vs fmpy's raw calls; generated C vs pythonfmu"
PACKAGES = ("fmpy", "pythonfmu")

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


def ours_loop(path: str, n: int) -> float:
    """Seconds for ``n`` communication steps of :class:`fmus.FMUSubsystem`."""
    from fmus.subsystem import FMUSubsystem
    sub = FMUSubsystem(path, name="servo")
    sub.initialize(0)
    hk = round(H * 1e9)
    w = time.perf_counter()
    for k in range(n):
        sub.set_inputs(k * H, {"u": (_u(k),)})
        sub.do_step(k * hk, hk)
        sub.get_outputs()
    return time.perf_counter() - w


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
    return {"cases": cases, "targets": targets(cases)}


def targets(cases: list[dict]) -> list[dict]:
    by = {c["case"]: c for c in cases}
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
    ]
