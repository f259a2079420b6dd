"""The virtual rig's results equal the real-time rig's on the checks that do not depend on
timing (issue 36): the same scenarios of the ACC tests run on ``rigs/virtual.toml``
(lock-step, no wall clock) and on ``rigs/realtime.toml`` (the ECU as its own process over
``udp_multicast``, the plant paced by the wall clock), and their verdicts and non-timing
figures are compared: the DTC codes and status bytes read over UDS, the out-of-range
count of the command's receiver, the time gap read back over XCP and UDS, and the steady
gaps within :data:`GAP_TOL_M`.

Left out, because they depend on timing: latencies (the stimulus response, the staleness
detection's instant), the transient's shape, sample-for-sample equality.

A ``timing`` test (the real-time rig runs on the wall clock): run it alone, on a quiet
machine; a difference while the machine was busy is "overloaded: not judged"
(:func:`tests.timing_plugin.judge_figure`).
"""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest

pytest.importorskip("udsoncan")
pytest.importorskip("pyxcp")

from examples.acc_hil import SPEED, safe_brake_nm  # noqa: E402
from hil.testing import sig  # noqa: E402
from hil.testing.rig import Rig  # noqa: E402
from hil.testing.rigfile import load_rig  # noqa: E402
from tests.timing_plugin import judge_figure  # noqa: E402

pytestmark = pytest.mark.timing

RIGS = pathlib.Path(__file__).resolve().parents[2] / "examples" / "hil_tests" / "rigs"
#: steady gap agreement [m]: at the spacing law's equilibrium (range rate 0) the gap is
#: d0 + t_h v whatever the loop's delays, so the rigs differ only by the residual of the
#: settling and the inputs' quantization the law sees (range 0.01 m, speed 0.01 m/s in the
#: DBC: t_h x 0.01 m/s = 0.02 m at 2 s); 0.05 m is 0.1 % of the 42.5 m gap
GAP_TOL_M = 0.05
SAFE = (sig("throttle") <= 0.0) & (sig("brake") >= 0.99 * safe_brake_nm())


def _steady(rig, name: str, seconds: float = 2.0) -> float:
    tr = rig.trace([name])
    return float(np.mean(tr[name][tr.t > rig.time - seconds]))


def following(rig):
    uds = rig.uds
    rig.run(9.0)
    v = {"gap at 42.5 m +- 0.5": rig.always(abs(sig("gap") - 42.5) <= 0.5, start=1.0,
                                             expect=False).passed,
         "speed at 25 m/s +- 0.1": rig.always(abs(sig("ego_speed") - SPEED) <= 0.1,
                                               start=1.0, expect=False).passed}
    return v, {"dtcs": uds.read_dtcs(), "steady_gap": _steady(rig, "gap")}


def stale_radar(rig):
    uds = rig.uds
    rig.run(5.0)
    before = uds.read_dtcs()
    with rig.fault("stale", messages=["RADAR"]):
        t0 = rig.time
        rig.run(1.0)
        during = uds.read_dtcs()  # while the radar is stale
    t1 = rig.time
    rig.run(1.0)
    after = uds.read_dtcs()
    uds.clear_dtcs()
    cleared = uds.read_dtcs()
    v = {"safe state within 0.15 s": rig.eventually(SAFE, within=0.15, start=t0,
                                                    expect=False).passed,
         "safe state held": rig.always(SAFE, start=t0 + 0.15, during=0.8,
                                       expect=False).passed,
         "command back within 0.2 s": rig.eventually(sig("command_fresh") >= 0.5,
                                                     within=0.2, start=t1,
                                                     expect=False).passed}
    return v, {"dtcs_before": before, "dtcs_during": during, "dtcs_after": after,
               "dtcs_cleared": cleared}


def out_of_range(rig):
    rig.run(3.0)
    rig.write("acc_throttle", 1.023)
    t0 = rig.time
    rig.run(0.5)
    v = {"never reached the car": rig.always(sig("throttle") < 0.5, start=t0,
                                             expect=False).passed,
         "command stays fresh": rig.always(sig("command_fresh") >= 0.5, start=t0,
                                           expect=False).passed}
    return v, {"out_of_range": rig.stats("rx_cmd")["out_of_range"]}


def calibration(rig):
    xcp, uds = rig.xcp, rig.uds
    rig.run(6.0)
    gap0 = _steady(rig, "gap")
    xcp.write("acc.time_gap_s", 2.0)
    t0 = rig.time
    rig.run(40.0)
    read = (xcp.read("acc.time_gap_s"), uds.read_did(0x0101))
    v = {"settles at 55.0 m +- 0.05": rig.settles("gap", to=55.0, tol=0.05, within=37.0,
                                                  start=t0, expect=False).passed}
    return v, {"steady_gap": gap0, "steady_gap_after": _steady(rig, "gap"),
               "time_gap_read": read, "dtcs": uds.read_dtcs()}


def bus_off(rig):
    rig.run(5.0)
    with rig.fault("bus_off", duration=0.5):
        rig.run(0.5)
    t_end = rig.time
    rig.run(3.0)
    v = {"felt": rig.eventually(sig("command_fresh") < 0.5, within=0.5, start=5.0,
                                expect=False).passed,
         "back": rig.eventually(sig("command_fresh") >= 0.5, within=0.3, start=t_end,
                                expect=False).passed,
         "speed settles": rig.settles("ego_speed", to=25.0, tol=0.5, within=2.5, start=t_end,
                                      expect=False).passed}
    return v, {}


SCENARIOS = {"following": (following, {}), "stale_radar": (stale_radar, {}),
             "out_of_range": (out_of_range, {}), "calibration": (calibration, {}),
             "bus_off": (bus_off, {})}


def _run(rig_name: str, scenario: str):
    fn, plant = SCENARIOS[scenario]
    with Rig(load_rig(RIGS / f"{rig_name}.toml"), plant_args=plant) as rig:
        return fn(rig)


def _same(a, b) -> bool:
    if isinstance(a, float):
        return math.isclose(a, b, abs_tol=GAP_TOL_M)
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_virtual_and_real_time_rigs_agree(scenario):
    v_virtual, f_virtual = _run("virtual", scenario)
    v_real, f_real = _run("realtime", scenario)
    print(f"\n{scenario}: verdicts virtual {v_virtual} realtime {v_real}\n"
          f"  figures virtual {f_virtual}\n  figures realtime {f_real}")
    assert all(v_virtual.values()), v_virtual  # the scenario's checks pass in lock-step
    assert f_real.keys() == f_virtual.keys()
    # the real-time rig agrees when its loop keeps up: a difference while other work took
    # the machine (once: `make test`'s timing phase beside another pytest of two workers,
    # steady gap 42.64 m) is not judged; on a quiet machine it fails
    differ = [k for k in v_virtual if v_real.get(k) != v_virtual[k]]
    differ += [k for k in f_virtual if not _same(f_virtual[k], f_real[k])]
    judge_figure(not differ, f"{scenario}: the real-time rig differs from the virtual one "
                             f"in {', '.join(differ)}")
