"""The Reference FMU conformance cases: what each model must give, and how we run it.

One :class:`Case` per model x FMI version x interface.  Each runs through the import API
(:func:`fmus.load_fmu` -> :class:`~fmus.FMUBlock` in a :class:`~cosim.Simulator` for Model
Exchange, :class:`~fmus.FMUSubsystem` in a :class:`~cosim.MasterScheduler` for
Co-Simulation) or through the ``cosim fmu simulate`` command line, and is compared with:

* Co-Simulation: upstream's ``<Model>_out.csv`` (a CS result at the FMU's own fixed
  internal step, made by upstream's ``fmusim``), on its time grid; where upstream ships
  none that fits (``Roberts_out.csv`` is a copy of BouncingBall's), an independent
  re-implementation of the FMU's internal method (forward Euler at its fixed step);
* Model Exchange: the exact solution (Dahlquist, Stair, StateSpace, Feedthrough,
  Resource, the bouncing ball's piecewise parabolas) or a tight-tolerance independent
  reference (SciPy ``DOP853``/``Radau`` at rtol 1e-12 on the equations of the model's
  readme: Van der Pol, Robertson).

Figures measured on the vendored sources (upstream 1258711) are in the test module and in
``docs/libraries/fmi.md`` (the conformance table).
"""

from __future__ import annotations

import csv
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tests.conformance.build import SOURCES, reference_csv

# ------------------------------------------------------------ references
G, E, V_MIN = 9.81, 0.7, 0.1  # BouncingBall/model.c and config.h


def bounce_times() -> list[float]:
    """The bouncing ball's impact instants (the last one ends in rest)."""
    return [b for _, b, _, _ in _bounce_segments()[0]]


def _bounce_segments() -> tuple[list, bool]:
    t0, h0, v0, resting = 0.0, 1.0, 0.0, False
    segments = []
    for _ in range(100):
        tau = (v0 + math.sqrt(v0 * v0 + 2 * G * h0)) / G  # h0 + v0 tau - g tau^2 / 2 = 0
        segments.append((t0, t0 + tau, h0, v0))
        t0 += tau
        v_new = E * (G * tau - v0)
        h0, v0 = 0.0, v_new
        if v_new < V_MIN:
            resting = True
            break
    return segments, resting


def bouncing_ball(t: np.ndarray) -> dict:
    """h, v of the bouncing ball (h0 = 1, v0 = 0): parabolas between impacts; an impact
    reverses v times e; below v_min the ball rests (h = DBL_MIN, v = 0, g = 0)."""
    t = np.asarray(t, float)
    h, v = np.empty_like(t), np.empty_like(t)
    segments, resting = _bounce_segments()
    for i, tk in enumerate(t):
        for a, b, hs, vs in segments:
            if a <= tk <= b:
                tau = tk - a
                h[i], v[i] = hs + vs * tau - 0.5 * G * tau * tau, vs - G * tau
                break
        else:
            h[i], v[i] = (0.0, 0.0) if resting else (math.nan, math.nan)
    return {"h": h, "v": v}


def van_der_pol(t: np.ndarray, mu: float = 1.0) -> dict:
    """x0' = x1, x1' = mu (1 - x0^2) x1 - x0, x(0) = (2, 0) (VanDerPol/readme.md), by
    SciPy's DOP853 at rtol 1e-12."""
    from scipy.integrate import solve_ivp
    sol = solve_ivp(lambda _t, x: [x[1], mu * (1 - x[0] ** 2) * x[1] - x[0]],
                    (0.0, float(t[-1])), [2.0, 0.0], method="DOP853", rtol=1e-12,
                    atol=1e-14, t_eval=t)
    return {"x0": sol.y[0], "x1": sol.y[1]}


def robertson(t: np.ndarray) -> dict:
    """Robertson's kinetics (Roberts/readme.md) as the FMU's ODE (y3 = 1 - y1 - y2), by
    SciPy's Radau at rtol 1e-12."""
    from scipy.integrate import solve_ivp

    def f(_t, y):
        y1, y2 = y
        y3 = 1.0 - y1 - y2
        return [-0.04 * y1 + 1e4 * y2 * y3, 0.04 * y1 - 1e4 * y2 * y3 - 3e7 * y2 * y2]

    def jac(_t, y):
        y1, y2 = y
        y3 = 1.0 - y1 - y2
        return [[-0.04 - 1e4 * y2, 1e4 * y3 - 1e4 * y2],
                [0.04 + 1e4 * y2, -1e4 * y3 + 1e4 * y2 - 6e7 * y2]]

    sol = solve_ivp(f, (0.0, float(t[-1])), [1.0, 0.0], method="Radau", jac=jac,
                    rtol=1e-12, atol=1e-16, t_eval=t)
    return {"y1": sol.y[0], "y2": sol.y[1], "y3": 1.0 - sol.y[0] - sol.y[1]}


def robertson_euler(t: np.ndarray, h: float = 1e-6) -> dict:
    """What the Roberts CS FMU computes at the communication points ``t``: forward Euler
    at its FIXED_SOLVER_STEP (1e-6 s, Roberts/config.h), with upstream's doStep loop
    (src/fmi3Functions.c, src/cosimulation.c): internal steps go on while the next one
    ends before the communication point *or within EPSILON = 1e-5 s of it* (``isClose``
    is absolute below 1), so with a 1e-6 s step each communication step overshoots by 10
    internal steps (FMPy's ``simulate_fmu`` gives the same numbers)."""
    eps = 1e-5

    def is_close(a: float, b: float) -> bool:
        return abs(a - b) <= eps or abs(a - b) <= eps * max(abs(a), abs(b))

    y1, y2, n, time = 1.0, 0.0, 0, 0.0
    out = np.empty((len(t), 2))
    for i, tc in enumerate(t):
        while tc > 0.0:  # t = 0: the initial values, no doStep
            nxt = time + h
            if nxt > tc and not is_close(nxt, tc):
                break
            y3 = 1.0 - y1 - y2
            d1 = -0.04 * y1 + 1e4 * y2 * y3
            d2 = 0.04 * y1 - 1e4 * y2 * y3 - 3e7 * y2 * y2
            y1, y2 = y1 + h * d1, y2 + h * d2
            n += 1
            time = n * h
        out[i] = y1, y2
    return {"y1": out[:, 0], "y2": out[:, 1], "y3": 1.0 - out[:, 0] - out[:, 1]}


def read_out_csv(model: str) -> tuple[np.ndarray, dict]:
    """Upstream's ``<Model>_out.csv``: times and ``{column: values}`` (numbers as float
    arrays; Int64/UInt64 columns as exact Python ints; vectors "a b c" as rows)."""
    with open(reference_csv(model), newline="") as f:
        rows = list(csv.reader(f))
    header, data = rows[0], rows[1:]
    t = np.array([float(r[0]) for r in data])
    cols = {}
    for j, name in enumerate(header[1:], start=1):
        raw = [r[j] for r in data]
        if all(" " in x for x in raw):
            cols[name] = np.array([[float(y) for y in x.split()] for x in raw])
        elif name.startswith(("Int64", "UInt64")):
            cols[name] = [int(x) for x in raw]
        else:
            try:
                cols[name] = np.array([float(x) for x in raw])
            except ValueError:
                cols[name] = raw  # String / Binary / Boolean text
    return t, cols


# ------------------------------------------------------------ the cases
@dataclass
class Case:
    """One model x FMI version x interface, with its run settings and reference."""

    model: str
    version: int
    interface: str                 # "ME", "CS" or "SE"
    t_end: float
    step: float                    # output grid (ME) or communication step (CS)
    tol: float                     # on the error measure (see ``measure``)
    measure: str = "abs"           # "abs": max |got - ref|; "rel": / max(1, |ref|)
    solver: str = "rk45"
    inputs: dict = field(default_factory=dict)  # {input: value} fed by connected sources
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.model}-fmi{self.version}-{self.interface.lower()}"

    def event_times(self) -> list[float]:
        """State events of the reference: samples this close to one (1 us) are not
        compared (which side of the instant a located event falls is a 1 ns matter)."""
        return bounce_times() if self.model == "BouncingBall" and self.interface == "ME" \
            else []

    def reference(self, t: np.ndarray, path: Path | None = None) -> dict:
        """``{output: values at t}`` this case must reproduce (``path``: the FMU, for the
        references an upstream program computes from it)."""
        m = self.model
        if m == "Clocks":
            return clocks_reference(t, path)
        if m == "Feedthrough":
            return feedthrough_reference(self, t)
        if self.interface == "CS":
            if m == "Roberts":
                return robertson_euler(t)
            t_ref, cols = read_out_csv(m)
            idx = [int(np.argmin(np.abs(t_ref - tk))) for tk in t]
            return {k: (np.asarray(v)[idx] if not isinstance(v, list) else [v[i] for i in idx])
                    for k, v in cols.items()}
        if m == "BouncingBall":
            return bouncing_ball(t)
        if m == "Dahlquist":
            return {"x": np.exp(-t)}
        if m == "VanDerPol":
            return van_der_pol(t)
        if m == "Roberts":
            return robertson(t)
        if m == "Stair":  # counts at t = 1, 2, ...; 10 at t = 9 ends the run
            return {"counter": np.minimum(1 + np.floor(t + 1e-12), 10).astype(int)}
        if m == "StateSpace":  # A = B = C = D = I, x0 = 0, u = (1, 2, 3): y = e^t u
            return {"y": np.exp(t)[:, None] * np.array([1.0, 2.0, 3.0])}
        if m == "Resource":  # the code of the first character of resources/y.txt
            return {"y": np.full(t.shape, ord((SOURCES / "Resource" / "y.txt").read_text()[0]))}
        raise KeyError(m)


#: input values of the Feedthrough cases: upstream's Feedthrough_in.csv at t = 1 (every
#: integer type at its maximum), Float64 and Boolean inputs set too
FEEDTHROUGH_FMI3 = {"Float64_continuous_input": 3.5, "Int8_input": 127, "UInt8_input": 255,
                    "Int16_input": 32767, "UInt16_input": 65535, "Int32_input": 2147483647,
                    "UInt32_input": 4294967295, "Int64_input": 9223372036854775807,
                    "UInt64_input": 18446744073709551615, "Boolean_input": True}
FEEDTHROUGH_FMI2 = {"Float64_continuous_input": 3.5, "Int32_input": 2147483647,
                    "Boolean_input": True}


def feedthrough_reference(case: Case, t: np.ndarray) -> dict:
    """Every output equals its input: the connected ones their source's value, the others
    (left unconnected) their start values."""
    out = {}
    for name, value in case.inputs.items():
        out[name.replace("_input", "_output")] = [value] * len(t)
    out.setdefault("Float64_discrete_output", np.zeros(len(t)))
    out.setdefault("Enumeration_output", [1] * len(t))
    return out


#: where upstream's ``scs_synchronous`` example activates partition 2 of Clocks (its
#: ``time % 8 == 0 || (time - 1) % 8 == 0`` for time = 0..9): the triggered ``inClock2``
CLOCKS_TRIGGERS = [t for t in range(10) if t % 8 == 0 or (t - 1) % 8 == 0]
CLOCKS_COLUMNS = ["inClock1Ticks", "inClock2Ticks", "inClock3Ticks", "totalInClockTicks"]


def clocks_reference(t: np.ndarray, path: Path) -> dict:
    """Upstream's own Scheduled Execution importer (``examples/scs_synchronous.c``, built
    with the FMUs) run on this ``Clocks.fmu``: its CSV at the instants ``t`` (0..9 s)."""
    import subprocess
    import tempfile
    import zipfile
    exe = Path(path).parent.parent / "temp" / "scs_synchronous"
    with tempfile.TemporaryDirectory() as d:
        with zipfile.ZipFile(path) as z:  # the example loads Clocks/binaries/<platform>/
            z.extractall(Path(d) / "Clocks")
        p = subprocess.run([str(exe)], cwd=d, capture_output=True, text=True, timeout=60)
        if p.returncode:
            raise RuntimeError(f"upstream's scs_synchronous failed: {p.stdout}{p.stderr}")
        with open(Path(d) / "scs_synchronous_out.csv") as fh:
            rows = list(csv.DictReader(fh))
    times = [float(r["time"]) for r in rows]
    idx = [times.index(float(tk)) for tk in t]
    return {c: [int(rows[i][c]) for i in idx] for c in CLOCKS_COLUMNS}


def cases() -> list[Case]:
    """Every case the vendored Reference FMUs offer, Scheduled Execution included."""
    out = [Case("Clocks", 3, "SE", 9.0, 1.0, 0.0,
                note="against upstream's scs_synchronous example on the same FMU")]
    for v in (2, 3):
        ft = FEEDTHROUGH_FMI3 if v == 3 else FEEDTHROUGH_FMI2
        for itf in ("ME", "CS"):
            out += [
                # ME: impacts are located on the 1 ns tick; over 11 bounces their instants
                # drift by 2e-8 s (measured), the heights by up to 1.9e-7 m
                Case("BouncingBall", v, itf, 3.0, 0.01, 1e-12 if itf == "CS" else 1e-6),
                Case("Dahlquist", v, itf, 10.0, 0.1, 1e-12 if itf == "CS" else 1e-9),
                Case("Feedthrough", v, itf, 2.0, 0.1, 0.0, inputs=ft),
                Case("Resource", v, itf, 1.0, 1.0 if itf == "CS" else 0.1, 0.0),
                Case("Stair", v, itf, 10.0, 0.2, 0.0),
                Case("VanDerPol", v, itf, 20.0, 0.01, 1e-12 if itf == "CS" else 1e-7),
            ]
            if v == 3:
                out += [
                    Case("StateSpace", v, itf, 10.0, 1.0 if itf == "CS" else 0.1,
                         1e-12 if itf == "CS" else 1e-8, measure="rel"),
                    Case("Roberts", v, itf, 0.01 if itf == "CS" else 40.0,
                         1e-3 if itf == "CS" else 0.1, 1e-12 if itf == "CS" else 1e-8,
                         solver="radau",
                         note="CS against upstream's doStep loop re-implemented (its "
                              "Roberts_out.csv is a copy of BouncingBall's)" if itf == "CS"
                         else ""),
                ]
    return out


# ------------------------------------------------------------ running
def _inputs_diagram(case: Case, block: Any, builder: Any) -> None:
    from blocks.sources import Constant
    for name, value in case.inputs.items():
        c = builder.add(Constant(f"in_{name}", value, dtype=block.input(name).dtype))
        builder.connect(c.y, block.input(name))


def run_api(case: Case, path: Path) -> Any:
    """The case through the import API; returns :class:`~cosim.observers.Results` with
    signals named ``fmu.<output>``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # kept in results.diagnostics["warnings"]
        res = _run_api(case, path)
    res.diagnostics["warnings"] = [str(w.message) for w in caught]
    return res


def _run_api(case: Case, path: Path) -> Any:
    from cosim import DiagramBuilder, MasterScheduler, Simulator
    from cosim.subsystem import DiagramSubsystem
    from fmus import load_fmu
    fmu = load_fmu(path, name="fmu", interface=case.interface.lower())
    if case.interface == "SE":  # the triggered clock steps up where upstream ticks it
        from blocks.tables import FromArrays
        b = DiagramBuilder("conformance")
        b.add(fmu)
        trig = b.add(FromArrays("trig", CLOCKS_TRIGGERS, list(range(1, 1 + len(CLOCKS_TRIGGERS))),
                                interpolation="previous"))
        b.connect(trig.y, fmu.input("inClock2"))
        return Simulator(b.build(), record=[f"fmu.{o}" for o in fmu.outputs]).run(case.t_end)
    if case.interface == "ME":
        b = DiagramBuilder("conformance")
        b.add(fmu)
        _inputs_diagram(case, fmu, b)
        sim = Simulator(b.build(), solver=case.solver, dt=case.step, rtol=1e-10, atol=1e-12,
                        record=[f"fmu.{o}" for o in fmu.outputs])
        return sim.run(case.t_end)
    subs, conns = [fmu], []
    if case.inputs:
        from blocks.sources import Constant
        b = DiagramBuilder("inputs")
        for name, value in case.inputs.items():
            c = b.add(Constant(f"in_{name}", value, dtype=fmu.dtypes[name]))
            b.export_output(c.y, name)
            conns.append((f"inputs.{name}", f"fmu.{name}"))
        subs.insert(0, DiagramSubsystem(b.build(), solver="euler", dt=case.step))
    return MasterScheduler(subs, conns, case.step).run(case.t_end)


def run_cli(case: Case, path: Path, out: Path) -> Any:
    """The case through ``cosim fmu simulate``; returns the results.csv read back."""
    from cosim.cli import main
    from cosim.writers import read_csv
    argv = ["fmu", "simulate", str(path), "--interface-type", case.interface.lower(),
            "--t-start", "0", "--t-end", repr(case.t_end), "--out", str(out), "--quiet"]
    if case.interface == "SE":  # the triggered clock from an input file, as FMPy users give
        out.mkdir(parents=True, exist_ok=True)
        rows = "".join(f"{t},{k}\n" for k, t in enumerate(CLOCKS_TRIGGERS, start=1))
        (out / "ticks.csv").write_text("time,inClock2\n" + rows)
        argv += ["--input", str(out / "ticks.csv")]
    elif case.interface == "ME":
        argv += ["--dt", repr(case.step), "--solver", case.solver, "--rtol", "1e-10",
                 "--atol", "1e-12"]
    else:
        argv += ["--step", repr(case.step)]
    for name, value in case.inputs.items():
        argv += ["--set", f"{name}={str(value).lower() if isinstance(value, bool) else value}"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(argv)
    if code != 0:
        raise AssertionError(f"cosim {' '.join(argv)} exited {code}")
    return read_csv(out / "results.csv")


def _right_limits(t: np.ndarray) -> np.ndarray:
    """Samples that are the last one at their time (the right limit at an event)."""
    t = np.asarray(t)
    return np.append(t[1:] != t[:-1], True)


def compare(case: Case, res: Any, path: Path | None = None) -> tuple[float, list[str]]:
    """``(error, checked outputs)``: the case's error measure over the recorded outputs
    the reference has (at the right limits of events), exact comparison for integers."""
    times = np.asarray(res.time, dtype=float)
    if times.size > 1 and np.any(np.diff(times) < 0):
        raise AssertionError(f"{case.id}: the time column goes back (at sample "
                             f"{int(np.argmax(np.diff(times) < 0)) + 1})")
    grid = np.arange(0.0, case.t_end + case.step / 2, case.step)
    if case.model != "Stair":  # Stair ends the run at 9 s (terminateSimulation)
        missing = [g for g in grid if not np.any(np.isclose(times, g, rtol=0, atol=1e-9))]
        if missing:
            raise AssertionError(f"{case.id}: no sample at t = {missing[0]:g} s of the "
                                 f"{case.step:g} s grid ({len(missing)} grid points missing)")
    keep = _right_limits(res.time)
    for te in case.event_times():
        keep &= np.abs(np.asarray(res.time) - te) > 1e-6
    if case.interface == "SE":  # upstream prints the whole seconds
        keep &= np.asarray(res.time) == np.round(res.time)
    t = np.asarray(res.time)[keep]
    ref = case.reference(t, path)
    err, names = 0.0, []
    for name, want in ref.items():
        key = next((k for k in res.signals if k.rsplit(".", 1)[-1] == name), None)
        if key is None:
            continue
        got = res[key][keep]
        names.append(name)
        if isinstance(want, list):  # exact values (integers, booleans, text)
            bad = [i for i, (g, w) in enumerate(zip(got.tolist(), want)) if g != w]
            if bad:
                i = bad[0]
                raise AssertionError(f"{case.id}: {name} at t = {t[i]:g} is {got[i]!r}, "
                                     f"expected exactly {want[i]!r}")
            continue
        got = np.asarray(got, float).reshape(np.shape(want))
        diff = np.abs(got - want)
        if case.measure == "rel":
            diff = diff / np.maximum(1.0, np.abs(want))
        if got.size:
            err = max(err, float(np.nanmax(diff)) if not np.isnan(diff).all() else math.inf)
        if np.isnan(diff).any():
            err = math.inf
    return err, names


# ------------------------------------------------------------ the table
@dataclass
class Outcome:
    """One case run one way: the error against the reference, or why it failed."""

    case: Case
    via: str
    error: float | None
    passed: bool
    detail: str = ""


def run_case(case: Case, path: Path, via: str, out: Path) -> Outcome:
    """Run and compare one case; a failure (an exception, an error over the tolerance)
    is an outcome, never raised (for the bench and the docs table)."""
    try:
        res = run_api(case, path) if via == "api" else run_cli(case, path, out)
        err, names = compare(case, res, path)
    except Exception as exc:  # noqa: BLE001 - reported per case
        return Outcome(case, via, None, False, f"{type(exc).__name__}: {exc}"[:300])
    ok = bool(names) and err <= case.tol
    return Outcome(case, via, err, ok, "" if names else "no output compared")


def run_all(fmus: dict, out: Path, vias: tuple = ("api", "cli")) -> list[Outcome]:
    """Every case of :func:`cases` on ``fmus`` (``{(version, model): path}``)."""
    res = []
    for case in cases():
        for via in vias:
            dest = out / f"{case.id}-{via}"
            res.append(run_case(case, fmus[(case.version, case.model)], via, dest))
    return res


def markdown_table(outcomes: list[Outcome]) -> str:
    """The conformance table of the docs: one row per case, API and CLI side by side."""
    rows = {}
    for o in outcomes:
        rows.setdefault(o.case.id, {})[o.via] = o
    lines = ["| model | FMI | interface | reference | tolerance | API error | CLI error |",
             "|---|---|---|---|---|---|---|"]

    def cell(o: Outcome | None) -> str:
        if o is None:
            return "-"
        if o.error is None:
            return f"FAIL ({o.detail[:60]})"
        return f"{o.error:.2g}" + ("" if o.passed else " FAIL")

    for by in rows.values():
        c = next(iter(by.values())).case
        ref = ("upstream's scs_synchronous" if c.model == "Clocks"
               else "upstream's doStep re-implemented" if c.model == "Roberts"
               and c.interface == "CS"
               else "feedthrough (exact)" if c.model == "Feedthrough"
               else f"{c.model}_out.csv" if c.interface == "CS"
               else "SciPy rtol 1e-12" if c.model in ("VanDerPol", "Roberts") else "exact")
        lines.append(f"| {c.model} | {c.version}.0 | {c.interface} | {ref} | "
                     f"{c.tol:g}{' rel' if c.measure == 'rel' else ''} | "
                     f"{cell(by.get('api'))} | {cell(by.get('cli'))} |")
    return "\n".join(lines)
