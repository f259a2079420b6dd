"""Bushings: static deflection and natural frequencies against closed forms."""

import math

import numpy as np
import pytest

from blocks.multibody import Mechanism, MultibodyBlock
from blocks.multibody.analysis import linearize
from blocks.multibody.io import from_dict, to_dict
from cosim import DiagramBuilder, Simulator

M, KT, KR = 2.0, 8.0e3, 50.0


def _planar():
    m = Mechanism("p", dim=2, gravity=(0.0, -9.81))
    b = m.add_body("b", M, 0.05, (0.0, 0.0))
    m.add_bushing("mount", "ground.O", b.marker("cm"), translational=KT, rotational=KR)
    return m


def test_planar_bushing_static_deflection_and_frequencies():
    m = _planar()
    b = DiagramBuilder("d")
    blk = b.add(MultibodyBlock("b", m, "lagrange", markers=["b.cm"]))
    b.export_output(blk.output("b_cm_pos"), "P")
    # heavily damped by nothing: the mean of the free oscillation is the static deflection
    res = Simulator(b.build(), solver="rk4", dt=1e-4).run(1.0)
    y = res["d.P"][:, 1]
    assert 0.5 * (y.max() + y.min()) == pytest.approx(-M * 9.81 / KT, rel=1e-4)
    ev = np.sort(np.abs(linearize(_planar())["eigenvalues"].imag))
    want = np.sort(np.repeat([math.sqrt(KT / M), math.sqrt(KT / M), math.sqrt(KR / 0.05)], 2))
    np.testing.assert_allclose(ev, want, rtol=1e-5)


def test_spatial_bushing_translation_and_torsion_frequencies():
    J = (0.02, 0.03, 0.04)
    m = Mechanism("s", dim=3)
    b = m.add_body("b", M, J, (0.0, 0.0, 0.0))
    m.add_bushing("mount", "ground.O", b.marker("cm"), translational=(KT, 2 * KT, 3 * KT),
                  rotational=(KR, 2 * KR, 3 * KR))
    ev = np.sort(np.unique(np.round(np.abs(linearize(m)["eigenvalues"].imag), 6)))
    want = np.sort([math.sqrt(k * KT / M) for k in (1, 2, 3)]
                   + [math.sqrt(k * KR / j) for k, j in zip((1, 2, 3), J)])
    np.testing.assert_allclose(ev[ev > 0], want, rtol=1e-5)


def test_bushing_round_trips_through_data():
    data = to_dict(_planar())
    assert data["elements"][0]["kind"] == "bushing"
    assert to_dict(from_dict(data)) == data


def test_bushing_damping_sets_the_decay_rate():
    c, cr = 40.0, 0.2
    m = Mechanism("p", dim=2)
    b = m.add_body("b", M, 0.05, (0.0, 0.0))
    m.add_bushing("mount", "ground.O", b.marker("cm"), translational=KT, rotational=KR,
                  damping_translational=c, damping_rotational=cr)
    re = np.sort(np.unique(np.round(linearize(m)["eigenvalues"].real, 8)))
    np.testing.assert_allclose(re, np.sort([-c / (2 * M), -cr / (2 * 0.05)]), rtol=1e-5)
