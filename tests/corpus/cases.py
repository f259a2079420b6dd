"""Differential cases over the corpus of other exporters' FMUs: the project against FMPy.

One :class:`Case` per FMU x interface.  Each runs three ways with the same settings on the
same output grid:

* ``fmpy``: :func:`fmpy.simulate_fmu` (the oracle);
* ``api``: :func:`fmus.load_fmu` -> :class:`~fmus.FMUSubsystem` in a
  :class:`~cosim.MasterScheduler` (Co-Simulation, inputs from a source subsystem) or
  :class:`~fmus.FMUBlock` in a :class:`~cosim.Simulator` (Model Exchange);
* ``cli``: ``cosim fmu simulate`` with the inputs as an ``--input`` CSV file.

Event convention, applied on both sides: an input step is written as two rows at the same
instant ``t_s`` (left value, then right value), as FMPy's ``Input`` reads it; the value used
from ``t_s`` on -- over the communication step ``[t_s, t_s + h]`` in Co-Simulation, after the
time event in Model Exchange -- is the right value.  Outputs are compared at the grid
instants as right limits: the last sample of an instant, taken after the inputs of that
instant are set (an output with direct feedthrough shows the right value of an input step).
FMPy's ``simulate_fmu`` samples a Co-Simulation FMU after ``doStep`` and *before* it sets the
inputs of that instant (the left value); the oracle therefore adds a sample after setting
them (its ``step_finished`` hook, with FMPy's own ``Input``), so both sides give the right
limit.

Tolerances: Co-Simulation 1e-9 (max |ours - fmpy| / max(1, |fmpy|); integers, booleans and
strings exactly); Model Exchange: the integrators run at rtol 1e-10, ours and FMPy are each
compared with the exact answer to 1e-7.  Where FMPy itself is wrong or crashes the case names
the upstream defect (``fmpy_defect``) and the project is checked against the exact answer.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

CS_TOL = 1e-9
ME_TOL = 1e-7
ME_RTOL = 1e-10


@dataclass
class Case:
    """One corpus FMU through one interface, with its inputs and its expected outcome."""

    fmu: str                        # id in the corpus (tests.corpus.exporters)
    interface: str                  # "CS" or "ME"
    t_end: float
    step: float                     # communication step (CS) or output grid (ME)
    inputs: dict = field(default_factory=dict)   # {name: [(t, value), ...]} a repeated t: step
    start: dict = field(default_factory=dict)    # {name: start value} (parameters, strings)
    outputs: tuple = ()             # compared outputs
    exact: Any = None               # callable(t) -> {output: values}, or None
    fmpy_defect: str = ""           # FMPy is wrong or crashes here: the upstream defect
    fmpy_validate: bool = True      # False: FMPy's own validation refuses the FMU, run anyway
    fmpy_folder: str = ""           # why FMPy runs the extracted FMU folder (not the archive)
    isolate: str = ""               # why each run goes in a child process with a time limit
    strings: tuple = ()             # String outputs: FMPy records none, checked exactly
    xfail: dict = field(default_factory=dict)    # {"api"/"cli": reason} (issue 31 items)
    symptom: str = ""               # regex the failure of an xfail case must match

    @property
    def id(self) -> str:
        return f"{self.fmu}-{self.interface.lower()}"

    def grid(self) -> np.ndarray:
        n = int(round(self.t_end / self.step))
        return np.round(np.arange(n + 1) * self.step, 12)


# ----------------------------------------------------------------- input helpers
def step_input(t_s: float, before: Any, after: Any) -> list:
    """A step at ``t_s``: two rows at the same instant (left, then right value)."""
    return [(0.0, before), (t_s, before), (t_s, after)]


def held(rows: list, t: float, left: bool = False) -> Any:
    """The input of ``rows`` at ``t``: the right value at a step (the left one with
    ``left``)."""
    val = rows[0][1]
    for tr, v in rows:
        if tr < t - 1e-12 or (not left and abs(tr - t) <= 1e-12):
            val = v
    return val


def cs_after_step(rows_f, t: np.ndarray, step: float, start: dict, f) -> dict:
    """Outputs that a CS FMU computes in ``doStep`` from the inputs held over the step:
    at ``t_0`` the start values, at ``t_k`` ``f`` of the inputs at ``t_(k-1)``."""
    out = {k: [] for k in start}
    for tk in t:
        vals = start if tk <= 1e-12 else f({n: held(r, tk - step) for n, r in rows_f.items()})
        for k in out:
            out[k].append(vals[k])
    return out


# ----------------------------------------------------------------- the cases
def _lag_exact(tau: float, rows: list, step: float):
    def ref(t: np.ndarray) -> dict:
        y, out = held(rows, 0.0), []
        for k in range(len(t)):
            if k:
                u = held(rows, t[k - 1])
                y = u + (y - u) * math.exp(-step / tau)
            out.append(y)
        return {"y": np.array(out)}
    return ref


def _decay_exact(k: float, rows: list):
    (_, u0), (t_s, _), (_, u1) = rows

    def ref(t: np.ndarray) -> dict:
        x_s = math.exp(-k * t_s) + u0 / k * (1 - math.exp(-k * t_s))
        x = np.where(t < t_s, np.exp(-k * t) + u0 / k * (1 - np.exp(-k * t)),
                     u1 / k + (x_s - u1 / k) * np.exp(-k * (t - t_s)))
        return {"y": 3.0 * x}
    return ref


def _latch_exact(rows: dict):
    def ref(t: np.ndarray) -> dict:
        q, n, qs, ns = False, 0, [], []
        for k in range(len(t)):
            if k:
                s_, r_ = (held(rows[x], t[k - 1]) for x in ("set", "reset"))
                q = s_ or (q and not r_)
                n += int(q)
            qs.append(q)
            ns.append(n)
        return {"q": qs, "n": ns}
    return ref


def _van_der_pol(t: np.ndarray) -> dict:
    from tests.conformance.cases import van_der_pol
    return van_der_pol(np.asarray(t, float))


#: unifmu 0.0.3's Python backend reads ``../modelDescription.xml`` beside its resources, which
#: an importer need not extract (FMPy's ``simulate_fmu`` extracts only ``binaries/`` and
#: ``resources/``): the backend dies and the FMU's ``fmi2Instantiate`` waits for it forever
UNIFMU_DEFECT = ("unifmu 0.0.3's backend reads ../modelDescription.xml, which FMPy does not "
                 "extract; its fmi2Instantiate then waits forever")

def cases() -> list[Case]:
    """Every FMU x interface of the corpus."""
    lag_u = step_input(0.5, 2.0, 3.0)
    t2 = {"u_r": step_input(0.5, 1.0, 1.5), "u_i": step_input(0.3, 2, -4),
          "u_b": step_input(0.5, False, True)}
    t3 = {"u_r": step_input(0.5, 1.0, 1.5), "u_i": step_input(0.3, 2, -4),
          "u_l": step_input(0.4, 2 ** 40, -(2 ** 40)), "u_w": step_input(0.4, 7, 2 ** 63 + 5),
          "u_b": step_input(0.5, False, True)}
    decay_u = step_input(0.5, 0.0, 1.0)
    uni = {"real_a": step_input(0.5, 1.0, 2.25), "integer_a": step_input(0.3, 4, 9),
           "boolean_a": step_input(0.6, False, True)}
    latch = {"set": [(0.0, False), (0.2, False), (0.2, True), (0.3, True), (0.3, False)],
             "reset": step_input(0.6, False, True)}
    r2 = {"u": step_input(0.5, 1.0, 2.5), "n_in": step_input(0.3, 3, -7),
          "b_in": step_input(0.5, False, True), "e_in": step_input(0.4, 1, 2)}
    r3 = {**r2, "i8_in": step_input(0.2, -128, 127), "u16_in": step_input(0.6, 7, 65535),
          "i64_in": step_input(0.4, -(2 ** 62), 2 ** 62 + 1),
          "u64_in": step_input(0.4, 5, 2 ** 64 - 1),
          "Float32_continuous_input": step_input(0.3, 0.25, -1.5),
          "UInt8_input": step_input(0.7, 1, 255), "Int16_input": step_input(0.2, -32768, 32767),
          "UInt32_input": step_input(0.6, 0, 4294967295)}
    renamed = []
    for fmi, rows in ((2, r2), (3, r3)):
        outs = tuple(n.replace("_in", "_out") if n != "u" else "y" for n in rows) + ("s_out",)
        for itf in ("CS", "ME"):
            renamed.append(Case(
                f"fmt-renamed{fmi}", itf, 1.0, 0.1, inputs=rows, start={"s_in": "renamed"},
                outputs=outs, strings=("s_out",),
                exact=lambda t, rows=rows: {
                    **{(n.replace("_in", "_out") if n != "u" else "y"):
                       [held(r, tk) for tk in t] for n, r in rows.items()},
                    "s_out": ["renamed"] * len(t)}))
    return renamed + [
        Case("pf2-readme", "CS", 1.0, 0.1, outputs=("intOut", "realOut"),
             exact=lambda t: {"intOut": [1] * len(t), "realOut": np.full(len(t), 3.0)},
             fmpy_validate=False),
        Case("pf2-lag", "CS", 1.0, 0.1, inputs={"u": lag_u}, start={"tau": 0.5},
             outputs=("y",), exact=_lag_exact(0.5, lag_u, 0.1)),
        Case("pf2-types", "CS", 1.0, 0.1, inputs=t2, start={"u_s": "ab", "g": 2.5, "n": 3},
             outputs=("r", "i", "b", "s"), strings=("s",),
             exact=lambda t: cs_after_step(
                 t2, t, 0.1, {"r": 0.0, "i": 0, "b": True, "s": ""},
                 lambda u: {"r": 2.5 * u["u_r"], "i": 3 * u["u_i"], "b": not u["u_b"],
                            "s": "ababab"}),),
        Case("pf2-latch", "CS", 1.0, 0.1, inputs=latch, outputs=("q", "n"),
             exact=_latch_exact(latch)),
        Case("unifmu-adder", "CS", 1.0, 0.1, inputs=uni,
             start={"real_b": 0.5, "integer_b": -3, "boolean_b": False, "string_a": "uni",
                    "string_b": "fmu"},
             outputs=("real_c", "integer_c", "boolean_c", "string_c"), strings=("string_c",),
             exact=lambda t: cs_after_step(
                 uni, t, 0.1, {"real_c": 0.0, "integer_c": 0, "boolean_c": False,
                               "string_c": ""},
                 lambda u: {"real_c": u["real_a"] + 0.5, "integer_c": u["integer_a"] - 3,
                            "boolean_c": u["boolean_a"], "string_c": "unifmu"}),
             fmpy_folder=UNIFMU_DEFECT,
             isolate="a unifmu FMU whose backend dies hangs its importer in fmi2Instantiate",),
        Case("pf3-types", "CS", 1.0, 0.1, inputs=t3, start={"u_s": "ab", "g": 2.5, "n": 3},
             outputs=("r", "i", "l", "w", "b", "s"), strings=("s",),
             exact=lambda t: cs_after_step(
                 t3, t, 0.1, {"r": 0.0, "i": 0, "l": 0, "w": 0, "b": True, "s": ""},
                 lambda u: {"r": 2.5 * u["u_r"], "i": 3 * u["u_i"], "l": u["u_l"] - 1,
                            "w": u["u_w"] + 1, "b": not u["u_b"], "s": "ababab"}),),
        Case("pf3-readme", "CS", 1.0, 0.1, outputs=("intOut", "realOut"),
             exact=lambda t: {"intOut": [1] * len(t), "realOut": np.full(len(t), 3.0)}),
        Case("pf3-readme-me", "ME", 10.0, 0.1, outputs=("x0", "x1"), exact=_van_der_pol),
        Case("pf3-decay-me", "ME", 2.0, 0.1, inputs={"u": decay_u}, start={"k": 2.0},
             outputs=("y",), exact=_decay_exact(2.0, decay_u)),
        # u(0) = 3 differs from the container's start value 1: it starts from its input
        Case("fmpy-container", "CS", 1.0, 0.1, inputs={"u": step_input(0.5, 3.0, 2.0)},
             outputs=("y",)),
        # u(0) = 1 differs from the containers' start value 0: they start from their input
        Case("fmt-container2", "CS", 2.0, 0.1, inputs={"u": step_input(0.5, 1.0, 2.0)},
             outputs=("x", "f")),
        Case("fmt-container3", "CS", 2.0, 0.1, inputs={"u": step_input(0.5, 1.0, 2.0)},
             outputs=("x", "f")),
    ]


# ----------------------------------------------------------------- running
@dataclass
class Run:
    """Samples on the grid: ``{output: list of values}`` (right limits at events)."""

    time: np.ndarray
    values: dict


def _structured_input(case: Case) -> np.ndarray | None:
    """The inputs as FMPy's structured array (one row per distinct row of any input)."""
    if not case.inputs:
        return None
    times = sorted({tr for rows in case.inputs.values() for tr, _ in rows})
    rows = []
    for tr in times:
        # at a step instant: a row with every left value, then one with every right value
        rows.append((tr, [held(r, tr, left=True) for r in case.inputs.values()]))
        rows.append((tr, [held(r, tr) for r in case.inputs.values()]))
    dtypes = [("time", "f8")]
    for name, r in case.inputs.items():
        v = r[0][1]
        dtypes.append((name, "?" if isinstance(v, bool) else
                       ("u8" if any(x > 2 ** 63 - 1 for _, x in r) else "i8")
                       if isinstance(v, int) else "f8"))
    return np.array([(tr, *vals) for tr, vals in rows], dtype=dtypes)


def run_fmpy(case: Case, path: Path) -> Run:
    """The oracle: ``fmpy.simulate_fmu`` with the case's settings."""
    from fmpy import simulate_fmu
    kwargs: dict[str, Any] = dict(
        fmi_type="CoSimulation" if case.interface == "CS" else "ModelExchange",
        start_time=0.0, stop_time=case.t_end, output_interval=case.step,
        start_values=dict(case.start), validate=case.fmpy_validate,
        output=[o for o in case.outputs if o not in case.strings],
        input=_structured_input(case))
    if case.interface == "ME":
        kwargs.update(solver="CVode", relative_tolerance=ME_RTOL)
    elif kwargs["input"] is not None:
        kwargs["step_finished"] = _right_limit_sampler(path, kwargs["input"])
    if case.fmpy_folder:
        import tempfile
        import zipfile
        with tempfile.TemporaryDirectory() as td:
            with zipfile.ZipFile(path) as z:
                z.extractall(td)
            res = simulate_fmu(td, **kwargs)
    else:
        res = simulate_fmu(str(path), **kwargs)
    return _on_grid(case, np.asarray(res["time"], float),
                    {n: list(res[n]) for n in case.outputs if n not in case.strings})


def _right_limit_sampler(path: Path, table: np.ndarray):
    """FMPy ``step_finished`` hook: set the inputs of the instant just reached (as FMPy
    sets them before its next ``doStep``) and sample the outputs again (the right limit)."""
    from fmpy import read_model_description
    from fmpy.simulation import Input
    md = read_model_description(str(path), validate=False)
    held_input: dict = {}

    def hook(time: float, recorder: Any) -> bool:
        if "input" not in held_input:
            held_input["input"] = Input(recorder.fmu, md, table)
        held_input["input"].apply(time, after_event=True)
        recorder.sample(time, force=True)
        return True
    return hook


def _on_grid(case: Case, time: np.ndarray, cols: dict) -> Run:
    """The last sample at each grid instant (the right limit); a missing instant fails."""
    idx = []
    for g in case.grid():
        hits = np.flatnonzero(np.abs(time - g) <= 1e-9)
        if hits.size == 0:
            raise AssertionError(f"{case.id}: no sample at t = {g:g} s")
        idx.append(int(hits[-1]))
    return Run(case.grid(), {n: [_py(cols[n][i]) for i in idx] for n in cols})


def _py(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _source_block(name: str, rows: list):
    from blocks.tables import FromArrays
    v = rows[0][1]
    dtype = bool if isinstance(v, bool) else (
        (np.uint64 if any(x > 2 ** 63 - 1 for _, x in rows) else np.int64)
        if isinstance(v, int) else float)
    return FromArrays(f"in_{name}", [t for t, _ in rows], [x for _, x in rows],
                      interpolation="previous", dtype=dtype)


def run_api(case: Case, path: Path) -> Run:
    """The case through :func:`fmus.load_fmu` (CS: in a master; ME: in a simulator)."""
    from cosim import DiagramBuilder, MasterScheduler, Simulator
    from cosim.subsystem import DiagramSubsystem
    from fmus import load_fmu
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fmu = load_fmu(path, name="fmu", interface=case.interface.lower(),
                       start=dict(case.start))
        if case.interface == "ME":
            b = DiagramBuilder("corpus")
            b.add(fmu)
            for name, rows in case.inputs.items():
                src = b.add(_source_block(name, rows))
                b.connect(src.y, fmu.input(name))
            sim = Simulator(b.build(), solver="dop853", dt=case.step, rtol=ME_RTOL,
                            atol=1e-12, record=[f"fmu.{o}" for o in case.outputs])
            res = sim.run(case.t_end)
        else:
            subs, conns = [fmu], []
            if case.inputs:
                b = DiagramBuilder("inputs")
                for name, rows in case.inputs.items():
                    src = b.add(_source_block(name, rows))
                    b.export_output(src.y, name)
                    conns.append((f"inputs.{name}", f"fmu.{name}"))
                subs.insert(0, DiagramSubsystem(b.build(), solver="euler", dt=case.step))
            res = MasterScheduler(subs, conns, case.step).run(case.t_end)
    return _results_on_grid(case, res)


def _results_on_grid(case: Case, res: Any) -> Run:
    cols = {}
    for o in case.outputs:
        key = next((k for k in res.signals if k.rsplit(".", 1)[-1] == o), None)
        if key is None:
            raise AssertionError(f"{case.id}: output {o!r} was not recorded "
                                 f"({sorted(res.signals)})")
        cols[o] = list(np.asarray(res[key]).tolist()) if not isinstance(res[key], list) \
            else res[key]
    return _on_grid(case, np.asarray(res.time, float), cols)


def _fmt(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else repr(v)


def _csv(v: Any) -> Any:
    """A value in the ``--input`` CSV file: numbers (booleans as 0/1, as FMPy's CSV)."""
    return int(v) if isinstance(v, (bool, np.bool_)) else v


def run_cli(case: Case, path: Path, out: Path) -> Run:
    """The case through ``cosim fmu simulate`` (inputs as an ``--input`` CSV file)."""
    from cosim.cli import main
    from cosim.writers import read_csv
    out.mkdir(parents=True, exist_ok=True)
    argv = ["fmu", "simulate", str(path), "--interface-type", case.interface.lower(),
            "--t-start", "0", "--t-end", repr(case.t_end), "--out", str(out), "--quiet"]
    if case.interface == "ME":
        argv += ["--dt", repr(case.step), "--solver", "dop853", "--rtol", repr(ME_RTOL),
                 "--atol", "1e-12"]
    else:
        argv += ["--step", repr(case.step)]
    for name, value in case.start.items():
        argv += ["--set", f"{name}={_fmt(value) if not isinstance(value, str) else value}"]
    table = _structured_input(case)
    if table is not None:
        with open(out / "inputs.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(table.dtype.names)
            for row in table.tolist():
                w.writerow([_csv(x) for x in row])
        argv += ["--input", str(out / "inputs.csv")]
    err = io.StringIO()
    with (warnings.catch_warnings(), contextlib.redirect_stderr(err),
          contextlib.redirect_stdout(io.StringIO())):  # its summary lines
        warnings.simplefilter("ignore")
        code = main(argv)
    if code != 0:
        raise AssertionError(f"cosim {' '.join(argv)} exited {code}:\n{err.getvalue()}")
    return _results_on_grid(case, read_csv(out / "results.csv"))


# ----------------------------------------------------------------- comparing
def difference(case: Case, got: Run, want: dict, tol: float) -> tuple[float, str]:
    """``(error, first failure or "")``: reals by max |got - want| / max(1, |want|),
    everything else exactly."""
    err = 0.0
    for name in case.outputs:
        if name not in want or name not in got.values:
            continue
        g, w = got.values[name], list(want[name])
        if any(isinstance(x, (bool, int, str, np.bool_)) and not isinstance(x, float)
               for x in w):
            for i, (a, b) in enumerate(zip(g, w)):  # by value: a CSV has no bool type
                if _py(a) != _py(b):
                    return math.inf, (f"{name} at t = {got.time[i]:g} is {_py(a)!r}, "
                                      f"expected exactly {_py(b)!r}")
            continue
        a, b = np.asarray(g, float), np.asarray(w, float)
        d = np.abs(a - b) / np.maximum(1.0, np.abs(b))
        if np.isnan(d).any():
            return math.inf, f"{name}: NaN"
        i = int(np.argmax(d))
        err = max(err, float(d[i]))
        if d[i] > tol:
            return err, (f"{name} at t = {got.time[i]:g} is {float(a[i])!r}, expected "
                         f"{float(b[i])!r}")
    return err, ""


@dataclass
class Outcome:
    """One case one way (``api``/``cli``): its error against the oracle, or why it failed."""

    case: Case
    via: str
    oracle: str                    # "FMPy", "FMPy and exact" or "exact (FMPy: <defect>)"
    error: float | None
    passed: bool
    detail: str = ""


def oracle(case: Case, path: Path) -> tuple[dict, str, float]:
    """``(reference values, what they are, tolerance)``: FMPy's result (checked against the
    exact answer where there is one); the exact answer where FMPy has a named defect."""
    tol = CS_TOL if case.interface == "CS" else ME_TOL
    if case.fmpy_defect:
        return case.exact(case.grid()), f"exact (FMPy: {case.fmpy_defect})", tol
    ref = run_fmpy(case, path)
    if case.exact is not None:
        err, why = difference(case, ref, case.exact(case.grid()), tol)
        if why:
            raise AssertionError(f"{case.id}: FMPy disagrees with the exact answer "
                                 f"({why}): name the upstream defect in the case")
        if case.interface == "ME":  # both are held to the exact answer
            return case.exact(case.grid()), "exact (FMPy agrees)", tol
        exact = case.exact(case.grid())
        return ({**ref.values, **{s: exact[s] for s in case.strings}},
                "FMPy (= exact)" + ("; String outputs exact: FMPy records none"
                                    if case.strings else ""), tol)
    return ref.values, "FMPy", tol


#: the time limit of a case run in a child process (``Case.isolate``) [s]
CHILD_TIMEOUT_S = 300.0


def run_case(case: Case, path: Path, via: str, out: Path) -> Outcome:
    """Run and compare one case; a failure is an outcome, never raised (bench, docs)."""
    if case.isolate:
        return _run_in_child(case, path, via, out)
    return _run_case(case, path, via, out)


def _run_in_child(case: Case, path: Path, via: str, out: Path) -> Outcome:
    """:func:`run_case` in a child process (its own session, killed whole at the limit)."""
    import json
    import os
    import signal
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    code = ("import json, sys; from pathlib import Path; "
            "from tests.corpus.cases import cases, _run_case; "
            "c = next(c for c in cases() if c.id == sys.argv[1]); "
            "o = _run_case(c, Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])); "
            "print('OUTCOME ' + json.dumps([o.oracle, o.error, o.passed, o.detail]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root)] + [x for x in [os.environ.get("PYTHONPATH")] if x])}
    proc = subprocess.Popen([sys.executable, "-c", code, case.id, str(path), via, str(out)],
                            cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        stdout, _ = proc.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return Outcome(case, via, "FMPy", None, False,
                       f"no result within {CHILD_TIMEOUT_S:g} s ({case.isolate})")
    line = next((x for x in reversed(stdout.splitlines()) if x.startswith("OUTCOME ")), None)
    if line is None:
        return Outcome(case, via, "FMPy", None, False,
                       f"the child process ended with status {proc.returncode} and no result")
    oracle_, error, passed, detail = json.loads(line[len("OUTCOME "):])
    return Outcome(case, via, oracle_, error, passed, detail)


def _run_case(case: Case, path: Path, via: str, out: Path) -> Outcome:
    try:
        ref, what, tol = oracle(case, path)
    except Exception as exc:  # noqa: BLE001 - reported per case
        return Outcome(case, via, "FMPy", None, False, f"oracle: {type(exc).__name__}: {exc}")
    try:
        got = run_api(case, path) if via == "api" else run_cli(case, path, out)
        err, why = difference(case, got, ref, tol)
    except Exception as exc:  # noqa: BLE001
        return Outcome(case, via, what, None, False, f"{type(exc).__name__}: {exc}"[:1500])
    return Outcome(case, via, what, err, not why, why)


# ----------------------------------------------------------------- the docs table
def oracle_text(case: Case) -> str:
    """What a case is compared with (static: from the case's definition)."""
    if case.fmpy_defect:
        text = f"exact (FMPy: {case.fmpy_defect})"
    elif case.exact is not None and case.interface == "ME":
        text = "exact; FMPy checked against it"
    elif case.exact is not None:
        text = "FMPy, checked against the exact answer"
    else:
        text = "FMPy"
    if not case.fmpy_validate:
        text += " (FMPy with validate=False: its validation refuses the FMU)"
    if case.fmpy_folder:
        text += f" (FMPy on the extracted folder: {case.fmpy_folder})"
    if case.strings:
        text += "; String outputs: exact (FMPy records none)"
    return text


def expected_text(case: Case, via: str) -> str:
    """``agrees`` or the issue 31 items its strict xfail names."""
    import re
    reason = case.xfail.get(via)
    if not reason:
        return "agrees"
    items = sorted(set(re.findall(r"item (\d)", reason)))
    return "fails: issue 31 item" + ("s " if len(items) > 1 else " ") + ", ".join(items)


def markdown_table(catalogue: dict) -> str:
    """The corpus table of ``docs/libraries/fmi.md``: one row per FMU x interface
    (``catalogue``: ``{fmu id: (exporter, FMI version, what)}``)."""
    lines = ["| FMU | exporter | FMI | interface | what | compared with | API | CLI |",
             "|---|---|---|---|---|---|---|---|"]
    for c in cases():
        exporter, fmi, what = catalogue[c.fmu]
        lines.append(f"| {c.fmu} | {exporter} | {fmi}.0 | {c.interface} | {what} | "
                     f"{oracle_text(c)} | {expected_text(c, 'api')} | "
                     f"{expected_text(c, 'cli')} |")
    return "\n".join(lines)
