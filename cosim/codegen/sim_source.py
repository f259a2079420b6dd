"""C text of the compiled Simulator's own tables and tests (:mod:`cosim.compiled_run`),
appended to the model core with the driver (``templates/driver.c``): the monitors' C
conditions and the held outputs whose change restarts AB3."""

from __future__ import annotations

from typing import Any

import numpy as np

from .csource import _LOCALS, _array, _comment
from .program import _indent


def monitor_source(prog: Any) -> str:
    """``cosim_monitors_due(M)``: whether one of the monitors' C conditions holds (each
    block's :class:`~cosim.codegen.model.CMonitor`, :attr:`Program.monitors`)."""
    if not prog.monitors:
        return "\n#define COSIM_NMON 0\n"
    tests = "".join(f"if ({cond}) return 1;  /* {_comment(label)} */\n"
                    for cond, label in prog.monitors)
    return (f"\n#define COSIM_NMON {len(prog.monitors)}\n"
            "static int cosim_monitors_due(Model *M) {\n"
            + _indent(_LOCALS + "\nconst double *x = S->x;\n(void)x;\n" + tests + "return 0;")
            + "\n}\n")


def watch_tables(sim: Any, prog: Any) -> str:
    """C tables of the held outputs whose change at a sample hit restarts AB3, per rate
    group (``COSIM_WATCH``: signal offsets, an array's elements each; group ``g``'s from
    ``COSIM_WATCH_START[g]``): the slots :class:`~cosim.hit_plans.HitPlans` watches."""
    hits = sim.hits
    reads, kinds = hits.restart_reads, hits.restart_kinds
    start, offs = [0], []
    for g in sim.plan.rate_groups:
        if reads:
            for b in g.blocks:
                if b.is_sampled:
                    for p in b.outputs.values():
                        k = hits.output_slot[p]
                        if k in reads and np.dtype(p.dtype).kind in kinds:
                            offs.extend(prog.slot_offset[k] + i for i in range(p.size))
        start.append(len(offs))
    return (f"\n#define NWATCH1 {max(1, len(offs))}\n"
            + _array("COSIM_WATCH", offs, "int", fmt=str) + "\n"
            + _array("COSIM_WATCH_START", start, "int", fmt=str) + "\n")
