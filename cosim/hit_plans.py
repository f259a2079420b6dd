"""What a major point does, computed once per pattern of due rate groups.

A major point at ``tick`` evaluates the outputs of the blocks due there (every sampled
block at the start time), then runs the discrete updates of the due rate groups.  Which
groups are due repeats with the least common multiple of their periods, so the
Simulator asks :class:`HitPlans` and the plan of each pattern is made once per compiled
program (:class:`~cosim.program.Program`: a rebuild makes new plans).
"""

from __future__ import annotations

from typing import Any

import numpy as np


class HitPlans:
    """The plans of the major points of one program.

    Parameters
    ----------
    program : Program
        The compiled program (its evaluators).
    groups : list of RateGroup
        The diagram's rate groups.
    output_slot : dict
        Port -> signal slot (``plan.output_slot``).
    monitored : bool
        The diagram has monitors (an evaluation is then never reused by the next stage).
    restart_reads : set of int or None
        The signal slots the derivatives read, when a multistep solver restarts at a
        jump of a held output (``multistep_restart``); None otherwise.
    restart_kinds : str
        The dtype kinds whose change restarts it (``"iub"`` for modes, ``"iubfc"``).
    """

    def __init__(self, program: Any, groups: list, output_slot: dict, monitored: bool,
                 restart_reads: Any, restart_kinds: str) -> None:
        self.program = program
        self.groups = groups
        self.output_slot = output_slot
        self.monitored = monitored
        self.restart_reads = restart_reads
        self.restart_kinds = restart_kinds
        self._plans: dict = {}

    def at(self, tick: int, first: bool = False) -> tuple:
        """``(evaluate, updates, reuse, watch)`` of a major point at ``tick`` (``first``:
        the start time): ``evaluate`` the outputs' evaluator, ``updates`` the ``(block,
        handler)`` pairs of the due groups in order, ``reuse`` whether the evaluation
        stays valid for the first solver stage after the updates (no monitors, and no due
        handler belongs to a block whose unheld outputs may read the discrete states it
        writes) and ``watch`` the held output slots whose change restarts a multistep
        solver."""
        groups = self.groups
        if len(groups) == 1:  # the common case, at every major point: no generator
            key = (0,) if groups[0].due(tick) else ()
        else:
            key = tuple(i for i, g in enumerate(groups) if g.due(tick)) if groups else ()
        if first:
            key = ("first",) + key
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._make(key, first)
        return plan

    def _make(self, key: tuple, first: bool) -> tuple:
        groups, ev = self.groups, self.program.ev
        due_groups = [groups[i] for i in key if i != "first"]
        if first and groups:
            # every sampled output gets a value from its initial state at the start,
            # also for blocks whose first hit is later (offset > 0)
            fn = ev.evaluator_for(frozenset(b for g in groups for b in g.blocks))
        else:
            due = frozenset(b for g in due_groups for b in g.blocks)
            fn = ev.evaluator_for(due) if due else self.program.outputs
        updates = []
        reuse = not self.monitored
        for g in due_groups:
            for b in g.blocks:
                for u in b.periodic_updates:
                    if u.handler is None or u.period != g.period or u.offset != g.offset:
                        continue
                    updates.append((b, u.handler))
                    if not b.is_sampled:
                        reuse = False  # a hybrid block: its continuous outputs may change
        watch: list[int] = []
        if self.restart_reads and not first:
            slots, reads, kinds = self.output_slot, self.restart_reads, self.restart_kinds
            for g in due_groups:
                for b in g.blocks:
                    if b.is_sampled:
                        watch.extend(slots[p] for p in b.outputs.values()
                                     if slots[p] in reads and np.dtype(p.dtype).kind in kinds)
        return fn, updates, reuse, watch
