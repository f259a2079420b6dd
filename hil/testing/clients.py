"""The diagnostic and calibration clients of a rig: ``rig.uds`` (udsoncan) and ``rig.xcp``
(pyxcp), named in the rig file's ``[uds]`` and ``[xcp]`` sections.

::

    [uds]
    client = "hil.testing.clients:uds_client"
    args = { config = "hil.diag.acc:client_config" }   # udsoncan's DID codecs

    [xcp]
    client = "hil.testing.clients:xcp_client"
    args = { a2l = "{work_dir}/acc_ecu.a2l" }           # the names and addresses

Both reach the controller on the rig's bus (``bus = "can"`` in ``args`` to choose one;
its interface and channel, and on a real-time rig its python-can options).

:class:`UdsClient` (``rig.uds``) is udsoncan's ``Client`` on can-isotp
(:func:`hil.diag.client.open_client`) with a few shortcuts; ``rig.uds.client`` is the
udsoncan ``Client`` itself for everything else:

===============================  =============================================================
``read_dtcs(mask=0x0D)``         ReadDTCInformation 0x02: ``{dtc: status byte}`` of the DTCs
                                 whose status has a bit of ``mask`` (default testFailed,
                                 pendingDTC, confirmedDTC: what a tester lists as stored)
``supported_dtcs()``             ReadDTCInformation 0x0A: every DTC, whatever its status
``clear_dtcs(group=0xFFFFFF)``   ClearDiagnosticInformation in the extended session (0x10
                                 0x03 first, the default session after)
``read_did(did)``                ReadDataByIdentifier: the value by the config's codec
===============================  =============================================================

:class:`XcpClient` (``rig.xcp``) is a connected :class:`pyxcp.Master` (``rig.xcp.master``)
with the controller's variables by their A2L names (the A2L read by pya2ldb):

===============================  =============================================================
``read(name)``                   SHORT_UPLOAD of a CHARACTERISTIC or MEASUREMENT (float32)
``write(name, value)``           SET_MTA + DOWNLOAD of a CHARACTERISTIC (float32; the slave
                                 checks its limits: an error packet raises pyxcp's
                                 ``XcpResponseError``); it acts from the controller's next
                                 frame
``with daq(names) as rec:``      a dynamic DAQ list of ``names`` on the controller's event,
                                 started at the ``with`` and stopped at its end; ``rec`` is a
                                 :class:`DaqRecording`: ``t`` (the controller's clock [s]),
                                 ``rec[name]`` (the samples), ``lost`` (gaps in the slave's
                                 timestamps)
===============================  =============================================================

Limitations: FLOAT32_IEEE variables only (the A2L of :mod:`hil.xcp` has nothing else); one
DAQ list at a time, event channel 0; a DAQ sample's absolute time is the slave's clock
read (GET_DAQ_CLOCK) before the list starts plus one event cycle: exact in lock-step, on
a real-time rig the controller runs meanwhile, so it may be a few cycles off there
(relative times are the slave's own, exact); reading the A2L takes pya2ldb about a second.
"""

from __future__ import annotations

import contextlib
import struct
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .rig_loop import fill, load_function

__all__ = ["UdsClient", "XcpClient", "XcpVariable", "DaqRecording", "uds_client",
           "xcp_client", "read_a2l", "STORED_MASK"]

#: testFailed | pendingDTC | confirmedDTC: the DTCs a tester lists as stored
STORED_MASK = 0x0D
_F32 = struct.Struct("<f")


def _bus_args(rig: Any, bus: str | None) -> tuple[str, str, dict]:
    iface, ch = rig._loop.where(bus)
    name = bus or next(iter(rig.spec.buses))
    opts = dict(rig.spec.buses[name].options) if not rig._loop.virtual else {}
    return iface, ch, opts


class UdsClient:
    """udsoncan's ``Client`` (:attr:`client`) with the shortcuts of the module docstring."""

    def __init__(self, client: Any, closer: Any) -> None:
        self.client = client
        self._closer = closer

    def read_dtcs(self, mask: int = STORED_MASK) -> dict[int, int]:
        r = self.client.get_dtc_by_status_mask(int(mask))
        return {d.id: d.status.get_byte_as_int() for d in r.service_data.dtcs}

    def supported_dtcs(self) -> dict[int, int]:
        r = self.client.get_supported_dtc()
        return {d.id: d.status.get_byte_as_int() for d in r.service_data.dtcs}

    def clear_dtcs(self, group: int = 0xFFFFFF) -> None:
        self.client.change_session(3)
        try:
            self.client.clear_dtc(int(group))
        finally:
            self.client.change_session(1)

    def read_did(self, did: int) -> Any:
        return self.client.read_data_by_identifier_first(int(did))

    def close(self) -> None:
        if self._closer is not None:
            self._closer.close()
            self._closer = None


def uds_client(rig: Any, *, bus: str | None = None, config: Any = None,
               timeout_s: float = 2.0, request_id: int | None = None,
               response_id: int | None = None) -> UdsClient:
    """``[uds] client``: a :class:`UdsClient` on the rig's bus; ``config``: udsoncan client
    settings, a dict or ``"module:function"`` giving one (the DID codecs, e.g.
    :func:`hil.diag.acc.client_config`)."""
    from ..diag.client import open_client
    from ..diag.server import REQUEST_ID, RESPONSE_ID
    if isinstance(config, str):
        config = load_function(config, f"rig file {rig.spec.path} [uds] args.config")()
    iface, ch, opts = _bus_args(rig, bus)
    stack = contextlib.ExitStack()
    client = stack.enter_context(open_client(
        iface, ch, config=config, timeout_s=timeout_s, bus_options=opts,
        request_id=REQUEST_ID if request_id is None else int(request_id),
        response_id=RESPONSE_ID if response_id is None else int(response_id)))
    return UdsClient(client, stack)


@dataclass(frozen=True)
class XcpVariable:
    """One A2L entry: a CHARACTERISTIC (``writable``) or a MEASUREMENT."""

    name: str
    address: int
    writable: bool
    unit: str
    lo: float
    hi: float


def read_a2l(path: Any) -> dict[str, XcpVariable]:
    """The CHARACTERISTICs and MEASUREMENTs of an A2L file (pya2ldb), FLOAT32_IEEE only."""
    import logging
    try:
        import pya2l
        from pya2l import model
    except ImportError as exc:
        from ..errors import DriverMissing
        raise DriverMissing("reading an A2L file needs pya2ldb: pip install pya2ldb (the "
                            "'hil-test' extra)") from exc
    logging.getLogger("pya2l").setLevel(logging.ERROR)
    db = pya2l.import_a2l(str(path), in_memory=True, progress_bar=False, loglevel="ERROR")
    units = {c.name: (c.unit or "") for c in db.query(model.CompuMethod).all()}
    layouts = {r.name: r.fnc_values.datatype for r in db.query(model.RecordLayout).all()
               if r.fnc_values is not None}
    out: dict[str, XcpVariable] = {}
    for c in db.query(model.Characteristic).all():
        dep = getattr(c.deposit, "name", c.deposit)
        if c.type != "VALUE" or layouts.get(dep) != "FLOAT32_IEEE":
            continue  # only scalar float32 values (module docstring)
        out[c.name] = XcpVariable(c.name, int(c.address), True, units.get(c.conversion, ""),
                                  float(c.lowerLimit), float(c.upperLimit))
    for m in db.query(model.Measurement).all():
        if m.datatype != "FLOAT32_IEEE" or m.ecu_address is None:
            continue
        out[m.name] = XcpVariable(m.name, int(m.ecu_address.address), False,
                                  units.get(m.conversion, ""), float(m.lowerLimit),
                                  float(m.upperLimit))
    return out


class DaqRecording:
    """The samples of one DAQ list (:meth:`XcpClient.daq`), filled when its ``with`` ends:
    ``t`` the event times on the controller's clock [s], ``rec[name]`` the values
    (float32 as float64), ``slave_ns`` the slave's timestamps (ns since the first sample),
    ``lost`` the samples missing between them."""

    def __init__(self, names: list[str], units: dict[str, str]) -> None:
        self.names, self.units = names, units
        self.t = np.zeros(0)
        self.slave_ns = np.zeros(0, dtype=np.int64)
        self.values: dict[str, np.ndarray] = {n: np.zeros(0) for n in names}
        self.lost = 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[name]

    def __len__(self) -> int:
        return len(self.t)


class XcpClient:
    """A connected pyxcp master (:attr:`master`) and the A2L's variables (module
    docstring)."""

    def __init__(self, master: Any, variables: dict[str, XcpVariable], closer: Any) -> None:
        self.master, self.variables, self._closer = master, variables, closer
        self._daq_active = False

    @property
    def names(self) -> list[str]:
        return list(self.variables)

    def variable(self, name: str) -> XcpVariable:
        try:
            return self.variables[name]
        except KeyError:
            import difflib
            close = difflib.get_close_matches(name, list(self.variables), n=1)
            raise KeyError(f"rig.xcp: no variable {name!r} in the A2L; names: "
                           f"{', '.join(self.variables)}"
                           + (f"; did you mean {close[0]!r}?" if close else "")) from None

    def read(self, name: str) -> float:
        v = self.variable(name)
        return float(_F32.unpack(self.master.shortUpload(4, v.address))[0])

    def write(self, name: str, value: float) -> None:
        v = self.variable(name)
        if not v.writable:
            raise ValueError(f"rig.xcp.write: {name} is a MEASUREMENT (read only); the "
                             f"calibratable names: "
                             f"{', '.join(n for n, x in self.variables.items() if x.writable)}")
        self.master.setMta(v.address)
        self.master.download(_F32.pack(float(value)))

    @contextlib.contextmanager
    def daq(self, names: Iterable[str], *, prescaler: int = 1) -> Iterator[DaqRecording]:
        """A DAQ list of ``names`` from the ``with`` to its end (module docstring)."""
        from pyxcp.daq_stim import event_channel_cycle_to_ns

        from ..xcp.master import daq_collector, daq_list
        names = list(names)
        if not names:
            raise ValueError("rig.xcp.daq: name at least one variable")
        if self._daq_active:
            raise RuntimeError("rig.xcp.daq: one DAQ list at a time (end the other first)")
        vs = [self.variable(n) for n in names]
        rec = DaqRecording(names, {v.name: v.unit for v in vs})
        pol = daq_collector([daq_list("rig", [(v.name, v.address) for v in vs],
                                      prescaler=int(prescaler))])
        m = self.master
        with m.transport.policy_lock:  # pyxcp binds one policy per master: this list's
            m.transport.policy = pol
        pol.xcp_master = m
        self._daq_active = True
        try:
            info = m.getDaqEventInfo(0)
            cycle_s = event_channel_cycle_to_ns(info.eventChannelTimeCycle,
                                                info.eventChannelTimeUnit) * 1e-9
            pol.setup()
            clock = m.getDaqClock().timestamp * pol.ts_scale_factor * 1e-9
            pol.start()
            try:
                yield rec
            finally:
                pol.stop()
            _settle(pol)
        finally:
            self._daq_active = False
        rows = pol.rows
        ns = np.array([r[2] for r in rows], dtype=np.int64)
        rec.slave_ns = ns
        rec.t = clock + cycle_s * prescaler + ns * 1e-9
        for j, n in enumerate(names):
            rec.values[n] = np.array([r[3][j] for r in rows], float)
        from ..xcp.master import lost_samples
        rec.lost = lost_samples(list(ns), cycle_s * prescaler)

    def close(self) -> None:
        if self._closer is not None:
            self._closer.close()
            self._closer = None


def _settle(pol: Any, quiet_s: float = 0.2, guard_s: float = 60.0) -> None:
    """Until pyxcp's listener stopped adding samples (they are on the bus already)."""
    end = time.monotonic() + guard_s
    n = -1
    while len(pol.rows) != n and time.monotonic() < end:
        n = len(pol.rows)
        time.sleep(quiet_s)


def xcp_client(rig: Any, *, a2l: str, bus: str | None = None, cmd_id: int | None = None,
               res_id: int | None = None, timeout_s: float = 2.0) -> XcpClient:
    """``[xcp] client``: a connected :class:`XcpClient` on the rig's bus; ``a2l``: the
    controller's A2L file (``{work_dir}``, ``{rig_dir}`` filled in; relative: to the rig
    file's folder)."""
    import os

    from ..xcp.can_port import CMD_ID, RES_ID
    from ..xcp.master import open_master
    path = fill(a2l, rig._loop.fills())
    if not os.path.isabs(path):
        path = str(rig.spec.folder / path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"rig file {rig.spec.path} [xcp] args.a2l: no A2L file "
                                f"{path} (does the controller write it? examples/acc_ecu.py "
                                "--xcp --a2l PATH)")
    variables = read_a2l(path)
    iface, ch, opts = _bus_args(rig, bus)
    master = open_master(iface, ch, cmd_id=CMD_ID if cmd_id is None else int(cmd_id),
                         res_id=RES_ID if res_id is None else int(res_id),
                         timeout_s=timeout_s, bitrate=int(opts.get("bitrate", 500_000)))
    stack = contextlib.ExitStack()
    stack.enter_context(master)
    try:
        master.connect()
    except BaseException:
        stack.close()
        raise
    stack.callback(_disconnect, master)
    return XcpClient(master, variables, stack)


def _disconnect(master: Any) -> None:
    with contextlib.suppress(Exception):
        master.disconnect()

