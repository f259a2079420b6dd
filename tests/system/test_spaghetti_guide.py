"""Spaghetti with a tapered guide (seed §12, Fig. 5): contact sequence and amplitude trends.

The model does *not* reproduce the paper's sequence (mid-span on the upper guide, then the
strip on both guides): after the drive's 0.05 s run-up the strip whips up to ~+16 mm at the
tip, below the 15 deg guide.  Nor does it reproduce "amplitude grows with smaller
clearance": 1.6 mm gives the larger amplitude.  These tests pin what the model does (see
examples/spaghetti_guide.py and docs/libraries/spaghetti.md).
"""

from __future__ import annotations

import math

import examples.spaghetti_guide as sg


def test_spaghetti_guide_quick(tmp_path):
    s = sg.main(["--quick", "--no-plot", "--out", str(tmp_path)])
    first = s["first_contacts"]
    # the sagging strip rests on the lower inlet corner and the upper gap wall from t = 0;
    # pulled in, its root whips up and hits the upper inlet corner later
    assert first["inlet_lower"] == 0.0 and first["gap_upper"] == 0.0
    assert s["runup_s"] == 0.05                   # the wheel's run-up, then constant V
    assert 0.02 < first["inlet_upper"] < 0.1
    tmin, tmax = s["tip_range_m"]
    assert tmax > 0.015 and tmin < -0.04          # the end bends up after the sag
    # not reproduced: at C_p = 0.1 mm the strip never reaches the 15 deg guides
    assert s["guide_first_contact_s"] == {} and s["max_nodes_on_guides"] <= 1
    amp = s["amplitude_pp_m"]
    assert all(math.isfinite(a) and 1e-3 < a < 0.05 for a in amp.values())  # no blow-up
    # not reproduced: the larger clearance gives the larger amplitude at the sensor
    assert not s["clearance_trend_holds"]
    assert amp["V4_Cp1.6mm"] > 1.1 * amp["V4_Cp0.1mm"]
    assert (tmp_path / "contacts.csv").exists() and (tmp_path / "sensor.csv").exists()
