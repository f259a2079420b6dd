"""pyxcp as the master of an XCP-on-CAN slave: configuration and a DAQ collector.

pyxcp (``pip install pyxcp``; tested with 0.29.20 on Python 3.11 and python-can 4.6)
is configured with traitlets; :func:`open_master` builds that configuration for a
python-can interface (``virtual`` in one process, ``udp_multicast`` between processes,
a real interface on a rig) and returns a :class:`pyxcp.Master`, not yet connected::

    from hil.xcp.master import open_master, daq_collector
    with open_master("virtual", "xcp0") as x:
        x.connect()
        x.identifier(1)                     # the A2L name
        x.setMta(0x00010000); x.upload(4)   # a float32 parameter

:func:`daq_collector` is a :class:`pyxcp.daq_stim.DaqOnlinePolicy` that keeps every
sample (``rows``: ``(list, t_rx_ns, t_slave_ns, values)``); pyxcp unwraps the slave's
2-byte timestamps into nanoseconds since the first sample.

pyxcp quirks met here: importing it installs rich's traceback handler and pretty
printer as ``sys.excepthook`` and ``sys.displayhook`` (both restored here); a DAQ policy
given a ``logger`` lacks ``pid_off`` (set here); error packets raise
:class:`pyxcp.types.XcpResponseError` only with ``disable_error_handling`` (set here;
pyxcp's own handling would repeat or SYNCH).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from ..errors import require
from .can_port import CMD_ID, RES_ID


def _pyxcp() -> Any:
    hooks = sys.excepthook, sys.displayhook
    try:
        return require("pyxcp", who="hil.xcp's master helpers", package="pyxcp",
                       extra="hil-test")
    finally:  # pyxcp installs rich's traceback and pretty-print hooks at import
        sys.excepthook, sys.displayhook = hooks


def open_master(interface: str, channel: str, *, cmd_id: int = CMD_ID,
                res_id: int = RES_ID, policy: Any = None, timeout_s: float = 2.0,
                error_handling: bool = False, bitrate: int = 500_000) -> Any:
    """A :class:`pyxcp.Master` on CAN (module docstring); ``error_handling``: pyxcp's
    own (retries, SYNCH) instead of raising on an error packet; ``bitrate``: for a
    real interface (the software buses have none)."""
    _pyxcp()
    from pyxcp import Master
    from pyxcp.config import General, Transport
    from traitlets.config import Config
    c = Config()
    c.General.disable_error_handling = not error_handling
    c.Transport.layer = "CAN"
    c.Transport.timeout = float(timeout_s)
    c.Transport.Can.interface = interface
    c.Transport.Can.channel = channel
    c.Transport.Can.can_id_master = int(cmd_id)
    c.Transport.Can.can_id_slave = int(res_id)
    if interface not in ("virtual", "udp_multicast"):
        c.Transport.Can.bitrate = int(bitrate)
    if interface == "udp_multicast":  # hop limit 0, as the slave's bus: the host only
        c.Udp_Multicast.hop_limit = 0

    class _App:
        general = General(config=c)
        transport = Transport(config=c)
    logging.getLogger("pyxcp").setLevel(logging.ERROR)
    return Master("can", config=_App(), policy=policy)


def daq_list(name: str, variables: list, *, prescaler: int = 1, timestamps: bool = True,
             event: int = 0) -> Any:
    """A pyxcp DAQ list of float32 ``variables``: ``[(name, address), ...]``."""
    _pyxcp()
    from pyxcp.daq_stim import DaqList
    return DaqList(name=name, event_num=event, stim=False, enable_timestamps=timestamps,
                   measurements=[(n, int(a), 0, "F32") for n, a in variables],
                   priority=0, prescaler=prescaler)


def daq_collector(lists: list) -> Any:
    """A DAQ policy keeping every sample in ``rows`` (module docstring)."""
    _pyxcp()
    from pyxcp.daq_stim import DaqOnlinePolicy

    class DaqCollector(DaqOnlinePolicy):
        def initialize(self) -> None:
            self.rows: list = []

        def finalize(self) -> None:
            pass

        def on_daq_list(self, daq_list: int, ts0: int, ts1: int, payload: list) -> None:
            self.rows.append((daq_list, ts0, ts1, list(payload)))

    pol = DaqCollector(lists, logger=logging.getLogger("hil.xcp.daq"))
    pol.pid_off = False
    pol.rows = []
    return pol


def lost_samples(slave_ns: list, period_s: float) -> int:
    """Samples missing between consecutive slave timestamps (each gap of ``n`` cycles
    is ``n - 1`` lost)."""
    per = period_s * 1e9
    lost = 0
    for a, b in zip(slave_ns, slave_ns[1:]):
        lost += max(0, round((b - a) / per) - 1)
    return lost
