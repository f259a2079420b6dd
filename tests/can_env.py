"""What the machine's CAN transports allow, for the tests' skip conditions."""

from __future__ import annotations

import functools


@functools.cache
def multicast_ok() -> bool:
    """True when python-can's ``udp_multicast`` bus opens here (an IPv4 multicast route;
    hop limit 0: nothing leaves the host).  False without python-can or without a route."""
    try:
        import can
        b = can.Bus(interface="udp_multicast", channel="239.7.7.7", hop_limit=0)
    except Exception:  # noqa: BLE001 - any failure to open means: not available here
        return False
    b.shutdown()
    return True
