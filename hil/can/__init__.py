"""CAN: a python-can backend, DBC signal mapping, cyclic sending, logging.

=========================  ====================================================
module                     contents
=========================  ====================================================
:mod:`hil.can.backend`     :class:`CanBackend` (python-can, imported on
                           ``open()``; registered as ``"can"``)
:mod:`hil.can.dbc`         :class:`CanDatabase` (cantools): encode/decode with
                           cosim units; :data:`ACC_DBC`, the demo database
:mod:`hil.can.cyclic`      :class:`CyclicSender` (caller-scheduled, skips missed
                           periods), :class:`SignalCache` (staleness)
:mod:`hil.can.log`         :class:`MessageLog` (``can.Logger``), :func:`read_log`,
                           :func:`replay`
:mod:`hil.can.slcan_hub`   :class:`SlcanHub`: SLCAN adapters on ptys joined into one
                           emulated bus (python-can's ``slcan`` between processes;
                           one adapter is :mod:`hil.can.slcan_adapter`)
:mod:`hil.can.slcan_frame` SLCAN frame lines (:func:`parse_frame`) and their exact
                           length on the wire (:func:`frame_bits`, :func:`frame_time`)
=========================  ====================================================

Importing this package imports neither python-can nor cantools.
"""

from .backend import CanBackend
from .cyclic import CyclicSender, SignalCache, StaleSignal
from .dbc import ACC_DBC, CanDatabase, SignalInfo, UnknownName
from .log import MessageLog, read_log, replay
from .slcan_hub import SlcanHub

__all__ = ["CanBackend", "CanDatabase", "SignalInfo", "UnknownName", "ACC_DBC",
           "CyclicSender", "SignalCache", "StaleSignal", "MessageLog", "read_log", "replay",
           "SlcanHub"]
