"""Lock-step over CAN (hil.can.lockstep) in one process on a python-can ``virtual`` bus:
every frame runs on both ends even when either end stalls, and the runner refuses the
overrun policies that would drop a SYNC (the CI failure of 2026-11-28: a plant frame that
overran under ``overrun="skip"`` skipped a follower hit, and the ECU stopped)."""

import itertools
import threading
import time
from types import SimpleNamespace

import pytest

pytest.importorskip("can")

from blocks.continuous import Integrator  # noqa: E402
from blocks.sources import Constant  # noqa: E402
from cosim import DiagramBuilder, Simulator  # noqa: E402
from cosim.errors import ParameterError  # noqa: E402
from hil.can import CanBackend  # noqa: E402
from hil.can.lockstep import LockstepBus, LockstepFollower, LockstepLeader, SyncClock  # noqa: E402
from hil.errors import HILError  # noqa: E402
from hil.runner import RealTimeRunner  # noqa: E402
from tests.timing_plugin import GENEROUS_S  # noqa: E402

_ids = itertools.count()
LEADER_P, FOLLOWER_P = 2e-3, 4e-3
EVERY_FRAME = {"overrun": "catch_up", "max_catch_up": None}


def _sim():
    b = DiagramBuilder("ramp")
    c = b.add(Constant("c", 1.0))
    i = b.add(Integrator("i", 0.0))
    b.connect(c.y, i.u)
    return Simulator(b.build(), solver="rk4", dt=1e-3, record=["i.y"])


@pytest.fixture
def buses():
    ch = f"lockstep-test-{next(_ids)}"
    a = CanBackend("virtual", ch, name="plant", timeout=0.0).open()
    b = CanBackend("virtual", ch, name="ecu", timeout=0.0).open()
    yield LockstepBus(a).open(), LockstepBus(b).open()
    a.close()
    b.close()


class _Stall:
    """An ``on_frame`` that sleeps ``stall_s`` at frame ``at``, then calls ``inner``."""

    needs_every_frame = True

    def __init__(self, inner, at, stall_s):
        self.inner, self.at, self.stall_s = inner, at, stall_s

    def __call__(self, runner, k):
        if k == self.at:
            time.sleep(self.stall_s)
        if self.inner is not None:
            self.inner(runner, k)


@pytest.mark.timing
def test_both_ends_run_every_frame_through_stalls_on_either_side(buses):
    plant_bus, ecu_bus = buses
    t_end = 0.2
    clock = SyncClock(ecu_bus, timeout_s=5.0)
    follower = LockstepFollower(ecu_bus, clock)
    ecu = RealTimeRunner(_sim(), FOLLOWER_P, clock=clock, realtime="off",
                         on_frame=_Stall(follower, at=30, stall_s=0.05), **EVERY_FRAME)
    errors = []

    def ecu_run():
        try:
            ecu.run(t_end)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    th = threading.Thread(target=ecu_run)
    th.start()
    leader = LockstepLeader(plant_bus, FOLLOWER_P)
    leader.chain = _Stall(None, at=10, stall_s=0.06)  # 30 plant frames late at once
    plant = RealTimeRunner(_sim(), LEADER_P, on_frame=leader, realtime="off",
                           **EVERY_FRAME)
    res = plant.run(t_end)
    th.join(GENEROUS_S)
    assert not errors and not th.is_alive()
    n_hits = round(t_end / FOLLOWER_P)
    assert leader.stats()["syncs"] == n_hits and leader.timeouts == 0
    assert follower.frames == n_hits
    tel, etel = plant.telemetry, ecu.telemetry
    assert tel.overruns >= 1  # the stalls happened ...
    assert tel.skipped == 0 and tel.frames == round(t_end / LEADER_P)  # ... nothing dropped
    assert etel.skipped == 0 and etel.frames == n_hits
    assert res["i.y"][-1] == pytest.approx(t_end, rel=1e-12)


@pytest.mark.parametrize("policy", [{"overrun": "skip"}, {"overrun": "degrade"},
                                    {"overrun": "catch_up", "max_catch_up": 10}])
def test_a_policy_that_drops_frames_is_refused_on_either_end(buses, policy):
    plant_bus, ecu_bus = buses
    with pytest.raises(ParameterError, match="LockstepLeader must see every frame"):
        RealTimeRunner(_sim(), LEADER_P, on_frame=LockstepLeader(plant_bus, FOLLOWER_P),
                       realtime="off", **policy)
    with pytest.raises(ParameterError, match="SyncClock must see every frame.*"
                                             "max_catch_up=None"):
        RealTimeRunner(_sim(), FOLLOWER_P, clock=SyncClock(ecu_bus), realtime="off",
                       **policy)


def test_the_leader_says_so_when_frames_passed_a_follower_hit(buses):
    leader = LockstepLeader(buses[0], 16e-3)

    def at(ms):
        return SimpleNamespace(sim=SimpleNamespace(ctx=SimpleNamespace(ticks=ms * 1_000_000)))

    leader(at(8), 0)  # no hit yet (the next is at 16 ms)
    with pytest.raises(HILError, match="passed the follower's frame at t = 0.016 s without "
                                       "a SYNC"):
        leader(at(24), 1)
