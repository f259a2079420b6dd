"""Diagnostics: a fault memory (DTCs with ISO 14229 status bits) served over UDS on ISO-TP.

=========================  ==========================================================
module                     contents
=========================  ==========================================================
:mod:`hil.diag.dtc`        :class:`FaultMemory`: DTCs, status bits, operation
                           cycles, aging, snapshots, clear by group
:mod:`hil.diag.uds`        :class:`UdsHandler`: the UDS services (0x10, 0x3E, 0x19,
                           0x14, 0x22) and their negative responses
:mod:`hil.diag.server`     :class:`UdsServer`: the handler on can-isotp over a
                           python-can bus, in a thread
:mod:`hil.diag.client`     :func:`open_client`: a udsoncan client for tests
:mod:`hil.diag.acc`        the example ACC controller's monitors, DTCs and data
                           identifiers
=========================  ==========================================================

can-isotp and udsoncan are imported when a server starts or a client opens (the
``hil-test`` extra: ``pip install 'cosim[hil-test]'``).  The guide is
``docs/guides/hil-diagnostics.md``.
"""

from .dtc import ALL_DTCS, AVAILABILITY_MASK, GROUPS, DtcRecord, FaultMemory, Status, dtc_text
from .server import ISOTP_PARAMS, REQUEST_ID, RESPONSE_ID, UdsServer
from .uds import NRC, ConditionsNotCorrect, DataIdentifier, UdsHandler

__all__ = ["ALL_DTCS", "AVAILABILITY_MASK", "GROUPS", "DtcRecord", "FaultMemory", "Status",
           "dtc_text", "ISOTP_PARAMS", "REQUEST_ID", "RESPONSE_ID", "UdsServer", "NRC",
           "ConditionsNotCorrect", "DataIdentifier", "UdsHandler"]
