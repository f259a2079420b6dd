"""The co-simulation master's wiring, checked like diagram wires: the subsystems by name,
each input's source with its unit conversion and linear transformation, and each input's
extrapolation order (as asked, and as its subsystem can follow)."""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from .block import did_you_mean
from .errors import BuildError, ConnectError, CosimWarning, NotADiagramError, PortError, UnitError
from .subsystem import max_input_order
from .units import conversion


def check_subsystem(s: Any) -> None:
    """Refuse what is not a subsystem, saying how to make one of it.

    An object may say itself how to make a subsystem of it: a ``subsystem_hint()``
    method returning that sentence (an FMU imported as a block names the interface to
    load instead, :meth:`fmus.fmu_block.FMUBlock.subsystem_hint`).
    """
    from .block import Block
    from .diagram import DiagramBuilder
    hint = getattr(s, "subsystem_hint", None)
    if callable(hint) and not hasattr(s, "input_names"):
        raise NotADiagramError(f"MasterScheduler: got {s!r} as a subsystem: {hint()}")
    if isinstance(s, (str, os.PathLike)):
        raise NotADiagramError(f"MasterScheduler: got the path {os.fspath(s)!r} (a "
                               f"{type(s).__name__}) as a subsystem: load it first, for an FMU "
                               "fmus.load_fmu(path, interface='CoSimulation')")
    if isinstance(s, DiagramBuilder):
        raise NotADiagramError(f"MasterScheduler: got the DiagramBuilder '{s.name}' as a "
                               "subsystem: call build() first and wrap the diagram, "
                               "DiagramSubsystem(builder.build(), ...)")
    if isinstance(s, Block):
        what = "diagram" if s.is_diagram else "block"
        raise NotADiagramError(f"MasterScheduler: got the {what} {s!r} as a subsystem: "
                               f"wrap it, DiagramSubsystem({what}, solver=..., dt=...)")
    if not all(hasattr(s, a) for a in ("name", "input_names", "output_names")):
        raise NotADiagramError(f"MasterScheduler: subsystems must be Subsystem objects "
                               f"(DiagramSubsystem, FMUSubsystem), got {type(s).__name__}")


def by_name(subsystems: list) -> dict[str, Any]:
    """The subsystems by name, each checked (:func:`check_subsystem`), names unique."""
    out: dict[str, Any] = {}
    for s in subsystems:
        check_subsystem(s)
    for s in subsystems:
        if s.name in out:
            raise BuildError(f"MasterScheduler: duplicate subsystem name {s.name!r}")
        out[s.name] = s
    return out


def declared_exact(sub: Any, port: str) -> bool | None:
    """Whether ``sub`` declares ``port`` non-Real (None: no dtype declared)."""
    dtype = getattr(sub, "dtypes", {}).get(port)
    return None if dtype is None else np.dtype(dtype).kind not in "fc"


def non_real(sub: Any, port: str) -> bool:
    """Whether ``sub`` declares ``port`` non-Real (Boolean, integer, string, bytes)."""
    return bool(declared_exact(sub, port))


def sources(subs: dict, connections: list) -> dict:
    """``(subsystem, input)`` -> ``((subsystem, output), scale, bias)`` of ``connections``
    (``(src, dst)`` or ``(src, dst, (factor, offset))``): names, shapes, kinds and units
    checked; every input connected unless the subsystem lists it optional."""
    out: dict = {}
    for c in connections:
        if len(c) not in (2, 3):
            raise BuildError(f"MasterScheduler: connection {c!r} must be (src, dst) or "
                             "(src, dst, (factor, offset))")
        _connect(subs, out, *c)
    missing = [f"'{s.name}.{i}'" for s in subs.values() for i in s.input_names
               if (s.name, i) not in out and i not in getattr(s, "optional_inputs", ())]
    if missing:
        raise PortError(f"MasterScheduler: unconnected subsystem input(s) {', '.join(missing)}"
                        "; connect each one to an output of another subsystem")
    return out


def end(subs: dict, ref: str, kind: str) -> tuple[str, str]:
    """``(subsystem, port)`` of a connection end ``"subsystem.port"`` (``kind``: output or
    input), or a :class:`PortError` with the names that come close."""
    if not isinstance(ref, str) or "." not in ref:
        raise PortError(f"connection end {ref!r} must look like 'subsystem.{kind}'")
    sname, port = ref.split(".", 1)
    if sname not in subs:
        raise PortError(f"subsystem {sname!r} not found; " + did_you_mean(sname, subs))
    s = subs[sname]
    names = s.output_names if kind == "output" else s.input_names
    if port not in names:
        raise PortError(f"{kind} {port!r} not found on subsystem '{sname}'; "
                        + did_you_mean(port, names))
    return sname, port


def _connect(subs: dict, out: dict, src: str, dst: str, transform: tuple | None = None) -> None:
    s = end(subs, src, "output")
    d = end(subs, dst, "input")
    if d in out:
        raise PortError(f"input '{dst}' is already connected to '{'.'.join(out[d][0])}'")
    ss, ds = subs[s[0]], subs[d[0]]
    if ss.shapes[s[1]] != ds.shapes[d[1]]:
        raise ConnectError(f"connection {src} {ss.shapes[s[1]]} -> {dst} "
                           f"{ds.shapes[d[1]]}: shape mismatch")
    declared = [getattr(sub, "dtypes", {}).get(port) for sub, port in ((ss, s[1]), (ds, d[1]))]
    kinds = [np.dtype(x).kind for x in declared if x is not None]
    if len(kinds) == 2 and (kinds[0] in "OSU") != (kinds[1] in "OSU"):  # text vs numbers
        what = ["String/Binary" if k in "OSU" else "numeric" for k in kinds]
        raise ConnectError(f"connection {src} ({what[0]}) -> {dst} ({what[1]}): a "
                           "String or Binary signal connects only to a String or Binary "
                           "input; connect ports of the same kind")
    try:
        scale, bias = conversion(ss.units[s[1]], ds.units[d[1]])
    except UnitError as exc:
        raise UnitError(f"connection {src} [{ss.units[s[1]]}] -> {dst} "
                        f"[{ds.units[d[1]]}]: {exc}") from None
    if transform is not None:
        factor, offset = (float(v) for v in transform)
        scale, bias = scale * factor, scale * offset + bias
    out[d] = (s, scale, bias)


def orders(spec: Any, srcs: dict) -> dict:
    """The extrapolation order of every connected input: ``spec`` an order 0-3, or
    ``{"dst.input": order}`` with a ``"*"`` default (1 when not given)."""
    default = spec.get("*", 1) if isinstance(spec, dict) else spec
    out = {}
    for key in srcs:
        order = spec.get(".".join(key), default) if isinstance(spec, dict) else default
        if order not in (0, 1, 2, 3):
            raise BuildError(f"extrapolation order for '{'.'.join(key)}' must be 0-3, "
                             f"got {order!r}")
        out[key] = order
    if isinstance(spec, dict):
        unknown = set(spec) - {"*"} - {".".join(k) for k in srcs}
        if unknown:
            raise PortError(f"extrapolation given for unknown input(s) {sorted(unknown)}")
    return out


def input_orders(asked: dict, srcs: dict, subs: dict, warn: bool) -> dict:
    """``asked`` lowered to each subsystem's ``max_input_order`` (``MasterScheduler``'s
    ``extrapolation``), with a :class:`CosimWarning` naming the lowered Real inputs when
    ``warn`` (the orders were given)."""
    out, lowered = {}, []
    for (sname, inp), order in asked.items():
        limit = max_input_order(subs[sname], inp)
        out[(sname, inp)] = min(order, limit)
        src, out_port = srcs[(sname, inp)][0]
        if non_real(subs[sname], inp) or non_real(subs[src], out_port):
            continue  # never extrapolated (held whatever the order): nothing to say
        if limit < order:
            lowered.append(f"'{sname}.{inp}' ({order} -> {limit})")
    if lowered and warn:
        warnings.warn(
            f"MasterScheduler: extrapolation order lowered for input(s) {', '.join(lowered)}"
            ": those subsystems follow no higher polynomial degree within a step (a "
            "Co-Simulation FMU without canInterpolateInputs or intermediate update holds "
            "its inputs); they get the newest value (start of the step when "
            "extrapolating, end of the step when interpolating).  Give these inputs that "
            "order in extrapolation={...} to silence this", CosimWarning, stacklevel=3)
    return out
