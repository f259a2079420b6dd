"""XCP on CAN with pyxcp as the master against the example ACC ECU (hil.xcp).

One process, python-can ``virtual`` buses: the plant and the ECU of ``examples/acc_hil.py``
stepped in lock-step (as :func:`examples.acc_hil.offline_lockstep`), the ECU's XCP slave
serving pyxcp from its thread, the DAQ event at the end of each ECU frame.
"""

from __future__ import annotations

import importlib.util
import os
import struct
import time
import uuid

import numpy as np
import pytest

pytest.importorskip("can")
if importlib.util.find_spec("pyxcp") is None:  # imported by hil.xcp.master (its hooks undone)
    pytest.skip("pyxcp not installed (pip install 'cosim[hil-test]')", allow_module_level=True)

from blocks.controllers import ACCSettings  # noqa: E402
from cosim import Simulator  # noqa: E402
from examples.acc_ecu import ecu_diagram  # noqa: E402
from examples.acc_hil import DT, RECORD, SPEED, plant_diagram, scenario  # noqa: E402
from examples.acc_plant import CONTROL_PERIOD  # noqa: E402
from hil.can import ACC_DBC, CanBackend, CanDatabase  # noqa: E402
from hil.xcp import acc_ecu_xcp  # noqa: E402
from hil.xcp.master import daq_collector, daq_list, lost_samples, open_master  # noqa: E402
from hil.xcp.memory import CAL_BASE, MEAS_BASE  # noqa: E402

#: pyxcp's command timeout: a guard against a hang (the slave answers in milliseconds)
GUARD_S = 60.0


def channel() -> str:
    return f"xcp-test-{os.getpid()}-{uuid.uuid4().hex}"


def master(ch: str, policy=None):
    return open_master("virtual", ch, policy=policy, timeout_s=60.0)  # a hang guard


def wait_rows(pol, n: int) -> None:
    """Until pyxcp decoded ``n`` samples: they are on the virtual bus already, only its
    listener thread has to catch up (a hang guard, no wall-clock budget)."""
    end = time.monotonic() + GUARD_S  # not timing: a hang guard
    while len(pol.rows) < n and time.monotonic() < end:  # not timing: the same guard
        time.sleep(0.005)  # not timing: polling for rows already sent


class Rig:
    """Plant + ECU on one virtual bus, the ECU's XCP slave on it; lock-step frames."""

    def __init__(self, cut_in_s: float = 1e3, t_end: float = 60.0,
                 ecu_record: list | None = None, a2l=None) -> None:
        import can
        self.ch = channel()
        db = CanDatabase(ACC_DBC)
        self.pc = CanBackend("virtual", self.ch, timeout=0.0).open()
        self.ec = CanBackend("virtual", self.ch, timeout=0.0).open()
        self.esim = Simulator(ecu_diagram(self.ec, db), solver="rk4",
                              record=ecu_record or False)
        self.psim = Simulator(plant_diagram(self.pc, db, scenario(cut_in_s, t_end)),
                              solver="ab3", dt=DT, record=RECORD, record_every=5)
        self.esim.initialize()
        self.psim.initialize()
        self.xbus = can.Bus(interface="virtual", channel=self.ch)
        self.xcp = acc_ecu_xcp(self.esim, CONTROL_PERIOD, bus=self.xbus, a2l=a2l)
        self.k = 0
        self.per = round(CONTROL_PERIOD / DT)

    def run_to(self, t: float) -> None:
        n = round(t / DT)
        while self.k < n:
            self.k += 1
            self.psim.advance_to(self.k * DT)
            if self.k % self.per == 0:
                self.xcp.before_frame()
                self.esim.advance_to(self.k * DT)
                self.xcp.after_frame()

    def close(self):
        self.xcp.close()
        self.xbus.shutdown()
        self.pc.close()
        self.ec.close()


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def test_connect_identity_upload_download(tmp_path):
    rig = Rig(a2l=tmp_path / "acc_ecu.a2l")
    try:
        with master(rig.ch) as x:
            res = x.connect()
            assert res.maxCto == 8 and res.resource.daq and res.resource.calpag
            assert x.identifier(1) == "acc_ecu"  # the A2L's name
            assert "ACC ECU" in x.identifier(0)
            x.setMta(CAL_BASE)
            assert struct.unpack("<f", x.upload(4))[0] == 1.5  # the default time gap
            x.setMta(CAL_BASE)
            x.download(struct.pack("<f", 1.8))
            # read back at once: the slave's image holds the value written
            assert struct.unpack("<f", x.shortUpload(4, CAL_BASE))[0] == f32(1.8)
            h = rig.esim.ctx.plan.find_parameter("acc.time_gap_s")
            assert rig.esim.ctx.param(h) == 1.5  # not applied before the next frame
            rig.run_to(CONTROL_PERIOD)
            assert rig.esim.ctx.param(h) == f32(1.8)
            st = x.getStatus()
            assert not st.sessionStatus.daqRunning
            x.disconnect()
    finally:
        rig.close()


def _err(exc) -> str:
    return str(exc.value.get_error_code())


def test_error_packets():
    from pyxcp.types import XcpResponseError
    rig = Rig()
    try:
        with master(rig.ch) as x:
            x.connect()
            with pytest.raises(XcpResponseError) as e:  # a measurement is read-only
                x.setMta(MEAS_BASE)
                x.download(struct.pack("<f", 1.0))
            assert "ACCESS_DENIED" in _err(e)
            with pytest.raises(XcpResponseError) as e:  # outside ISO 15622's range
                x.setMta(CAL_BASE)
                x.download(struct.pack("<f", 3.0))
            assert "OUT_OF_RANGE" in _err(e)
            with pytest.raises(XcpResponseError) as e:  # half a float32
                x.setMta(CAL_BASE)
                x.download(b"\x00\x00")
            assert "OUT_OF_RANGE" in _err(e)
            with pytest.raises(XcpResponseError) as e:  # no memory there
                x.shortUpload(4, 0x00300000)
            assert "ACCESS_DENIED" in _err(e)
            with pytest.raises(XcpResponseError) as e:  # not served: SET_CAL_PAGE
                x.setCalPage(0x83, 0, 1)
            assert "CMD_UNKNOWN" in _err(e)
            n = rig.xcp.slave.commands
            x.synch()  # answered by ERR_CMD_SYNCH, which pyxcp takes as SYNCH's answer
            assert rig.xcp.slave.commands == n + 1
            # the refused writes left the parameter alone
            assert struct.unpack("<f", x.shortUpload(4, CAL_BASE))[0] == 1.5
            assert rig.xcp.slave.errors["ERR_ACCESS_DENIED"] == 2
            x.disconnect()
    finally:
        rig.close()


def test_time_gap_calibrated_changes_steady_gap():
    """gap = d0 + t_h v at the law's equilibrium (s = 0, range rate 0): following a lead at
    25 m/s, t_h 1.5 -> 2.0 s calibrated over XCP moves the steady gap by 0.5 x 25 m."""
    st = ACCSettings()
    th0, th1 = st.time_gap_s, 2.0
    rig = Rig(t_end=60.0)
    try:
        with master(rig.ch) as x:
            x.connect()
            rig.run_to(6.0)
            x.setMta(CAL_BASE)
            x.download(struct.pack("<f", th1))
            x.disconnect()
        rig.run_to(45.0)
        res = rig.psim.finish()
    finally:
        rig.close()
    t, r = res.time, res["radar.range"]
    before = float(np.mean(r[(t > 4.0) & (t <= 6.0)]))
    after = float(np.mean(r[(t > 43.0) & (t <= 45.0)]))
    v_end = float(np.mean(res["car.v"][t > 43.0]))
    assert before == pytest.approx(st.standstill_gap_m + th0 * SPEED, abs=0.05)
    assert v_end == pytest.approx(SPEED, abs=0.01)
    assert after - before == pytest.approx((th1 - th0) * SPEED, abs=0.05)


def test_daq_equals_logged_values():
    """acc.a_prev (a_k, the state) over a DAQ list, sample for sample against the
    controller's own log of accel_request (the same a_k at each hit), as float32."""
    rig = Rig(cut_in_s=4.0, t_end=20.0, ecu_record=["acc.accel_request"])
    addr = rig.xcp.memory.variable("acc.a_prev").address
    pol = daq_collector([daq_list("accel", [("acc.a_prev", addr)])])
    try:
        with master(rig.ch, pol) as x:
            x.connect()
            rig.run_to(2.0)
            pol.setup()
            pol.start()
            t_first = rig.k * DT + CONTROL_PERIOD  # the first event after the start
            frames0 = rig.xcp.frames
            rig.run_to(9.0)
            sent = rig.xcp.slave.daq.samples_sent
            wait_rows(pol, sent)
            pol.stop()
            x.disconnect()
        log = rig.esim.finish()
    finally:
        rig.close()
    rows = pol.rows
    assert sent == rig.xcp.frames - frames0 == 437  # ECU frames 126..562 (16 ms each)
    assert len(rows) == sent
    ts = [r[2] for r in rows]
    assert lost_samples(ts, CONTROL_PERIOD) == 0
    lt, la = log.time, log["acc.accel_request"]
    nonzero = 0
    for _, _, t_ns, (value,) in rows:
        t = t_first + t_ns * 1e-9
        i = int(np.argmin(np.abs(lt - t)))
        assert abs(lt[i] - t) < 1e-9
        assert value == f32(float(la[i])), f"at t = {t:.3f} s"
        nonzero += value != 0.0
    assert nonzero > len(rows) // 2  # the cut-in at 4 s: a law that acts, not zeros


def test_daq_1khz_no_lost_sample():
    """A 1 kHz event for 3 s of events (stepped as fast as the process goes: harsher for
    the transport than real time): every sample arrives, consecutive timestamps 1 ms."""
    import can

    from hil.xcp import XcpEcu
    ch = channel()
    with CanBackend("virtual", ch, timeout=0.0) as ec:
        sim = Simulator(ecu_diagram(ec, CanDatabase(ACC_DBC), period_s=0.001),
                        solver="rk4", record=False)
        sim.initialize()
        bus = can.Bus(interface="virtual", channel=ch)
        from hil.xcp import acc_memory_map
        ecu = XcpEcu(acc_memory_map(sim), 0.001, bus=bus)
        mm = ecu.memory
        pol = daq_collector([daq_list("fast", [("acc.a_prev", mm.variable("acc.a_prev").address),
                                              ("rx.ok", mm.variable("rx.ok").address)])])
        try:
            with master(ch, pol) as x:
                x.connect()
                pol.setup()
                pol.start()
                for k in range(1, 3001):
                    sim.advance_to(k * 0.001)
                    ecu.after_frame()
                wait_rows(pol, 3000)
                pol.stop()
                x.disconnect()
        finally:
            ecu.close()
            bus.shutdown()
    assert ecu.slave.daq.samples_sent == 3000
    assert ecu.slave.daq.dtos_sent == 6000  # two ODTs per sample: 1+2+4, then 1+4 bytes
    ts = [r[2] for r in pol.rows]
    assert len(pol.rows) >= 0.9999 * 3000
    assert lost_samples(ts, 0.001) == 0
    assert np.allclose(np.diff(ts), 1e6)
