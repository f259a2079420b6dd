"""examples/shadow_reel.py (quick mode): the paper reel recorded with each of the seed's
fault cases, the nominal shadow fed from the recording through hil.shadow, the seed's 5 %
rule.  The detection windows are those of tests/system/test_paper_reel.py (same faults,
there with machine and shadow in one diagram)."""

import math

import pytest

import examples.shadow_reel as ex


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    out = ex.main(["--quick", "--out", str(tmp_path_factory.mktemp("shadow_reel"))])
    return {r.label: r for r in out}


def test_the_fault_free_recording_raises_no_alarm(rows):
    r = rows["nominal"]
    assert not r.detected and math.isnan(r.detection_s)
    assert r.report.events == []
    # the same model in two runs with different breakpoints: BDF tolerance, far below 5 %
    assert r.max_nip_pct < 1e-3


@pytest.mark.parametrize("label, window", [
    ("rail friction A", (0.05, 0.3)),
    ("valve leak P->A", (0.05, ex.QUICK["leak_ramp_s"] + 0.5)),
    ("sensor noise A", (0.05, 0.5))])
def test_each_fault_is_detected_after_its_onset(rows, label, window):
    r = rows[label]
    assert r.detected
    assert window[0] <= r.delay_s <= window[1]
    assert r.max_nip_before_n_m < 1e-3          # nothing before the onset
    assert r.max_nip_pct > 5.0


def test_the_compensated_leak_shows_in_the_pressure_residual(rows):
    assert rows["valve leak P->A"].max_dp1_bar > 10 * rows["rail friction A"].max_dp1_bar
