"""hil.xcp's packet layer: the slave's answers to raw command packets, DTO layout, the
memory map's checks, the A2L (parsed by pya2ldb where installed)."""

from __future__ import annotations

import os
import struct
import uuid

import pytest

pytest.importorskip("can")

from cosim import Simulator  # noqa: E402
from examples.acc_ecu import ecu_diagram  # noqa: E402
from hil.can import ACC_DBC, CanBackend, CanDatabase  # noqa: E402
from hil.xcp import a2l_text, acc_memory_map, write_a2l  # noqa: E402
from hil.xcp import packets as P  # noqa: E402
from hil.xcp.memory import CAL_BASE, ID_BASE, MEAS_BASE, MemoryMap  # noqa: E402
from hil.xcp.slave import XcpSlave  # noqa: E402


@pytest.fixture
def sim():
    ch = f"xcp-unit-{os.getpid()}-{uuid.uuid4().hex}"
    with CanBackend("virtual", ch, timeout=0.0) as ec:
        s = Simulator(ecu_diagram(ec, CanDatabase(ACC_DBC)), solver="rk4", record=False)
        s.initialize()
        yield s


@pytest.fixture
def slave(sim):
    s = XcpSlave(acc_memory_map(sim), 0.016)
    assert s.handle(bytes([0xFF, 0])) == [bytes([0xFF, 0x05, 0xC0, 8, 8, 0, 1, 1])]
    return s


def cmd(name: str, *args: int | bytes) -> bytes:
    out = bytearray([P.CMD[name]])
    for a in args:
        out += a if isinstance(a, bytes) else bytes([a])
    return bytes(out)


def err(name: str) -> list[bytes]:
    return [bytes([0xFE, P.ERR[name]])]


def test_event_cycle():
    assert P.event_cycle(0.016) == (160, 5)
    assert P.event_cycle(0.001) == (100, 4)
    assert P.event_cycle(2.0) == (200, 7)
    assert P.event_cycle(0.00025) == (250, 3)
    with pytest.raises(ValueError, match="not n x 10"):
        P.event_cycle(0.0123456)


def test_not_connected_is_silent(sim):
    s = XcpSlave(acc_memory_map(sim), 0.016)
    assert s.handle(cmd("GET_STATUS")) == []


def test_unknown_short_and_synch(slave):
    assert slave.handle(bytes([0xC9])) == err("ERR_CMD_UNKNOWN")
    assert slave.handle(bytes([0xEB, 0x83, 0, 1])) == err("ERR_CMD_UNKNOWN")  # SET_CAL_PAGE
    assert slave.handle(cmd("SET_MTA", 0, 0)) == err("ERR_CMD_SYNTAX")
    assert slave.handle(cmd("SYNCH")) == err("ERR_CMD_SYNCH")


def test_a_fault_of_the_slave_is_err_generic(slave, monkeypatch):
    def broken(address, n):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(slave.memory, "read", broken)
    assert slave.handle(cmd("UPLOAD", 4)) == err("ERR_GENERIC")
    assert "ZeroDivisionError: boom" in slave.last_fault
    assert slave.handle(cmd("GET_STATUS"))[0][0] == 0xFF  # still serving


def test_get_id_and_block_upload(slave):
    text = slave.memory.identity
    (res,) = slave.handle(cmd("GET_ID", 0))
    assert res == bytes([0xFF, 0, 0, 0]) + struct.pack("<I", len(text))
    assert slave.mta == ID_BASE
    out = slave.handle(cmd("UPLOAD", len(text)))  # slave block mode: 7 bytes a packet
    assert len(out) == -(-len(text) // 7) and all(p[0] == 0xFF for p in out)
    assert b"".join(p[1:] for p in out) == text


def test_download_checks(slave, sim):
    mta = cmd("SET_MTA", 0, 0, 0, struct.pack("<I", CAL_BASE))
    assert slave.handle(mta) == [b"\xff"]
    assert slave.handle(cmd("DOWNLOAD", 4, struct.pack("<f", 2.0))) == [b"\xff"]
    assert slave.memory.apply_pending() == 1
    assert sim.ctx.param(sim.ctx.plan.find_parameter("acc.time_gap_s")) == 2.0
    slave.handle(mta)
    assert slave.handle(cmd("DOWNLOAD", 4, struct.pack("<f", 0.5))) == \
        err("ERR_OUT_OF_RANGE")  # below ISO 15622's 0.8 s
    slave.handle(mta)
    assert slave.handle(cmd("DOWNLOAD", 4, struct.pack("<f", float("nan")))) == \
        err("ERR_OUT_OF_RANGE")
    slave.handle(mta)
    assert slave.handle(cmd("DOWNLOAD", 7, bytes(7))) == err("ERR_OUT_OF_RANGE")  # > 6
    slave.handle(cmd("SET_MTA", 0, 0, 0, struct.pack("<I", MEAS_BASE)))
    assert slave.handle(cmd("DOWNLOAD", 4, bytes(4))) == err("ERR_ACCESS_DENIED")
    slave.handle(cmd("SET_MTA", 0, 0, 1, struct.pack("<I", CAL_BASE)))  # extension 1
    assert slave.memory.apply_pending() == 0
    assert slave.handle(cmd("SHORT_UPLOAD", 4, 0, 0, struct.pack("<I", CAL_BASE))) == \
        [b"\xff" + struct.pack("<f", 2.0)]
    assert slave.handle(cmd("SHORT_UPLOAD", 8, 0, 0, struct.pack("<I", CAL_BASE))) == \
        err("ERR_OUT_OF_RANGE")


def _daq(slave, addr: int, mode: int = 0x10, prescaler: int = 1) -> None:
    ok = [b"\xff"]
    assert slave.handle(cmd("FREE_DAQ")) == ok
    assert slave.handle(cmd("ALLOC_DAQ", 0, struct.pack("<H", 1))) == ok
    assert slave.handle(cmd("ALLOC_ODT", 0, struct.pack("<H", 0), 1)) == ok
    assert slave.handle(cmd("ALLOC_ODT_ENTRY", 0, struct.pack("<H", 0), 0, 1)) == ok
    assert slave.handle(cmd("SET_DAQ_PTR", 0, struct.pack("<H", 0), 0, 0)) == ok
    assert slave.handle(cmd("WRITE_DAQ", 0xFF, 4, 0, struct.pack("<I", addr))) == ok
    assert slave.handle(cmd("SET_DAQ_LIST_MODE", mode, struct.pack("<H", 0),
                            struct.pack("<H", 0), prescaler, 0)) == ok


def test_daq_dto_layout_and_prescaler(slave, sim):
    _daq(slave, CAL_BASE, prescaler=2)  # a parameter may be measured too
    assert slave.handle(cmd("START_STOP_DAQ_LIST", 2, struct.pack("<H", 0))) == \
        [bytes([0xFF, 0])]  # selected; first PID 0
    assert slave.handle(cmd("START_STOP_SYNCH", 1)) == [b"\xff"]
    assert slave.handle(cmd("GET_STATUS"))[0][1] & 0x40  # DAQ running
    slave.memory.refresh()
    dtos = [slave.event(k * 0.016) for k in range(1, 5)]
    assert [len(d) for d in dtos] == [1, 0, 1, 0]
    pid, ts, value = struct.unpack("<BHf", dtos[2][0])
    assert (pid, ts, value) == (0, 480, 1.5)  # 48 ms in 100 us ticks; the time gap
    assert slave.handle(cmd("START_STOP_SYNCH", 0)) == [b"\xff"]
    assert slave.event(0.1) == []


def test_daq_errors(slave):
    assert slave.handle(cmd("FREE_DAQ")) == [b"\xff"]
    assert slave.handle(cmd("ALLOC_ODT", 0, struct.pack("<H", 0), 1)) == err("ERR_SEQUENCE")
    assert slave.handle(cmd("WRITE_DAQ", 0xFF, 4, 0, struct.pack("<I", MEAS_BASE))) == \
        err("ERR_SEQUENCE")
    assert slave.handle(cmd("ALLOC_DAQ", 0, struct.pack("<H", 99))) == \
        err("ERR_MEMORY_OVERFLOW")
    _daq(slave, MEAS_BASE)
    slave.handle(cmd("SET_DAQ_PTR", 0, struct.pack("<H", 0), 0, 0))
    assert slave.handle(cmd("WRITE_DAQ", 0xFF, 4, 0, struct.pack("<I", 0x00400000))) == \
        err("ERR_ACCESS_DENIED")
    assert slave.handle(cmd("SET_DAQ_LIST_MODE", 0x02, struct.pack("<H", 0),
                            struct.pack("<H", 0), 1, 0)) == err("ERR_MODE_NOT_VALID")
    assert slave.handle(cmd("SET_DAQ_LIST_MODE", 0x10, struct.pack("<H", 0),
                            struct.pack("<H", 1), 1, 0)) == err("ERR_OUT_OF_RANGE")
    # an ODT with 7 data bytes and a 2-byte timestamp does not fit in 8
    slave.handle(cmd("FREE_DAQ"))
    slave.handle(cmd("ALLOC_DAQ", 0, struct.pack("<H", 1)))
    slave.handle(cmd("ALLOC_ODT", 0, struct.pack("<H", 0), 1))
    slave.handle(cmd("ALLOC_ODT_ENTRY", 0, struct.pack("<H", 0), 0, 1))
    slave.handle(cmd("SET_DAQ_PTR", 0, struct.pack("<H", 0), 0, 0))
    slave.handle(cmd("WRITE_DAQ", 0xFF, 7, 0, struct.pack("<I", MEAS_BASE)))
    slave.handle(cmd("SET_DAQ_LIST_MODE", 0x10, struct.pack("<H", 0), struct.pack("<H", 0),
                     1, 0))
    assert slave.handle(cmd("START_STOP_DAQ_LIST", 1, struct.pack("<H", 0))) == \
        err("ERR_DAQ_CONFIG")


def test_daq_info(slave):
    (pi,) = slave.handle(cmd("GET_DAQ_PROCESSOR_INFO"))
    assert pi[1] == 0x13 and pi[7] == 0  # dynamic, prescaler, timestamps; absolute ODT
    (ri,) = slave.handle(cmd("GET_DAQ_RESOLUTION_INFO"))
    assert ri == bytes([0xFF, 1, 7, 1, 0, 0x32]) + struct.pack("<H", 100)
    (ei,) = slave.handle(cmd("GET_DAQ_EVENT_INFO", 0, struct.pack("<H", 0)))
    assert ei[4:6] == bytes([160, 5])  # 160 x 100 us


def test_memory_map_refuses(sim):
    with pytest.raises(ValueError, match="neither an output nor a discrete state"):
        MemoryMap(sim, [], ["acc.nothing"])
    with pytest.raises(ValueError, match="twice"):
        MemoryMap(sim, [], ["acc.throttle", "acc.throttle"])
    with pytest.raises(Exception, match="time_gap"):
        MemoryMap(sim, ["acc.time_gapp"], [])


def test_a2l(sim, tmp_path):
    mm = acc_memory_map(sim)
    text = a2l_text(mm, 0.016, cmd_id=0x6F0, res_id=0x6F1)
    assert "/begin CHARACTERISTIC acc.time_gap_s" in text
    assert "VALUE 0x00010000 RL_FLOAT32 0 CM_s 0.8 2.2" in text
    assert "CAN_ID_MASTER 0x6F0 CAN_ID_SLAVE 0x6F1" in text
    assert "/begin EVENT \"controller\" \"controll\" 0 DAQ 0xFF 160 5 0" in text
    with pytest.raises(ValueError, match=r"\.a2l"):
        write_a2l(tmp_path / "x.txt", mm, 0.016, cmd_id=1, res_id=2)
    path = write_a2l(tmp_path / "acc_ecu.a2l", mm, 0.016, cmd_id=0x6F0, res_id=0x6F1)
    pya2l = pytest.importorskip("pya2l")
    from pya2l import model
    db = pya2l.import_a2l(str(path), in_memory=True, progress_bar=False, loglevel="ERROR")
    (c,) = db.query(model.Characteristic).all()
    assert (c.name, c.address, c.lowerLimit, c.upperLimit) == ("acc.time_gap_s", CAL_BASE,
                                                               0.8, 2.2)
    meas = {m.name: m.ecu_address.address for m in db.query(model.Measurement).all()}
    assert meas == {v.name: v.address for v in mm.meas}
