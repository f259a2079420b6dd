"""A DAQ device over Modbus TCP (pymodbus): PLCs, remote I/O, gateways.

:class:`ModbusDaq` maps each declared :class:`~hil.daq.device.ChannelSpec` onto
a Modbus object through a :class:`ModbusPoint` (table, 0-based address, data
type, word order, scale/offset, device id).  pymodbus is imported when the
device is opened (``pip install 'cosim[hil]'``)::

    daq = ModbusDaq(
        [ChannelSpec("p_supply", "ai", (0, 250), "bar"),
         ChannelSpec("valve_cmd", "ao", (-10, 10), "V"),
         ChannelSpec("pump_on", "do"), ChannelSpec("ctr0", "counter")],
        host="192.168.0.10", port=502, device_id=1,
        points={"p_supply": ModbusPoint(0, dtype="int16", scale=0.01),
                "valve_cmd": ModbusPoint(10, dtype="float32"),
                "pump_on": 0,                     # coil 0
                "ctr0": ModbusPoint(4)})          # input registers 4-5, uint32
    with daq:
        daq.write({"valve_cmd": 2.5, "pump_on": True})
        daq.read()      # {"p_supply": ..., "ctr0": ...}

Channel kinds and their Modbus objects:

================  ============================  ===============  ==============
kind              table (default first)         dtype (default)  value
================  ============================  ===============  ==============
``ai``            ``input``, ``holding``        ``uint16``, any  raw * scale +
                                                register type    offset, float
``frequency_in``  ``input``, ``holding``        as ``ai``        as ``ai`` (Hz)
``ao``            ``holding``                   ``uint16``, any  written as
                                                register type    (v - offset) /
                                                                 scale
``di``            ``discrete``, ``coil``        ``bool``         bool
``do``            ``coil``                      ``bool``         bool
``counter``       ``input``, ``holding``        ``uint32``,      int, wraps at
                                                ``int32``,       ``2**bits``;
                                                ``uint16``       ``reset`` is a
                                                                 software
                                                                 baseline
================  ============================  ===============  ==============

Register data types: ``uint16``, ``int16`` (one register), ``uint32``,
``int32``, ``float32`` (two registers; ``word_order="big"``: high word at the
lower address, the Modbus convention "ABCD"; ``"little"``: word-swapped
"CDAB").  Bytes within a register are always big-endian.  Integer types round
``(v - offset) / scale`` half up; at construction the channel's range must fit
the data type, so a write can never overflow a register.

Reads coalesce: the channels asked for are grouped by (device id, table),
sorted by address, and contiguous (or overlapping) objects are read in one
request (at most 125 registers or 2000 bits; ``max_gap`` > 0 also bridges
small holes, reading registers nobody asked for).  The plan is computed once
per set of names.  If a coalesced request gets an exception response, the
device splits it into one request per channel, to name the channel at fault;
if the split requests succeed, the split plan is kept (some devices refuse
multi-object reads).  Writes coalesce the same way: contiguous holding
registers in one *write multiple registers* (fc 16) request, contiguous coils
in one *write multiple coils* (fc 15); a lone register or coil uses fc 6 / fc 5.

Errors:

* an exception response raises :class:`ModbusError` (a
  :class:`~hil.daq.link.DeviceIOError`) naming the channel, table, address,
  device id and exception code, with what the code usually means;
* a lost connection or a request with no response raises
  :class:`~hil.errors.Disconnected`; the next call reconnects (bounded backoff,
  see :mod:`hil.daq.link`), so a server restarted mid-run is survived; every
  read lost meanwhile is counted in ``link_counters.lost_reads``.

Input readings outside the channel range are clipped to it and counted in
``counters.saturations`` (as :class:`~hil.daq.simulated.SimulatedDaq` does).

Limitations
-----------
* Modbus TCP only: no RTU/ASCII over serial lines, no TLS.
* Single-point, software-timed polling only.
* ``pwm_out`` has no Modbus mapping: map duty and frequency as two ``ao``
  channels.
* ``resolution_bits`` is not applied: the register value is the code.
* 64-bit types, strings, byte-swapped ("BADC") layouts and bit fields inside
  registers are not supported.
* Counter ``reset`` is a software baseline (nothing is written to the device).
"""

from __future__ import annotations

import logging
import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import require
from .adapter import DeviceBackend
from .device import ChannelSpec
from .link import DeviceIOError, NetworkDaq

__all__ = ["ModbusDaq", "ModbusPoint", "ModbusError", "ModbusDaqBackend", "TABLES", "DTYPES"]

log = logging.getLogger("hil.daq")

#: Modbus tables: (name in messages, bit table?).
TABLES: dict[str, tuple[str, bool]] = {
    "coil": ("coil", True),
    "discrete": ("discrete input", True),
    "holding": ("holding register", False),
    "input": ("input register", False),
}
#: Register data types: (registers, struct code).
DTYPES: dict[str, tuple[int, str]] = {
    "uint16": (1, "H"), "int16": (1, "h"), "uint32": (2, "I"), "int32": (2, "i"),
    "float32": (2, "f"),
}
_INT_LIMITS = {"uint16": (0, 0xFFFF), "int16": (-0x8000, 0x7FFF),
               "uint32": (0, 0xFFFFFFFF), "int32": (-0x80000000, 0x7FFFFFFF)}

_KIND_TABLES: dict[str, tuple[str, ...]] = {
    "ai": ("input", "holding"), "frequency_in": ("input", "holding"), "ao": ("holding",),
    "di": ("discrete", "coil"), "do": ("coil",), "counter": ("input", "holding"),
}
_MAX_COUNT = {True: 2000, False: 125}  # per read request: bits, registers

_EXC_HINTS = {
    1: "ILLEGAL_FUNCTION: the device does not support this function code for this table",
    2: "ILLEGAL_ADDRESS: the device has no such address (or not that many); check the "
       "address in the channel map (addresses are 0-based: register 30001 is input 0, "
       "40001 is holding 0)",
    3: "ILLEGAL_VALUE: the device rejected the value or the count",
    4: "DEVICE_FAILURE: the device failed while handling the request",
    5: "ACKNOWLEDGE: the device accepted a long-running request; poll again later",
    6: "DEVICE_BUSY: the device is busy; retry later",
    8: "MEMORY_PARITY_ERROR: the device reported a memory parity error",
    10: "GATEWAY_PATH_UNAVAILABLE: the gateway has no path to the device id; check device_id",
    11: "GATEWAY_NO_RESPONSE: the device behind the gateway did not answer; check device_id "
        "and the serial line behind the gateway",
}


class ModbusError(DeviceIOError):
    """The Modbus device answered with an exception response.

    Attributes
    ----------
    channels : tuple of str
    code : int
        The Modbus exception code (2: illegal data address, ...).
    table : str
    address : int
    device_id : int
    """

    def __init__(self, message: str, *, channels: Sequence[str], code: int, table: str,
                 address: int, device_id: int) -> None:
        super().__init__(message, channels=channels, code=code)
        self.table = table
        self.address = address
        self.device_id = device_id


@dataclass(frozen=True)
class ModbusPoint:
    """Where a channel lives on the Modbus device.

    Parameters
    ----------
    address : int
        0-based address of the first object (the on-the-wire address).
    table : {"input", "holding", "discrete", "coil"} or None
        ``None``: the default for the channel kind (see the module docstring).
    dtype : {"uint16", "int16", "uint32", "int32", "float32", "bool"} or None
        ``None``: ``bool`` for bit tables, ``uint32`` for counters, else ``uint16``.
    scale, offset : float
        Engineering value ``= raw * scale + offset``.
    word_order : {"big", "little"}
        Of 32-bit types: ``"big"``: high word first (ABCD), ``"little"``: CDAB.
    device_id : int or None
        Modbus unit id; ``None``: the device's ``device_id``.
    """

    address: int
    table: str | None = None
    dtype: str | None = None
    scale: float = 1.0
    offset: float = 0.0
    word_order: str = "big"
    device_id: int | None = None

    @property
    def n_regs(self) -> int:
        return 1 if self.dtype == "bool" else DTYPES[self.dtype][0]


def _as_point(p: ModbusPoint | Mapping[str, Any] | int) -> ModbusPoint:
    if isinstance(p, ModbusPoint):
        return p
    if isinstance(p, bool):
        raise TypeError(f"a Modbus point must be a ModbusPoint, a mapping or an address, got {p!r}")
    if isinstance(p, int):
        return ModbusPoint(p)
    if isinstance(p, Mapping):
        return ModbusPoint(**p)
    raise TypeError(f"a Modbus point must be a ModbusPoint, a mapping of its fields or an int "
                    f"address, got {p!r}")


@dataclass(frozen=True)
class _Req:
    """One read request: a run of objects of one table on one device id."""

    device_id: int
    table: str
    start: int
    count: int
    items: tuple[tuple[ChannelSpec, ModbusPoint], ...]


class ModbusDaq(NetworkDaq):
    """A DAQ device over Modbus TCP (see the module docstring).

    Parameters
    ----------
    channels : sequence of ChannelSpec (or mappings of its fields)
    points : mapping
        ``{channel name: ModbusPoint | mapping of its fields | int address}``;
        every channel needs one.
    host : str
    port : int
    device_id : int
        Default Modbus unit id of the points.
    timeout : float
        Connect and response timeout per request, in seconds.
    max_gap : int
        Largest hole (in objects) a coalesced read may bridge; 0: only contiguous.
    reconnect, reconnect_timeout, backoff
        The link policy, see :mod:`hil.daq.link`.
    name, out_of_range
        See :class:`~hil.daq.device.DaqDevice`.
    """

    kind = "modbus"

    def __init__(self, channels: Iterable[ChannelSpec | Mapping[str, Any]], *,
                 points: Mapping[str, ModbusPoint | Mapping[str, Any] | int],
                 host: str = "127.0.0.1", port: int = 502, device_id: int = 1,
                 timeout: float = 1.0, max_gap: int = 0, reconnect: bool = True,
                 reconnect_timeout: float | None = None,
                 backoff: tuple[float, float] = (0.05, 1.0), name: str | None = None,
                 out_of_range: str = "raise") -> None:
        super().__init__(channels, name=name, out_of_range=out_of_range, reconnect=reconnect,
                         reconnect_timeout=reconnect_timeout, backoff=backoff)
        if not 0 <= device_id <= 255:
            raise ValueError(f"{self.where}: device_id must be in 0..255, got {device_id}")
        if not timeout > 0:
            raise ValueError(f"{self.where}: timeout must be > 0, got {timeout}")
        if max_gap < 0:
            raise ValueError(f"{self.where}: max_gap must be >= 0, got {max_gap}")
        self.host = host
        self.port = int(port)
        self.device_id = int(device_id)
        self.timeout = float(timeout)
        self.max_gap = int(max_gap)
        unknown = [n for n in points if n not in self._by_name]
        if unknown:
            self.channel(unknown[0])  # raises UnknownChannel listing the channels
        self.points: dict[str, ModbusPoint] = {}
        for spec in self.channels:
            if spec.name not in points:
                raise ValueError(f"{self.where}: channel {spec.name!r} ({spec.kind}) has no "
                                 f"Modbus point; add it to points=")
            self.points[spec.name] = self._check_point(spec, _as_point(points[spec.name]))
        self._client: Any = None
        self._pm: Any = None  # the pymodbus modules, once imported
        self._plans: dict[tuple[str, ...], list[_Req]] = {}

    # ------------------------------------------------------------ validation
    def _check_point(self, spec: ChannelSpec, p: ModbusPoint) -> ModbusPoint:
        where = f"{self.where}: channel {spec.name!r} ({spec.kind})"
        tables = _KIND_TABLES.get(spec.kind)
        if tables is None:
            raise ValueError(f"{where}: a {spec.kind} channel has no Modbus mapping; map duty "
                             f"and frequency as two 'ao' channels")
        table = p.table or tables[0]
        if table not in tables:
            raise ValueError(f"{where}: table {table!r} is not allowed; a {spec.kind} channel "
                             f"lives in: {', '.join(tables)}")
        bits = TABLES[table][1]
        dtype = p.dtype or ("bool" if bits else "uint32" if spec.kind == "counter" else "uint16")
        if bits and dtype != "bool":
            raise ValueError(f"{where}: a {table} holds bits; dtype must be 'bool', got "
                             f"{dtype!r}")
        if not bits and dtype not in DTYPES:
            raise ValueError(f"{where}: dtype {dtype!r} unknown; register types: "
                             f"{', '.join(DTYPES)}")
        if spec.kind == "counter" and (dtype == "float32" or p.scale != 1 or p.offset != 0):
            raise ValueError(f"{where}: a counter is an integer register (uint16/int16/uint32/"
                             f"int32) without scale/offset")
        if p.word_order not in ("big", "little"):
            raise ValueError(f"{where}: word_order must be 'big' or 'little', got "
                             f"{p.word_order!r}")
        if isinstance(p.address, bool) or not isinstance(p.address, int) \
                or not 0 <= p.address <= 0xFFFF:
            raise ValueError(f"{where}: address must be an int in 0..65535 (0-based), got "
                             f"{p.address!r}")
        n = 1 if bits else DTYPES[dtype][0]
        if p.address + n - 1 > 0xFFFF:
            raise ValueError(f"{where}: {dtype} at {p.address} runs past address 65535")
        if not (math.isfinite(p.scale) and p.scale != 0 and math.isfinite(p.offset)):
            raise ValueError(f"{where}: scale must be finite and non-zero, offset finite; got "
                             f"scale={p.scale}, offset={p.offset}")
        dev = self.device_id if p.device_id is None else p.device_id
        if not 0 <= dev <= 255:
            raise ValueError(f"{where}: device_id must be in 0..255, got {dev}")
        p = ModbusPoint(p.address, table, dtype, float(p.scale), float(p.offset), p.word_order,
                        dev)
        if spec.kind == "ao" and dtype in _INT_LIMITS:
            lo, hi = _INT_LIMITS[dtype]
            raws = [self._raw_of(p, v) for v in spec.range]
            if not all(lo <= r <= hi for r in raws):
                raise ValueError(f"{where}: the range {spec.range} maps to raw values {raws} "
                                 f"that do not fit {dtype} [{lo}, {hi}]; change scale/offset "
                                 f"or the data type")
        return p

    # -------------------------------------------------------------- encoding
    @staticmethod
    def _raw_of(p: ModbusPoint, value: float) -> float | int:
        x = (float(value) - p.offset) / p.scale
        return x if p.dtype == "float32" else math.floor(x + 0.5)

    @staticmethod
    def encode(p: ModbusPoint, raw: float | int) -> list[int]:
        """The registers (16-bit words, in address order) holding ``raw``."""
        b = struct.pack(">" + DTYPES[p.dtype][1], raw)
        words = [int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2)]
        return words[::-1] if p.word_order == "little" else words

    @staticmethod
    def decode(p: ModbusPoint, regs: Sequence[int]) -> float | int:
        """The raw value of the registers ``regs`` (in address order)."""
        words = list(regs)
        if p.word_order == "little":
            words.reverse()
        b = b"".join(int(w & 0xFFFF).to_bytes(2, "big") for w in words)
        return struct.unpack(">" + DTYPES[p.dtype][1], b)[0]

    def _value(self, spec: ChannelSpec, p: ModbusPoint, objs: Sequence[Any]) -> Any:
        if p.dtype == "bool":
            return bool(objs[0])
        raw = self.decode(p, objs)
        if spec.kind == "counter":
            return self._count_value(spec, int(raw))
        v = raw * p.scale + p.offset
        if spec.kind in ("ai", "frequency_in"):
            return self._saturate(spec, v)
        return v

    # ---------------------------------------------------------------- plans
    def _plan(self, specs: Sequence[ChannelSpec]) -> list[_Req]:
        key = tuple(s.name for s in specs)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        groups: dict[tuple[int, str], list[tuple[ChannelSpec, ModbusPoint]]] = {}
        seen: set[str] = set()
        for s in specs:
            if s.name in seen:
                continue
            seen.add(s.name)
            p = self.points[s.name]
            groups.setdefault((p.device_id, p.table), []).append((s, p))
        plan = []
        for (dev, table), items in sorted(groups.items()):
            items.sort(key=lambda it: it[1].address)
            limit = _MAX_COUNT[TABLES[table][1]]
            run: list[tuple[ChannelSpec, ModbusPoint]] = []
            start = end = 0
            for s, p in items:
                a, b = p.address, p.address + p.n_regs
                if run and a <= end + self.max_gap and max(end, b) - start <= limit:
                    run.append((s, p))
                    end = max(end, b)
                    continue
                if run:
                    plan.append(_Req(dev, table, start, end - start, tuple(run)))
                run, start, end = [(s, p)], a, b
            plan.append(_Req(dev, table, start, end - start, tuple(run)))
        self._plans[key] = plan
        return plan

    # -------------------------------------------------------------- link I/O
    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def _import(self) -> Any:
        if self._pm is None:
            who = f"{self.where} (the Modbus backend)"
            for sub in ("pymodbus.client", "pymodbus.exceptions", "pymodbus.pdu"):
                require(sub, who=who, package="pymodbus", extra="hil")
            self._pm = require("pymodbus", who=who, package="pymodbus", extra="hil")
        return self._pm

    def _connect(self) -> None:
        pm = self._import()
        if self._client is None:
            # retries=0: the link policy is ours (hil.daq.link), not pymodbus's
            self._client = pm.client.ModbusTcpClient(self.host, port=self.port,
                                                     timeout=self.timeout, retries=0)
        if not self._client.connect():
            raise ConnectionRefusedError(f"no Modbus TCP server answers at {self.address}")

    def _disconnect(self, lost: bool) -> None:
        if self._client is not None:
            self._client.close()

    def _is_link_error(self, exc: BaseException) -> bool:
        pm = self._pm
        if pm is None:
            return isinstance(exc, OSError)
        return isinstance(exc, OSError | pm.exceptions.ConnectionException
                          | pm.exceptions.ModbusIOException)

    def _connect_hint(self) -> str:
        return ("check the host and port, that the Modbus TCP server runs and that no firewall "
                "blocks the port")

    def _call(self, fn: str, *args: Any, **kw: Any) -> Any:
        client = self._client
        if client is None or not client.connected:
            # pymodbus would silently reconnect inside the request; the policy is ours
            raise self._pm.exceptions.ConnectionException(f"not connected to {self.address}")
        return getattr(client, fn)(*args, **kw)

    def _check(self, resp: Any, op: str, req: _Req | None, items: Sequence[tuple[ChannelSpec,
               ModbusPoint]], start: int, count: int, table: str, dev: int) -> None:
        if not resp.isError():
            return
        code = getattr(resp, "exception_code", None)
        if code is None:  # not an exception response: treat as a lost link
            raise self._pm.exceptions.ModbusIOException(f"{op}: unexpected response {resp!r}")
        names = [s.name for s, _ in items]
        what = TABLES[table][0]
        span = f"{what} {start}" if count == 1 else f"{what}s {start}..{start + count - 1}"
        chans = (f"channel {names[0]!r}" if len(names) == 1
                 else f"channels {', '.join(repr(n) for n in names)}")
        hint = _EXC_HINTS.get(int(code), "unknown exception code")
        raise ModbusError(f"{self.where}: {op} {chans} ({span}, device id {dev}) got Modbus "
                          f"exception {int(code)}: {hint}", channels=names, code=int(code),
                          table=table, address=start, device_id=dev)

    _READ_FN = {"coil": "read_coils", "discrete": "read_discrete_inputs",
                "holding": "read_holding_registers", "input": "read_input_registers"}

    def _read_req(self, req: _Req) -> dict[str, Any]:
        resp = self._call(self._READ_FN[req.table], req.start, count=req.count,
                          device_id=req.device_id)
        self._check(resp, "read", req, req.items, req.start, req.count, req.table,
                    req.device_id)
        objs = resp.bits if TABLES[req.table][1] else resp.registers
        if len(objs) < req.count:
            raise self._pm.exceptions.ModbusIOException(
                f"short response: {len(objs)} objects for {req.count} asked")
        out = {}
        for s, p in req.items:
            i = p.address - req.start
            out[s.name] = self._value(s, p, objs[i:i + p.n_regs])
        return out

    def _read_io(self, specs: Sequence[ChannelSpec]) -> dict[str, Any]:
        plan = self._plan(specs)
        out: dict[str, Any] = {}
        k = 0
        while k < len(plan):
            req = plan[k]
            try:
                out.update(self._read_req(req))
            except ModbusError:
                if len(req.items) == 1:
                    raise
                # find the channel at fault; keep the split plan if every part reads
                parts = [_Req(req.device_id, req.table, p.address, p.n_regs, ((s, p),))
                         for s, p in req.items]
                for part in parts:
                    out.update(self._read_req(part))
                log.info("%s: a coalesced read of %s %d..%d was refused but each channel "
                         "reads alone; reading them one by one from now on", self.where,
                         TABLES[req.table][0], req.start, req.start + req.count - 1)
                plan[k:k + 1] = parts
                k += len(parts)
                continue
            k += 1
        return out

    def _write_io(self, values: dict[str, Any]) -> None:
        groups: dict[tuple[int, str], list[tuple[int, list[Any], str]]] = {}
        for name, v in values.items():
            spec, p = self.channel(name), self.points[name]
            if p.dtype == "bool":
                objs: list[Any] = [bool(v)]
            else:
                objs = self.encode(p, self._raw_of(p, v))
            groups.setdefault((p.device_id, p.table), []).append((p.address, objs, spec.name))
        for (dev, table), items in sorted(groups.items()):
            items.sort()
            runs: list[tuple[int, list[Any], list[str]]] = []
            for addr, objs, name in items:
                if runs and runs[-1][0] + len(runs[-1][1]) == addr \
                        and len(runs[-1][1]) + len(objs) <= (1968 if table == "coil" else 123):
                    runs[-1][1].extend(objs)
                    runs[-1][2].append(name)
                else:
                    runs.append((addr, list(objs), [name]))
            for addr, objs, names in runs:
                if table == "coil":
                    resp = (self._call("write_coil", addr, objs[0], device_id=dev)
                            if len(objs) == 1 else
                            self._call("write_coils", addr, objs, device_id=dev))
                else:
                    resp = (self._call("write_register", addr, objs[0], device_id=dev)
                            if len(objs) == 1 else
                            self._call("write_registers", addr, objs, device_id=dev))
                items_named = [(self.channel(n), self.points[n]) for n in names]
                self._check(resp, "write", None, items_named, addr, len(objs), table, dev)


class ModbusDaqBackend(DeviceBackend):
    """:class:`~hil.backend.Backend` adapter of :class:`ModbusDaq`, registered as
    ``"modbus"``; keyword arguments other than the Backend ones go to
    :class:`ModbusDaq`."""

    kind = "modbus"
    device_class = ModbusDaq

