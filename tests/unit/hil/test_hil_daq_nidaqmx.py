"""hil.daq.nidaqmx: the clear error without NI's driver, and the channel-to-task
mapping against a fake ``nidaqmx`` module."""

from __future__ import annotations

import collections
import enum
import sys
import types

import pytest

import hil
from hil.daq import ChannelSpec
from hil.daq.device import DaqError
from hil.daq.nidaqmx import NiDaqmxDevice, task_plan
from hil.errors import DriverMissing


def ch(name, kind, rng=None, unit=None, bits=None):
    return ChannelSpec(name, kind, rng, unit, bits)


CHANNELS = [
    ch("Dev1/ai0", "ai", (-10, 10), "V"), ch("Dev1/ai1", "ai", (-5, 5), "V"),
    ch("valve", "ao", (0, 5), "V"), ch("Dev1/port0/line0", "di"),
    ch("Dev1/port0/line1", "di"), ch("pump", "do"), ch("Dev1/ctr0", "counter"),
    ch("Dev1/ctr1", "frequency_in", (1, 1000), "Hz"), ch("pwm", "pwm_out", (1, 10_000), "Hz"),
]
PHYSICAL = {"valve": "Dev1/ao1", "pump": "Dev1/port1/line0", "pwm": "Dev1/ctr2"}


def _driver_present() -> str | None:
    try:
        import nidaqmx.system
        nidaqmx.system.System.local().driver_version  # noqa: B018
    except Exception as exc:  # noqa: BLE001
        return f"NI-DAQmx driver not available: {type(exc).__name__}: {exc}"
    return None


def test_real_hardware_round_trip():
    reason = _driver_present()
    if reason:
        pytest.skip(reason)
    pytest.skip("no NI hardware wiring is declared for this machine")  # pragma: no cover


def test_missing_driver_is_a_clear_driver_missing():
    pytest.importorskip("nidaqmx")
    if _driver_present() is None:
        pytest.skip("the NI-DAQmx driver is installed here")
    d = NiDaqmxDevice(CHANNELS, physical=PHYSICAL)
    with pytest.raises(DriverMissing) as ei:
        d.open()
    msg = str(ei.value)
    assert "NI-DAQmx driver not found" in msg and "cosim[nidaq]" in msg
    assert "comes from NI" in msg and "daq-sim" in msg
    assert not d.is_open


def test_missing_package_is_driver_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "nidaqmx", None)
    with pytest.raises(DriverMissing, match=r"pip install 'cosim\[nidaq\]'"):
        NiDaqmxDevice(CHANNELS, physical=PHYSICAL).open()


def test_task_plan():
    plan = task_plan(CHANNELS, PHYSICAL)
    assert [(p.kind, p.channels) for p in plan] == [
        ("ai", (("Dev1/ai0", "Dev1/ai0"), ("Dev1/ai1", "Dev1/ai1"))),
        ("ao", (("valve", "Dev1/ao1"),)),
        ("di", (("Dev1/port0/line0", "Dev1/port0/line0"),
                ("Dev1/port0/line1", "Dev1/port0/line1"))),
        ("do", (("pump", "Dev1/port1/line0"),)),
        ("counter", (("Dev1/ctr0", "Dev1/ctr0"),)),
        ("frequency_in", (("Dev1/ctr1", "Dev1/ctr1"),)),
        ("pwm_out", (("pwm", "Dev1/ctr2"),)),
    ]


# ------------------------------------------------------------------ fake nidaqmx
class FakeDaqError(Exception):
    pass


class FakeTask:
    def __init__(self, fake, name):
        self.fake, self.name, self.calls, self.chans = fake, name, [], []
        self.started = self.closed = False
        self.count = 0
        self.timing = types.SimpleNamespace(
            cfg_implicit_timing=lambda **kw: self.calls.append(("timing", kw)))
        for coll in ("ai_channels", "ao_channels", "di_channels", "do_channels",
                     "ci_channels", "co_channels"):
            setattr(self, coll, _Coll(self, coll))
        fake.tasks[name] = self

    def start(self):
        self.started = True
        self.count = 0
        self.calls.append(("start",))

    def stop(self):
        self.started = False
        self.calls.append(("stop",))

    def close(self):
        self.closed = True

    def read(self, timeout=10.0):
        kinds = {c[0] for c in self.chans}
        if self.fake.fail_read:
            raise self.fake.errors.DaqError("device removed (-200279)")
        if "ai_channels" in kinds:
            vals = [1.5 * (i + 1) for i in range(len(self.chans))]
        elif "di_channels" in kinds:
            vals = [i % 2 == 0 for i in range(len(self.chans))]
        elif self.chans[0][1] == "add_ci_count_edges_chan":
            self.count += 7
            return self.count
        else:
            return 123.0
        return vals if len(vals) > 1 else vals[0]

    def write(self, data, auto_start=None, timeout=10.0):
        self.calls.append(("write", data))


class _Coll:
    def __init__(self, task, coll):
        self.task, self.coll = task, coll
        self.by_name = {}

    def __getattr__(self, method):
        if not method.startswith("add_"):
            raise AttributeError(method)

        def add(phys, **kw):
            self.task.chans.append((self.coll, method, phys, kw))
            name = kw.get("name_to_assign_to_channel") or kw.get("name_to_assign_to_lines")
            self.by_name[name] = types.SimpleNamespace()
        return add

    def __getitem__(self, name):
        return self.by_name[name]


@pytest.fixture
def fake(monkeypatch):
    nd = types.ModuleType("nidaqmx")
    nd.tasks = {}
    nd.fail_read = False
    e = enum.Enum
    nd.constants = types.SimpleNamespace(
        TerminalConfiguration=e("TC", "DEFAULT RSE NRSE DIFF PSEUDO_DIFF"),
        VoltageUnits=e("VU", "VOLTS"), LineGrouping=e("LG", "CHAN_PER_LINE"),
        Edge=e("Edge", "RISING FALLING"), CountDirection=e("CD", "COUNT_UP"),
        FrequencyUnits=e("FU", "HZ"), Level=e("Level", "LOW HIGH"),
        AcquisitionType=e("AT", "CONTINUOUS FINITE"))
    nd.errors = types.SimpleNamespace(DaqError=FakeDaqError,
                                      DaqNotFoundError=type("DaqNotFoundError",
                                                            (Exception,), {}))
    nd.system = types.SimpleNamespace(System=types.SimpleNamespace(
        local=lambda: types.SimpleNamespace(driver_version="fake 1.0")))
    nd.types = types.SimpleNamespace(CtrFreq=collections.namedtuple("CtrFreq",
                                                                    "freq duty_cycle"))
    nd.Task = lambda name="": FakeTask(nd, name)
    monkeypatch.setitem(sys.modules, "nidaqmx", nd)
    for sub in ("constants", "errors", "system", "types"):
        monkeypatch.setitem(sys.modules, f"nidaqmx.{sub}", getattr(nd, sub))
    return nd


def test_channels_map_onto_tasks(fake):
    d = NiDaqmxDevice(CHANNELS, physical=PHYSICAL, terminal_config="diff").open()
    t = fake.tasks
    assert sorted(t) == ["cosim-ai", "cosim-ao", "cosim-counter-Dev1/ctr0", "cosim-di",
                         "cosim-do", "cosim-frequency_in-Dev1/ctr1", "cosim-pwm_out-pwm"]
    c = fake.constants
    (coll, method, phys, kw), _ = t["cosim-ai"].chans
    assert (coll, method, phys) == ("ai_channels", "add_ai_voltage_chan", "Dev1/ai0")
    assert kw["min_val"] == -10 and kw["max_val"] == 10
    assert kw["terminal_config"] is c.TerminalConfiguration.DIFF
    assert t["cosim-ao"].chans[0][1:3] == ("add_ao_voltage_chan", "Dev1/ao1")
    assert t["cosim-ao"].chans[0][3]["min_val"] == 0 and t["cosim-ao"].chans[0][3]["max_val"] == 5
    per_line = c.LineGrouping.CHAN_PER_LINE
    assert [x[3]["line_grouping"] for x in t["cosim-di"].chans] == [per_line] * 2
    assert t["cosim-do"].chans[0][1:3] == ("add_do_chan", "Dev1/port1/line0")
    ctr = t["cosim-counter-Dev1/ctr0"]
    assert ctr.chans[0][1] == "add_ci_count_edges_chan" and ctr.started
    assert ctr.chans[0][3]["edge"] is c.Edge.RISING
    fin = t["cosim-frequency_in-Dev1/ctr1"]
    assert fin.chans[0][1] == "add_ci_freq_chan" and fin.chans[0][3]["max_val"] == 1000
    pwm = t["cosim-pwm_out-pwm"]
    assert pwm.chans[0][1:3] == ("add_co_pulse_chan_freq", "Dev1/ctr2") and not pwm.started
    assert pwm.calls == [("timing", {"sample_mode": c.AcquisitionType.CONTINUOUS})]

    v = d.read()
    assert v == {"Dev1/ai0": 1.5, "Dev1/ai1": 3.0, "Dev1/port0/line0": True,
                 "Dev1/port0/line1": False, "Dev1/ctr0": 7, "Dev1/ctr1": 123.0}
    d.reset("Dev1/ctr0")
    assert ctr.calls[-2:] == [("stop",), ("start",)]
    d.write({"valve": 2.0, "pump": True, "pwm": (0.25, 500.0)})
    assert t["cosim-ao"].calls[-1] == ("write", 2.0)
    assert t["cosim-do"].calls[-1] == ("write", True)
    assert pwm.started and pwm.co_channels["pwm"].co_pulse_freq == 500.0
    d.write({"pwm": (0.5, 800.0)})  # running: a CtrFreq sample updates it
    assert pwm.calls[-1] == ("write", fake.types.CtrFreq(800.0, 0.5))
    d.write({"pwm": (0.0, 800.0)})  # duty 0 stops it
    assert not pwm.started
    with pytest.raises(DaqError, match="cannot generate duty 1"):
        d.write({"pwm": (1.0, 800.0)})
    assert d.read(["valve", "pump", "pwm"]) == {"valve": 2.0, "pump": True, "pwm": (0.0, 800.0)}
    fake.fail_read = True
    with pytest.raises(DaqError, match=r"read of Dev1/ai0 \(Dev1/ai0\).*device removed"):
        d.read("Dev1/ai0")
    d.close()
    assert all(task.closed for task in t.values())


def test_registry_name(fake):
    b = hil.create_backend("nidaqmx", channels=[ch("Dev1/ai0", "ai", (-1, 1), "V")])
    with b:
        assert b.read() == {"Dev1/ai0": 1.5}
