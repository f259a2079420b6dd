"""Built instances of every block of the domain libraries (``blocks/<package>/``), for
the tests that compare what a block declares with what its reference says
(``tests/unit/test_block_reference.py``).

``EXAMPLES[class name]()`` returns instances in the configurations that change the ports
(optional inputs and outputs switched on, other sections or sizes), so that every port a
docstring lists is declared by at least one of them where that is possible.  A new block
needs an entry here (the test says so).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _acc():
    from blocks.controllers import ACCController, DrivelineModel, EngineMap
    engine = EngineMap([0.0, 1.0], [50.0, 600.0], [[-20.0, -20.0], [180.0, 180.0]])
    model = DrivelineModel(engine=engine, mass_kg=1500.0, wheel_radius_m=0.3,
                           final_drive=4.0)
    return [ACCController("acc", 0.02, model),
            ACCController("acc", 0.02, model, engine_speed_input=True, enable_input=True,
                          accel_input=True)]


def _table_reference():
    from blocks.controllers.flatness import TableReference
    t = [0.0, 1.0, 2.0]
    return [TableReference("r", t, gantry=[0, 1, 0], trolley=[0, 1, 1], hoist=[0, 0, 1])]


def _expanding_wheel():
    from blocks.controllers.flatness import SEED_INITIAL, ExpandingWheelPlant
    return [ExpandingWheelPlant("v", SEED_INITIAL["x0"]),
            ExpandingWheelPlant("v", SEED_INITIAL["x0"], model="B")]


def _flat_tracker():
    from blocks.controllers.flatness import FlatTracker, PolynomialPlan
    from blocks.controllers.flatness.kincar import LANE_CHANGE as LC
    from blocks.controllers.flatness.kincar import KinematicCarFlat, KinematicCarLaw
    car = KinematicCarFlat(3.0)
    plan = PolynomialPlan(0.0, LC["T"], car.forward(LC["x0"], LC["u0"]),
                          car.forward(LC["xf"], LC["uf"]))
    return [FlatTracker("tr", KinematicCarLaw(3.0), plan, kp=1.0, kv=2.0,
                        extension_initial=[LC["u0"][0]]),
            FlatTracker("tr", KinematicCarLaw(3.0), plan, kp=1.0, kv=2.0,
                        extension_initial=[LC["u0"][0]], period_s=0.01)]


def _mechanism():
    from blocks.multibody import Mechanism
    m = Mechanism("pendulum", dim=2, gravity=(0, -9.81))
    bar = m.add_body("bar", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    bar.marker("tip", (0.5, 0.0))
    m.add_joint("revolute", "pin", "ground.O", bar.marker("pin", (-0.5, 0.0)))
    m.add_load("push", "bar.tip")
    return m


def _multibody():
    from blocks.multibody import MultibodyBlock
    return [MultibodyBlock("mb", _mechanism(), "lagrange", markers=["bar.tip"],
                           reactions=["pin"])]


def _index3():
    from blocks.multibody import Index3Stepper
    return [Index3Stepper("mb", _mechanism(), 1e-3, markers=["bar.tip"], reactions=["pin"])]


def _gantry():
    from blocks.cranes import GantryCrane
    return [GantryCrane("crane"), GantryCrane("crane", diagnostics=True)]


def _operator():
    from blocks.cranes import OperatorProgram
    return [OperatorProgram("op", trolley=[(0.0, 0.0), (1.0, 1.0)])]


def _battery():
    from blocks.electric import Battery
    return [Battery("b", internal_resistance_ohm=0.1, open_circuit_voltage_v=300.0),
            Battery("b", internal_resistance_ohm=0.1, capacity_ah=10.0,
                    ocv_soc=[0.0, 1.0], ocv_v=[250.0, 300.0])]


def _crane_drive():
    from blocks.electric import CraneDrive
    kw = dict(gain_nms_per_rad=10.0, time_constant_s=0.02, curve_speed_rad_s=[0, 100, 200],
              curve_torque_nm=[500, 500, 250])
    return [CraneDrive("d", **kw), CraneDrive("d", **kw, travel_per_rad_m=0.01)]


def _pmsm():
    from blocks.electric import GEM_PMSM, PMSM
    return [PMSM("m", GEM_PMSM), PMSM("m", GEM_PMSM, inertia_kgm2=0.04)]


def _pmsm_drive_part(cls_name):
    def make():
        import blocks.electric as e
        cls = getattr(e, cls_name)
        if cls_name == "DQCurrentController":
            return [cls("c", e.GEM_PMSM, bandwidth_rad_s=2000.0)]
        if cls_name == "TorqueToCurrent":
            return [cls("c", e.GEM_PMSM, current_limit_a=100.0)]
        return [cls("i"), cls("i", time_constant_s=1e-4)]
    return make


def _hydraulics(cls_name):
    def make():
        import blocks.hydraulics as h
        cls = getattr(h, cls_name)
        valve = dict(area_max_m2=1e-5)
        return {
            "CheckValve": lambda: [cls("c", **valve)],
            "DoubleActingCylinder": lambda: [cls("c", area_1_m2=1e-3, area_2_m2=5e-4,
                                                 stroke_m=0.5)],
            "FixedDisplacementPump": lambda: [cls("p", displacement_m3_per_rev=1e-5)],
            "NominalFlowValve": lambda: [cls("v", q_nominal_m3_s=1e-4, dp_nominal_pa=35e5)],
            "Orifice": lambda: [cls("o", area_m2=1e-5), cls("o", area_m2=None)],
            "PressureSource": lambda: [cls("p", 1e7)],
            "ReliefValve": lambda: [cls("r", cracking_pressure_pa=1e7,
                                        full_open_pressure_pa=1.1e7, **valve)],
            "SpoolValve43": lambda: [cls("v", **valve)],
            "Tank": lambda: [cls("t"), cls("t", inflows=2, outflows=1)],
            "Volume": lambda: [cls("v", volume_m3=1e-3, inflows=2, outflows=1),
                               cls("v", volume_m3=1e-3, volume_rate_input=True)],
            "ServoValve": lambda: [cls("s", natural_frequency_hz=50.0, damping=0.7,
                                       command_unit="A", rated_command=0.01, **valve)],
            "GasAccumulator": lambda: [cls("a", gas_volume_m3=1e-3,
                                           precharge_pressure_pa=5e6, inflows=1,
                                           outflows=2)],
            "HydraulicLine": lambda: [cls("l", length_m=2.0, diameter_m=0.01, section=s,
                                          segments=3) for s in ("pi", "T", "mixed")],
            "HydraulicMotor": lambda: [cls("m", displacement_m3_per_rev=1e-5)],
            "VariableDisplacementPump": lambda: [cls("p", displacement_m3_per_rev=1e-5)],
            "ValveControlledCylinder": lambda: [cls("v", supply_pressure_pa=1e7,
                                                    tank_pressure_pa=1e5, area_1_m2=1e-3,
                                                    area_2_m2=5e-4, stroke_m=0.5,
                                                    **valve)],
        }[cls_name]()
    return make


def _ocean(cls_name):
    def make():
        import blocks.ocean as o
        from blocks.ocean.mooring import MooringSystem
        wave = o.RegularWave(1.0, 8.0, depth=50.0)
        cls = getattr(o, cls_name)
        if cls_name == "CatenaryMooring":
            ms = MooringSystem.symmetric(3, 320.0, 853.87, 5.2, -70.0, length=902.2,
                                         ea=384.243e6, w=698.094)
            return [cls("m", ms)]
        if cls_name == "PolynomialMooring":
            return [cls("m", 1e4, 0.0, 1e2)]
        if cls_name == "MorisonMember":
            return [cls("p", wave, [0, 0, -20.0], [0, 0, 5.0], 2.0),
                    cls("p", wave, [0, 0, -20.0], [0, 0, 5.0], 2.0, motion="rigid_body",
                        include_added_mass=True)]
        if cls_name == "WaveField":
            return [cls("w", wave, points=[[0, 0, 0], [1, 0, 0]]), cls("w", wave, n_points=2)]
        if cls_name == "WaveLoads":
            omega = np.linspace(0.2, 2.0, 10)
            rao = o.ForceRAO(omega, np.ones((10, 6)) * 1e5, np.zeros((10, 6)))
            drift = o.DriftCoefficients(omega, np.ones((10, 6)) * 1e3)
            return [cls("l", wave, rao, drift)]
        if cls_name == "Vessel6DOF":
            data = o.VesselData.box_barge()
            return [cls("v", data, points={"tip": (10.0, 0.0, 20.0)},
                        load_points={"hook": (0.0, 0.0, 10.0)})]
        if cls_name == "CraneVessel":
            kw = dict(mass_kg=600e3, added_mass_kg=30e3, c1_n_per_m=33.4e3,
                      c3_n_per_m3=45.5e3, rope_length_m=25.0, load_mass_kg=40e3)
            return [cls("v", **kw), cls("v", **kw, external_force=True)]
        raise KeyError(cls_name)
    return make


def _paper(cls_name):
    def make():
        import blocks.paper as p
        cls = getattr(p, cls_name)
        if cls_name == "FaultRamp":
            return [cls("f", onset_s=1.0, ramp_s=0.5, magnitude=2.0, unit="N")]
        if cls_name == "ReelMechanics":
            from blocks.paper.reel import NipContactLaw, RailFriction
            law = NipContactLaw(k_a=2.85e7, exponent=1.086, damping_n_s_m2=1.8e5,
                                damping_depth_m=5e-5)
            return [cls("m", web_width_m=6.0, bearing_span_m=7.2, drum_diameter_m=1.5,
                        core_diameter_m=0.8, initial_diameter_m=2.5, web_thickness_m=80e-6,
                        roll_density_kg_m3=750.0, spool_mass_kg=1e4, carriage_mass_kg=2000.0,
                        sledge_mass_kg=1000.0, contact=law,
                        carriage_friction=RailFriction(0.015, 0.013),
                        sledge_friction=RailFriction(0.0045, 0.0045),
                        centre_distance_at_zero_m=1.05)]
        if cls_name == "NipForceReference":
            return [cls("r", p.ReelParameters())]
        return [cls("x")]
    return make


def _vehicle(cls_name):
    def make():
        import blocks.vehicle as v
        cls = getattr(v, cls_name)
        if cls_name == "LeadVehicle":
            return [cls("lead", v.constant_speed(20.0), x0_m=50.0)]
        if cls_name == "Radar":
            return [cls("radar", 2), cls("radar", 1, period_s=0.05)]
        if cls_name == "Tyre":
            mf = v.MagicFormula(v.SAMPLE_TIR)
            return [cls("t", mf), cls("t", mf, relaxation=True, slip_input=True)]
        if cls_name == "IDMVehicle":
            return [cls("car"), cls("car", leader=False)]
        if cls_name == "SingleTrack":
            return [cls("car"), cls("car", tyre_inputs=True)]
        if cls_name == "LongitudinalVehicle":
            return [cls("car"), cls("car", grade_input=True)]
        if cls_name == "Brake":
            return [cls("b")] + [cls("b", mode=m) for m in ("pedal", "pressure")]
        return [cls("x")]
    return make


def _vortex(cls_name):
    def make():
        if cls_name == "VortexFlow":
            from blocks.vortex import DiscreteVortexFlow, PanelBody, VortexFlow
            flow = DiscreteVortexFlow(PanelBody.plate(1.0, 10, 0.1), 0.025, (1.0, 0.0),
                                      rho=1.0)
            return [VortexFlow("flow", flow)]
        from blocks.vortex.spaghetti import SpaghettiBeam, beam_for
        beam = beam_for("aluminium", n_segments=4)
        return [SpaghettiBeam("beam", beam), SpaghettiBeam("beam", beam,
                                                           drive_acceleration=True)]
    return make


def _simple(module: str, cls_name: str, *args, **kw) -> Callable[[], list]:
    def make():
        import importlib
        return [getattr(importlib.import_module(module), cls_name)("b", *args, **kw)]
    return make


EXAMPLES: dict[str, Callable[[], list]] = {
    "BouncingBall": _simple("blocks.benchmarks.bouncing_ball", "BouncingBall"),
    "SpringMass": _simple("blocks.benchmarks.lim", "SpringMass", 1.0, 100.0, 1.0),
    "ACCController": _acc,
    "TableReference": _table_reference,
    "ExpandingWheelPlant": _expanding_wheel,
    "FlexibleJoint": _simple("blocks.controllers.flatness", "FlexibleJoint"),
    "KinematicCar": _simple("blocks.controllers.flatness", "KinematicCar"),
    "FlatTracker": _flat_tracker,
    "GantryCrane": _gantry,
    "OperatorProgram": _operator,
    "Battery": _battery,
    "CraneDrive": _crane_drive,
    "DCMotor": _simple("blocks.electric", "DCMotor", resistance_ohm=1.0, inductance_h=0.5,
                       torque_constant_nm_per_a=0.01, inertia_kgm2=0.01),
    "Gearbox": _simple("blocks.electric", "Gearbox", ratio=5.0, efficiency=0.9),
    "PMSM": _pmsm,
    "DQCurrentController": _pmsm_drive_part("DQCurrentController"),
    "AveragedInverter": _pmsm_drive_part("AveragedInverter"),
    "TorqueToCurrent": _pmsm_drive_part("TorqueToCurrent"),
    "MultibodyBlock": _multibody,
    "Index3Stepper": _index3,
    **{n: _hydraulics(n) for n in (
        "CheckValve", "DoubleActingCylinder", "FixedDisplacementPump", "NominalFlowValve",
        "Orifice", "PressureSource", "ReliefValve", "SpoolValve43", "Tank", "Volume",
        "ServoValve", "GasAccumulator", "HydraulicLine", "HydraulicMotor",
        "VariableDisplacementPump", "ValveControlledCylinder")},
    **{n: _ocean(n) for n in ("CatenaryMooring", "PolynomialMooring", "MorisonMember",
                              "WaveField", "WaveLoads", "Vessel6DOF", "CraneVessel")},
    **{n: _paper(n) for n in ("FaultRamp", "ForceSensor", "NipForceReference",
                              "NipLoadMonitor", "ReelMechanics")},
    **{n: _vehicle(n) for n in (
        "AcceleratorMap", "AutomaticGearbox", "Brake", "Engine", "FinalDrive", "HalfCar",
        "LongitudinalVehicle", "ShiftSchedule", "SingleTrack", "TorqueConverter", "Tyre",
        "IDMVehicle", "LeadVehicle", "Radar")},
    "VortexFlow": _vortex("VortexFlow"),
    "SpaghettiBeam": _vortex("SpaghettiBeam"),
}
