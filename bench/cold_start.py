"""Cold start cases of ``bench master``: the first co-simulation run in a fresh Python
process, FMU loading included, ours against the Ecos C++ master (ecospy).

The dual-mass case of :mod:`bench.master_fmu` (two generated-C FMI 2 Co-Simulation FMUs,
H = 1 ms, 10 s, Jacobi, zero-order hold): every sample is a new interpreter running
``bench/cold_child.py`` (see there for the phases), ours and Ecos alternating, median of
3.  The FMU files are made once beforehand (not timed).  The figure compared is the time
from after the ``import`` of each package (ours: ``cosim`` and ``fmus``; Ecos: ``ecospy``,
libtbb preloaded) to the run's end: loading the FMUs, building the master, the run; the
time including the imports (from the child script's first line) is in ``extra``
(``total_s_median``), with the phases' medians.  The interpreter's own start is in
neither (the same for both); ``process_s_median`` is the child process's whole wall time
(start, imports, run, exit) as the parent saw it.

The children run with bytecode as an installed package has it (``PYTHONDONTWRITEBYTECODE``
removed, ``PYTHONPYCACHEPREFIX`` a folder of this run's, filled by an untimed first run
of each side), so that compiling our sources is not counted.

``cold_start/dual_mass/H=0.001``
    warm caches: the compiled loop's library and the FMU cache (:mod:`fmus.fmu_cache`:
    the extracted FMUs and their read descriptions) hold what an earlier process left
    (the first, untimed, run fills them).
``cold_start/dual_mass/H=0.001/empty_cache``
    the first process ever: ``COSIM_CACHE_DIR``, ``HOME`` and ``TMPDIR`` new empty folders
    for each sample (the compiled loop and the FMI 2 log proxy are compiled, the FMUs
    extracted and their descriptions read); Ecos caches nothing, its samples are the
    warm case's.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .harness import PeerNotInstalled, make_case, make_target, measure

_CHILD = Path(__file__).resolve().parent / "cold_child.py"
_ROOT = _CHILD.parent.parent
H = 1e-3
SAMPLES = 3


def _spec() -> dict:
    from . import master_fmu as mf
    from .lim import CONNECTIONS
    f1, f2 = mf.fmus(H)
    return {"fmus": [["m1", os.fspath(f1)], ["m2", os.fspath(f2)]],
            "connections": [list(c) for c in CONNECTIONS], "H": H, "t_end": mf.T_END}


def _env(work: Path, empty_cache: bool) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    if empty_cache:
        fresh = Path(tempfile.mkdtemp(prefix="empty-", dir=work))
        for var, sub in (("COSIM_CACHE_DIR", "cache"), ("HOME", "home"), ("TMPDIR", "tmp")):
            (fresh / sub).mkdir()
            env[var] = str(fresh / sub)
    return env


def _child(who: str, spec: dict, env: dict) -> dict:
    """One cold run in a new interpreter (``-P``: the script's folder is not on sys.path)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-P", str(_CHILD), who, json.dumps(spec)],
                          cwd=_ROOT, env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()[-1:] or ["(no message)"]
        if who == "ecos" and ("ecospy" in proc.stderr or "libtbb" in proc.stderr):
            raise PeerNotInstalled("ecospy", f"pip install ecospy tbb: {err[0]}")
        raise RuntimeError(f"cold start child ({who}) failed: {err[0]}")
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "process_s": wall}


def _summary(runs: list[dict]) -> dict:
    phases = sorted({p for r in runs for p in r["phases"]}, key=list(runs[0]["phases"]).index)
    out = {"phases_median_s": {p: statistics.median(r["phases"].get(p, 0.0) for r in runs)
                               for p in phases},
           "total_s_median": statistics.median(r["total_s"] for r in runs),
           "total_samples": [r["total_s"] for r in runs],
           "process_s_median": statistics.median(r["process_s"] for r in runs),
           "modules_imported": runs[-1]["modules"], "x2_end": runs[-1]["x2_end"]}
    if "compiled" in runs[-1]:
        out["compiled"] = runs[-1]["compiled"]
    return out


def _replay(runs: list[dict] | Exception):
    """A case function giving the samples measured beforehand, one per call."""
    it = iter(runs if isinstance(runs, list) else [])

    def fn():
        if isinstance(runs, Exception):
            raise runs
        return None, next(it)["after_import_s"], _summary(runs)
    return fn


def _measure(runs: list[dict] | Exception, note: str) -> dict:
    n = len(runs) if isinstance(runs, list) else 1
    return measure(_replay(runs), repeats=n, steps=int(round(10.0 / H)), blocks=2,
                   budget_s=None, note=note)


def cases(options) -> list[dict]:
    spec = _spec()
    with tempfile.TemporaryDirectory(prefix="cosim-cold-") as td:
        work = Path(td)
        warm = _env(work, False)
        runs: dict[str, list[dict] | Exception] = {"ours": [], "ecos": []}
        for who in runs:  # untimed: the bytecode, the caches
            try:
                _child(who, spec, warm)
            except (PeerNotInstalled, RuntimeError) as exc:
                runs[who] = exc
        for _ in range(SAMPLES):
            for who, got in runs.items():
                if isinstance(got, list):
                    got.append(_child(who, spec, warm))
        empty: list[dict] | Exception = []
        if isinstance(runs["ours"], list):
            empty = [_child("ours", spec, _env(work, True)) for _ in range(SAMPLES)]
    ecos = _measure(runs["ecos"], "fresh process; from after `import ecospy`")
    warm_case = make_case(f"cold_start/dual_mass/H={H:g}", _measure(
        runs["ours"], "fresh process, warm caches; from after `import cosim, fmus`"),
        {"ecos": ecos})
    empty_case = make_case(f"cold_start/dual_mass/H={H:g}/empty_cache", _measure(
        empty, "fresh process, empty caches (compiles, extracts, parses)"), {"ecos": ecos})
    return [warm_case, empty_case]


def _with_imports(case: dict | None) -> float | None:
    """ours / Ecos time including the imports (medians), or None."""
    if not case:
        return None
    ours = case["ours"].get("extra", {}).get("total_s_median")
    ecos = case["peers"].get("ecos", {}).get("extra", {}).get("total_s_median")
    return ours / ecos if ours and ecos else None


def targets(cases: list[dict]) -> list[dict]:
    def get(name):
        return next((c for c in cases if c["case"] == name), None)
    warm, empty = get(f"cold_start/dual_mass/H={H:g}"), \
        get(f"cold_start/dual_mass/H={H:g}/empty_cache")
    r = warm["ratios"].get("ecos") if warm else None
    incl = _with_imports(warm)
    r_empty = empty["ratios"].get("ecos") if empty else None
    return [make_target(
        "cold start (fresh process, FMU loading included) / Ecos (ratio)",
        1.0 / r if r else None, "<=", "1.0",
        note="dual mass H = 1 ms, 10 s, median of 3, warm caches; from after the import of "
             "each package (cosim + fmus / ecospy) to the run's end; including the imports: "
             + (f"{incl:.2f}" if incl else "-") + "; empty caches: "
             + (f"{1.0 / r_empty:.2f}" if r_empty else "-"))]
