"""The XCP slave's virtual memory: a map from addresses to a Simulator's parameters and signals.

Layout (address extension 0, byte granularity, Intel byte order, every value a
**float32** of 4 bytes, one after the other in the order given)::

    0x00010000 + 4 i   calibration segment: parameter i (read and write)
    0x00020000 + 4 j   measurement segment: variable j (read only)
    0x00F00000         identification: the ASCII text GET_ID(0) answers (read only)
    0x00F10000         the A2L name GET_ID(1) answers (read only)
    0x00F20000         the event channel's name (GET_DAQ_EVENT_INFO, read only)

Why float32: a value is then one CAN frame in every direction: a DOWNLOAD carries at most
6 bytes, an UPLOAD answer 7 and a DAQ packet with a 2-byte timestamp 5, so a float32 is
written atomically (no half-written double between two DOWNLOADs) and a DAQ sample of
one variable is one frame.  The cost: a parameter written over XCP is the float32
nearest the value asked for (1.8 s becomes 1.7999999523 s), and a measured value is the
float32 of the float64 the controller computed (relative error <= 6e-8).

Semantics:

* **Parameters** are read from an image of the calibration segment, refreshed from the
  Simulator's context at every event (so a change made by another path shows) except
  for a value written over XCP that the context does not hold yet.  A write covering
  a whole parameter is checked at once by the Simulator's parameter check
  (:meth:`Context.check_param`: kind, the block's validator) and against the map's
  limits; a refused value is ``ERR_OUT_OF_RANGE`` and leaves the image unchanged.  A
  checked value is handed to ``apply(path, value)``: the real-time runner's
  :meth:`~hil.runner.RealTimeRunner.set_parameter` (it takes effect at the start of the
  next frame), or the map's own queue, applied by :meth:`MemoryMap.apply_pending`
  before the next frame.
* **Measurements** are the values sampled at the last event (the end of a controller
  frame), so an UPLOAD, a SHORT_UPLOAD and a DAQ packet of the same event agree and
  the command thread never reads the context while the frame writes it.
* Writes outside the calibration segment: ``ERR_ACCESS_DENIED``; reads outside every
  segment: ``ERR_ACCESS_DENIED``; a write that covers part of a parameter only:
  ``ERR_OUT_OF_RANGE`` (a float32 must be written whole).
"""

from __future__ import annotations

import math
import queue
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .packets import XcpError

CAL_BASE = 0x00010000
MEAS_BASE = 0x00020000
ID_BASE = 0x00F00000
A2L_NAME_BASE = 0x00F10000
EVENT_NAME_BASE = 0x00F20000
SIZE = 4  # float32
_F32 = struct.Struct("<f")
_F32_MAX = 3.4028234663852886e38


@dataclass(frozen=True)
class Variable:
    """One entry of the map: ``path`` in the Simulator (``'acc.time_gap_s'``, an output
    port ``'acc.throttle'`` or a discrete state ``'acc.a_prev'``), its address, unit,
    physical limits and a one-line description (the A2L's)."""

    path: str
    address: int
    writable: bool
    unit: str = ""
    lo: float = -_F32_MAX
    hi: float = _F32_MAX
    description: str = ""

    @property
    def name(self) -> str:
        """The A2L name (ASAP2 identifiers: letters, digits, ``_`` and ``.``)."""
        return self.path.replace("/", ".")


def _entry(spec: Any, address: int, writable: bool) -> Variable:
    if isinstance(spec, str):
        return Variable(spec, address, writable)
    if isinstance(spec, dict):
        d = dict(spec)
        path = d.pop("path", None)
        if not isinstance(path, str):
            raise ValueError(f"hil.xcp: a map entry needs a 'path' string, got {spec!r}")
        try:
            return Variable(path, address, writable, **d)
        except TypeError as exc:
            raise ValueError(f"hil.xcp: map entry {spec!r}: {exc} (keys: path, unit, lo, hi, "
                             "description)") from None
    raise ValueError(f"hil.xcp: a map entry is a path or a dict with 'path', got {spec!r}")


def _reader(diagram: Any, path: str) -> Callable[[Any], Any]:
    """``ctx -> value`` of an output port or a discrete state at ``path``."""
    from cosim.ports import OutputPort
    bpath, _, name = path.rpartition(".")
    if not bpath:
        raise ValueError(f"hil.xcp: measurement {path!r} must look like 'block.output' or "
                         "'block.state'")
    try:
        p = diagram.find(path)
    except Exception:  # noqa: BLE001 - not a port: maybe a state
        p = None
    if isinstance(p, OutputPort):
        return lambda ctx: ctx.output(p)
    block = diagram.find(bpath)
    for h in block.discrete_states:
        if h.name == name:
            return lambda ctx: ctx.discrete(h)
    outs = ", ".join(block.outputs) or "(none)"
    states = ", ".join(h.name for h in block.discrete_states) or "(none)"
    raise ValueError(f"hil.xcp: {path!r} is neither an output nor a discrete state of "
                     f"'{bpath}' (outputs: {outs}; states: {states})")


class MemoryMap:
    """Addresses of ``parameters`` and ``measurements`` of ``sim`` (module docstring).

    ``parameters``, ``measurements``: paths, or dicts ``{"path", "unit", "lo", "hi",
    "description"}`` (a parameter's unit defaults to the one it was declared with).
    ``identity``: GET_ID(0)'s text; ``a2l_name``: GET_ID(1)'s (the A2L file's name
    without path and extension).
    """

    def __init__(self, sim: Any, parameters: list, measurements: list, *,
                 identity: str = "cosim XCP slave", a2l_name: str = "cosim") -> None:
        self.sim = sim
        self.params = [_entry(s, CAL_BASE + SIZE * i, True) for i, s in enumerate(parameters)]
        self.meas = [_entry(s, MEAS_BASE + SIZE * j, False) for j, s in enumerate(measurements)]
        names = [v.name for v in self.params + self.meas]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"hil.xcp: {dup} listed twice in the memory map")
        ctx = sim.ctx
        for i, v in enumerate(self.params):
            h, val = ctx.check_param(v.path, ctx.param(ctx.plan.find_parameter(v.path)))
            if not isinstance(val, (int, float)) or isinstance(val, bool):
                raise ValueError(f"hil.xcp: parameter {v.path!r} = {val!r} is not a real "
                                 "number; only scalar real parameters are calibratable")
            if not v.unit and h.unit:
                self.params[i] = Variable(v.path, v.address, True, h.unit, v.lo, v.hi,
                                          v.description)
        self._handles = [ctx.plan.find_parameter(v.path) for v in self.params]
        self._readers = [_reader(sim.diagram, v.path) for v in self.meas]
        self.identity = identity.encode("ascii")
        self.a2l_name = a2l_name.encode("ascii")
        self._lock = threading.Lock()
        self._cal = bytearray(SIZE * len(self.params))
        self._meas = bytearray(SIZE * len(self.meas))
        self._dirty: set[int] = set()  # parameters written over XCP, not applied yet
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self.apply: Callable[[str, Any], None] = lambda path, value: self._queue.put(
            (path, value))
        self.extra: dict[int, bytes] = {}  # more read-only buffers by base address
        self.values = [0.0] * len(self.meas)  # the last event's measurements (float64)
        self.refresh()

    # --------------------------------------------------------------- lookup
    def variable(self, name: str) -> Variable:
        for v in self.params + self.meas:
            if v.name == name or v.path == name:
                return v
        raise KeyError(f"hil.xcp: no variable {name!r} in the map; known: "
                       f"{[v.name for v in self.params + self.meas]}")

    # --------------------------------------------------------------- events
    def refresh(self) -> None:
        """Sample the measurements and the parameters not pending from the context (the
        frame's thread, at an event)."""
        ctx = self.sim.ctx
        vals = []
        for r in self._readers:
            try:
                vals.append(float(r(ctx)))
            except Exception:  # noqa: BLE001 - a pruned or non-scalar signal reads NaN
                vals.append(math.nan)
        packed = b"".join(_F32.pack(_clip32(x)) for x in vals)
        cal = [_F32.pack(_clip32(float(ctx.param(h)))) for h in self._handles]
        with self._lock:
            self.values = vals
            self._meas[:] = packed
            for i, b in enumerate(cal):
                at = slice(SIZE * i, SIZE * i + SIZE)
                if i in self._dirty and self._cal[at] == b:
                    self._dirty.discard(i)  # the context holds the value written
                if i not in self._dirty:
                    self._cal[at] = b

    def apply_pending(self) -> int:
        """Apply the values written over XCP to the context (before a frame, when no
        runner applies them); the count."""
        n = 0
        while True:
            try:
                path, value = self._queue.get_nowait()
            except queue.Empty:
                break
            self.sim.ctx.set_param(path, value)
            n += 1
        return n

    # ------------------------------------------------------------ read/write
    def read(self, address: int, n: int) -> bytes:
        """``n`` bytes from ``address`` (ERR_ACCESS_DENIED outside every segment)."""
        for base, buf in ((CAL_BASE, self._cal), (MEAS_BASE, self._meas),
                          (ID_BASE, self.identity), (A2L_NAME_BASE, self.a2l_name),
                          *self.extra.items()):
            if base <= address and address + n <= base + len(buf):
                with self._lock:
                    return bytes(buf[address - base:address - base + n])
        raise XcpError("ERR_ACCESS_DENIED", f"read of {n} bytes at 0x{address:08X} is "
                                            "outside the slave's memory")

    def write(self, address: int, data: bytes) -> list[tuple[str, float]]:
        """Write ``data`` at ``address`` in the calibration segment; the parameters it
        set, as ``(path, value)``, each checked and handed to :attr:`apply`."""
        end = address + len(data)
        if not (CAL_BASE <= address and end <= CAL_BASE + len(self._cal)):
            raise XcpError("ERR_ACCESS_DENIED", f"write of {len(data)} bytes at "
                                                f"0x{address:08X}: only the calibration "
                                                f"segment 0x{CAL_BASE:08X}.."
                                                f"0x{CAL_BASE + len(self._cal):08X} is "
                                                "writable")
        off = address - CAL_BASE
        if off % SIZE or len(data) % SIZE:
            raise XcpError("ERR_OUT_OF_RANGE", f"write at 0x{address:08X} of {len(data)} "
                                               "bytes splits a float32 parameter (write "
                                               "each whole)")
        done = []
        for k in range(0, len(data), SIZE):
            i = (off + k) // SIZE
            v = self.params[i]
            value = _F32.unpack_from(data, k)[0]
            if not (math.isfinite(value) and v.lo <= value <= v.hi):
                raise XcpError("ERR_OUT_OF_RANGE", f"{v.name} = {value!r} outside "
                                                   f"[{v.lo:g}, {v.hi:g}] {v.unit}")
            try:
                path, checked = self.sim.ctx.check_param(v.path, float(value))
            except Exception as exc:  # noqa: BLE001 - the block's check refused it
                raise XcpError("ERR_OUT_OF_RANGE", str(exc)) from None
            done.append((v.path, checked, i, data[k:k + SIZE]))
        out = []
        for path, value, i, raw in done:
            self.apply(path, value)
            with self._lock:
                self._cal[SIZE * i:SIZE * i + SIZE] = raw
                self._dirty.add(i)
            out.append((path, value))
        return out


def _clip32(x: float) -> float:
    """float32-representable (NaN stays NaN, beyond the range: +-inf)."""
    if x != x or abs(x) <= _F32_MAX:
        return x
    return math.copysign(math.inf, x)
