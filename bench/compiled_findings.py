"""Three measurements behind what the docs say of the compiled runs (issue 35), printed by
``python -m bench.compiled_findings``:

* ``stage4_reuse``: in how many of 1000 RK4 steps of 1 ms stage 4's time ``t + h`` has the
  bits of the next major point's ``(k + 1) h`` (a time-only output evaluated at stage 4 then
  serves the major point: :mod:`cosim.codegen.time_cache`);
* ``lag_subnormal``: the compiled lag chain N = 1000 (model B), the time of 1000 steps early
  (t = 1-2 s) and late (t = 100-101 s), with the number of subnormal states (below
  2.2e-308, whose products take microcode assists) at the end of each;
* ``variable_rhs``: a sine through ``n`` FunctionBlocks into an integrator, 1 s, output grid
  1 ms, each SciPy method with the Python right-hand side and with the C one
  (``compiled=True``, :mod:`cosim.compiled_rhs`): best of 3 run times and their ratio.
"""

from __future__ import annotations

import sys
import time

import numpy as np

_TINY = 2.2250738585072014e-308  # the smallest normal double


def stage4_reuse(steps: int = 1000, h_ticks: int = 1_000_000) -> int:
    """Steps of ``steps`` whose stage-4 time equals the next major point's, bit for bit."""
    h = h_ticks * 1e-9
    return sum((k * h_ticks) * 1e-9 + h == ((k + 1) * h_ticks) * 1e-9 for k in range(steps))


def lag_subnormal(n: int = 1000) -> list[tuple[float, float, int]]:
    """``(t_end, ms for the 1000 steps to it, subnormal states at it)``, early and late."""
    from bench import ours_core as oc
    sim, _ = oc._lag_chain_sim(n, oc._solver("RK4"), True)
    sim.run(1.0)
    out = []
    for start in (1.0, 100.0):
        if start > 1.0:
            sim.advance_to(start)
        t0 = time.perf_counter()
        sim.advance_to(start + 1.0)
        ms = (time.perf_counter() - t0) * 1e3
        x = np.abs(np.asarray(sim.ctx.xc, dtype=float))
        out.append((start + 1.0, ms, int(np.sum((x > 0) & (x < _TINY)))))
    return out


def variable_rhs(n: int, solver: str, repeats: int = 3) -> tuple[float, float]:
    """Best run times [s] with the Python and with the C right-hand side."""
    from bench import models as md
    from blocks import Integrator, Sine
    from cosim import DiagramBuilder, FunctionBlock, Simulator

    def once(compiled: bool) -> float:
        b = DiagramBuilder("vrhs")
        prev = b.add(Sine("src", 1.0, md.NL_FREQ)).y
        for i in range(n):
            f = b.add(FunctionBlock(f"f{i}", md.nl_map))
            b.connect(prev, f.in_ports[0])
            prev = f.out_ports[0]
        z = b.add(Integrator("z"))
        b.connect(prev, z.u)
        sim = Simulator(b.build(), solver=solver, dt=1e-3, record=[z.y], compiled=compiled)
        sim.initialize()
        t0 = time.perf_counter()
        sim.run(1.0)
        return time.perf_counter() - t0

    return (min(once(False) for _ in range(repeats)), min(once(True) for _ in range(repeats)))


def main() -> int:
    print(f"stage 4's time equals the next major point's in {stage4_reuse()} of 1000 steps")
    for t_end, ms, sub in lag_subnormal():
        print(f"lag chain N = 1000, compiled: 1000 steps to t = {t_end:g} s in {ms:.2f} ms, "
              f"{sub} subnormal states there")
    for solver in ("rk45", "bdf", "radau", "lsoda"):
        for n in (10, 100):
            py, c = variable_rhs(n, solver)
            print(f"variable step {solver}, {n} function blocks: Python right-hand side "
                  f"{py:.3f} s, C {c:.3f} s, {py / c:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
