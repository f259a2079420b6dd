"""The Tyre block: slips from wheel-centre kinematics, relaxation transient, diagram runs."""

import math

import numpy as np
import pytest

from blocks.sources import Constant
from blocks.vehicle import SAMPLE_TIR, BrushTyre, LinearTyre, MagicFormula, Tyre
from cosim import DiagramBuilder, Simulator
from cosim.errors import ParameterError
from cosim.testing import BlockHarness

MF = MagicFormula(SAMPLE_TIR)
BRUSH = BrushTyre(cornering_stiffness_n_per_rad=60e3, slip_stiffness_n=80e3, mu=1.0,
                  radius_m=0.3, relaxation_lengths_m=(0.4, 0.6))


def diagram(tyre, **inputs):
    b = DiagramBuilder("car")
    t = b.add(tyre)
    units = {"vx": "m/s", "vy": "m/s", "omega": "rad/s", "slip_ratio": "1", "camber": "rad",
             "fz": "N"}
    for name, value in inputs.items():
        src = b.add(Constant(f"{name}_src", value, unit=units[name]))
        b.connect(src.y, t.input(name))
    return b.build()


def test_ports_and_feedthrough():
    steady = Tyre("t", MF)
    assert list(steady.inputs) == ["vx", "vy", "omega", "camber", "fz"]
    assert list(steady.outputs) == ["fx", "fy", "mx", "my", "mz", "force", "moment", "kappa",
                                    "alpha"]
    assert steady.output("force").shape == (3,)
    assert steady.output("force").unit_label() == "N"
    assert steady.output("mz").unit_label() == "N*m"
    assert steady.input("omega").unit_label() == "rad/s"
    tr = Tyre("t", MF, relaxation=True, slip_input=True)
    assert "slip_ratio" in tr.inputs and "omega" not in tr.inputs
    assert tr.output("fx").depends_on == {"vx", "camber", "fz"}  # not vy, not the slip
    assert tr.output("alpha").depends_on == frozenset()  # state outputs


def test_steady_outputs_are_the_model_at_the_kinematic_slips():
    h = BlockHarness(Tyre("t", MF))
    vx, vy, fz, gam = 20.0, -1.2, 4200.0, 0.02
    om = 1.06 * vx / 0.368
    h.set_inputs(vx=vx, vy=vy, omega=om, camber=gam, fz=fz)
    kappa = (om * MF.rolling_radius(fz, om) - vx) / vx  # 0.0598
    alpha = math.atan(vy / vx)
    ref = MF.evaluate(kappa, alpha, gam, fz, vx=vx)
    assert h.output("kappa") == pytest.approx(kappa, rel=1e-14)
    assert h.output("alpha") == pytest.approx(alpha, rel=1e-14)
    for name in ("fx", "fy", "mx", "my", "mz"):
        assert h.output(name) == pytest.approx(getattr(ref, name), rel=1e-14), name
    np.testing.assert_allclose(h.output("force"), [ref.fx, ref.fy, fz], rtol=1e-14)
    np.testing.assert_allclose(h.output("moment"), [ref.mx, ref.my, ref.mz], rtol=1e-14)
    # driving and vy < 0: Fx = 2823.1 N, Fy = +2286.5 N (measured)
    assert (h.output("fx"), h.output("fy")) == (pytest.approx(2823.126, abs=1e-3),
                                                pytest.approx(2286.537, abs=1e-3))


def test_low_speed_regularisation_and_standstill():
    h = BlockHarness(Tyre("t", BRUSH))
    h.set_inputs(vx=0.5, vy=0.1, omega=2.0, camber=0.0, fz=4000.0)
    v = (0.5 ** 2 + 1.0) / 2.0  # below v_low = 1 m/s: (vx^2 + v_low^2)/(2 v_low)
    assert h.output("kappa") == pytest.approx((2.0 * 0.3 - 0.5) / v, rel=1e-14)
    assert h.output("alpha") == pytest.approx(math.atan(0.1 / v), rel=1e-14)
    for model in (MF, BRUSH):
        h = BlockHarness(Tyre("t", model))
        h.set_inputs(vx=0.0, vy=0.0, omega=0.0, camber=0.0, fz=4000.0)
        out = [h.output(n) for n in ("fx", "fy", "mx", "my", "mz", "kappa", "alpha")]
        assert out == [0.0] * 7  # parked: no force, no NaN
        h.set_inputs(vy=0.2)
        assert np.isfinite(h.output("fy")) and h.output("fy") < 0


def test_transient_derivatives_are_the_relaxation_equations():
    t = Tyre("t", MF, relaxation=True)
    h = BlockHarness(t)
    vx, vy, om, fz = 15.0, 0.6, 42.0, 3500.0
    h.set_inputs(vx=vx, vy=vy, omega=om, camber=0.0, fz=fz)
    h.set_state("slip", [0.01, 0.02])
    sk, sa = MF.relaxation_lengths(fz)
    d = h.derivatives()
    assert d[0] == pytest.approx((om * MF.rolling_radius(fz, om) - vx - vx * 0.01) / sk,
                                 rel=1e-14)
    assert d[1] == pytest.approx((vy - vx * 0.02) / sa, rel=1e-14)
    ref = MF.evaluate(0.01, math.atan(0.02), 0.0, fz, vx=vx)
    assert h.output("fy") == pytest.approx(ref.fy, rel=1e-14)
    assert h.output("alpha") == pytest.approx(math.atan(0.02), rel=1e-15)
    # at standstill the slip velocity still deflects the tyre (spring), finite
    h.set_inputs(vx=0.0, omega=0.0)
    assert h.derivatives()[1] == pytest.approx(vy / sa, rel=1e-14)
    assert h.derivatives()[0] == 0.0


@pytest.mark.parametrize("vx", [5.0, 20.0])
def test_relaxation_step_response_is_exponential_in_travelled_distance(vx):
    # a side-slip step at t = 0: tan(alpha') = (vy/vx)(1 - exp(-s/sigma_alpha)), s = vx t
    fz, vy = 3800.0, -0.05 * vx
    tyre = Tyre("t", MF, relaxation=True)
    om = vx / MF.rolling_radius(fz, vx / 0.368)
    om = vx / MF.rolling_radius(fz, om)  # free rolling: kappa' stays ~0
    sk, sa = tyre.relaxation_lengths(fz, 0.0)  # 0.715 m, 0.565 m
    dt = round(sa / vx / 100, 9)  # 100 steps per relaxation length, on the ns grid
    res = Simulator(diagram(tyre, vx=vx, vy=vy, omega=om, camber=0.0, fz=fz), solver="rk4",
                    dt=dt, record=["t.alpha", "t.kappa", "t.fy"]).run(400 * dt)
    s = vx * res.time
    exact = np.arctan(-0.05 * (1 - np.exp(-s / sa)))
    err = np.max(np.abs(res["t.alpha"] - exact))
    assert err < 1e-10  # measured 1.5e-12 (RK4, 100 steps per relaxation length)
    assert np.max(np.abs(res["t.kappa"])) < 1e-12
    # the force follows the model at the transient slip, reaching the steady value
    steady = MF.evaluate(0.0, math.atan(-0.05), 0.0, fz, vx=vx).fy
    # after 4 relaxation lengths 1.8 % of the slip and 1.45 % of the force remain
    assert res["t.fy"][-1] / steady == pytest.approx(0.985540, abs=1e-6)


def test_longitudinal_relaxation_with_slip_input():
    # kappa' follows a slip-ratio step as 1 - exp(-s/sigma_kappa); brush model, sigma given
    vx, kappa = 10.0, 0.05
    tyre = Tyre("t", BRUSH, relaxation=True, slip_input=True)
    res = Simulator(diagram(tyre, vx=vx, vy=0.0, slip_ratio=kappa, camber=0.0, fz=4000.0),
                    solver="rk4", dt=5e-4, record=["t.kappa", "t.fx"]).run(0.2)
    s = vx * res.time
    np.testing.assert_allclose(res["t.kappa"], kappa * (1 - np.exp(-s / 0.4)), rtol=0,
                               atol=1e-10)  # measured 3.8e-12 (80 RK4 steps per sigma)
    fx_end = BRUSH.forces(res["t.kappa"][-1], 0.0, 0.0, 4000.0)[0]
    assert res["t.fx"][-1] == pytest.approx(fx_end, rel=1e-14)


def test_steady_block_in_a_diagram_and_road_friction():
    d = diagram(Tyre("t", BRUSH), vx=10.0, vy=-2.0, omega=40.0, camber=0.0, fz=4000.0)
    res = Simulator(d, solver="rk4", dt=0.01, record=["t.fx", "t.fy", "t.force"]).run(0.05)
    kappa, alpha = (40.0 * 0.3 - 10.0) / 10.0, math.atan(-0.2)
    fx, fy, *_ = BRUSH.forces(kappa, alpha, 0.0, 4000.0)
    np.testing.assert_allclose(res["t.fx"], fx, rtol=1e-14)
    np.testing.assert_allclose(res["t.force"][-1], [fx, fy, 4000.0], rtol=1e-14)
    assert math.hypot(fx, fy) == pytest.approx(4000.0, rel=1e-14)  # sliding: mu Fz
    ctx = d.create_context()
    ctx.set_param("t.road_friction", 0.5)  # a wet road: half the friction
    sim = Simulator(d, ctx, solver="rk4", dt=0.01, record=["t.fx", "t.fy"])
    res = sim.run(0.02)
    assert math.hypot(res["t.fx"][-1], res["t.fy"][-1]) == pytest.approx(2000.0, rel=1e-14)


def test_transient_reaches_the_steady_block():
    kw = dict(vx=15.0, vy=0.9, omega=15.0 * 1.04 / 0.368, camber=0.01, fz=4500.0)
    steady = Simulator(diagram(Tyre("t", MF), **kw), solver="rk4", dt=0.01,
                       record=["t.fx", "t.fy", "t.mz"]).run(0.01)
    tr = Simulator(diagram(Tyre("t", MF, relaxation=True), **kw), solver="rk4", dt=0.002,
                   record=["t.fx", "t.fy", "t.mz"]).run(1.0)  # 15 m: 20 relaxation lengths
    for name in ("t.fx", "t.fy", "t.mz"):
        assert tr[name][-1] == pytest.approx(steady[name][-1], rel=1e-6), name


def test_configuration_errors_name_the_block():
    no_radius = LinearTyre(cornering_stiffness_n_per_rad=6e4, slip_stiffness_n=8e4)
    with pytest.raises(ParameterError, match="Tyre 'rl': the wheel spin input needs a "
                                             "rolling radius"):
        Tyre("rl", no_radius)
    Tyre("rl", no_radius, slip_input=True)  # fine with the slip ratio as input
    with pytest.raises(ParameterError, match="Tyre 'rl': relaxation=True needs relaxation "
                                             "lengths"):
        Tyre("rl", no_radius, relaxation=True, slip_input=True)
    Tyre("rl", no_radius, relaxation=True, slip_input=True, relaxation_lengths_m=(0.3, 0.5))
    with pytest.raises(ParameterError, match="lacks 'forces'"):
        Tyre("rl", object())
    with pytest.raises(ParameterError, match="road_friction"):
        Tyre("rl", BRUSH, road_friction=0.0)
