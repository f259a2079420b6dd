"""Values between an FMU block's ports and its driver.

Input ports to the flat, typed value lists the driver sets (:func:`input_values`: Reals
as floats, integers as exact Python ints, Booleans, String and Binary scalars), the
driver's flat values back to port values (:func:`port_values`), and what a block gives
its FMU at initialization: the inputs whose sources have not run yet (:func:`late_inputs`)
take their start values (:class:`Unconnected`, :func:`initial_values`), and the block
initializes again while its inputs differ from those it was initialized with
(:func:`moved`, to :data:`INIT_RTOL`).  Used by the Model Exchange block
(:mod:`fmus.fmu_block`) and the Scheduled Execution block (:mod:`fmus.scheduled`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .instance import as_bytes, as_text, port_dtype

__all__ = ["INIT_RTOL", "Unconnected", "initial_values", "input_values", "late_inputs",
           "moved", "port_values"]

#: relative change of a Real input below which an initialization stands (the fixed point
#: of a loop at initialization is reached to this, not bit for bit)
INIT_RTOL = 1e-13


def input_values(ctx: Any, vs: list, ports: list) -> list:
    """The values of the input ``ports`` of variables ``vs`` as a flat list for the
    driver, typed by variable."""
    vals: list = []
    for v, p in zip(vs, ports):
        x = ctx.input(p)
        kind = v.kind
        if v.shape:
            arr = np.asarray(x).ravel()
            vals.extend(arr.astype(float).tolist() if kind == "real" else
                        [int(a) if kind == "int" else bool(a) for a in arr])
        elif kind == "real":
            vals.append(x if type(x) is float else float(x))
        elif kind == "int":
            vals.append(int(x))
        elif kind == "bool":
            vals.append(bool(x))
        elif kind == "string":
            vals.append(x if type(x) is str else as_text(x, v))
        else:
            vals.append(x if type(x) is bytes else as_bytes(x, v))
    return vals


def port_values(vs: list, vals: list) -> list:
    """The port values of variables ``vs`` from the driver's flat values ``vals``."""
    out = []
    i = 0
    for v in vs:
        if v.shape:
            n = v.size
            out.append(np.asarray(vals[i:i + n], dtype=port_dtype(v)).reshape(v.shape))
            i += n
            continue
        x, kind = vals[i], v.kind
        out.append(x if kind == "real" else int(x) if kind == "int" else bool(x)
                   if kind == "bool" else str(x) if kind == "string" else bytes(x))
        i += 1
    return out


class Unconnected:
    """A stand-in context that reads every input port as its value when unconnected (the
    start value of an FMU input)."""

    @staticmethod
    def input(port: Any) -> Any:
        return port.zero()


def initial_values(ctx: Any, vs: list, ports: list, late: Any) -> list:
    """The inputs' values at initialization; those in ``late`` (not computed yet) their
    start values (the port's value when unconnected)."""
    if not late or not any(p in late for p in ports):
        return input_values(ctx, vs, ports)
    vals: list = []
    for v, p in zip(vs, ports):
        vals.extend(input_values(Unconnected() if p in late else ctx, [v], [p]))
    return vals


def moved(given: tuple | None, now: tuple) -> bool:
    """Whether inputs ``now`` differ from those ``given`` at initialization (Reals by more
    than :data:`INIT_RTOL`, other types at all)."""
    if given is None or len(given) != len(now):
        return True
    for a, b in zip(given, now):
        if type(a) is float and type(b) is float:
            if abs(a - b) > INIT_RTOL * (1.0 + max(abs(a), abs(b))):
                return True
        elif a != b:
            return True
    return False


def late_inputs(block: Any, plan: Any, ports: list) -> set:
    """Those of ``block``'s input ``ports`` whose sources ``plan`` evaluates after the
    block's first output (their slots hold no value yet when that output starts the FMU),
    or whose source is a placeholder until set (``initially_unset``: a master's
    :class:`~cosim.subsystem.CouplingInput`)."""
    pos, k = {}, 0
    for comp in plan.order:
        for n in comp:
            pos[n.index] = k
            k += 1
    mine = [pos[n.index] for n in plan.nodes if n.block is block and n.index in pos]
    first = min(mine) if mine else math.inf  # no outputs: it starts after all of them
    late = set()
    for p in ports:
        prod = plan.producer.get(plan.input_slot[p])
        if prod is None:
            continue
        src = prod.block if prod.block is not None else prod.ports[0].block  # unit conversion
        if pos.get(prod.index, -1) >= first or getattr(src, "initially_unset", False):
            late.add(p)
    return late
