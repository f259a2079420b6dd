"""examples/crane_vessel.py: period-3 (barge) and period-2 (crane ship) subharmonics.

Reference: Kreuzer & Ellermann (seed §13) report a P3 motion of a moored crane
barge (a = 0.5 m, Omega = 0.8 rad/s, l = 25 m, c1 = 33.4 kN/m, c2 = 2.9 kN/m²,
c3 = 45.5 kN/m³) and a P2 solution of a crane ship (A = 2.25 m, omega = 0.23
rad/s, l = 49.5 m, c1 = 669.8 kN/m, c2 = -37.5 kN/m², c3 = 8); the hull and the
load are documented choices of the example (its module docstring).
"""

from __future__ import annotations

import numpy as np

import examples.crane_vessel as ex
from cosim.periodic import poincare_section


def test_p3_and_p2_orbits_and_the_frequency_diagram(tmp_path):
    s = ex.main(["--quick", "--out", str(tmp_path), "--no-plot"])
    p3, p2 = s["cases"]["P3"], s["cases"]["P2"]
    # P3 coexists with period-1 motion (different start states); P2 from rest
    assert p3["periods"] == [1, 3]
    assert p2["periods"] == [2]
    for c, p in ((p3, 3), (p2, 2)):
        assert c["orbit_period"] == p and c["orbit_converged"] and c["stable"]
        assert c["spectral_radius"] < 0.95
        assert np.ptp(c["orbit_surge_m"]) > 0.5  # a genuine subharmonic, metres of surge
    # the wave-frequency diagram has both period-1 and period-3 regions
    d = s["omega_diagram"]
    assert 0.8 in d["3"] and 0.9 in d["3"]
    assert 0.72 in d["1"] and 1.1 in d["1"]
    for name in ("sections_p3.csv", "sections_p2.csv", "diagram_omega.csv"):
        assert (tmp_path / name).stat().st_size > 100


def test_p2_needs_the_quadratic_mooring_term():
    """Mechanism check: with c2 = 0 the crane ship responds with period 1."""
    T = ex.period_of("P2")
    sec = poincare_section(ex.simulator_factory("P2", c2_n_per_m2=0.0), T, 120, 8)
    assert sec.period(tol=1e-6) == 1
