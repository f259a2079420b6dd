"""The same mechanism in m, mm and km (issue 32 item 1): what the library decides must not
depend on the units.

Corpus: the regular planar four-bar of the issue (links crank : coupler : rocker : ground =
1 : 2.5 : 2 : 3, crank at 60 deg, inertias of slender bars) at sizes 1 km, 1 m, 10 cm,
1 cm and 1 mm, and in m, mm and km with gravity in the same unit.  Before the fix the
singular-position monitor compared ``rho`` of plain ``J J'`` (a rotation column of a
position row carries a length) with 1e-3: it read 0.584 at 1 m, 0.041 at 0.1 m, 4.3e-4 at
1 cm, and ``MultibodyBlock("lagrange", alpha=beta=10)`` stopped the 1 cm one at t = 0 as
"singular".  Oracle: the 1 m run itself (a change of units is exact up to rounding), and
the closed-form rank of the four-bar (regular: no dependent row).
"""

from __future__ import annotations

import numpy as np
import pytest

from bench import multibody_models as mm

SIZES = (1e3, 1.0, 0.1, 0.01, 1e-3)
UNITS = {"m": 1.0, "mm": 1e3, "km": 1e-3}  # lengths of the 1 m mechanism in that unit


four_bar = mm.scaled_four_bar  # the four-bar at any size (bench.multibody_models)


@pytest.mark.parametrize("compiled", [None, False], ids=["compiled", "python"])
def test_the_rank_measure_is_the_same_at_every_size(compiled):
    rhos = []
    for k in SIZES:
        mech = four_bar(k, compiled)
        rho, dep, _ = mech.rank_measure(mech.q0, 0.0)
        assert dep == 0
        rhos.append(rho)
    assert max(rhos) - min(rhos) <= 1e-12 * max(rhos), rhos
    assert rhos[0] > 0.1  # a regular position reads far from the 1e-3 of singular_tol


FORMULATIONS = list(mm.formulations(1e-3))


def _runs(formulation: str, scales: dict) -> dict:
    """RK4, 1 ms, 2 s (the crank swings over more than a radian) at each scale, with the
    positions brought back to the 1 m model's unit."""
    kind, opts = mm.formulations(1e-3)[formulation]
    out = {}
    for u, k in scales.items():
        q = mm.simulate(four_bar(k), kind, 2.0, 1e-3, **opts)["q"].copy()
        q[:, 0::3] /= k  # x, y of each body scale with the unit; theta does not
        q[:, 1::3] /= k
        out[u] = q
    return out


#: issue 32 item 1, left: coordinate partitioning chooses its partition (QR with column
#: pivoting), keeps it (LU pivots within 1e-3) and stops Newton (|Phi| <= 1e-12) on the
#: unscaled J and Phi, which mix m and rad (its m/mm/km runs still agree to 4e-11 here);
#: a version on J D^-1 was exact under powers of two but made the run sensitive to
#: rounding (2e-9 for a 1e-12 change of scale), so it is not in yet
PARTITIONING = pytest.param("partitioning", marks=pytest.mark.xfail(
    strict=True, reason="partitioning decides on the unscaled J (issue 32 item 1, left)"))


@pytest.mark.parametrize("formulation", [PARTITIONING if f == "partitioning" else f
                                         for f in FORMULATIONS])
def test_every_formulation_is_exactly_the_same_in_units_a_power_of_two_apart(formulation):
    """Scaling every length by 2^10 or 2^-10 changes no rounding: a formulation whose
    arithmetic is the same in any units gives bit for bit the same run (before: the penalty
    weight, one ``penalty * max(diag M)`` for every row, mixed kg and kg m^2)."""
    runs = _runs(formulation, {"1": 1.0, "2^10": 2.0 ** 10, "2^-10": 2.0 ** -10})
    for u in ("2^10", "2^-10"):
        assert np.array_equal(runs[u], runs["1"]), (u, np.max(np.abs(runs[u] - runs["1"])))
    assert np.ptp(runs["1"][:, 2]) > 1.0  # the crank moved over more than a radian


#: relative difference allowed between the m, mm and km runs (the issue's 1e-9).  The
#: penalty formulation needed 1e-8 while it solved with M + J' a J (condition ~ a: the same
#: run with every length scaled by 1 + 2^-40 differed by 9e-10, in mm by 1.3e-9); the
#: range-space form (J M^-1 J' + 1/a) measures 2e-14 (formulations.py)
TOL: dict[str, float] = {}


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_the_same_run_in_m_mm_and_km(formulation):
    """No monitor stops the regular mechanism at any scale, and the runs agree."""
    runs = _runs(formulation, UNITS)
    for u in UNITS:
        err = np.max(np.abs(runs[u] - runs["m"])) / np.max(np.abs(runs["m"]))
        assert err < TOL.get(formulation, 1e-9), (u, err)


def test_a_one_centimetre_four_bar_runs_with_the_default_monitor():
    """The issue's failing case: lagrange with alpha = beta = 10 at 1 cm, singular_tol at
    its default, ran to its end (it stopped at t = 0 before the fix)."""
    run = mm.simulate(four_bar(0.01), "lagrange", 1.0, 1e-3, alpha=10.0, beta=10.0)
    assert run["t"][-1] == pytest.approx(1.0)
