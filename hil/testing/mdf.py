"""ASAM MDF 4 measurement files (``.mf4``) of traces and raw CAN frames, with asammdf.

:func:`write_mdf` writes each trace as one channel group (a ``time`` master channel in s
and one float64 channel per signal, with its unit and comment) and the raw CAN frames as
a bus-logging channel group, the structure CANape, asammdf's viewer and python-can's
``MF4Writer`` use: a ``CAN_DataFrame`` structure channel with the fields ``BusChannel``,
``ID``, ``IDE``, ``DLC``, ``DataLength``, ``DataBytes`` (8 bytes, or 64 when a frame is
longer: CAN FD), ``Dir``, ``EDL``, ``BRS``, ``ESI``, its acquisition source a bus source
of type CAN (so the group carries the bus-event flags).  :func:`read_mdf` reads such a file
back: every channel group with a float master as a :class:`~hil.testing.signals.Trace`,
and the ``CAN_DataFrame`` groups as :class:`Frame` tuples ``(t, arbitration_id, data,
is_extended, channel)``.

Frames are given as those 5-tuples or as python-can ``Message`` objects (``timestamp``,
``arbitration_id``, ``data``, ``is_extended_id``, ``channel``, ``is_rx``, ``is_fd``,
``bitrate_switch``, ``error_state_indicator``); a tuple's frame is received (``Dir`` 0).

asammdf is imported when a file is written or read (``pip install asammdf``, or the
``hil-test`` extra).

Limitations: no DBC-decoded bus signals (the raw frames only), no error or remote frames;
a trace's ``meta`` is not written; a channel read back is float64 whatever the file stored
(a file from another tool with integer or text channels reads as floats or is skipped);
the bus channel is a number 0..255 (a python-can channel name such as ``"vcan1"`` gives
its trailing digits).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..errors import require
from .errors import TraceError
from .signals import Trace

_CAN_MSG_EXT = 0x80000000
_CAN_ID_MASK = 0x1FFFFFFF
_FIELDS = ("BusChannel", "ID", "IDE", "DLC", "DataLength", "DataBytes", "Dir", "EDL", "BRS",
           "ESI")
_FD_LENGTHS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64)


class Frame(NamedTuple):
    """A raw CAN frame: time (s), identifier, payload, extended identifier, bus channel."""

    t: float
    arbitration_id: int
    data: bytes
    is_extended: bool
    channel: int


@dataclass
class Measurement:
    """What :func:`read_mdf` found: ``traces`` by group name, ``frames`` in time order."""

    traces: dict[str, Trace] = field(default_factory=dict)
    frames: list[Frame] = field(default_factory=list)
    comment: str = ""

    @property
    def trace(self) -> Trace:
        """The file's one trace (an error if it has none or several)."""
        if len(self.traces) != 1:
            raise TraceError(f"measurement: {len(self.traces)} traces "
                             f"({', '.join(self.traces) or 'none'}); pick one: .traces[name]")
        return next(iter(self.traces.values()))


def _asammdf() -> Any:
    return require("asammdf", who="measurement files (MDF 4)", package="asammdf",
                   extra="hil-test")


def _channel(ch: Any) -> int:
    if ch is None:
        return 0
    if isinstance(ch, (int, np.integer)):
        return int(ch)
    text = str(ch)
    tail = text[len(text.rstrip("0123456789")):]
    if not tail:
        raise TraceError(f"MDF frames: bus channel {ch!r} has no number; give the frames as "
                         f"(t, id, data, is_extended, channel) with an int channel")
    return int(tail)


def _frame(x: Any) -> tuple[Frame, int, bool, bool, bool]:
    """``(frame, dir, fd, brs, esi)`` of a tuple or a python-can Message."""
    if hasattr(x, "arbitration_id"):
        f = Frame(float(x.timestamp), int(x.arbitration_id), bytes(x.data),
                  bool(x.is_extended_id), _channel(getattr(x, "channel", None)))
        extra = (0 if getattr(x, "is_rx", True) else 1, bool(getattr(x, "is_fd", False)),
                 bool(getattr(x, "bitrate_switch", False)),
                 bool(getattr(x, "error_state_indicator", False)))
    else:
        try:
            t, ident, data, ext, ch = x
        except (TypeError, ValueError):
            raise TraceError(f"MDF frames: a frame is (t, arbitration_id, data, is_extended, "
                             f"channel) or a python-can Message, got {x!r}") from None
        f = Frame(float(t), int(ident), bytes(data), bool(ext), _channel(ch))
        extra = (0, len(f.data) > 8, False, False)
    limit = _CAN_ID_MASK if f.is_extended else 0x7FF
    if not 0 <= f.arbitration_id <= limit or len(f.data) > 64 or not 0 <= f.channel <= 255 \
            or not np.isfinite(f.t):
        raise TraceError(f"MDF frames: frame {f} is out of range (id 0..{limit:#x}, at most "
                         f"64 data bytes, channel 0..255, a finite time)")
    if len(f.data) > 8 and len(f.data) not in _FD_LENGTHS:
        raise TraceError(f"MDF frames: a CAN FD frame carries one of {_FD_LENGTHS[9:]} bytes, "
                         f"got {len(f.data)} in {f}")
    return (f, *extra)


def _frames_signal(frames: Iterable[Any], asammdf: Any) -> Any:
    rows = sorted((_frame(x) for x in frames), key=lambda r: r[0].t)
    width = 64 if any(len(r[0].data) > 8 for r in rows) else 8
    dtype = np.dtype([(f"CAN_DataFrame.{k}", "<u4" if k == "ID" else
                       (f"({width},)u1" if k == "DataBytes" else "<u1")) for k in _FIELDS])
    rec = np.zeros(len(rows), dtype)
    for i, (f, direction, fd, brs, esi) in enumerate(rows):
        n = len(f.data)
        r = rec[i]
        r["CAN_DataFrame.BusChannel"], r["CAN_DataFrame.ID"] = f.channel, f.arbitration_id
        r["CAN_DataFrame.IDE"], r["CAN_DataFrame.DataLength"] = int(f.is_extended), n
        r["CAN_DataFrame.DLC"] = _FD_LENGTHS.index(n) if fd else min(n, 8)
        r["CAN_DataFrame.DataBytes"][:n] = np.frombuffer(f.data, np.uint8)
        r["CAN_DataFrame.Dir"], r["CAN_DataFrame.EDL"] = direction, int(fd)
        r["CAN_DataFrame.BRS"], r["CAN_DataFrame.ESI"] = int(brs), int(esi)
    from asammdf.blocks.source_utils import Source
    src = Source("CAN", "CAN", "raw CAN frames", Source.SOURCE_BUS, Source.BUS_TYPE_CAN)
    t = np.array([r[0].t for r in rows], float)
    return asammdf.Signal(rec, t, name="CAN_DataFrame", source=src), src


def write_mdf(path: str | os.PathLike, traces: Trace | Mapping[str, Trace] | None = None, *,
              frames: Iterable[Any] | None = None, comment: str = "",
              name: str = "trace") -> str:
    """Write ``traces`` (one trace, named ``name``, or ``{group name: trace}``) and the raw
    CAN ``frames`` to the MDF 4.10 file ``path``; returns the path written."""
    asammdf = _asammdf()
    if isinstance(traces, Trace):
        traces = {name: traces}
    mdf = asammdf.MDF(version="4.10")
    try:
        if comment:
            mdf.header.comment = comment
        for group, tr in (traces or {}).items():
            if not isinstance(tr, Trace):
                raise TypeError(f"write_mdf: {group!r} is a {type(tr).__name__}, not a Trace")
            sigs = [asammdf.Signal(np.asarray(tr[k], float), np.asarray(tr.t, float), name=k,
                                   unit=tr.units[k], comment=tr.comments.get(k, ""))
                    for k in tr.names]
            if sigs:
                mdf.append(sigs, acq_name=group, comment=f"hil.testing trace {group}",
                           common_timebase=True)
        if frames is not None:
            sig, src = _frames_signal(frames, asammdf)
            mdf.append(sig, acq_name="CAN", acq_source=src, comment="raw CAN frames")
        out = mdf.save(os.fspath(path), overwrite=True)
    finally:
        mdf.close()
    return os.fspath(out)


def read_mdf(path: str | os.PathLike) -> Measurement:
    """The traces and raw CAN frames of an MDF 4 file (see the module docstring)."""
    asammdf = _asammdf()
    if not os.path.exists(path):
        raise FileNotFoundError(f"read_mdf: no file {os.fspath(path)!r}")
    out = Measurement()
    with asammdf.MDF(os.fspath(path)) as mdf:
        out.comment = str(getattr(mdf.header, "description", "") or "")  # the <TX> text
        for gi, grp in enumerate(mdf.groups):
            names = [c.name for c in grp.channels]
            if "CAN_DataFrame" in names:
                out.frames.extend(_read_frames(mdf.get("CAN_DataFrame", group=gi)))
                continue
            _read_trace(mdf, gi, grp, out)
    out.frames.sort(key=lambda f: f.t)
    return out


def _read_trace(mdf: Any, gi: int, grp: Any, out: Measurement) -> None:
    sigs, units, comments, t = {}, {}, {}, None
    for ci, ch in enumerate(grp.channels):
        if ch.channel_type == 2:  # the master (time) channel
            continue
        s = mdf.get(ch.name, group=gi, index=ci)
        if s.samples.dtype.kind not in "fiub" or s.samples.ndim != 1:
            continue
        t = np.asarray(s.timestamps, float)
        sigs[ch.name] = np.asarray(s.samples, float)
        units[ch.name], comments[ch.name] = s.unit or "", s.comment or ""
    if t is None:
        return
    key = grp.channel_group.acq_name or f"group {gi}"
    out.traces[key if key not in out.traces else f"{key} ({gi})"] = Trace(
        t, sigs, units, {k: v for k, v in comments.items() if v})


def _read_frames(sig: Any) -> list[Frame]:
    rec = sig.samples
    ident = rec["CAN_DataFrame.ID"].astype(np.uint64)
    ide = rec["CAN_DataFrame.IDE"] if "CAN_DataFrame.IDE" in rec.dtype.names else \
        np.zeros(len(rec), np.uint8)
    n = rec["CAN_DataFrame.DataLength"]
    data = rec["CAN_DataFrame.DataBytes"]
    ch = rec["CAN_DataFrame.BusChannel"]
    return [Frame(float(sig.timestamps[i]), int(ident[i]) & _CAN_ID_MASK,
                  bytes(data[i][: int(n[i])]),
                  bool(ide[i]) or bool(int(ident[i]) & _CAN_MSG_EXT), int(ch[i]))
            for i in range(len(rec))]
