"""XCP on CAN: a calibration and measurement slave for a running controller, and its A2L.

=========================  ==========================================================
module                     contents
=========================  ==========================================================
:mod:`hil.xcp.packets`     command and error codes, response packets (pure)
:mod:`hil.xcp.memory`      :class:`MemoryMap`: addresses of a Simulator's parameters
                           (calibration, float32) and signals (measurement, float32)
:mod:`hil.xcp.slave`       :class:`XcpSlave`: CONNECT, GET_ID, UPLOAD/DOWNLOAD, ...
:mod:`hil.xcp.daq`         :class:`DaqTable`: dynamic DAQ lists, the DTOs of an event
:mod:`hil.xcp.can_port`    :class:`XcpCanPort`: the slave on a python-can bus
:mod:`hil.xcp.master`      pyxcp as the master: configuration, a DAQ collector
:mod:`hil.xcp.a2l`         :func:`write_a2l`: the A2L (ASAP2 1.7 subset) of a map
:mod:`hil.xcp.ecu`         :class:`XcpEcu`: slave + bus + A2L + the frame hook;
                           :func:`acc_ecu_xcp` for ``examples/acc_ecu.py``
=========================  ==========================================================

The master is any XCP tool; the tests use pyxcp (``pip install pyxcp``, the
``hil-test`` extra).  Guide: ``docs/guides/hil-xcp.md``.
"""

from .a2l import a2l_text, write_a2l
from .can_port import CMD_ID, RES_ID, XcpCanPort
from .ecu import XcpEcu, acc_ecu_xcp, acc_memory_map
from .memory import MemoryMap, Variable
from .packets import XcpError
from .slave import XcpSlave

__all__ = ["a2l_text", "write_a2l", "CMD_ID", "RES_ID", "XcpCanPort", "XcpEcu",
           "acc_ecu_xcp", "acc_memory_map", "MemoryMap", "Variable", "XcpError", "XcpSlave"]
