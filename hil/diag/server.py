"""A UDS server on ISO-TP over a python-can bus, in a thread of its own.

:class:`UdsServer` opens its own python-can bus on the controller's interface and channel
(through :class:`hil.can.CanBackend`, so a ``udp_multicast`` group is isolated as the
controller's own bus is), with an acceptance filter for the request id, and runs
can-isotp's :class:`isotp.CanStack` on it (normal 11-bit addressing: requests on
:data:`REQUEST_ID`, responses on :data:`RESPONSE_ID`, the classic first physical ECU
pair of ISO 15765-4).  A thread takes each complete request from the stack, answers it
with a :class:`hil.diag.uds.UdsHandler` and sends the response.

Why a thread and not a poll in the controller's frame: ISO-TP's flow control has its own
deadlines (a multi-frame response waits for the tester's flow control frame, the
tester's consecutive frames come at its STmin) that do not follow the controller's
period; and an answer needs no value of the frame but what the monitors already stored
(the fault memory, the last live values: both read under a lock or as one reference).
The frame's share is the monitors' update only (:class:`hil.diag.acc.AccMonitor`, its
cost per frame in :meth:`~hil.diag.acc.AccMonitor.cost`).  The threads (can-isotp's two,
this one) block on the bus or a queue between requests; started before the real-time
runner, they are among the helper threads :mod:`hil.rtsetup` puts one SCHED_FIFO level
below the frame where that is permitted.

:data:`ISOTP_PARAMS` are the ISO-TP parameters of both sides (frames padded to 8 bytes
with 0xCC, block size 8, STmin 0); :func:`hil.diag.client.open_client` uses them too.

Limitations: classic CAN (8-byte frames) with 11-bit ids only; the server sees the bus it
opened itself, not the controller's backend: a bus-off injected into the controller's
backend (:class:`hil.faults.FaultyBackend`) does not silence it; a request the handler
fails on (an exception) is answered ``0x7F SID 0x10`` (generalReject) and counted in
``errors``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from ..errors import require
from .uds import UdsHandler

__all__ = ["UdsServer", "REQUEST_ID", "RESPONSE_ID", "ISOTP_PARAMS", "import_isotp"]

log = logging.getLogger(__name__)

#: the tester's requests (physical addressing)
REQUEST_ID = 0x7E0
#: the server's responses
RESPONSE_ID = 0x7E8
#: ISO-TP parameters of both sides (module docstring)
ISOTP_PARAMS = {"tx_data_min_length": 8, "tx_padding": 0xCC, "blocksize": 8, "stmin": 0,
                "rx_flowcontrol_timeout": 1000, "rx_consecutive_frame_timeout": 1000}


def import_isotp() -> Any:
    """``import isotp``, or :class:`DriverMissing` with the pip command."""
    return require("isotp", who="UDS on ISO-TP", package="can-isotp", extra="hil-test")


class UdsServer:
    """Serve ``handler`` on ISO-TP on ``interface``/``channel`` (module docstring).

    Parameters
    ----------
    handler : UdsHandler
    interface, channel : str
        python-can's, as the controller's bus (``virtual`` buses of one name meet).
    request_id, response_id : int
        11-bit CAN ids of requests and responses.
    bus_options : dict, optional
        More options for :class:`hil.can.CanBackend` (bitrate, ...).
    """

    def __init__(self, handler: UdsHandler, interface: str, channel: str, *,
                 request_id: int = REQUEST_ID, response_id: int = RESPONSE_ID,
                 bus_options: dict | None = None) -> None:
        if not isinstance(handler, UdsHandler):
            raise TypeError(f"UdsServer: handler must be a UdsHandler, got {handler!r}")
        for what, v in (("request_id", request_id), ("response_id", response_id)):
            if not isinstance(v, int) or not 0 <= v <= 0x7FF:
                raise ValueError(f"UdsServer: {what} must be an 11-bit CAN id, got {v!r}")
        if request_id == response_id:
            raise ValueError(f"UdsServer: request and response ids must differ, both "
                             f"0x{request_id:X}")
        self.handler = handler
        self.interface, self.channel = interface, str(channel)
        self.request_id, self.response_id = request_id, response_id
        self.bus_options = dict(bus_options or {})
        self.backend: Any = None
        self.stack: Any = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.answered = 0
        self.errors = 0
        self.isotp_errors = 0
        #: the longest time the handler took for one request [s]
        self.handle_max_s = 0.0

    def start(self) -> UdsServer:
        """Open the bus, start the ISO-TP stack and the server thread."""
        isotp = import_isotp()
        from ..can.backend import CanBackend
        filt = [{"can_id": self.request_id, "can_mask": 0x7FF, "extended": False}]
        self.backend = CanBackend(self.interface, self.channel, name="uds", timeout=0.0,
                                  can_filters=filt, **self.bus_options).open()
        addr = isotp.Address(isotp.AddressingMode.Normal_11bits, txid=self.response_id,
                             rxid=self.request_id)
        self.stack = isotp.CanStack(self.backend.bus, address=addr, params=ISOTP_PARAMS,
                                    error_handler=self._isotp_error, read_timeout=0.05)
        self.stack.start()
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name="uds-server", daemon=True)
        self._thread.start()
        return self

    def _isotp_error(self, exc: BaseException) -> None:
        self.isotp_errors += 1
        log.debug("UDS server: ISO-TP error %s", exc)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                req = self.stack.recv(block=True, timeout=0.1)
            except Exception as exc:  # noqa: BLE001 - a stopped stack ends the loop
                if not self._stop.is_set():
                    log.warning("UDS server: receive failed: %s", exc)
                    self.errors += 1
                break
            if req is None:
                self.handler.expire()
                continue
            t0 = time.perf_counter()
            try:
                resp = self.handler.handle(bytes(req))
            except Exception as exc:  # noqa: BLE001 - a bad request must not end the server
                log.error("UDS server: request %s failed: %s", bytes(req).hex(), exc)
                self.errors += 1
                resp = bytes([0x7F, req[0], 0x10])  # generalReject
            self.handle_max_s = max(self.handle_max_s, time.perf_counter() - t0)
            if resp is not None:
                self.stack.send(resp)
            self.answered += 1

    def close(self) -> None:
        """Stop the thread and the stack, close the bus (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        if self.stack is not None:
            self.stack.stop()
            self.stack = None
        if self.backend is not None:
            self.backend.close()
            self.backend = None

    def __enter__(self) -> UdsServer:
        return self.start() if self.stack is None else self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def stats(self) -> dict:
        return {"answered": self.answered, "errors": self.errors,
                "isotp_errors": self.isotp_errors,
                "handle_max_ms": round(self.handle_max_s * 1e3, 3), **self.handler.stats()}
