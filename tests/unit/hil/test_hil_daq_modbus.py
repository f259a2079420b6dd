"""hil.daq.modbus: ModbusDaq against a real pymodbus TCP server on loopback."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time

import pytest

pytest.importorskip("pymodbus")

from pymodbus.server import ModbusTcpServer  # noqa: E402
from pymodbus.simulator import DataType, SimData, SimDevice  # noqa: E402

import hil  # noqa: E402
from hil.daq import ChannelSpec  # noqa: E402
from hil.daq.modbus import ModbusDaq, ModbusError, ModbusPoint  # noqa: E402
from hil.errors import BackendError, Disconnected, DriverMissing  # noqa: E402
from tests.timing_plugin import GENEROUS_S, wait_for  # noqa: E402

FC = {"coil": 1, "discrete": 2, "holding": 3, "input": 4}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A pymodbus TCP server in its own event-loop thread; restartable on its port.

    Tables: coils and discrete inputs 0..31, input registers 0..63, holding
    registers 0..39 and 50..63 (40..49 do not exist: a hole for exception tests).
    ``accesses`` counts requests per function code (the SimDevice action hook).
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.srv = None
        self.accesses: dict[int, int] = {}

    def run(self, coro, timeout=10.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _action(self, fc, start, address, count, regs, values):
        self.accesses[fc] = self.accesses.get(fc, 0) + 1
        return None

    def start(self) -> None:
        async def go():
            dev = SimDevice(id=1, simdata=(
                [SimData(0, count=32, values=False, datatype=DataType.BITS)],
                [SimData(0, count=32, values=False, datatype=DataType.BITS)],
                [SimData(0, count=40, values=0, datatype=DataType.REGISTERS),
                 SimData(50, count=14, values=0, datatype=DataType.REGISTERS)],
                [SimData(0, count=64, values=0, datatype=DataType.REGISTERS)],
            ), action=self._action)
            self.srv = ModbusTcpServer(dev, address=("127.0.0.1", self.port))
            await self.srv.serve_forever(background=True)
        self.run(go())

    def stop(self) -> None:
        """Shut the server down and return once it is gone: its connections closed (their
        closes run on the loop after shutdown() returns: a request sent meanwhile was
        still answered on a busy machine) and its port refusing connections."""
        self.run(self.srv.shutdown())

        async def closes_ran():
            await asyncio.sleep(0)  # call_soon callbacks scheduled by the closes run first
            await asyncio.sleep(0)
        self.run(closes_ran())
        wait_for(self._refused, f"the Modbus server's port {self.port} closed")

    def _refused(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1.0).close()
        except ConnectionRefusedError:
            return True
        return False

    def close(self) -> None:
        try:
            self.stop()
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)

    def get(self, table, address, count=1):
        return self.run(self.srv.context.async_getValues(1, FC[table], address, count))

    def set(self, table, address, values):
        assert self.run(self.srv.context.async_setValues(1, FC[table], address, values)) is None


@pytest.fixture
def server():
    s = Server()
    s.start()
    yield s
    s.close()


def ch(name, kind, rng=None, unit=None, bits=None):
    return ChannelSpec(name, kind, rng, unit, bits)


CHANNELS = [
    ch("ai_u16", "ai", (-50, 6500), "V"),
    ch("ai_i16", "ai", (-300, 300), "bar"),
    ch("ai_u32", "ai", (0, 5e9)),
    ch("ai_i32", "ai", (-1e9, 1e9)),
    ch("ai_f32", "ai", (-1e6, 1e6)),
    ch("ai_f32_le", "ai", (-1e6, 1e6)),
    ch("ai_hr", "ai", (0, 100)),
    ch("fin", "frequency_in", (0, 10_000), "Hz"),
    ch("ao_u16", "ao", (0, 10), "V"),
    ch("ao_i16", "ao", (-10, 10), "V"),
    ch("ao_u32", "ao", (0, 1e6)),
    ch("ao_i32", "ao", (-1e6, 1e6)),
    ch("ao_f32", "ao", (-10, 10), "V"),
    ch("ao_f32_le", "ao", (-10, 10), "V"),
    ch("di0", "di"),
    ch("di_coil", "di"),
    ch("do0", "do"),
    ch("do1", "do"),
    ch("ctr0", "counter"),
    ch("ctr16", "counter", bits=16),
]
POINTS = {
    "ai_u16": ModbusPoint(0, scale=0.1, offset=-50),
    "ai_i16": ModbusPoint(1, dtype="int16", scale=0.01),
    "ai_u32": ModbusPoint(2, dtype="uint32"),
    "ai_i32": ModbusPoint(4, dtype="int32", word_order="little"),
    "ai_f32": ModbusPoint(6, dtype="float32"),
    "ai_f32_le": {"address": 8, "dtype": "float32", "word_order": "little"},
    "ai_hr": ModbusPoint(30, table="holding", scale=0.5),
    "fin": ModbusPoint(10, dtype="float32"),
    "ao_u16": ModbusPoint(0, scale=0.001),
    "ao_i16": ModbusPoint(1, dtype="int16", scale=0.001),
    "ao_u32": ModbusPoint(2, dtype="uint32", scale=0.01),
    "ao_i32": ModbusPoint(4, dtype="int32", scale=0.01, word_order="little"),
    "ao_f32": ModbusPoint(6, dtype="float32", scale=2.0, offset=1.0),
    "ao_f32_le": ModbusPoint(8, dtype="float32", word_order="little"),
    "di0": 3,
    "di_coil": ModbusPoint(7, table="coil"),
    "do0": 5,
    "do1": 6,
    "ctr0": ModbusPoint(20),
    "ctr16": ModbusPoint(31, table="holding", dtype="uint16"),
}


def make(server, **kw):
    kw.setdefault("points", POINTS)
    return ModbusDaq(kw.pop("channels", CHANNELS), port=server.port, timeout=2.0, **kw)


def test_encode_decode_word_orders():
    p_big = ModbusPoint(0, dtype="float32")
    p_le = ModbusPoint(0, dtype="float32", word_order="little")
    assert ModbusDaq.encode(p_big, 2.5) == [0x4020, 0x0000]
    assert ModbusDaq.encode(p_le, 2.5) == [0x0000, 0x4020]
    p = ModbusPoint(0, dtype="int32", word_order="little")
    assert ModbusDaq.encode(p, -2) == [0xFFFE, 0xFFFF]
    assert ModbusDaq.decode(p, [0xFFFE, 0xFFFF]) == -2
    assert ModbusDaq.decode(ModbusPoint(0, dtype="int16"), [0xFB2D]) == -1235


@pytest.mark.timing
def test_round_trip_server_to_client(server):
    server.set("input", 0, [1234])  # 1234 * 0.1 - 50 = 73.4
    server.set("input", 1, [(-12345) & 0xFFFF])  # -123.45
    server.set("input", 2, [0x0001, 0x0002])  # 65538, big word order
    server.set("input", 4, [0xFFFE, 0xFFFF])  # int32 -2, little word order
    server.set("input", 6, ModbusDaq.encode(ModbusPoint(0, dtype="float32"), -1.5e3))
    server.set("input", 8, [0x0000, 0x4020])  # 2.5, little word order
    server.set("holding", 30, [150])  # 75.0
    server.set("input", 10, ModbusDaq.encode(ModbusPoint(0, dtype="float32"), 440.0))
    server.set("discrete", 3, [True])
    server.set("coil", 7, [True])
    server.set("input", 20, [0x0001, 0x0000])  # 65536 edges
    server.set("holding", 31, [0xFFFF])
    with make(server) as d:
        v = d.read()
        assert v["ai_u16"] == pytest.approx(73.4)
        assert v["ai_i16"] == pytest.approx(-123.45)
        assert v["ai_u32"] == 65538 and v["ai_i32"] == -2
        assert v["ai_f32"] == -1.5e3 and v["ai_f32_le"] == 2.5
        assert v["ai_hr"] == 75.0 and v["fin"] == 440.0
        assert v["di0"] is True and v["di_coil"] is True
        assert v["ctr0"] == 65536 and v["ctr16"] == 0xFFFF
        # counter: software reset, then counting on and wrapping at 2**16
        d.reset(["ctr0", "ctr16"])
        server.set("input", 20, [0x0001, 0x0005])
        server.set("holding", 31, [3])
        assert d.read(["ctr0", "ctr16"]) == {"ctr0": 5, "ctr16": 4}
        # saturation: a reading outside the range is clipped and counted
        server.set("holding", 30, [202])  # 101 > 100
        assert d.read("ai_hr") == {"ai_hr": 100.0}
        assert d.counters.saturated == {"ai_hr": 1}


@pytest.mark.timing
def test_round_trip_client_to_server(server):
    with make(server) as d:
        d.write({"ao_u16": 1.2345, "ao_i16": -1.2345, "ao_u32": 1234.567, "ao_i32": -1234.567,
                 "ao_f32": 2.0, "ao_f32_le": 2.5, "do0": True, "do1": False})
        assert server.get("holding", 0) == [1235]  # 1234.5 rounds half up
        assert server.get("holding", 1) == [(-1234) & 0xFFFF]  # -1234.5 -> -1234
        assert server.get("holding", 2, 2) == [0x0001, 0xE241]  # 123457 = 0x1E241
        assert server.get("holding", 4, 2) == [(-123457) & 0xFFFF, 0xFFFE]  # little
        assert server.get("holding", 6, 2) == [0x3F00, 0x0000]  # (2 - 1) / 2 = 0.5
        assert server.get("holding", 8, 2) == [0x0000, 0x4020]
        assert server.get("coil", 5, 2) == [True, False]
        back = d.read(["ao_u16", "ao_i16", "ao_u32", "ao_i32", "ao_f32", "ao_f32_le", "do0",
                       "do1"])
        assert back == pytest.approx({"ao_u16": 1.235, "ao_i16": -1.234, "ao_u32": 1234.57,
                                      "ao_i32": -1234.57, "ao_f32": 2.0, "ao_f32_le": 2.5,
                                      "do0": True, "do1": False})


@pytest.mark.timing
def test_reads_and_writes_coalesce(server):
    with make(server) as d:
        plan = d._plan([s for s in d.channels if s.is_input])
        # one request per table: input 0..11 and 20..21 are two runs, the rest one each
        tables = [(r.table, r.start, r.count) for r in plan]
        assert tables == [("coil", 7, 1), ("discrete", 3, 1), ("holding", 30, 2),
                          ("input", 0, 12), ("input", 20, 2)]
        server.accesses.clear()
        d.read()
        assert server.accesses == {1: 1, 2: 1, 3: 1, 4: 2}
        server.accesses.clear()
        d.write({"ao_u16": 1.0, "ao_i16": 1.0, "ao_u32": 1.0, "do0": True, "do1": True})
        assert server.accesses == {16: 1, 15: 1}  # holding 0..3 at once, coils 5..6 at once


@pytest.mark.timing
def test_exception_response_names_channel_address_and_code(server):
    chans = CHANNELS + [ch("ai_bad", "ai", (0, 1)), ch("ao_bad", "ao", (0, 10))]
    pts = {**POINTS, "ai_bad": ModbusPoint(100), "ao_bad": ModbusPoint(45)}
    with make(server, channels=chans, points=pts) as d:
        with pytest.raises(ModbusError) as ei:
            d.read("ai_bad")
        msg = str(ei.value)
        assert "'ai_bad'" in msg and "input register 100" in msg and "exception 2" in msg
        assert "ILLEGAL_ADDRESS" in msg and "0-based" in msg
        assert ei.value.code == 2 and ei.value.channels == ("ai_bad",)
        with pytest.raises(ModbusError, match=r"'ao_bad' \(holding register 45, device id 1\)"):
            d.write({"ao_bad": 1.0})
        assert d.link_up and d.link_counters.device_errors == 2
        assert d.read("ai_u16")  # the link is fine


@pytest.mark.timing
def test_refused_coalesced_read_is_split(server):
    # holding 40..49 does not exist: bridging it is refused, each channel alone reads
    chans = [ch("a", "ai", (0, 100)), ch("b", "ai", (0, 100))]
    pts = {"a": ModbusPoint(39, table="holding"), "b": ModbusPoint(50, table="holding")}
    server.set("holding", 39, [7])
    server.set("holding", 50, [9])
    with make(server, channels=chans, points=pts, max_gap=20) as d:
        assert len(d._plan(d.channels)) == 1
        assert d.read() == {"a": 7.0, "b": 9.0}
        assert len(d._plan(d.channels)) == 2  # split for good
        server.accesses.clear()
        assert d.read() == {"a": 7.0, "b": 9.0}
        assert server.accesses == {3: 2}


@pytest.mark.timing
def test_disconnect_mid_run_and_resume(server):
    d = make(server, backoff=(0.01, 0.1))
    with d:
        server.set("input", 0, [600])  # 10.0
        for _ in range(5):
            assert d.read("ai_u16") == {"ai_u16": pytest.approx(10.0)}
        server.stop()
        lost = 0
        for _ in range(5):  # the server is gone: every read raises, none hangs
            with pytest.raises(Disconnected, match="127.0.0.1") as ei:
                d.read()
            lost += 1
            time.sleep(0.01)
        assert "next call reconnects" in str(ei.value) or "link is down" in str(ei.value)
        assert not d.link_up
        server.start()  # same port, fresh datastore
        server.set("input", 0, [700])  # 20.0
        deadline = time.monotonic() + GENEROUS_S
        while True:
            try:
                v = d.read("ai_u16")
                break
            except Disconnected:
                lost += 1
                assert time.monotonic() < deadline, f"no reconnect within {GENEROUS_S} s"
                time.sleep(0.01)
        assert v == {"ai_u16": pytest.approx(20.0)}
        lc = d.link_counters
        assert lc.disconnects == 1 and lc.reconnects == 1 and lc.lost_reads == lost
        assert lc.reconnect_attempts >= 1
        d.write({"do0": True})  # writes resume too
        assert server.get("coil", 5) == [True]


@pytest.mark.timing
def test_reconnect_false_gives_up(server):
    with make(server, reconnect=False) as d:
        server.stop()
        with pytest.raises(Disconnected, match="reconnect=False"):
            d.read()
        server.start()
        with pytest.raises(Disconnected, match="reconnecting has stopped"):
            d.read()
        d.close()
        d.open()
        assert d.read("ai_u16")


@pytest.mark.timing
def test_absent_server_at_open_is_an_error_at_once():
    d = ModbusDaq([ch("a", "ai", (0, 1))], points={"a": 0}, port=free_port(), timeout=1.0)
    with pytest.raises(BackendError, match="cannot connect.*Modbus TCP server runs"):
        d.open()
    assert not d.is_open


def test_registry_backend(server):
    b = hil.create_backend("modbus", name="plc", channels=[ch("a", "ai", (0, 100)),
                                                         ch("q", "do")],
                           points={"a": 0, "q": 0}, port=server.port)
    server.set("input", 0, [42])
    with b:
        assert b.read() == {"a": 42.0}
        b.write({"q": True})
        assert server.get("coil", 0) == [True]
    assert not b.device.is_open


@pytest.mark.parametrize("chans, points, match", [
    ([ch("p", "pwm_out", (0, 100), "Hz")], {"p": 0}, "no Modbus mapping"),
    ([ch("a", "ao", (-10, 10))], {"a": ModbusPoint(0, scale=0.001)}, "do not fit uint16"),
    ([ch("d", "di")], {"d": ModbusPoint(0, table="holding")}, "not allowed"),
    ([ch("c", "counter")], {"c": ModbusPoint(0, dtype="float32")}, "integer register"),
    ([ch("a", "ai", (0, 1))], {}, "has no Modbus point"),
    ([ch("a", "ai", (0, 1))], {"a": ModbusPoint(0, dtype="int64")}, "dtype 'int64' unknown"),
])
def test_bad_channel_maps(chans, points, match):
    with pytest.raises(ValueError, match=match):
        ModbusDaq(chans, points=points)


def test_unknown_point_name_lists_channels():
    with pytest.raises(KeyError, match="unknown channel 'b'.*channels: a"):
        ModbusDaq([ch("a", "ai", (0, 1))], points={"a": 0, "b": 1})


def test_missing_pymodbus_is_driver_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymodbus.client", None)
    d = ModbusDaq([ch("a", "ai", (0, 1))], points={"a": 0})
    with pytest.raises(DriverMissing, match=r"pip install 'cosim\[hil\]'"):
        d.open()
