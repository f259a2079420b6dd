"""A generated corpus of bad constructor arguments for every public block.

:func:`block_classes` finds every public :class:`~cosim.Block` subclass in ``blocks``
(all subpackages) and in ``cosim``; :data:`BASELINES` gives a valid construction of
each; :func:`bad_arguments` introspects each constructor's signature and, for every
numeric, Boolean, string and array parameter, yields values of the wrong type or value
(a string where a number is wanted, NaN, infinity, None where the parameter is not
optional, a non-integer for an integer, a negative physical size, an array of the
wrong shape or holding NaN).

The oracle of what a parameter must refuse comes from here (its annotation, its
baseline value and the name lists below), not from the blocks' own checks.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

#: the name given to every block under test: its messages must name it
NAME = "blk_under_test"

#: physical quantities that are positive (or non-negative) by nature: -1 is refused
POSITIVE = re.compile(
    r"mass|inertia|_ohm$|inductance|^period_s$|^step_s$|time_constant|^tau_s$|stiffness|"
    r"density|diameter|length_m$|area|volume|capacity|bandwidth|frequency|stroke|"
    r"width|thickness|span|displacement|depth|^gravity|^max_iter$|^max_projection$|tol$|"
    r"^penalty|segments$|^n_gauss$|^n_components$|^n_contact|persistence|^ramp_s$|"
    r"noise_std|^cd$|^ca$|efficiency|precharge|polytropic|restitution|^duty$|"
    r"^motors$|flows$|^n$|^n_targets$|damping|friction|leakage|viscous|"
    r"smoothing|threshold_rad_s|transition_pressure|nominal|^rated_|^v_min|sigma_min|"
    r"max_range|ego_length|min_reference|current_limit|^min_pressure|cavitation_band|"
    r"supply_pressure|tank_pressure|^tyres_per_axle$|^wetted_length")

#: float parameters for which infinity is a meaningful value (no bound, never)
INF_OK = {"lower", "upper", "stop_s", "max_range_m", "on_threshold", "off_threshold",
          "threshold", "drift_tol", "branch_tol", "penalty_max", "current_limit_a",
          "wall_bulk_modulus_pa", "rising_per_s", "falling_per_s"}

#: array parameters whose shape is free (any length gives a valid block)
SHAPE_FREE = {("TransferFunction", "num"), ("TransferFunction", "den"),
              ("DiscreteTransferFunction", "num"), ("DiscreteTransferFunction", "den"),
              ("WaveLoads", "reference")}

#: string parameters that take free text or a unit (not a closed set of choices)
FREE_TEXT = {"unit", "input_unit", "from_unit", "to_unit", "command_unit", "time_column",
             "delimiter", "signs", "ops"}


def block_classes() -> dict[str, type]:
    """``{"module.Class": class}`` of every public Block subclass of ``blocks`` and ``cosim``
    (a class whose name starts with ``_`` is private; ``Block`` and ``Diagram`` are the
    base and the built diagram, not blocks one constructs with parameters)."""
    import blocks
    import cosim
    from cosim.block import Block

    found = {}
    for pkg in (blocks, cosim):
        for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if m.name.rsplit(".", 1)[-1].startswith("_") or m.name.endswith(".cli"):
                continue
            mod = importlib.import_module(m.name)
            for n, c in vars(mod).items():
                if (isinstance(c, type) and issubclass(c, Block) and c.__module__ == m.name
                        and not n.startswith("_") and not c.is_diagram and c is not Block):
                    found[f"{m.name}.{n}"] = c
    return found


# ------------------------------------------------------------------ valid constructions
def _mechanism():
    from blocks.multibody import Mechanism
    mech = Mechanism("m", dim=2, gravity=(0.0, -9.81))
    h = mech.add_body("b", mass=2.0, inertia=0.3, position=(0.4, -0.2), orientation=0.7)
    h.marker("p", (0.35, -0.12))
    mech.finalize()
    return mech


def _kincar_plan():
    from blocks.controllers.flatness import PolynomialPlan
    from blocks.controllers.flatness.kincar import LANE_CHANGE as LC
    from blocks.controllers.flatness.kincar import KinematicCarFlat
    car = KinematicCarFlat(3.0)
    return PolynomialPlan(0.0, LC["T"], car.forward(LC["x0"], LC["u0"]),
                          car.forward(LC["xf"], LC["uf"]))


def _kincar_law():
    from blocks.controllers.flatness.kincar import KinematicCarLaw
    return KinematicCarLaw(3.0)


def _wave():
    from blocks.ocean import RegularWave
    return RegularWave(2.0, 8.0, 50.0)


def _acc_model():
    from blocks.controllers import DrivelineModel, EngineMap
    eng = EngineMap([0.0, 0.5, 1.0], [50.0, 300.0, 600.0],
                    [[-20.0, -20.0, -20.0], [80.0, 80.0, 80.0], [180.0, 180.0, 180.0]])
    return DrivelineModel(engine=eng, mass_kg=1500.0, wheel_radius_m=0.3, final_drive=4.0,
                          engine_inertia_kg_m2=0.2, wheel_inertia_kg_m2=3.0, efficiency=0.9,
                          drag_area_m2=0.6, rolling_resistance=0.01, max_brake_torque_nm=5000.0)


def _pmsm():
    from blocks.electric import GEM_PMSM
    return GEM_PMSM


def _reel() -> dict:
    from blocks.paper.nip import NipContactLaw
    from blocks.paper.reel import RailFriction
    return dict(web_width_m=6.0, bearing_span_m=7.2, drum_diameter_m=1.5, core_diameter_m=0.8,
                initial_diameter_m=2.5, web_thickness_m=80e-6, roll_density_kg_m3=750.0,
                spool_mass_kg=1e4, carriage_mass_kg=2000.0, sledge_mass_kg=1000.0,
                contact=NipContactLaw(k_a=2.85e7, exponent=1.086, damping_n_s_m2=1.8e5,
                                      damping_depth_m=5e-5),
                carriage_friction=RailFriction(0.015, 0.013),
                sledge_friction=RailFriction(0.0045, 0.0045), centre_distance_at_zero_m=1.05)


def _reel_parameters():
    from blocks.paper.system import ReelParameters
    return ReelParameters()


def _vortex_flow():
    from blocks.vortex import DiscreteVortexFlow, PanelBody
    return DiscreteVortexFlow(PanelBody.plate(1.0, 10, 0.1), 0.05, (1.0, 0.0), rho=1.0)


def _beam():
    from blocks.vortex.spaghetti import BeamGeometry, beam_for
    geo = BeamGeometry(clearance_m=-2e-5, friction_coefficient=0.0, contact_stiffness=1e10)
    return beam_for("steel", n_segments=4, fluid_density=0.0, geometry=geo)


def _mooring():
    from blocks.ocean import MooringSystem
    return MooringSystem.symmetric(3, 320.0, 853.87, 5.2, -70.0, length=902.2, ea=384.243e6,
                                   w=698.094)


def _vessel():
    from blocks.ocean import VesselData
    return VesselData.box_barge()


def _tyre():
    from blocks.vehicle import SAMPLE_TIR, MagicFormula
    return MagicFormula(SAMPLE_TIR)


def _lead_profile():
    from blocks.vehicle.scenarios import constant_speed
    return constant_speed(20.0)


def _from_file(tmp: Any) -> dict:
    path = tmp / "table.csv"
    path.write_text("time,a\n0,0\n1,1\n2,0\n")
    return dict(path=str(path))


def _double_acting() -> dict:
    return dict(area_1_m2=2e-3, area_2_m2=1e-3, stroke_m=0.5)


#: keyword arguments (besides ``name``) of a valid construction of each block; a function
#: of a temporary folder for blocks that read a file
BASELINES: dict[str, Any] = {
    "blocks.benchmarks.bouncing_ball.BouncingBall": lambda: {},
    "blocks.benchmarks.lim.SpringMass": lambda: dict(m=1.0, k=10.0, c=0.1),
    "blocks.continuous.FilteredDerivative": lambda: dict(bandwidth_rad_s=50.0),
    "blocks.continuous.Integrator": lambda: dict(x0=0.0),
    "blocks.controllers.acc.ACCController": lambda: dict(period_s=0.016, model=_acc_model()),
    "blocks.controllers.flatness.crane.TableReference": lambda: dict(
        time_s=[0.0, 1.0, 2.0], trolley=[0.0, 0.5, 1.0]),
    "blocks.controllers.flatness.expanding_wheel.ExpandingWheelPlant": lambda: dict(
        x0=(0.29, 0.305, 0.0, 0.0), rod_length_m=1.0),
    "blocks.controllers.flatness.flexible_joint.FlexibleJoint": lambda: {},
    "blocks.controllers.flatness.kincar.KinematicCar": lambda: dict(x0=(0.0, 0.0, 0.0), b=3.0),
    "blocks.controllers.flatness.tracking.FlatTracker": lambda: dict(
        law=_kincar_law(), plan=_kincar_plan(), kp=1.0, kv=2.0, extension_initial=[10.0]),
    "blocks.cranes.gantry.GantryCrane": lambda: {},
    "blocks.cranes.operator.OperatorProgram": lambda: dict(
        trolley=[(1.0, 0.0), (3.0, 2.0), (5.0, 2.0), (7.0, 0.0)]),
    "blocks.discrete.DiscreteIntegrator": lambda: dict(period_s=0.01),
    "blocks.discrete.DiscreteStateSpace": lambda: dict(
        A=[[0.9, 0.1], [0.0, 0.8]], B=[[0.0], [1.0]], C=[[1.0, 0.0]], D=[[0.0]], period_s=0.01,
        x0=[0.3, -0.2]),
    "blocks.discrete.DiscreteTransferFunction": lambda: dict(
        num=[0.1, 0.05], den=[1.0, -0.9], period_s=0.01),
    "blocks.discrete.RateTransition": lambda: dict(period_s=0.01),
    "blocks.discrete.UnitDelay": lambda: dict(period_s=0.01),
    "blocks.discrete.ZeroOrderHold": lambda: dict(period_s=0.01),
    "blocks.electric.battery.Battery": lambda: dict(
        internal_resistance_ohm=0.05, open_circuit_voltage_v=48.0),
    "blocks.electric.crane_drive.CraneDrive": lambda: dict(
        gain_nms_per_rad=18.0, time_constant_s=0.02, curve_speed_rad_s=[0.0, 100.0, 200.0],
        curve_torque_nm=[500.0, 500.0, 400.0]),
    "blocks.electric.dc_motor.DCMotor": lambda: dict(
        resistance_ohm=1.0, inductance_h=0.5, torque_constant_nm_per_a=0.01,
        inertia_kgm2=0.01, friction_nms_per_rad=0.1),
    "blocks.electric.gearbox.Gearbox": lambda: dict(ratio=4.0, efficiency=0.9),
    "blocks.electric.pmsm.AveragedInverter": lambda: dict(time_constant_s=1e-4),
    "blocks.electric.pmsm.DQCurrentController": lambda: dict(params=_pmsm(),
                                                             bandwidth_rad_s=1e3),
    "blocks.electric.pmsm.PMSM": lambda: dict(params=_pmsm()),
    "blocks.electric.pmsm.TorqueToCurrent": lambda: dict(params=_pmsm(), current_limit_a=50.0),
    "blocks.hydraulics.accumulator.GasAccumulator": lambda: dict(
        gas_volume_m3=1e-3, precharge_pressure_pa=5e6),
    "blocks.hydraulics.actuator.ValveControlledCylinder": lambda: dict(
        supply_pressure_pa=10e6, tank_pressure_pa=1e5, area_max_m2=1e-5, **_double_acting()),
    "blocks.hydraulics.cylinder.DoubleActingCylinder": _double_acting,
    "blocks.hydraulics.line.HydraulicLine": lambda: dict(length_m=2.0, diameter_m=0.01),
    "blocks.hydraulics.motor.HydraulicMotor": lambda: dict(displacement_m3_per_rev=1e-5),
    "blocks.hydraulics.orifice.NominalFlowValve": lambda: dict(
        q_nominal_m3_s=1e-4, dp_nominal_pa=5e5),
    "blocks.hydraulics.orifice.Orifice": lambda: dict(area_m2=1e-5),
    "blocks.hydraulics.pump.VariableDisplacementPump": lambda: dict(
        displacement_m3_per_rev=1e-5),
    "blocks.hydraulics.servo_valve.ServoValve": lambda: dict(
        natural_frequency_hz=50.0, damping=0.7, area_max_m2=1e-5),
    "blocks.hydraulics.sources.FixedDisplacementPump": lambda: dict(
        displacement_m3_per_rev=1e-5),
    "blocks.hydraulics.sources.PressureSource": lambda: dict(pressure_pa=1e5),
    "blocks.hydraulics.sources.Tank": lambda: dict(pressure_pa=1e5, inflows=1),
    "blocks.hydraulics.valves.CheckValve": lambda: dict(area_max_m2=1e-5),
    "blocks.hydraulics.valves.ReliefValve": lambda: dict(
        cracking_pressure_pa=10e6, full_open_pressure_pa=12e6, area_max_m2=1e-5),
    "blocks.hydraulics.valves.SpoolValve43": lambda: dict(area_max_m2=1e-5),
    "blocks.hydraulics.volume.Volume": lambda: dict(volume_m3=1e-3),
    "blocks.lti.FirstOrderLag": lambda: dict(tau_s=0.1),
    "blocks.lti.StateSpace": lambda: dict(
        A=[[-1.0, 0.0], [1.0, -2.0]], B=[[1.0], [0.0]], C=[[0.0, 1.0]], D=[[0.0]],
        x0=[0.0, 0.0]),
    "blocks.lti.TransferFunction": lambda: dict(num=[1.0], den=[1.0, 1.0]),
    "blocks.math.Abs": lambda: {},
    "blocks.math.DeadZone": lambda: dict(lower=-1.0, upper=1.0),
    "blocks.math.Demux": lambda: dict(n=3),
    "blocks.math.Gain": lambda: dict(k=2.0),
    "blocks.math.MinMax": lambda: dict(function="min", n=3),
    "blocks.math.Mux": lambda: dict(n=2),
    "blocks.math.Product": lambda: dict(ops="*/"),
    "blocks.math.RateLimiter": lambda: dict(rising_per_s=20.0, falling_per_s=10.0,
                                            period_s=0.01),
    "blocks.math.Relay": lambda: dict(on_threshold=0.3, off_threshold=-0.3, period_s=0.01),
    "blocks.math.Saturation": lambda: dict(lower=-1.0, upper=1.0),
    "blocks.math.Sum": lambda: dict(signs="+-"),
    "blocks.math.Switch": lambda: dict(threshold=0.0),
    "blocks.math.UnitConversion": lambda: dict(from_unit="m", to_unit="mm"),
    "blocks.multibody.block.MultibodyBlock": lambda: dict(mechanism=_mechanism(),
                                                          markers=["b.p"]),
    "blocks.multibody.index3.Index3Stepper": lambda: dict(mechanism=_mechanism(), step_s=1e-3),
    "blocks.ocean.crane_vessel.CraneVessel": lambda: dict(
        mass_kg=1e6, c1_n_per_m=1e5, rope_length_m=20.0, load_mass_kg=1e4),
    "blocks.ocean.mooring.CatenaryMooring": lambda: dict(system=_mooring()),
    "blocks.ocean.mooring.PolynomialMooring": lambda: dict(c1=1e5, c2=1e3, c3=10.0),
    "blocks.ocean.morison.MorisonMember": lambda: dict(
        wave=_wave(), end_a=[0.0, 0.0, -20.0], end_b=[0.0, 0.0, 5.0], diameter=2.0),
    "blocks.ocean.vessel.Vessel6DOF": lambda: dict(data=_vessel()),
    "blocks.ocean.wave_loads.WaveLoads": lambda: dict(sea=_wave(), first_order=False,
                                                      second_order=False),
    "blocks.ocean.waves.WaveField": lambda: dict(wave=_wave(), points=[[0.0, 0.0, 0.0]]),
    "blocks.paper.fault_detection.NipLoadMonitor": lambda: {},
    "blocks.paper.faults.FaultRamp": lambda: dict(onset_s=10.0, ramp_s=5.0, magnitude=1.0),
    "blocks.paper.reel.ReelMechanics": _reel,
    "blocks.paper.sensors.ForceSensor": lambda: dict(noise_std_n=1.0),
    "blocks.paper.system.NipForceReference": lambda: dict(params=_reel_parameters()),
    "blocks.pid.DiscretePID": lambda: dict(period_s=1e-3, kp=0.25, ki=5.0, lower=-24.0,
                                           upper=24.0),
    "blocks.pid.PID": lambda: dict(kp=1.0, ki=0.5, kd=0.1, derivative_filter_rad_s=100.0),
    "blocks.sinks.Terminator": lambda: {},
    "blocks.sources.ClosedFormSource": lambda: dict(fn=np.sin),
    "blocks.sources.Constant": lambda: dict(value=1.0),
    "blocks.sources.Pulse": lambda: dict(period_s=1.0),
    "blocks.sources.Ramp": lambda: {},
    "blocks.sources.Sine": lambda: {},
    "blocks.sources.Step": lambda: {},
    "blocks.sources.TimeSource": lambda: {},
    "blocks.tables.FromArrays": lambda: dict(t=[0.0, 1.0, 2.0], values=[0.0, 1.0, 0.0]),
    "blocks.tables.FromFile": _from_file,
    "blocks.tables.Table1D": lambda: dict(x=[0.0, 1.0, 2.0], y=[0.0, 1.0, 4.0]),
    "blocks.tables.Table2D": lambda: dict(x=[0.0, 1.0], y=[0.0, 1.0, 2.0],
                                          z=[[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]),
    "blocks.vehicle.electric_drivetrain.AcceleratorMap": lambda: {},
    "blocks.vehicle.half_car.HalfCar": lambda: {},
    "blocks.vehicle.longitudinal.Brake": lambda: {},
    "blocks.vehicle.longitudinal.LongitudinalVehicle": lambda: {},
    "blocks.vehicle.powertrain.Engine": lambda: {},
    "blocks.vehicle.powertrain.TorqueConverter": lambda: {},
    "blocks.vehicle.scenarios.IDMVehicle": lambda: dict(v0_m_s=20.0),
    "blocks.vehicle.scenarios.LeadVehicle": lambda: dict(profile=_lead_profile(), x0_m=100.0),
    "blocks.vehicle.scenarios.Radar": lambda: dict(n_targets=2),
    "blocks.vehicle.single_track.SingleTrack": lambda: {},
    "blocks.vehicle.transmission.AutomaticGearbox": lambda: {},
    "blocks.vehicle.transmission.FinalDrive": lambda: {},
    "blocks.vehicle.transmission.ShiftSchedule": lambda: {},
    "blocks.vehicle.tyres.Tyre": lambda: dict(model=_tyre()),
    "blocks.vortex.block.VortexFlow": lambda: dict(flow=_vortex_flow()),
    "blocks.vortex.spaghetti.block.SpaghettiBeam": lambda: dict(beam=_beam()),
    "cosim.function_block.FunctionBlock": lambda: dict(fn=lambda u: 2 * u),
    "cosim.subsystem.CouplingInput": lambda: {},
    "cosim.testing.SpyBlock": lambda: dict(period_s=0.01),
}


def baseline(qualname: str, tmp: Any) -> dict:
    make = BASELINES[qualname]
    return make(tmp) if inspect.signature(make).parameters else make()


# ------------------------------------------------------------------------ bad arguments
@dataclass(frozen=True)
class Case:
    """One bad argument: ``param`` = ``value`` (``why``: what is wrong with it)."""

    param: str
    value: Any
    why: str

    @property
    def label(self) -> str:
        return f"{self.param}={_short(self.value)} ({self.why})"


def _short(v: Any) -> str:
    text = repr(v.tolist() if isinstance(v, np.ndarray) else v)
    return text if len(text) <= 40 else text[:37] + "..."


def _numeric_array(v: Any) -> bool:
    if not isinstance(v, (list, tuple, np.ndarray)):
        return False
    try:
        a = np.asarray(v)
    except ValueError:   # ragged
        return False
    return a.size > 0 and a.dtype.kind in "iuf"


def _real(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _grown(v: Any) -> np.ndarray:
    """``v`` with one more entry along its last axis (a wrong shape)."""
    a = np.asarray(v, dtype=float)
    if a.ndim == 0:
        return np.array([float(a), float(a)])
    pad = [(0, 0)] * (a.ndim - 1) + [(0, 1)]
    return np.pad(a, pad, mode="edge")


def _with_nan(v: Any) -> np.ndarray:
    a = np.array(v, dtype=float)
    a.flat[-1] = math.nan
    return a


def bad_arguments(cls: type, base: dict) -> Iterator[Case]:
    """The bad arguments of ``cls``'s constructor, given a valid ``base``."""
    sig = inspect.signature(cls.__init__)
    for p in list(sig.parameters.values())[2:]:   # self, name
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        ann = p.annotation if isinstance(p.annotation, str) else getattr(
            p.annotation, "__name__", "")
        ann = "" if ann in ("_empty", "inspect._empty") else ann
        v = base.get(p.name, p.default)
        if v is inspect.Parameter.empty:
            continue
        optional = "None" in ann or p.default is None
        if ann in ("float", "float | None", "int", "int | None") or (
                ann in ("", "Any") and _real(v)):
            yield Case(p.name, "x", "a string for a number")
            yield Case(p.name, math.nan, "NaN")
            if p.name not in INF_OK:
                yield Case(p.name, math.inf, "infinite")
            if not optional:
                yield Case(p.name, None, "None for a parameter that is not optional")
            if ann.startswith("int"):
                yield Case(p.name, 2.5, "not an integer")
            if POSITIVE.search(p.name):
                yield Case(p.name, -1.0, "negative")
        elif ann == "bool" or isinstance(v, bool):
            yield Case(p.name, "x", "a string for a Boolean")
        elif ann in ("str", "str | None") and p.name not in FREE_TEXT and isinstance(v, str):
            yield Case(p.name, 3.5, "a number for a string")
            yield Case(p.name, "no_such_choice", "not one of the choices")
        elif _numeric_array(v):
            yield Case(p.name, "x", "a string for an array")
            yield Case(p.name, _with_nan(v), "an array holding NaN")
            if (cls.__name__, p.name) not in SHAPE_FREE:
                yield Case(p.name, _grown(v), "an array of the wrong shape")
