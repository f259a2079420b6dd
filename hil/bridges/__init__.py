"""Bridge blocks: hardware I/O as blocks with typed ports and an injected backend.

================================  =============================================
module                            blocks
================================  =============================================
:mod:`hil.bridges.base`           :class:`Bridge` (timing, error policy,
                                  opaque device state), :class:`Freshness`
:mod:`hil.bridges.can`            :class:`CanReceive`, :class:`CanTransmit`
                                  (DBC signals with units)
:mod:`hil.bridges.serial`         :class:`SerialReceive`, :class:`SerialTransmit`
                                  (fixed binary layouts)
:mod:`hil.bridges.daq`            :class:`DaqInput`, :class:`DaqOutput`
                                  (DAQ device channels)
================================  =============================================

The same diagram runs offline against virtual transports and in real time under
:class:`hil.RealTimeRunner` against hardware: only the injected backend changes.
"""

from .base import Bridge, BridgeError, Freshness
from .can import CanReceive, CanTransmit
from .daq import DaqInput, DaqOutput
from .serial import SerialReceive, SerialTransmit

__all__ = ["Bridge", "BridgeError", "Freshness", "CanReceive", "CanTransmit", "DaqInput",
           "DaqOutput", "SerialReceive", "SerialTransmit"]
