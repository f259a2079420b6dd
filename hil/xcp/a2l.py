"""An A2L file (ASAM MCD-2 MC, ASAP2 1.7 subset) describing an XCP slave's memory map.

What is written::

    ASAP2_VERSION 1 71
    PROJECT / HEADER / MODULE
      MOD_COMMON      byte order MSB_LAST (Intel), alignment 1
      MOD_PAR         the calibration and measurement segments (MEMORY_SEGMENT)
      IF_DATA XCP     PROTOCOL_LAYER (MAX_CTO = MAX_DTO = 8, the optional commands),
                      DAQ (dynamic, absolute ODT numbers, 2-byte timestamp of 100 us,
                      the one event at the controller's cycle), XCP_ON_CAN (the CAN ids)
      RECORD_LAYOUT   RL_FLOAT32 (one FLOAT32_IEEE value)
      COMPU_METHOD    one IDENTICAL conversion per unit (the unit is its physical unit)
      CHARACTERISTIC  each parameter: VALUE at its address, limits
      MEASUREMENT     each variable: FLOAT32_IEEE at ECU_ADDRESS, limits

No A2ML block: a parser that needs one to read IF_DATA (pya2ldb does not) may skip the
IF_DATA XCP section; the CAN ids are then given to the master by hand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .daq import MAX_ODT_ENTRY, TS_TICKS
from .memory import CAL_BASE, MEAS_BASE, SIZE, MemoryMap
from .packets import MAX_CTO, MAX_DTO, event_cycle

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.\[\]]*")


def _ident(name: str, what: str) -> str:
    if not _IDENT.fullmatch(name):
        raise ValueError(f"A2L: {what} name {name!r} is not an ASAP2 identifier (letters, "
                         "digits, '_', '.', starting with a letter or '_')")
    return name


def _str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _cm(unit: str) -> str:
    return "CM_" + (re.sub(r"[^A-Za-z0-9]", "_", unit) or "none")


def _num(x: float) -> str:
    return f"{x:.9g}"


def a2l_text(memory: MemoryMap, event_period_s: float, *, cmd_id: int, res_id: int,
             name: str | None = None, event_name: str = "controller",
             bitrate: int = 500_000) -> str:
    """The A2L of ``memory`` (module docstring)."""
    name = _ident(name or memory.a2l_name.decode("ascii"), "module")
    cycle, unit = event_cycle(event_period_s)
    units = sorted({v.unit for v in memory.params + memory.meas})
    L: list[str] = ["ASAP2_VERSION 1 71", f"/begin PROJECT {name} {_str('cosim XCP slave')}",
                    '  /begin HEADER "" VERSION "1" PROJECT_NO COSIM /end HEADER',
                    f"  /begin MODULE {name} {_str(memory.identity.decode('ascii'))}",
                    '    /begin MOD_COMMON ""', "      BYTE_ORDER MSB_LAST",
                    "      ALIGNMENT_BYTE 1", "      ALIGNMENT_WORD 1", "      ALIGNMENT_LONG 1",
                    "      ALIGNMENT_FLOAT32_IEEE 1", "      ALIGNMENT_FLOAT64_IEEE 1",
                    "    /end MOD_COMMON", '    /begin MOD_PAR ""', "      NO_OF_INTERFACES 1"]
    for seg, base, n, kind in (("calibration", CAL_BASE, len(memory.params), "DATA"),
                               ("measurement", MEAS_BASE, len(memory.meas), "VARIABLES")):
        if n:
            L.append(f"      /begin MEMORY_SEGMENT {seg} \"\" {kind} RAM INTERN 0x{base:08X} "
                     f"0x{SIZE * n:X} -1 -1 -1 -1 -1 /end MEMORY_SEGMENT")
    L += ["    /end MOD_PAR",
          "    /begin IF_DATA XCP",
          f"      /begin PROTOCOL_LAYER 0x0100 2000 2000 0 0 0 0 0 {MAX_CTO} {MAX_DTO} "
          "BYTE_ORDER_MSB_LAST ADDRESS_GRANULARITY_BYTE",
          "        OPTIONAL_CMD GET_COMM_MODE_INFO OPTIONAL_CMD GET_ID OPTIONAL_CMD SET_MTA",
          "        OPTIONAL_CMD UPLOAD OPTIONAL_CMD SHORT_UPLOAD OPTIONAL_CMD DOWNLOAD",
          "        OPTIONAL_CMD SYNCH OPTIONAL_CMD GET_STATUS OPTIONAL_CMD FREE_DAQ",
          "        OPTIONAL_CMD ALLOC_DAQ OPTIONAL_CMD ALLOC_ODT OPTIONAL_CMD ALLOC_ODT_ENTRY",
          "        OPTIONAL_CMD SET_DAQ_PTR OPTIONAL_CMD WRITE_DAQ OPTIONAL_CMD SET_DAQ_LIST_MODE",
          "        OPTIONAL_CMD START_STOP_DAQ_LIST OPTIONAL_CMD START_STOP_SYNCH",
          "        OPTIONAL_CMD GET_DAQ_PROCESSOR_INFO OPTIONAL_CMD GET_DAQ_RESOLUTION_INFO",
          "        OPTIONAL_CMD GET_DAQ_EVENT_INFO OPTIONAL_CMD GET_DAQ_CLOCK",
          "        COMMUNICATION_MODE_SUPPORTED BLOCK SLAVE",
          "      /end PROTOCOL_LAYER",
          "      /begin DAQ DYNAMIC 0 1 0 OPTIMISATION_TYPE_DEFAULT ADDRESS_EXTENSION_FREE "
          "IDENTIFICATION_FIELD_TYPE_ABSOLUTE GRANULARITY_ODT_ENTRY_SIZE_DAQ_BYTE "
          f"{MAX_ODT_ENTRY} NO_OVERLOAD_INDICATION",
          f"        /begin TIMESTAMP_SUPPORTED {TS_TICKS} SIZE_WORD UNIT_1US /end "
          "TIMESTAMP_SUPPORTED",
          f"        /begin EVENT {_str(event_name)} {_str(event_name[:8])} 0 DAQ 0xFF "
          f"{cycle} {unit} 0 /end EVENT",
          "      /end DAQ",
          f"      /begin XCP_ON_CAN 0x0100 CAN_ID_MASTER 0x{cmd_id:X} CAN_ID_SLAVE "
          f"0x{res_id:X} BAUDRATE {int(bitrate)} /end XCP_ON_CAN",
          "    /end IF_DATA",
          '    /begin RECORD_LAYOUT RL_FLOAT32 FNC_VALUES 1 FLOAT32_IEEE COLUMN_DIR DIRECT '
          "/end RECORD_LAYOUT"]
    for u in units:
        L.append(f"    /begin COMPU_METHOD {_cm(u)} \"\" IDENTICAL \"%.6\" {_str(u)} "
                 "/end COMPU_METHOD")
    for v in memory.params:
        L += [f"    /begin CHARACTERISTIC {_ident(v.name, 'parameter')} {_str(v.description)} "
              f"VALUE 0x{v.address:08X} RL_FLOAT32 0 {_cm(v.unit)} {_num(v.lo)} {_num(v.hi)}",
              "    /end CHARACTERISTIC"]
    for v in memory.meas:
        L += [f"    /begin MEASUREMENT {_ident(v.name, 'measurement')} {_str(v.description)} "
              f"FLOAT32_IEEE {_cm(v.unit)} 0 0 {_num(v.lo)} {_num(v.hi)}",
              f"      ECU_ADDRESS 0x{v.address:08X}", "    /end MEASUREMENT"]
    L += ["  /end MODULE", "/end PROJECT", ""]
    return "\n".join(L)


def write_a2l(path: Any, memory: MemoryMap, event_period_s: float, **kw: Any) -> Path:
    """Write :func:`a2l_text` to ``path`` (its stem is the module's name); the path."""
    p = Path(path)
    if p.suffix.lower() != ".a2l":
        raise ValueError(f"write_a2l: {str(p)!r} should end in .a2l (the stem is the name "
                         "GET_ID(1) answers)")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(a2l_text(memory, event_period_s, name=p.stem, **kw), encoding="ascii")
    return p
