"""Benchmark harness: timing, status of unavailable cases, targets, environment, output.

Timing
    A *case function* builds a fresh model, runs it and returns ``(build_s, run_s, extra)``:
    construction time, run time (both from ``time.perf_counter``) and a dict that carries
    the accuracy figure under ``"abs_err"`` (see ``bench.models.accuracy_*``).
    :func:`measure` calls it up to ``repeats`` times (``gc.collect()`` before each call,
    plus ``gc.freeze()`` within :func:`run_suite`; garbage collection stays enabled
    during the run) and stops early once the timed work
    (build + run) reaches ``budget_s`` seconds, keeping at least one sample.  Reported:
    median and minimum of the run times, every sample, the build-time median, and
    microseconds per block-step ``1e6 * median / (steps * blocks)``.

    A peer may be run on a shorter horizon than the model's (quick mode): ``scale`` is
    then full steps / simulated steps; ``median_s`` and ``min_s`` are the measured times
    times ``scale`` (full-horizon equivalents, used for ratios), ``samples`` and
    ``measured_median_s`` stay as measured, and ``basis`` says what was done.
    ``wall_s`` is the wall time the measurement took (imports, references, all repeats).
    :func:`estimate_from` derives a figure from another size's cost per block-step
    (status ``"estimated"``).

Statuses
    ``ok``, ``estimated``, ``not available`` (a case function raised
    ``NotImplementedError``: our engine does not do this yet), ``skipped (not installed)``
    (a peer package is missing, :class:`PeerNotInstalled`), ``skipped (unsupported)``
    (the peer cannot express the model, :class:`PeerUnsupported`; the reason is the
    note, shown as a footnote in markdown), ``skipped (quick mode)``,
    ``error`` (anything else; the message is kept and the CLI exits with status 1).

Suites
    A suite is a module ``bench/<name>.py`` registered in :data:`SUITES`.  It defines
    ``NAME``, ``DESCRIPTION``, ``PACKAGES`` (peer distributions whose versions go into
    the environment record) and ``run(options: Options) -> dict`` returning
    ``{"cases": [...], "targets": [...]}``.  Each case is
    ``{"case": str, "ours": measurement, "peers": {name: measurement}, "ratios":
    {name: peer median / ours median}, "ratio_basis": {name: basis}}``; each target comes
    from :func:`make_target`.  :func:`run_suite` adds ``suite``, ``quick``, ``repeats``,
    ``budget_s`` and ``env``.  To add a suite, write the module and add one line to
    :data:`SUITES`.
"""

from __future__ import annotations

import datetime as _dt
import gc
import importlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATUS_OK = "ok"
STATUS_ESTIMATED = "estimated"
STATUS_NOT_AVAILABLE = "not available"
STATUS_NOT_INSTALLED = "skipped (not installed)"
STATUS_SKIPPED_QUICK = "skipped (quick mode)"
STATUS_UNSUPPORTED = "skipped (unsupported)"
STATUS_ERROR = "error"
TIMED_STATUSES = (STATUS_OK, STATUS_ESTIMATED)

#: Registered suites: name -> module.  Later suites add one line each.
SUITES: dict[str, str] = {
    "core": "bench.core",
    "master": "bench.master",
    "multibody": "bench.multibody",
    "hydraulics": "bench.hydraulics",
    "crane": "bench.crane",
    "fmi": "bench.fmi",
    "hil": "bench.hil",
    "fluid": "bench.fluid",
    "sweep": "bench.sweep",
    "vehicle": "bench.vehicle",
}

#: Set by run_suite: timed() then gc.freeze()s what survives its gc.collect() (makes later
#: collects cheap, ~40 ms -> ~0 with SciPy and the peers loaded); undone at the end.
_freeze_survivors = False

CaseResult = tuple[float, float, dict]
CaseFunction = Callable[[], CaseResult]


class PeerNotInstalled(ImportError):
    """A peer package needed by a case is not importable."""

    def __init__(self, package: str, reason: str = ""):
        self.package = package
        super().__init__(f"{package} is not installed" + (f" ({reason})" if reason else ""))


class PeerUnsupported(Exception):
    """A peer tool cannot express a model (e.g. it has no block for it); ``reason`` is
    reported as the note of a ``skipped (unsupported)`` measurement."""

    def __init__(self, package: str, reason: str):
        self.package, self.reason = package, reason
        super().__init__(reason)


def require(package: str, module: str | None = None) -> Any:
    """Import ``module`` (default: ``package``) or raise :class:`PeerNotInstalled`."""
    try:
        return importlib.import_module(module or package)
    except ImportError as exc:
        raise PeerNotInstalled(package, str(exc)) from exc


@dataclass(frozen=True)
class Options:
    """How a suite is run."""

    quick: bool = False
    repeats: int = 5
    budget_s: float | None = 60.0
    progress: bool = True

    @classmethod
    def for_mode(cls, quick: bool, repeats: int | None = None, budget_s: float | None = -1.0,
                 progress: bool = True) -> Options:
        """Defaults: quick = 3 repeats, 3 s budget; full = 5 repeats, 60 s budget.

        ``budget_s=None`` or ``0`` means no budget; ``-1`` (default) means the mode's default.
        """
        if repeats is None:
            repeats = 3 if quick else 5
        if budget_s is not None and budget_s < 0:
            budget_s = 3.0 if quick else 60.0
        if not budget_s:
            budget_s = None
        return cls(quick=quick, repeats=max(1, int(repeats)), budget_s=budget_s,
                   progress=progress)


def log(message: str, options: Options | None = None) -> None:
    """Progress line on stderr (stdout carries the table)."""
    if options is None or options.progress:
        print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- timing
def timed(fn: CaseFunction, repeats: int, budget_s: float | None = None) -> dict:
    """Call ``fn`` up to ``repeats`` times; stop once the timed work (build + run) of the
    calls so far reaches ``budget_s`` (at least one call).  ``build_s`` may be None."""
    builds: list[float] = []
    runs: list[float] = []
    extra: dict = {}
    spent = 0.0
    for _ in range(max(1, repeats)):
        gc.collect()
        if _freeze_survivors:  # inside run_suite: survivors need no more scanning
            gc.freeze()
        build_s, run_s, extra = fn()
        runs.append(float(run_s))
        if build_s is not None:
            builds.append(float(build_s))
        spent += float(run_s) + float(build_s or 0.0)
        if budget_s is not None and spent >= budget_s:
            break
    return {"runs": runs, "builds": builds, "extra": dict(extra or {})}


def not_timed(status: str, note: str = "") -> dict:
    """A measurement entry without timings (not available, skipped, error)."""
    return {"status": status, "median_s": None, "min_s": None, "samples": [],
            "us_per_block_step": None, "abs_err": None, "note": note}


def measure(fn: CaseFunction, *, repeats: int, steps: int | None, blocks: int | None,
            budget_s: float | None = None, scale: float = 1.0, basis: str = "measured",
            note: str = "") -> dict:
    """Time a case function and return a JSON-ready measurement; never raises for a
    missing engine feature, a missing peer or a failing case (see module docstring)."""
    t0 = time.perf_counter()
    try:
        raw = timed(fn, repeats, budget_s)
    except NotImplementedError as exc:
        return not_timed(STATUS_NOT_AVAILABLE, str(exc))
    except PeerNotInstalled as exc:
        return not_timed(STATUS_NOT_INSTALLED, str(exc))
    except PeerUnsupported as exc:
        return not_timed(STATUS_UNSUPPORTED, exc.reason)
    except Exception as exc:  # a broken case must not stop the other cases
        return not_timed(STATUS_ERROR, f"{type(exc).__name__}: {exc}")
    runs, builds, extra = raw["runs"], raw["builds"], raw["extra"]
    med = statistics.median(runs)
    per = None
    if steps and blocks and med > 0:
        per = 1e6 * med / (steps * blocks)
    return {
        "status": STATUS_OK,
        "median_s": med * scale,
        "min_s": min(runs) * scale,
        "samples": runs,
        "measured_median_s": med,
        "scale": scale,
        "basis": basis,
        "build_median_s": statistics.median(builds) if builds else None,
        "build_samples": builds,
        "steps": steps,
        "blocks": blocks,
        "us_per_block_step": per,
        "abs_err": extra.pop("abs_err", None),
        "accuracy_metric": extra.pop("accuracy_metric", None),
        "extra": extra,
        "note": note,
        "wall_s": time.perf_counter() - t0,
    }


def estimate_from(source: dict, *, steps: int, blocks: int, basis: str) -> dict:
    """A figure derived from ``source``'s cost per block-step for another size.

    Returns ``source`` unchanged in status if it has no cost per block-step.
    """
    if source.get("status") not in TIMED_STATUSES or source.get("us_per_block_step") is None:
        return not_timed(source.get("status", STATUS_ERROR),
                          f"no estimate ({basis}): source {source.get('status')}")
    per = source["us_per_block_step"]
    return {
        "status": STATUS_ESTIMATED,
        "median_s": per * steps * blocks * 1e-6,
        "min_s": None,
        "samples": [],
        "basis": basis,
        "steps": steps,
        "blocks": blocks,
        "us_per_block_step": per,
        "abs_err": None,
        "note": "",
    }


def ratio(peer: dict | None, ours: dict | None) -> float | None:
    """``peer median / ours median`` (how many times faster we are), or None."""
    if not peer or not ours:
        return None
    if peer.get("status") not in TIMED_STATUSES or ours.get("status") not in TIMED_STATUSES:
        return None
    p, o = peer.get("median_s"), ours.get("median_s")
    if p is None or o is None or o <= 0:
        return None
    return p / o


def make_case(name: str, ours: dict, peers: dict[str, dict]) -> dict:
    """Assemble a case entry with ratios against every timed peer."""
    return {
        "case": name,
        "ours": ours,
        "peers": peers,
        "ratios": {k: ratio(v, ours) for k, v in peers.items()},
        "ratio_basis": {k: v.get("basis", v.get("status")) for k, v in peers.items()},
    }


def find_case(cases: Iterable[dict], name: str) -> dict | None:
    """The case called ``name`` or None."""
    for c in cases:
        if c["case"] == name:
            return c
    return None


# ---------------------------------------------------------------------------- targets
_OPS: dict[str, Callable[[float, Any], bool]] = {
    "<=": lambda v, b: v <= b,
    "<": lambda v, b: v < b,
    ">=": lambda v, b: v >= b,
    ">": lambda v, b: v > b,
    "within": lambda v, b: b[0] <= v <= b[1],
}


def parse_bound(op: str, bound_text: str) -> float | list[float]:
    """``"0.10"`` -> 0.1; for ``within``: ``"0.8..1.2"`` -> [0.8, 1.2]."""
    if op == "within":
        lo, hi = bound_text.split("..")
        return [float(lo), float(hi)]
    return float(bound_text)


def make_target(name: str, value: float | None, op: str, bound_text: str, *,
                source: str = "", note: str = "") -> dict:
    """A target entry: human goal string, machine fields ``op``/``bound``, ``met``.

    ``met`` is None when ``value`` is None (not measured).
    """
    if op not in _OPS:
        raise ValueError(f"unknown target operator {op!r}; use one of {sorted(_OPS)}")
    bound = parse_bound(op, bound_text)
    ok = None
    if value is not None and math.isfinite(value):
        ok = bool(_OPS[op](value, bound))
    return {"name": name, "value": value, "goal": f"{op} {bound_text}", "op": op,
            "bound": bound, "met": ok, "source": source, "note": note}


# ---------------------------------------------------------------------------- environment
def _git_revision() -> str | None:
    root = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                             capture_output=True, text=True, timeout=5, check=True).stdout
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=normal"],
                               cwd=root, capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return rev.strip() + ("+dirty" if dirty.strip() else "")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def package_version(dist: str) -> str | None:
    """Installed version of a distribution, or None."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def env_info(packages: Iterable[str] = ()) -> dict:
    """Interpreter, machine, package versions (None = not installed), git revision."""
    pkgs = ["cosim", "numpy", "scipy", *packages]
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_usable": usable,
        "versions": {p: package_version(p) for p in dict.fromkeys(pkgs)},
        "thread_env": {v: os.environ.get(v) for v in
                       ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")},
        "git": _git_revision(),
        "timestamp_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


# ---------------------------------------------------------------------------- suites
def suite_names() -> list[str]:
    """Registered suite names."""
    return list(SUITES)


def load_suite(name: str):
    """Import a registered suite module."""
    if name not in SUITES:
        raise KeyError(f"unknown suite {name!r}; registered: {', '.join(SUITES)} (or 'all')")
    return importlib.import_module(SUITES[name])


def run_suite(name: str, options: Options) -> dict:
    """Run one suite and return its full JSON document."""
    global _freeze_survivors
    mod = load_suite(name)
    log(f"[{name}] {'quick' if options.quick else 'full'} mode, up to {options.repeats} "
        f"repeats, budget {options.budget_s or 'none'} s per measurement", options)
    t0 = time.perf_counter()
    _freeze_survivors = True
    try:
        body = mod.run(options)
    finally:
        _freeze_survivors = False
        gc.unfreeze()
    doc = {
        "suite": name,
        "quick": options.quick,
        "repeats": options.repeats,
        "budget_s": options.budget_s,
        "env": env_info(getattr(mod, "PACKAGES", ())),
        "cases": body.get("cases", []),
        "targets": body.get("targets", []),
        "wall_s": time.perf_counter() - t0,
    }
    return doc


def errors_in(doc: dict) -> list[str]:
    """``"case tool: message"`` for every measurement with status ``error``."""
    out = []
    for c in doc.get("cases", []):
        for tool, m in [("ours", c.get("ours") or {}), *c.get("peers", {}).items()]:
            if m.get("status") == STATUS_ERROR:
                out.append(f"{c['case']} {tool}: {m.get('note')}")
    return out


# ---------------------------------------------------------------------------- JSON
def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str | int):
        return obj
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        obj = obj.item()
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, int | str | bool):
        return obj
    return str(obj)


def write_json(path: str | os.PathLike, doc: dict) -> Path:
    """Write ``doc`` as strict JSON (non-finite floats become null); create parents."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "w") as f:
        json.dump(_jsonable(doc), f, indent=1, allow_nan=False)
        f.write("\n")
    return p


# ---------------------------------------------------------------------------- formatting
def _fmt_s(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def _fmt_g(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def _fmt_ratio(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 10:
        return f"{x:.1f}x"
    return f"{x:.2f}x" if x >= 0.1 else f"{x:.2g}x"


def _fmt_value(x: Any) -> str:
    if x is None:
        return "not measured"
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def _rows(doc: dict):
    """(case, tool, measurement, ratio, basis) for ours and every peer of every case."""
    for c in doc.get("cases", []):
        yield c["case"], "ours", c.get("ours") or {}, None, (c.get("ours") or {}).get("basis")
        for tool, m in c.get("peers", {}).items():
            yield c["case"], tool, m, c.get("ratios", {}).get(tool), m.get("basis")


def _time_cell(m: dict) -> str:
    status = m.get("status")
    if status not in TIMED_STATUSES:
        return status or "-"
    return _fmt_s(m.get("median_s"))


def _basis_note(m: dict) -> str:
    basis = m.get("basis") or ""
    return "" if basis in ("", "measured") else basis


def format_table(doc: dict) -> str:
    """Plain-text table of one suite document, for a terminal."""
    mode = "quick" if doc.get("quick") else "full"
    env = doc.get("env", {})
    vers = ", ".join(f"{k} {v}" for k, v in env.get("versions", {}).items() if v)
    lines = [f"suite {doc.get('suite')} ({mode} mode): median of up to {doc.get('repeats')} "
             f"repeats, fresh model each repeat; ratio = peer time / ours time",
             f"python {env.get('python')}, {vers}; {env.get('cpu_usable')} CPUs "
             f"({env.get('cpu')}); git {env.get('git')}", ""]
    head = ("case", "tool", "median s", "min s", "n", "build s", "us/blk-step", "abs err",
            "ratio", "note")
    rows = [head]
    for case, tool, m, r, _ in _rows(doc):
        note = _basis_note(m)
        if m.get("status") not in TIMED_STATUSES and m.get("note"):
            note = m["note"]
        rows.append((case, tool, _time_cell(m), _fmt_s(m.get("min_s")),
                     str(len(m.get("samples") or [])) if m.get("samples") else "-",
                     _fmt_s(m.get("build_median_s")), _fmt_g(m.get("us_per_block_step")),
                     _fmt_g(m.get("abs_err"), 2), _fmt_ratio(r), note))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    prev = None
    for i, r in enumerate(rows):
        case = r[0] if r[0] != prev or i == 0 else ""
        prev = r[0]
        cells = [case.ljust(widths[0]), r[1].ljust(widths[1])]
        cells += [r[k].rjust(widths[k]) for k in range(2, len(head) - 1)]
        lines.append("  ".join(cells) + ("  " + r[-1] if r[-1] else ""))
        if i == 0:
            lines.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
    if doc.get("targets"):
        lines += ["", "targets:"]
        tw = max(len(t["name"]) for t in doc["targets"])
        for t in doc["targets"]:
            met = {True: "MET", False: "NOT MET", None: "-"}[t.get("met")]
            extra = f"  ({t['note']})" if t.get("note") else ""
            lines.append(f"  {t['name'].ljust(tw)}  {_fmt_value(t.get('value')):>12}  "
                         f"goal {t['goal']:<16} {met}{extra}")
    return "\n".join(lines)


def format_markdown(doc: dict) -> str:
    """README-ready markdown: results table, targets table, footnotes, environment."""
    notes: dict[str, int] = {}

    def mark(text: str) -> str:
        if not text:
            return ""
        notes.setdefault(text, len(notes) + 1)
        return f" <sup>{notes[text]}</sup>"

    mode = "quick" if doc.get("quick") else "full"
    out = ["| Case | Tool | Wall time median [min] (s) | µs per block-step | abs error "
           "| Ours faster by |", "|---|---|---|---|---|---|"]
    prev = None
    for case, tool, m, r, _ in _rows(doc):
        cell_case = f"`{case}`" if case != prev else ""
        prev = case
        status = m.get("status")
        if status in TIMED_STATUSES:
            t = _fmt_s(m.get("median_s"))
            if m.get("min_s") is not None:
                t += f" [{_fmt_s(m.get('min_s'))}]"
            t += mark(_basis_note(m))
        else:
            t = f"*{status}*"
            if status == STATUS_UNSUPPORTED:
                t += mark(m.get("note", ""))
        name = "**ours**" if tool == "ours" else tool
        out.append(f"| {cell_case} | {name} | {t} | {_fmt_g(m.get('us_per_block_step'))} | "
                   f"{_fmt_g(m.get('abs_err'), 2)} | {_fmt_ratio(r)} |")
    if doc.get("targets"):
        out += ["", "| Target | Goal | Value | Met |", "|---|---|---|---|"]
        for t in doc["targets"]:
            met = {True: "yes", False: "**no**", None: "-"}[t.get("met")]
            out.append(f"| {t['name']}{mark(t.get('note', ''))} | {t['goal']} | "
                       f"{_fmt_value(t.get('value'))} | {met} |")
    if notes:
        out.append("")
        out += [f"<sup>{i}</sup> {text}  " for text, i in notes.items()]
    env = doc.get("env", {})
    vers = ", ".join(f"{k} {v}" for k, v in env.get("versions", {}).items() if v)
    out += ["", f"Suite `{doc.get('suite')}`, {mode} mode, median of up to "
            f"{doc.get('repeats')} repeats (fresh model each repeat); "
            f"Python {env.get('python')}, {vers}; {env.get('cpu_usable')} CPUs "
            f"({env.get('cpu')}); git {env.get('git')}; {env.get('timestamp_utc')}."]
    return "\n".join(out)
