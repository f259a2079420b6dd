"""Continuous primitives: Integrator (scalar, vector, matrix) and FilteredDerivative."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blocks import (
    ClosedFormSource,
    Constant,
    FilteredDerivative,
    Integrator,
    Ramp,
    Sine,
    Step,
)
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness


# ---------------------------------------------------------------- Integrator
def test_scalar_integrator(linear_check):
    i = Integrator("i", x0=1.5, unit="m", input_unit="m/s")
    assert i.u.shape == i.y.shape == () and i.x.scalar
    assert i.y.depends_on == frozenset()  # output from the state only: breaks loops
    assert i.u.unit_text == "m/s" and i.y.unit_text == "m"
    h = BlockHarness(i).set_input("u", -2.0)
    y = h.output("y")
    assert y == 1.5 and isinstance(y, float)
    np.testing.assert_array_equal(h.derivatives(), [-2.0])
    h.set_state("x", 4.0)
    assert h.output("y") == 4.0
    lm = linear_check(h)
    assert lm.A.tolist() == [[0.0]] and lm.B.tolist() == [[1.0]] and lm.D.tolist() == [[0.0]]


def test_vector_integrator_takes_its_shape_from_x0(linear_check):
    i = Integrator("i", x0=[1.0, 2.0, 3.0])
    assert i.u.shape == i.y.shape == (3,) and not i.x.scalar
    h = BlockHarness(i).set_input("u", [0.5, -1.0, 2.0])
    y = h.output("y")
    np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])
    y[0] = 99.0  # the output is a copy: writing to it must not change the state
    np.testing.assert_array_equal(h.state("x"), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(h.derivatives(), [0.5, -1.0, 2.0])
    linear_check(h)


def test_scalar_x0_is_broadcast_to_the_shape(linear_check):
    i = Integrator("i", x0=0.25, shape=4)
    assert i.y.shape == (4,)
    np.testing.assert_array_equal(BlockHarness(i).output("y"), [0.25] * 4)
    linear_check(Integrator("j", x0=0.25, shape=2))


def test_matrix_integrator(linear_check):
    # regression: the flat state came out as a (4,) output of a (2, 2) port and the
    # (2, 2) input could not be written into the flat derivative vector
    x0 = np.array([[1.0, 2.0], [3.0, 4.0]])
    i = Integrator("i", x0=x0)
    assert i.y.shape == (2, 2) and i.x.size == 4
    h = BlockHarness(i).set_input("u", [[0.5, -1.0], [2.0, 0.0]])
    np.testing.assert_array_equal(h.output("y"), x0)
    np.testing.assert_array_equal(h.derivatives(), [0.5, -1.0, 2.0, 0.0])
    linear_check(h)
    for fuse in (True, False):
        b = DiagramBuilder("m")
        c = b.add(Constant("c", [[1.0, -1.0], [0.5, 2.0]]))
        ii = b.add(Integrator("i", x0=x0))
        b.connect(c.y, ii.u)
        res = Simulator(b.build(), dt=0.1, fuse_linear=fuse).run(1.0)
        assert res["i.y"].shape == (11, 2, 2)
        np.testing.assert_allclose(res["i.y"][-1], [[2.0, 1.0], [3.5, 6.0]], rtol=1e-14)


# -------------------------------------------------------- FilteredDerivative
def test_filtered_derivative_equations(linear_check):
    fd = FilteredDerivative("fd", 50.0, unit="m/s")
    assert fd.y.depends_on == frozenset({"u"}) and fd.y.unit_text == "m/s"
    h = BlockHarness(fd).set_input("u", 2.0)
    assert h.output("y") == 100.0  # z(0) = 0: N (u - z)
    h.set_state("z", 1.5)
    assert h.output("y") == pytest.approx(25.0)
    np.testing.assert_allclose(h.derivatives(), [25.0])
    lm = linear_check(h)
    # the model is s / (s/N + 1): frequency response check
    for w in (0.1, 1.0, 50.0, 1e4):
        s = 1j * w
        G = (lm.C @ np.linalg.solve(s * np.eye(1) - lm.A, lm.B) + lm.D)[0, 0]
        assert G == pytest.approx(s / (s / 50.0 + 1.0), rel=1e-12)


@pytest.mark.parametrize("bw", [0.0, -3.0, math.nan])
def test_filtered_derivative_validation(bw):
    with pytest.raises(ParameterError, match="FilteredDerivative 'fd': bandwidth_rad_s = .*: "
                                                 "expected a finite number > 0"):
        FilteredDerivative("fd", bw)


@pytest.mark.parametrize("fuse", [True, False])
def test_filtered_derivative_of_a_ramp(fuse):
    # u = k t (from 0): z' = N (k t - z) gives y = N (u - z) = k (1 - exp(-N t))
    N, k = 40.0, 3.0
    b = DiagramBuilder("fdr")
    r = b.add(Ramp("r", k))
    fd = b.add(FilteredDerivative("fd", N))
    b.connect(r.y, fd.u)
    res = Simulator(b.build(), dt=1e-3, fuse_linear=fuse).run(0.5)
    np.testing.assert_allclose(res["fd.y"], k * (1.0 - np.exp(-N * res.time)),
                               rtol=1e-6, atol=1e-9)
    assert res["fd.y"][-1] == pytest.approx(k, rel=1e-7)


@pytest.mark.parametrize("fuse", [True, False])
def test_integrator_reproduces_closed_form_integrals(fuse):
    b = DiagramBuilder("integ")
    c = b.add(ClosedFormSource("c", lambda t: np.array([1.0, 2.0 * t, 3.0 * t * t]),
                               shape=(3,)))
    i = b.add(Integrator("i", x0=[1.0, 0.0, -1.0]))
    b.connect(c.y, i.u)
    res = Simulator(b.build(), dt=1e-2, fuse_linear=fuse).run(1.0)
    t = res.time
    # RK4 integrates polynomials up to degree 3 exactly
    np.testing.assert_allclose(res["i.y"], np.stack([1.0 + t, t * t, t ** 3 - 1.0], axis=1),
                               rtol=0, atol=1e-14)


def test_continuous_blocks_fused_and_generic_agree(fused_vs_generic):
    def make():
        b = DiagramBuilder("cont")
        s = b.add(Sine("s", 2.0, 1.5, 0.3))
        st = b.add(Step("st", 0.0371, 1.0))
        fd = b.add(FilteredDerivative("fd", 80.0))
        i = b.add(Integrator("i", x0=0.5))
        fd2 = b.add(FilteredDerivative("fd2", 30.0))
        iv = b.add(Integrator("iv", x0=[1.0, 2.0], shape=2))
        c = b.add(Constant("c", [0.5, -0.25]))
        b.connect(s.y, fd.u)
        b.connect(fd.y, i.u)
        b.connect(st.y, fd2.u)
        b.connect(c.y, iv.u)
        return b.build()

    res, _, sim = fused_vs_generic(make, 0.3, solver="rk4", dt=1e-3)
    assert {b.name for b in sim.ev.fused_blocks} == {"fd", "i", "fd2", "iv"}
    # i' = fd.y = N (u - z) = z', so i = 0.5 + z = 0.5 + u - fd.y / N at every sample
    t = res.time
    u = 2.0 * np.sin(2 * np.pi * 1.5 * t + 0.3)
    np.testing.assert_allclose(res["i.y"], 0.5 + u - res["fd.y"] / 80.0, rtol=0, atol=1e-12)
    assert np.ptp(res["fd.y"]) > 10.0
    np.testing.assert_allclose(res["iv.y"][-1], [1.15, 1.925], rtol=1e-13)
    # the step's derivative is an exponential impulse of area 1
    assert res.at("fd2.y", 0.0371) == pytest.approx(30.0, rel=1e-12)
