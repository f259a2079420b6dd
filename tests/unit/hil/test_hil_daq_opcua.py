"""hil.daq.opcua: OpcUaDaq against a real asyncua server on loopback."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time

import pytest

pytest.importorskip("asyncua")

from asyncua import Server, ua  # noqa: E402

import hil  # noqa: E402
from hil.daq import ChannelSpec  # noqa: E402
from hil.daq.opcua import OpcUaDaq, OpcUaError, OpcUaPoint  # noqa: E402
from hil.errors import BackendError, Disconnected, DriverMissing  # noqa: E402
from tests.timing_plugin import GENEROUS_S  # noqa: E402

VT = ua.VariantType
# name, initial value, variant type, writable by clients
VARIABLES = [
    ("AI0", 0.0, VT.Double, False), ("AI1", 0, VT.Int16, False), ("FIN", 0.0, VT.Float, False),
    ("DI0", False, VT.Boolean, False), ("CTR0", 0, VT.UInt32, False),
    ("AO0", 0.0, VT.Float, True), ("AO1", 0, VT.Int16, True), ("AO2", 0.0, VT.Double, True),
    ("AO3", 0, VT.UInt16, True), ("DO0", False, VT.Boolean, True), ("DO1", 0, VT.Byte, True),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UaServer:
    """An asyncua server in its own event-loop thread; restartable on its port."""

    def __init__(self) -> None:
        self.url = f"opc.tcp://127.0.0.1:{free_port()}/cosim/"
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.srv = None
        self.nodes: dict[str, object] = {}

    def run(self, coro, timeout=30.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> None:
        async def go():
            srv = Server()
            await srv.init()
            srv.set_endpoint(self.url)
            srv.set_security_policy([ua.SecurityPolicyType.NoSecurity])
            idx = await srv.register_namespace("urn:cosim:test")
            obj = await srv.nodes.objects.add_object(idx, "DAQ")
            for name, value, vt, writable in VARIABLES:
                node = await obj.add_variable(ua.NodeId(f"DAQ.{name}", idx), name,
                                              ua.Variant(value, vt))
                if writable:
                    await node.set_writable()
                self.nodes[name] = node
            await srv.start()
            self.srv = srv
        self.run(go())

    def stop(self) -> None:
        self.run(self.srv.stop())

    def close(self) -> None:
        try:
            self.stop()
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)

    def get(self, name):
        dv = self.run(self.nodes[name].read_data_value())
        return dv.Value.Value, dv.Value.VariantType

    def set(self, name, value):
        vt = next(v[2] for v in VARIABLES if v[0] == name)
        self.run(self.nodes[name].write_value(ua.Variant(value, vt)))


@pytest.fixture(scope="module")
def server():
    s = UaServer()
    s.start()
    yield s
    s.close()


def ch(name, kind, rng=None, unit=None, bits=None):
    return ChannelSpec(name, kind, rng, unit, bits)


CHANNELS = [
    ch("ai0", "ai", (-100, 100), "V"), ch("ai1", "ai", (-50, 50), "bar"),
    ch("fin", "frequency_in", (0, 1000), "Hz"), ch("di0", "di"),
    ch("ctr0", "counter", bits=16), ch("ao0", "ao", (-10, 10), "V"),
    ch("ao1", "ao", (-10, 10), "V"), ch("ao2", "ao", (0, 100)), ch("ao3", "ao", (4, 20), "mA"),
    ch("do0", "do"), ch("do1", "do"),
]
NODES = {
    "ai0": "ns=2;s=DAQ.AI0", "ai1": OpcUaPoint("ns=2;s=DAQ.AI1", scale=0.01),
    "fin": "ns=2;s=DAQ.FIN", "di0": "ns=2;s=DAQ.DI0", "ctr0": "ns=2;s=DAQ.CTR0",
    "ao0": "ns=2;s=DAQ.AO0", "ao1": {"node": "ns=2;s=DAQ.AO1", "scale": 0.001},
    "ao2": OpcUaPoint("ns=2;s=DAQ.AO2", scale=2.0, offset=10.0),
    "ao3": OpcUaPoint("ns=2;s=DAQ.AO3", scale=20 / 65535),
    "do0": "ns=2;s=DAQ.DO0", "do1": "ns=2;s=DAQ.DO1",
}


def make(server, **kw):
    kw.setdefault("timeout", 5.0)
    return OpcUaDaq(kw.pop("channels", CHANNELS), url=server.url,
                    nodes=kw.pop("nodes", NODES), **kw)


@pytest.mark.timing
def test_round_trip_both_ways(server):
    server.set("AI0", 12.5)
    server.set("AI1", -1234)
    server.set("FIN", 440.0)
    server.set("DI0", True)
    server.set("CTR0", 70_000)
    with make(server) as d:
        v = d.read()
        assert v == {"ai0": 12.5, "ai1": pytest.approx(-12.34), "fin": 440.0, "di0": True,
                     "ctr0": 70_000 % 65536}
        d.reset("ctr0")
        server.set("CTR0", 70_003)
        assert d.read("ctr0") == {"ctr0": 3}
        d.write({"ao0": 2.5, "ao1": -1.2345, "ao2": 30.0, "ao3": 10.0, "do0": True,
                 "do1": True})
        # each value arrives in the node's own type, scaled
        assert server.get("AO0") == (2.5, VT.Float)
        assert server.get("AO1") == (-1234, VT.Int16)  # -1234.5 rounds half up
        assert server.get("AO2") == (10.0, VT.Double)  # (30 - 10) / 2
        assert server.get("AO3") == (32768, VT.UInt16)
        assert server.get("DO0") == (True, VT.Boolean)
        assert server.get("DO1") == (1, VT.Byte)
        back = d.read(["ao0", "ao1", "ao2", "ao3", "do0", "do1"])
        assert back == pytest.approx({"ao0": 2.5, "ao1": -1.234, "ao2": 30.0,
                                      "ao3": 32768 * 20 / 65535, "do0": True, "do1": True})
        server.set("AI0", 150.0)  # out of range: clipped and counted
        assert d.read("ai0") == {"ai0": 100.0} and d.counters.saturated == {"ai0": 1}


@pytest.mark.timing
def test_bad_node_id_is_reported_at_open(server):
    d = make(server, channels=[ch("x", "ai", (0, 1))], nodes={"x": "ns=2;s=DAQ.Nope"})
    with pytest.raises(BackendError, match=r"'x' -> 'ns=2;s=DAQ.Nope': BadNodeIdUnknown"):
        d.open()
    assert not d.is_open


@pytest.mark.timing
def test_wrong_node_type_is_reported_at_open(server):
    d = make(server, channels=[ch("c", "counter")], nodes={"c": "ns=2;s=DAQ.AI0"})
    with pytest.raises(BackendError, match="of type Double, which a counter channel cannot"):
        d.open()


@pytest.mark.timing
def test_refused_write_names_channel_and_status(server):
    chans = [ch("ro", "ao", (0, 10)), ch("ok", "ao", (-10, 10))]
    nodes = {"ro": "ns=2;s=DAQ.AI0", "ok": {"node": "ns=2;s=DAQ.AO1", "scale": 1e-4}}
    with make(server, channels=chans, nodes=nodes) as d:
        refused = r"'ro' \(ns=2;s=DAQ.AI0\) refused: Bad(NotWritable|UserAccessDenied)"
        with pytest.raises(OpcUaError, match=refused):
            d.write({"ro": 1.0})
        with pytest.raises(OpcUaError, match=r"raw 50000, outside the node type Int16"):
            d.write({"ok": 5.0})
        d.write({"ok": 1.0})
        assert server.get("AO1") == (10000, VT.Int16)
        assert d.link_up and d.link_counters.device_errors == 2


@pytest.mark.timing
def test_disconnect_mid_run_and_resume():
    srv = UaServer()
    srv.start()
    try:
        d = make(srv, timeout=2.0, backoff=(0.02, 0.2))
        with d:
            srv.set("AI0", 1.0)
            for _ in range(5):
                assert d.read("ai0") == {"ai0": 1.0}
            srv.stop()
            lost = 0
            for _ in range(3):  # the server is gone: every read raises, bounded in time
                t0 = time.monotonic()
                with pytest.raises(Disconnected, match="opc.tcp://127.0.0.1"):
                    d.read()
                assert time.monotonic() - t0 < 10
                lost += 1
            assert not d.link_up
            srv.start()  # same port, fresh address space
            srv.set("AI0", 2.0)
            deadline = time.monotonic() + GENEROUS_S
            while True:
                try:
                    v = d.read("ai0")
                    break
                except Disconnected:
                    lost += 1
                    assert time.monotonic() < deadline, f"no reconnect within {GENEROUS_S} s"
                    time.sleep(0.02)
            assert v == {"ai0": 2.0}
            lc = d.link_counters
            assert lc.disconnects == 1 and lc.reconnects == 1 and lc.lost_reads == lost
            d.write({"do0": True})
            assert srv.get("DO0") == (True, VT.Boolean)
        assert d._loop is None  # the private event-loop thread is gone
    finally:
        srv.close()


@pytest.mark.timing
def test_absent_server_at_open():
    d = OpcUaDaq([ch("a", "ai", (0, 1))], url=f"opc.tcp://127.0.0.1:{free_port()}",
                 nodes={"a": "ns=2;i=5"}, connect_timeout=5.0)
    with pytest.raises(BackendError, match="cannot connect"):
        d.open()
    assert d._loop is None


@pytest.mark.timing
def test_registry_backend(server):
    server.set("AI0", 3.0)
    b = hil.create_backend("opcua", channels=[ch("a", "ai", (0, 10)), ch("q", "do")],
                           url=server.url, nodes={"a": "ns=2;s=DAQ.AI0", "q": "ns=2;s=DAQ.DO0"})
    with b:
        assert b.read() == {"a": 3.0}
        b.write({"q": False})
        assert server.get("DO0") == (False, VT.Boolean)


def test_config_errors():
    with pytest.raises(ValueError, match="no OPC UA mapping"):
        OpcUaDaq([ch("p", "pwm_out", (0, 10), "Hz")], url="opc.tcp://x:1", nodes={"p": "i=1"})
    with pytest.raises(ValueError, match="no node id"):
        OpcUaDaq([ch("a", "ai", (0, 1))], url="opc.tcp://x:1", nodes={})
    with pytest.raises(ValueError, match="must start with 'opc.tcp://'"):
        OpcUaDaq([ch("a", "ai", (0, 1))], url="http://x", nodes={"a": "i=1"})


def test_missing_asyncua_is_driver_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "asyncua", None)
    d = OpcUaDaq([ch("a", "ai", (0, 1))], url="opc.tcp://127.0.0.1:1", nodes={"a": "i=1"})
    with pytest.raises(DriverMissing, match=r"pip install 'cosim\[hil\]'"):
        d.open()
