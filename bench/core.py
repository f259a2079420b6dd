"""The ``core`` suite: models A, B, C, D (``bench.models``) in our engine and in the peers.

Cases (ours via ``bench.ours_core``; peers via ``bench.peers``)
    ``msd_pid/RK4``                       pathsim/RK4, bdsim/RK45, py-engine/RK4, numpy-fused
    ``lag_chain/N=n/RK4``  n = 10, 100, 1000   same four peers, and plain-c (our exact step's
                                          product in a plain C program, always run:
                                          ``bench.lag_floor``)
    ``lag_chain/N=n/Heun``                pathsim/SSPRK22, py-engine/Heun
    ``nl_chain/N=n/RK4``   n = 10, 100 (+1000 in full mode)   pathsim/RK4, bdsim/RK45,
                                          py-engine/RK4 (no fused form: nonlinear)
    ``nl_chain/N=n/Heun``                 pathsim/SSPRK22, py-engine/Heun
    ``udb_chain/N=n/RK4``  n = 10, 100, 1000   pathsim/RK4 (its user ``ODE`` block),
                                          bdsim skipped (unsupported: no user-defined
                                          ODE block), py-engine/RK4 (no fused form)
    ``udb_chain/N=n/Heun``                pathsim/SSPRK22, py-engine/Heun
    ``build/lag_chain/N=1000``            build + compile only (ours ``build_lag_chain``);
                                          PathSim ``Simulation()``, bdsim ``compile()``,
                                          py-engine objects, numpy-fused ``expm``
    Heun is the explicit trapezoidal rule, the same method as PathSim's SSPRK22.  bdsim
    has no fixed step: RK45 with max_step = first_step = 1 ms (6 RHS calls per step).

Quick mode (``--quick``; default 3 repeats, 3 s budget per measurement)
    Ours always runs the full horizon.  Peers that would take seconds per run use a
    shorter horizon and their time is scaled to the full horizon (per step: the models'
    cost per step is constant), labelled "scaled xF from a T s horizon":
    PathSim msd_pid 2 s, N = 100 chains 0.1 s; bdsim msd_pid 2 s, N = 10 chains 0.25 s, N = 100
    chains 0.05 s; udb_chain: PathSim N = 10 0.25 s, N = 100 0.05 s, py-engine N = 100
    0.25 s.  At N = 1000 only numpy-fused is run; the other peers' figures are
    estimated from their N = 100 cost per block-step (labelled; frameworks scale
    super-linearly, so the estimate understates their time and the ratio is
    conservative).  nl_chain and udb_chain N = 1000: ours measured, peers estimated
    the same way.

Full mode runs everything on the full horizons (``make bench``; ~20-35 minutes on the
2-core reference VM: bdsim needs ~140 s per N = 1000 run, PathSim ~60 s per udb_chain
N = 1000 RK4 run).

Targets (medians; RK4 cases): see :func:`targets`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from . import models as md
from . import peers as pr
from .harness import (
    STATUS_SKIPPED_QUICK,
    STATUS_UNSUPPORTED,
    TIMED_STATUSES,
    Options,
    estimate_from,
    find_case,
    log,
    make_case,
    make_target,
    measure,
    not_timed,
)

NAME = "core"
DESCRIPTION = ("models A (msd_pid), B (lag_chain), C (nl_chain), D (udb_chain): ours vs "
               "PathSim, bdsim, floors")
PACKAGES = ("pathsim", "bdsim")

SOLVERS = ("RK4", "Heun")
PATHSIM_SOLVER = {"RK4": "RK4", "Heun": "SSPRK22"}
LAG_SIZES = md.CHAIN_SIZES
UDB_SIZES = md.UDB_CHAIN_SIZES
ESTIMATE_FROM_N = 100

#: Quick-mode horizons of the slow peers: (tool, n or None for msd_pid) -> t_end [s].
QUICK_T_END: dict[tuple[str, int | None], float] = {
    ("pathsim", None): 2.0,
    ("pathsim", 100): 0.1,
    ("bdsim", None): 2.0,
    ("bdsim", 10): 0.25,
    ("bdsim", 100): 0.05,
}
#: Model-specific quick-mode horizons, (model, tool, n) -> t_end [s]; override the above.
QUICK_T_END_MODEL: dict[tuple[str, str, int | None], float] = {
    ("udb_chain", "pathsim", 10): 0.25,
    ("udb_chain", "pathsim", 100): 0.05,
    ("udb_chain", "py-engine", 100): 0.25,
}

#: Chain models: name -> (full horizon [s], framework block count for n).
CHAINS: dict[str, tuple[float, Callable[[int], int]]] = {
    "lag_chain": (md.T_END_B, md.blocks_lag_chain),
    "nl_chain": (md.T_END_C, md.blocks_nl_chain),
    "udb_chain": (md.T_END_D, md.blocks_udb_chain),
}


@dataclass(frozen=True)
class PeerSpec:
    """One peer of one case: ``run(t_end)`` is a case function on a horizon."""

    name: str
    tool: str
    run: Callable[[float], tuple]
    blocks: int


def _ours(fn: str, *args) -> Callable[[], tuple]:
    def call():
        from . import ours_core

        return getattr(ours_core, fn)(*args)

    return call


def _build_only(fn: Callable[[], float]) -> Callable[[], tuple]:
    """Turn a ``build_s`` function into a case function whose timed part is the build."""
    def call():
        return None, fn(), {}

    return call


#: the Python loop of our Simulator (``compiled=False``), beside ours (``compiled=None``: in
#: C where every block has a C form): always the full horizon, measured
PY_LOOP = "ours-python-loop"
#: model B's exact step in a plain C program (:mod:`bench.lag_floor`): always measured
PLAIN_C = "plain-c"


def _python_loop(model: str, n: int | None, solver: str, blocks: int) -> PeerSpec:
    def run(_t: float):
        from . import ours_core
        fn = getattr(ours_core, model)
        return fn(solver, compiled=False) if n is None else fn(n, solver, compiled=False)
    return PeerSpec(PY_LOOP, PY_LOOP, run, blocks)


def _peers(model: str, n: int | None, solver: str) -> list[PeerSpec]:
    ps = PATHSIM_SOLVER[solver]
    specs: list[PeerSpec] = [_python_loop(model, n, solver, md.blocks_msd_pid() if n is None
                                          else CHAINS[model][1](n))]
    if model == "msd_pid":
        specs.append(PeerSpec(f"pathsim/{ps}", "pathsim",
                              lambda t: pr.pathsim_msd_pid(ps, t), md.blocks_msd_pid()))
        if solver == "RK4":
            specs.append(PeerSpec("bdsim/RK45", "bdsim",
                                  lambda t: pr.bdsim_msd_pid("RK45", t), md.blocks_msd_pid()))
        specs.append(PeerSpec(f"py-engine/{solver}", "py-engine",
                              lambda t: pr.py_msd_pid(solver, t), 4))
        if solver == "RK4":
            specs.append(PeerSpec("numpy-fused", "numpy-fused", pr.numpy_msd_pid, 4))
        return specs
    frame_blocks = CHAINS[model][1](n)
    floor_blocks = n + 2 if model == "nl_chain" else n + 1
    ps_fn, bd_fn, py_fn = {
        "lag_chain": (pr.pathsim_lag_chain, pr.bdsim_lag_chain, pr.py_lag_chain),
        "nl_chain": (pr.pathsim_nl_chain, pr.bdsim_nl_chain, pr.py_nl_chain),
        "udb_chain": (pr.pathsim_udb_chain, pr.bdsim_udb_chain, pr.py_udb_chain),
    }[model]
    specs.append(PeerSpec(f"pathsim/{ps}", "pathsim", lambda t: ps_fn(n, ps, t), frame_blocks))
    if solver == "RK4":
        specs.append(PeerSpec("bdsim/RK45", "bdsim", lambda t: bd_fn(n, "RK45", t),
                              frame_blocks))
    specs.append(PeerSpec(f"py-engine/{solver}", "py-engine", lambda t: py_fn(n, solver, t),
                          floor_blocks))
    if model == "lag_chain" and solver == "RK4":
        from .lag_floor import plain_c_lag_chain
        specs.append(PeerSpec("numpy-fused", "numpy-fused", lambda t: pr.numpy_lag_chain(n, t),
                              floor_blocks))
        # (counted as ours: the scaling target divides the two ratios)
        specs.append(PeerSpec(PLAIN_C, PLAIN_C, lambda t: plain_c_lag_chain(n, t),
                              frame_blocks))
    return specs


class _Runner:
    """Runs the cases, remembering peer measurements for quick-mode estimates."""

    def __init__(self, options: Options):
        self.opt = options
        self.seen: dict[tuple[str, int | None, str, str], dict] = {}

    def _measure(self, label: str, fn, steps, blocks, scale=1.0, basis="measured") -> dict:
        m = measure(fn, repeats=self.opt.repeats, steps=steps, blocks=blocks,
                    budget_s=self.opt.budget_s, scale=scale, basis=basis)
        if m["status"] in TIMED_STATUSES:
            per = m["us_per_block_step"]
            log(f"[core] {label}: {m['median_s']:.4g} s median ({len(m['samples'])} samples"
                + (f", {per:.3g} us/block-step" if per else "")
                + ("" if basis == "measured" else f"; {basis}")
                + f"; {m['wall_s']:.1f} s wall)", self.opt)
        else:
            log(f"[core] {label}: {m['status']} {m.get('note', '')}", self.opt)
        return m

    def _peer(self, case: str, model: str, n: int | None, solver: str, spec: PeerSpec,
              t_full: float) -> dict:
        label = f"{case} {spec.name}"
        key = (model, n, solver, spec.name)
        if self.opt.quick and n is not None and n > ESTIMATE_FROM_N and \
                spec.tool not in ("numpy-fused", PY_LOOP, PLAIN_C):
            src = self.seen.get((model, ESTIMATE_FROM_N, solver, spec.name))
            if src is None:
                m = not_timed(STATUS_SKIPPED_QUICK, "not run in quick mode")
            elif src["status"] == STATUS_UNSUPPORTED:
                m = not_timed(STATUS_UNSUPPORTED, src.get("note", ""))
            else:
                m = estimate_from(src, steps=md.steps(t_full), blocks=spec.blocks,
                                  basis=f"estimated from N={ESTIMATE_FROM_N} cost per "
                                  "block-step (quick mode; understates a super-linear peer)")
            log(f"[core] {label}: {m['status']}", self.opt)
            return m
        t_end = t_full
        if self.opt.quick:
            t_end = QUICK_T_END_MODEL.get((model, spec.tool, n),
                                          QUICK_T_END.get((spec.tool, n), t_full))
        scale = md.steps(t_full) / md.steps(t_end)
        basis = "measured"
        if scale != 1.0:
            basis = f"scaled x{scale:g} from a {t_end:g} s horizon (quick mode)"
        m = self._measure(label, lambda: spec.run(t_end), md.steps(t_end), spec.blocks,
                          scale=scale, basis=basis)
        self.seen[key] = m
        return m

    def case(self, model: str, n: int | None, solver: str) -> dict:
        if model == "msd_pid":
            name, t_full, blocks = f"msd_pid/{solver}", md.T_END_A, md.blocks_msd_pid()
            ours_fn = _ours("msd_pid", solver)
        else:
            name = f"{model}/N={n}/{solver}"
            t_full, blocks = CHAINS[model][0], CHAINS[model][1](n)
            ours_fn = _ours(model, n, solver)
        ours = self._measure(f"{name} ours", ours_fn, md.steps(t_full), blocks)
        peers = {s.name: self._peer(name, model, n, solver, s, t_full)
                 for s in _peers(model, n, solver)}
        return make_case(name, ours, peers)

    def build_case(self, n: int) -> dict:
        name = f"build/lag_chain/N={n}"
        ours = self._measure(f"{name} ours", _build_only(_ours("build_lag_chain", n)), None, None)
        peers = {
            tool: self._measure(f"{name} {tool}", _build_only(lambda f=f: f(n)), None, None)
            for tool, f in (("pathsim", pr.pathsim_build_lag_chain),
                            ("bdsim", pr.bdsim_build_lag_chain),
                            ("py-engine", pr.py_build_lag_chain),
                            ("numpy-fused", pr.numpy_build_lag_chain))
        }
        return make_case(name, ours, peers)


def nl_sizes(quick: bool) -> tuple[int, ...]:
    """Model C sizes run in this mode."""
    return md.NL_CHAIN_SIZES_QUICK if quick else md.NL_CHAIN_SIZES_FULL


def run(options: Options) -> dict:
    """Run the suite; returns ``{"cases": [...], "targets": [...]}``."""
    r = _Runner(options)
    cases = [r.case("msd_pid", None, "RK4")]
    for model, sizes in (("lag_chain", LAG_SIZES), ("nl_chain", nl_sizes(options.quick)),
                         ("udb_chain", UDB_SIZES)):
        for n in sizes:
            for solver in SOLVERS:
                cases.append(r.case(model, n, solver))
    cases.append(r.build_case(1000))
    cases.append(_coverage_case())
    return {"cases": cases, "targets": targets(cases, options.quick)}


def _coverage_case() -> dict:
    """Which example diagrams the compiled Simulator runs (:mod:`bench.compiled_coverage`):
    not a timing; ``ours["extra"]`` holds the share and one row per example."""
    from . import compiled_coverage as cc
    t0 = time.perf_counter()
    rows = cc.scan()
    ours = {"status": "ok", "median_s": time.perf_counter() - t0, "min_s": None,
            "samples": [], "us_per_block_step": None,
            "extra": {"coverage": cc.coverage(rows), "examples": rows}}
    return make_case(COVERAGE_CASE, ours, {})


COVERAGE_CASE = "compiled_coverage/examples"


# ---------------------------------------------------------------------------- targets
def _ours_field(cases: list[dict], case: str, field: str) -> float | None:
    c = find_case(cases, case)
    if c is None or c["ours"].get("status") not in TIMED_STATUSES:
        return None
    return c["ours"].get(field)


def _peer_field(cases: list[dict], case: str, peer: str, field: str) -> float | None:
    c = find_case(cases, case)
    m = (c or {}).get("peers", {}).get(peer) or {}
    return m.get(field) if m.get("status") in TIMED_STATUSES else None


def _compiled_note(cases: list[dict], case: str) -> str:
    """What ran for ours (``compiled``: True, or why the Python loop ran)."""
    c = find_case(cases, case)
    ran = ((c or {}).get("ours", {}).get("extra") or {}).get("compiled")
    if ran is True:
        return "ran in C"
    if isinstance(ran, str) and ran.startswith("partly"):  # timed Python steps, then C
        return f"ran in C after the Python loop's first steps ({ran})"
    return f"ran in Python: {ran}" if ran else ""


def _coverage_target(cases: list[dict]) -> dict:
    c = find_case(cases, COVERAGE_CASE)
    extra = ((c or {}).get("ours") or {}).get("extra") or {}
    rows = extra.get("examples") or []
    missing = [r["example"] for r in rows if not r["compiled"] and not r["python_only"]]
    py_only = [r["example"] for r in rows if r["python_only"]]
    return make_target("compiled coverage: share of example diagrams that run in C",
                       extra.get("coverage"), ">=", "1.0",
                       source=f"{COVERAGE_CASE} ours extra coverage",
                       note=(f"not compiled: {', '.join(missing) or 'none'}; naming "
                             f"Python-only blocks (excluded): {', '.join(py_only) or 'none'}; "
                             "python -m bench.compiled_coverage gives the reasons"))


def _per_step_ratio(cases: list[dict], model: str) -> float | None:
    hi = _ours_field(cases, f"{model}/N=1000/RK4", "us_per_block_step")
    lo = _ours_field(cases, f"{model}/N=100/RK4", "us_per_block_step")
    return None if hi is None or lo is None or lo <= 0 else hi / lo


def _udb_vs_py(cases: list[dict]) -> float | None:
    """Ours / py-engine cost per block-step, udb_chain N=100 RK4."""
    c = find_case(cases, "udb_chain/N=100/RK4")
    ours = _ours_field(cases, "udb_chain/N=100/RK4", "us_per_block_step")
    if c is None or ours is None:
        return None
    py = c["peers"].get("py-engine/RK4") or {}
    per = py.get("us_per_block_step") if py.get("status") in TIMED_STATUSES else None
    return None if per is None or per <= 0 else ours / per


#: Largest cost per block-step at N = 1000 relative to N = 100 (the scaling targets).
SCALING_BOUND = "1.2"


def _scaling_target(cases: list[dict], model: str, name: str, note: str = "") -> dict:
    """Cost per block-step N=1000 / N=100 of ``model`` (RK4): at most :data:`SCALING_BOUND`.

    One-sided: the goal is that a larger diagram costs no more per block (no super-linear
    growth); a cost per block that falls with N (a fixed per-step cost spread over more
    blocks) is better than linear and meets it.
    """
    return make_target(name, _per_step_ratio(cases, model), "<=", SCALING_BOUND,
                       source=f"{model} RK4 ours us_per_block_step N=1000 / N=100",
                       note=note)


def _lag_scaling_target(cases: list[dict]) -> dict:
    """The lag chain's cost per block-step N=1000 / N=100 over the same ratio of our exact
    step's product in a plain C program, measured in the same run (:mod:`bench.lag_floor`):
    at most :data:`SCALING_BOUND`.  From rest the long chain holds a band of subnormal states
    through the whole second, whose products take microcode assists; that costs the plain
    program as much (its ratio about 2 on the reference VM, 1.0 with subnormals flushed), so
    our own ratio measures the CPU as much as our loop (1.17-1.28 against the bound 1.2 before
    the plain program was run beside it); divided by the plain program's, what is left is
    what our loop adds per block as the diagram grows."""
    ours = _per_step_ratio(cases, "lag_chain")
    hi = _peer_field(cases, "lag_chain/N=1000/RK4", PLAIN_C, "us_per_block_step")
    lo = _peer_field(cases, "lag_chain/N=100/RK4", PLAIN_C, "us_per_block_step")
    plain = hi / lo if hi and lo else None
    value = ours / plain if ours and plain else None
    note = (f"ours {ours:.3g}, the plain C program's {plain:.3g}: " if ours and plain else
            "the plain C program did not run (it needs gcc; its row says why): ") + \
        ("subnormal states along the long chain (python -m bench.lag_floor [--ftz]; "
         "README Speed)")
    return make_target("cost per block-step ratio N=1000/N=100 (lag chain), over plain C's",
                       value, "<=", SCALING_BOUND,
                       source=f"lag_chain RK4 us_per_block_step N=1000 / N=100, ours / {PLAIN_C}",
                       note=note)


def targets(cases: list[dict], quick: bool) -> list[dict]:
    """The suite's goals, evaluated on the medians (RK4 cases)."""
    msd = find_case(cases, "msd_pid/RK4")
    speedup = msd["ratios"].get("pathsim/RK4") if msd else None
    speedup_note = ""
    if msd and msd["ratio_basis"].get("pathsim/RK4") not in (None, "measured"):
        speedup_note = f"PathSim time {msd['ratio_basis']['pathsim/RK4']}"
    py_speedup = None
    ps = _peer_field(cases, "msd_pid/RK4", "pathsim/RK4", "median_s")
    py = _peer_field(cases, "msd_pid/RK4", PY_LOOP, "median_s")
    if ps and py:
        py_speedup = ps / py
    return [
        # ours: compiled=None, so in C where every block has a C form (issue 35)
        make_target("msd_pid RK4 wall time, compiled [s]",
                    _ours_field(cases, "msd_pid/RK4", "median_s"), "<=", "0.005",
                    source="msd_pid/RK4 ours median_s",
                    note=_compiled_note(cases, "msd_pid/RK4")),
        make_target("msd_pid RK4 speed-up vs PathSim RK4, compiled", speedup, ">=", "290",
                    source="msd_pid/RK4 ratios pathsim/RK4", note=speedup_note),
        make_target("lag_chain N=1000 us per block-step, compiled",
                    _ours_field(cases, "lag_chain/N=1000/RK4", "us_per_block_step"),
                    "<=", "0.005", source="lag_chain/N=1000/RK4 ours us_per_block_step",
                    note=_compiled_note(cases, "lag_chain/N=1000/RK4")),
        make_target("nl_chain N=100 us per block-step, compiled",
                    _ours_field(cases, "nl_chain/N=100/RK4", "us_per_block_step"),
                    "<=", "0.05", source="nl_chain/N=100/RK4 ours us_per_block_step",
                    note=_compiled_note(cases, "nl_chain/N=100/RK4")),
        _coverage_target(cases),
        # the Python loop (compiled=False): its goals from before the compiled run stand
        make_target("msd_pid RK4 wall time, Python loop [s]", py, "<=", "0.10",
                    source=f"msd_pid/RK4 {PY_LOOP} median_s"),
        make_target("msd_pid RK4 speed-up vs PathSim RK4, Python loop", py_speedup, ">=", "10",
                    source=f"msd_pid/RK4 pathsim/RK4 / {PY_LOOP}", note=speedup_note),
        make_target("lag_chain N=1000 us per block-step, Python loop",
                    _peer_field(cases, "lag_chain/N=1000/RK4", PY_LOOP, "us_per_block_step"),
                    "<=", "1.0", source=f"lag_chain/N=1000/RK4 {PY_LOOP} us_per_block_step"),
        make_target("nl_chain N=100 us per block-step, Python loop",
                    _peer_field(cases, "nl_chain/N=100/RK4", PY_LOOP, "us_per_block_step"),
                    "<=", "3.0", source=f"nl_chain/N=100/RK4 {PY_LOOP} us_per_block_step"),
        _lag_scaling_target(cases),
        _scaling_target(cases, "nl_chain", "cost per block-step ratio N=1000/N=100 (nl chain)"),
        make_target("udb_chain N=100 us per block-step vs py-engine", _udb_vs_py(cases),
                    "<=", "1.0",
                    source="udb_chain/N=100/RK4 us_per_block_step ours / py-engine/RK4",
                    note="arbitrary Python blocks, interpreted: ours must beat the minimal "
                    "60-line engine (ratio ours/py-engine; blocks counted N + 2 vs N + 1)"),
        _scaling_target(cases, "udb_chain", "udb_chain cost per block-step ratio N=1000/N=100"),
        make_target("build+compile lag_chain N=1000 [s]",
                    _ours_field(cases, "build/lag_chain/N=1000", "median_s"), "<=", "1.0",
                    source="build/lag_chain/N=1000 ours median_s"),
    ]
