"""A udsoncan client on ISO-TP over a python-can bus: what a test uses to talk to a server.

:func:`open_client` builds what udsoncan's documentation builds by hand: a python-can bus
(through :class:`hil.can.CanBackend`, so a ``udp_multicast`` group is isolated like the
controller's), can-isotp's :class:`isotp.CanStack` with the server's ISO-TP parameters
(:data:`hil.diag.server.ISOTP_PARAMS`), udsoncan's ``PythonIsoTpConnection`` and its
``Client``; the test then calls udsoncan's own API (``client.read_data_by_identifier``,
``client.get_dtc_by_status_mask``, ``client.clear_dtc`` ...), and a negative response
raises udsoncan's ``NegativeResponseException`` (its ``response.code`` is the NRC).

Limitations: classic CAN, 11-bit ids, physical addressing (as the server).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..errors import require
from .server import ISOTP_PARAMS, REQUEST_ID, RESPONSE_ID, import_isotp

__all__ = ["open_client", "import_udsoncan"]


def import_udsoncan() -> Any:
    """``import udsoncan``, or :class:`DriverMissing` with the pip command."""
    for sub in ("udsoncan.client", "udsoncan.connections"):
        require(sub, who="the UDS client", package="udsoncan", extra="hil-test")
    return require("udsoncan", who="the UDS client", package="udsoncan", extra="hil-test")


@contextlib.contextmanager
def open_client(interface: str, channel: str, *, config: dict | None = None,
                request_id: int = REQUEST_ID, response_id: int = RESPONSE_ID,
                timeout_s: float = 2.0, bus_options: dict | None = None) -> Iterator[Any]:
    """A connected ``udsoncan.client.Client`` (module docstring); closed at the end.

    ``config``: udsoncan client settings merged over its defaults (``data_identifiers``:
    the DID codecs, e.g. :func:`hil.diag.acc.client_config`); ``timeout_s``: udsoncan's
    ``request_timeout``.
    """
    udsoncan = import_udsoncan()
    isotp = import_isotp()
    from ..can.backend import CanBackend
    cfg = dict(udsoncan.configs.default_client_config)
    cfg.update({"request_timeout": timeout_s, "p2_timeout": timeout_s,
                "exception_on_unexpected_response": True})
    cfg.update(config or {})
    filt = [{"can_id": response_id, "can_mask": 0x7FF, "extended": False}]
    backend = CanBackend(interface, channel, name="uds-tester", timeout=0.0,
                         can_filters=filt, **(bus_options or {})).open()
    try:
        addr = isotp.Address(isotp.AddressingMode.Normal_11bits, txid=request_id,
                             rxid=response_id)
        stack = isotp.CanStack(backend.bus, address=addr, params=ISOTP_PARAMS)
        conn = udsoncan.connections.PythonIsoTpConnection(stack)
        with udsoncan.client.Client(conn, config=cfg) as client:
            yield client
    finally:
        backend.close()
