"""A DAQ device over OPC UA (asyncua): PLC and SCADA variables as channels.

:class:`OpcUaDaq` maps each declared :class:`~hil.daq.device.ChannelSpec` onto
an OPC UA variable node, given by its node id string (``"ns=2;s=Pump.Speed"``,
``"ns=2;i=5"``), optionally with a scale and offset (:class:`OpcUaPoint`).
asyncua is imported when the device is opened (``pip install 'cosim[hil]'``).
asyncua is asyncio-only; the device runs the client's event loop in a private
daemon thread, so :meth:`read` and :meth:`write` are ordinary blocking calls,
each bounded by ``timeout``::

    daq = OpcUaDaq([ChannelSpec("speed", "ai", (0, 3000), "rpm"),
                    ChannelSpec("speed_sp", "ao", (0, 3000), "rpm"),
                    ChannelSpec("run", "do")],
                   url="opc.tcp://plc:4840",
                   nodes={"speed": "ns=2;s=Pump.Speed", "speed_sp": "ns=2;s=Pump.SP",
                          "run": "ns=2;s=Pump.Run"})
    with daq:
        daq.write({"speed_sp": 1500.0, "run": True})
        daq.read()["speed"]

Channel kinds and their variables:

================  ===========================  =================================
kind              variable data type           value
================  ===========================  =================================
``ai``            any numeric                  ``raw * scale + offset``, float
``frequency_in``  any numeric                  as ``ai`` (Hz)
``ao``            any numeric                  written as ``(v - offset) /
                                               scale`` in the node's own type
                                               (integers rounded half up and
                                               range-checked)
``di`` / ``do``   Boolean (or numeric: != 0)   bool
``counter``       integer                      int, wrapping at ``2**bits``;
                                               ``reset`` is a software baseline
================  ===========================  =================================

All channels asked for are read in one Read service call; all values of a
``write`` go in one Write service call, each as a Variant of the node's data
type (read once per connection from its DataType attribute: writing a Python
float into an Int16 or Float node would otherwise be refused with
``BadTypeMismatch``).  No timestamps are written (some servers refuse them).

Errors:

* a bad status code for a node (unknown node id, not readable or writable,
  type mismatch) raises :class:`OpcUaError` (a
  :class:`~hil.daq.link.DeviceIOError`) naming the channel, the node id and the
  status; unknown node ids are already reported by ``open()``;
* a lost connection, a closed session or a request that times out raises
  :class:`~hil.errors.Disconnected`; the next call reconnects with a new
  session (bounded backoff, see :mod:`hil.daq.link`), so a restarted server is
  survived; every read lost meanwhile is counted in
  ``link_counters.lost_reads``.

Input readings outside the channel range are clipped to it and counted in
``counters.saturations``.

Limitations
-----------
* Polling only: no subscriptions or monitored items (one Read per ``read()``).
* No security: ``SecurityPolicy#None``, anonymous user only (no certificates,
  no user name/password).
* Scalar variables only: no arrays, structures, methods or events.
* ``pwm_out`` has no mapping: map duty and frequency as two ``ao`` channels.
* ``resolution_bits`` is not applied to ai/ao values.
* Each ``read``/``write`` crosses threads (caller -> event loop thread -> caller),
  which costs some tens of microseconds on top of the network round trip.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import threading
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import BackendError, require
from .adapter import DeviceBackend
from .device import ChannelSpec
from .link import DeviceIOError, NetworkDaq

__all__ = ["OpcUaDaq", "OpcUaPoint", "OpcUaError", "OpcUaDaqBackend"]

log = logging.getLogger("hil.daq")

# status codes that mean "the connection/session is gone", not "this node is wrong"
_LINK_STATUS = frozenset({
    "BadSessionIdInvalid", "BadSessionClosed", "BadSessionNotActivated",
    "BadSecureChannelClosed", "BadSecureChannelIdInvalid", "BadConnectionClosed",
    "BadServerNotConnected", "BadCommunicationError", "BadNotConnected", "BadTimeout",
    "BadShutdown", "BadServerHalted", "BadDisconnect", "BadConnectionRejected",
    "BadTcpInternalError", "BadRequestTimeout", "BadTooManySessions",
})
_INT_LIMITS = {
    "SByte": (-(2 ** 7), 2 ** 7 - 1), "Byte": (0, 2 ** 8 - 1),
    "Int16": (-(2 ** 15), 2 ** 15 - 1), "UInt16": (0, 2 ** 16 - 1),
    "Int32": (-(2 ** 31), 2 ** 31 - 1), "UInt32": (0, 2 ** 32 - 1),
    "Int64": (-(2 ** 63), 2 ** 63 - 1), "UInt64": (0, 2 ** 64 - 1),
}
_FLOATS = ("Float", "Double")
_KINDS = ("ai", "ao", "di", "do", "counter", "frequency_in")


class OpcUaError(DeviceIOError):
    """The OPC UA server refused a read or write of a node (bad status code).

    Attributes
    ----------
    channels : tuple of str
    code : int
        The OPC UA status code value.
    status : str
        Its name (``"BadNodeIdUnknown"``, ...).
    """

    def __init__(self, message: str, *, channels: Sequence[str], code: int | None,
                 status: str) -> None:
        super().__init__(message, channels=channels, code=code)
        self.status = status


@dataclass(frozen=True)
class OpcUaPoint:
    """Where a channel lives on the server: ``node`` id string, and
    engineering value ``= raw * scale + offset`` (numeric kinds only)."""

    node: str
    scale: float = 1.0
    offset: float = 0.0


def _as_point(p: OpcUaPoint | Mapping[str, Any] | str) -> OpcUaPoint:
    if isinstance(p, OpcUaPoint):
        return p
    if isinstance(p, str):
        return OpcUaPoint(p)
    if isinstance(p, Mapping):
        return OpcUaPoint(**p)
    raise TypeError(f"an OPC UA point must be a node id string, an OpcUaPoint or a mapping of "
                    f"its fields, got {p!r}")


class _LoopThread:
    """An asyncio event loop in a daemon thread; ``run(coro, timeout)`` blocks."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:
                pending = asyncio.all_tasks(self.loop)
                for t in pending:
                    t.cancel()
                if pending:
                    self.loop.run_until_complete(asyncio.gather(*pending,
                                                                return_exceptions=True))
            finally:
                self.loop.close()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float) -> Any:
        """Run ``coro`` on the loop; raise :class:`TimeoutError` after ``timeout`` s
        (the coroutine is cancelled)."""
        fut = asyncio.run_coroutine_threadsafe(asyncio.wait_for(coro, timeout), self.loop)
        try:
            return fut.result(timeout + 1.0)  # wait_for cancels first; +1 s of slack
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise TimeoutError(f"no answer within {timeout} s") from None

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self.thread:
            self.thread.join(5.0)


class OpcUaDaq(NetworkDaq):
    """A DAQ device over OPC UA (see the module docstring).

    Parameters
    ----------
    channels : sequence of ChannelSpec (or mappings of its fields)
    url : str
        ``"opc.tcp://host:port[/path]"``.
    nodes : mapping
        ``{channel name: node id string | OpcUaPoint | mapping of its fields}``;
        every channel needs one.
    timeout : float
        Bound of every ``read``/``write`` and of each request, in seconds.
    connect_timeout : float
        Bound of connecting (socket, secure channel, session, node types).
    session_timeout : float
        Requested session lifetime on the server, in seconds.
    reconnect, reconnect_timeout, backoff
        The link policy, see :mod:`hil.daq.link`.
    name, out_of_range
        See :class:`~hil.daq.device.DaqDevice`.
    """

    kind = "opcua"

    def __init__(self, channels: Iterable[ChannelSpec | Mapping[str, Any]], *, url: str,
                 nodes: Mapping[str, OpcUaPoint | Mapping[str, Any] | str],
                 timeout: float = 2.0, connect_timeout: float = 5.0,
                 session_timeout: float = 30.0, reconnect: bool = True,
                 reconnect_timeout: float | None = None,
                 backoff: tuple[float, float] = (0.05, 1.0), name: str | None = None,
                 out_of_range: str = "raise") -> None:
        self.url = url
        super().__init__(channels, name=name, out_of_range=out_of_range, reconnect=reconnect,
                         reconnect_timeout=reconnect_timeout, backoff=backoff)
        if not url.startswith("opc.tcp://"):
            raise ValueError(f"{self.where}: url must start with 'opc.tcp://', got {url!r}")
        if not (timeout > 0 and connect_timeout > 0 and session_timeout > 0):
            raise ValueError(f"{self.where}: timeouts must be > 0")
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        self.session_timeout = float(session_timeout)
        unknown = [n for n in nodes if n not in self._by_name]
        if unknown:
            self.channel(unknown[0])  # raises UnknownChannel listing the channels
        self.points: dict[str, OpcUaPoint] = {}
        for spec in self.channels:
            where = f"{self.where}: channel {spec.name!r} ({spec.kind})"
            if spec.kind not in _KINDS:
                raise ValueError(f"{where}: a {spec.kind} channel has no OPC UA mapping; map "
                                 f"duty and frequency as two 'ao' channels")
            if spec.name not in nodes:
                raise ValueError(f"{where}: no node id; add it to nodes=")
            p = _as_point(nodes[spec.name])
            if not isinstance(p.node, str) or not p.node:
                raise ValueError(f"{where}: node must be a node id string, got {p.node!r}")
            if not (math.isfinite(p.scale) and p.scale != 0 and math.isfinite(p.offset)):
                raise ValueError(f"{where}: scale must be finite and non-zero, offset finite; "
                                 f"got scale={p.scale}, offset={p.offset}")
            if spec.kind in ("di", "do", "counter") and (p.scale != 1 or p.offset != 0):
                raise ValueError(f"{where}: a {spec.kind} channel takes no scale/offset")
            self.points[spec.name] = p
        self._ua: Any = None  # the asyncua module, once imported
        self._loop: _LoopThread | None = None
        self._client: Any = None
        self._nodes: dict[str, Any] = {}  # name -> asyncua Node
        self._vtypes: dict[str, Any] = {}  # name -> ua.VariantType

    @property
    def address(self) -> str:
        return getattr(self, "url", "?")

    def _connect_hint(self) -> str:
        return ("check the URL (host, port, path), that the OPC UA server runs and accepts "
                "SecurityPolicy#None with anonymous login")

    # ---------------------------------------------------------------- connect
    def _import(self) -> Any:
        if self._ua is None:
            who = f"{self.where} (the OPC UA backend)"
            # (ua_utils: data_type_to_variant_type)
            require("asyncua.common.ua_utils", who=who, package="asyncua", extra="hil")
            self._ua = require("asyncua", who=who, package="asyncua", extra="hil")
        return self._ua

    def _connect(self) -> None:
        self._import()
        if self._loop is None:
            self._loop = _LoopThread(f"hil-opcua-{self.name or self.url}")
        self._loop.run(self._aconnect(), self.connect_timeout)

    async def _aconnect(self) -> None:
        asyncua = self._ua
        ua = asyncua.ua
        client = asyncua.Client(self.url, timeout=self.timeout)
        client.session_timeout = int(self.session_timeout * 1000)
        self._client = client
        await client.connect()
        nodes = {n: client.get_node(p.node) for n, p in self.points.items()}
        names = list(nodes)
        dts = await client.read_attributes([nodes[n] for n in names], ua.AttributeIds.DataType)
        bad = [(n, dv.StatusCode) for n, dv in zip(names, dts, strict=True)
               if not dv.StatusCode.is_good()]
        if bad:
            lines = "; ".join(f"{n!r} -> {self.points[n].node!r}: {st.name}" for n, st in bad)
            raise BackendError(f"{self.where}: node(s) not usable: {lines}; check the node ids "
                               f"(namespace index and identifier) by browsing the server")
        vtypes: dict[str, Any] = {}
        cache: dict[Any, Any] = {}
        for n, dv in zip(names, dts, strict=True):
            dt = dv.Value.Value  # NodeId of the data type
            if dt not in cache:
                if dt.NamespaceIndex == 0 and isinstance(dt.Identifier, int) \
                        and 1 <= dt.Identifier <= 25:
                    cache[dt] = ua.VariantType(dt.Identifier)
                else:
                    cache[dt] = await asyncua.common.ua_utils.data_type_to_variant_type(
                        client.get_node(dt))
            vtypes[n] = cache[dt]
        for n, vt in vtypes.items():
            spec = self._by_name[n]
            tname = getattr(vt, "name", str(vt))
            ok = (tname in _INT_LIMITS or tname in _FLOATS
                  or (tname == "Boolean" and spec.kind in ("di", "do")))
            if spec.kind == "counter":
                ok = tname in _INT_LIMITS
            if not ok:
                await self._adisconnect(lost=False)
                raise BackendError(f"{self.where}: channel {n!r} ({spec.kind}): node "
                                   f"{self.points[n].node!r} is of type {tname}, which a "
                                   f"{spec.kind} channel cannot use")
        self._nodes, self._vtypes = nodes, vtypes

    async def _adisconnect(self, lost: bool) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        if lost:
            # the peer is gone: no CloseSession, just stop the tasks and drop the socket
            client.uaclient.request_disconnect()
            for attr in ("_stale_watchdog_task", "_supervisor_task", "_renew_channel_task",
                         "_monitor_server_task"):
                task = getattr(client, attr, None)
                if task is not None and not task.done():
                    task.cancel()
            client.disconnect_socket()
        else:
            try:
                await asyncio.wait_for(client.disconnect(), 2.0)
            except Exception:  # noqa: BLE001 - best effort goodbye
                client.disconnect_socket()

    def _disconnect(self, lost: bool) -> None:
        if self._loop is not None:
            self._loop.run(self._adisconnect(lost), 3.0)

    def _open(self) -> None:
        try:
            super()._open()
        except BaseException:
            self._stop_loop()
            raise

    def _close(self) -> None:
        super()._close()
        self._stop_loop()

    def _stop_loop(self) -> None:
        if self._loop is not None:
            loop, self._loop = self._loop, None
            loop.stop()

    def _is_link_error(self, exc: BaseException) -> bool:
        if isinstance(exc, OSError | TimeoutError | asyncio.TimeoutError | EOFError
                      | concurrent.futures.CancelledError | asyncio.CancelledError):
            return True  # ConnectionError is an OSError
        ua = self._ua.ua if self._ua is not None else None
        if ua is not None and isinstance(exc, ua.UaStatusCodeError):
            return ua.StatusCode(exc.code).name in _LINK_STATUS
        return False

    # -------------------------------------------------------------------- I/O
    def _run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        if self._client is None or self._loop is None:
            coro.close()
            raise ConnectionError(f"not connected to {self.url}")
        return self._loop.run(coro, self.timeout)

    def _status_error(self, op: str, names: Sequence[str], status: Any) -> OpcUaError:
        name = status.name
        if name in _LINK_STATUS:
            return self._ua.ua.UaStatusCodeError(status.value)  # a link error after all
        nodes = ", ".join(f"{n!r} ({self.points[n].node})" for n in names)
        doc = getattr(status, "doc", "") or ""
        return OpcUaError(f"{self.where}: {op} of channel {nodes} refused: {name}"
                          f"{': ' + doc if doc else ''}; check the node id, its access level "
                          f"and its data type", channels=names, code=status.value, status=name)

    def _read_io(self, specs: Sequence[ChannelSpec]) -> dict[str, Any]:
        names = list(dict.fromkeys(s.name for s in specs))
        client = self._client
        dvs = self._run(client.read_attributes([self._nodes[n] for n in names],
                                               self._ua.ua.AttributeIds.Value))
        out: dict[str, Any] = {}
        for n, dv in zip(names, dvs, strict=True):
            if not dv.StatusCode.is_good():
                raise self._status_error("read", [n], dv.StatusCode)
            raw = dv.Value.Value if dv.Value is not None else None
            spec, p = self._by_name[n], self.points[n]
            if raw is None:
                raise OpcUaError(f"{self.where}: read of channel {n!r} ({p.node}): the node "
                                 f"has no value (null)", channels=[n], code=None,
                                 status="Null")
            if spec.kind in ("di", "do"):
                out[n] = bool(raw)
            elif spec.kind == "counter":
                out[n] = self._count_value(spec, int(raw))
            else:
                v = float(raw) * p.scale + p.offset
                out[n] = self._saturate(spec, v) if spec.kind in ("ai", "frequency_in") else v
        return out

    def _raw(self, name: str, value: Any) -> Any:
        spec, p, vt = self._by_name[name], self.points[name], self._vtypes[name]
        tname = vt.name
        if spec.kind == "do":
            return bool(value) if tname == "Boolean" else int(bool(value))
        x = (float(value) - p.offset) / p.scale
        if tname in _FLOATS:
            return x
        r = math.floor(x + 0.5)
        lo, hi = _INT_LIMITS[tname]
        if not lo <= r <= hi:
            raise OpcUaError(f"{self.where}: write of channel {name!r} ({p.node}): value "
                             f"{value!r} is raw {r}, outside the node type {tname} "
                             f"[{lo}, {hi}]; change scale/offset or the channel range",
                             channels=[name], code=None, status="OutOfRange")
        return r

    def _write_io(self, values: dict[str, Any]) -> None:
        ua = self._ua.ua
        names = list(values)
        dvs = [ua.DataValue(ua.Variant(self._raw(n, values[n]), self._vtypes[n]))
               for n in names]
        client = self._client
        results = self._run(client.uaclient.write_attributes(
            [self._nodes[n].nodeid for n in names], dvs, ua.AttributeIds.Value))
        for n, st in zip(names, results, strict=True):
            if not st.is_good():
                raise self._status_error("write", [n], st)


class OpcUaDaqBackend(DeviceBackend):
    """:class:`~hil.backend.Backend` adapter of :class:`OpcUaDaq`, registered as
    ``"opcua"``; keyword arguments other than the Backend ones go to
    :class:`OpcUaDaq`."""

    kind = "opcua"
    device_class = OpcUaDaq
