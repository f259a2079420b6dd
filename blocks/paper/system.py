"""One complete reel: mechanics, two force-controlled hydraulic cylinders, sensors, PI control.

:func:`reel_diagram` builds the reel of the seed (Papers III and IV; research/seed-001.md
sec. 2.5-2.7, 2.9) as a sub-diagram with two inputs (nip-load reference, web speed), so
that the same factory gives the machine ("plant", with fault paths) and its nominal shadow
model.  :class:`ReelParameters` holds every number with its source; :func:`steady_state`
gives the consistent initial state (steady reeling at the reference).

Circuit per side i = A, B (seed Figs. 4/5, not reproduced in the text: our reading)
-------------------------------------------------------------------------------------
A servo valve (:class:`~blocks.hydraulics.ServoValve`: 2nd-order spool, seed eq. 34,
critically lapped, laminar null leakage on every edge) between an ideal supply and the tank.
The cylinder pulls its carriage towards the drum: its rod-side chamber (2) is the pressing
chamber, fed from valve port B; the piston-side chamber (1) is on port A.  So a positive
spool (P->A, B->T) lowers the pressing force, and the seed's P->A leak raises the counter
pressure, which the controller compensates until the valve runs out of authority ("if
relative leaking is increased, the force servo did not manage to achieve the desired
force"; the seed's "pressure in chamber A decreases when relative leaking is decreased" also
holds literally).  The plant's side A has the leak path: an
:class:`~blocks.hydraulics.Orifice` from the supply to line A whose area (block
``leak_ramp``, a :class:`~blocks.paper.faults.FaultRamp`, 0 by default) is the fault.

Force control (seed eq. 33): the force sensor on the rod
(:class:`~blocks.paper.sensors.ForceSensor`, gain -1: it reads the pull as a positive
pressing force) feeds a PI controller (:class:`blocks.pid.PID`, output limited to +-10 V,
back-calculation anti-windup):

.. math:: U_i = K_P e_i + K_I\\int e_i\\,dt, \\qquad e_i = F_{meas,i} - F_{ref,i}

(the seed's :math:`U_{err}` = reference - measured, with the sign of the valve's solenoid
wiring: a positive voltage drives the spool towards P->A, which lowers the pressing force).
The cylinder force reference shapes the nip-load reference (:class:`NipForceReference`):

.. math:: F_{ref,i} = q_{ref} W/2 - \\hat F_{f,i}, \\qquad
          \\hat F_{f,i} = g\\big(\\hat\\mu_c m_c + \\hat\\mu_s (m_s + m_r/2)\\big)

the seed's "cylinder reference force is set to produce a nip load of 4000 N/m": the rail
friction acts between the cylinder and the nip (while the roll grows the carriages retreat,
so friction presses the roll against the drum), which the force controller cannot see, so
the nominal sliding friction (nominal dynamic coefficients, current roll mass) is fed
forward.  A rail-friction fault adds friction the feed-forward does not know: it goes
straight into the nip load, as in the seed.

Limitations: one phase of the seed's cycle only (steady reeling at constant web speed; no
turn-up, no transfer to storage, where the seed says carriage friction shows in the
cylinder forces); ideal constant supply pressure (no pump, relief valve or accumulator),
hoses lumped into the chamber dead volumes; no spool/drum rotation or centre and surface
drives; both sides identical; the controller's friction feed-forward uses the nominal
sliding coefficients; the cylinder seal friction is inside the measured force (the sensor
is on the rod), so the force loop compensates it; the mechanics' limitations are listed in
:mod:`blocks.paper.reel`, the contact's in :mod:`blocks.paper.nip`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy.optimize import root

from blocks.hydraulics import (
    CylinderFriction,
    DoubleActingCylinder,
    Fluid,
    Orifice,
    PressureSource,
    ServoValve,
)
from blocks.hydraulics.orifice import DEFAULT_TRANSITION_PA
from blocks.hydraulics.valves import port_flows, spool_edge_flows
from blocks.math import Sum
from blocks.pid import PID
from cosim import Block, DiagramBuilder
from cosim.errors import ParameterError

from .faults import FaultRamp
from .nip import NipContactLaw, diameter_rate, fit_power_law
from .reel import SIDES, RailFriction, ReelMechanics
from .sensors import ForceSensor

G = 9.81


@dataclass(frozen=True)
class ReelParameters:
    """Every number of the reel model, with its source ([seed] or our choice and why).

    ======================  ===============  ==================================================
    parameter               value            source / justification
    ======================  ===============  ==================================================
    nip_ref_n_m             4000 N/m         [seed, Paper IV] nip-load reference
    web_width_m             6.0 m            roll width = contact length (machines: 5-10 m)
    bearing_span_m          7.2 m            carriages 0.6 m outside the roll on each side
    drum_diameter_m         1.5 m            reel drum (typ. 1.2-1.8 m)
    core_diameter_m         0.8 m            reel spool shell
    initial_diameter_m      2.5 m            mid-cycle roll [seed: 2-4 m]
    web_thickness_m         80 um            tau, wound layer (newsprint-like)
    roll_density_kg_m3      750              basis weight rho*tau = 60 g/m^2
    web_speed_m_s           25 m/s           1500 m/min; constant [seed: "kept constant"]
    spool_mass_kg           10 000 kg        empty steel spool; roll at d0: 29.8 t [seed 20-120 t]
    carriage_mass_kg        2000 kg          per side; normal load of the carriage rails
    sledge_mass_kg          1000 kg          per side; sledges carry the roll
    roll_modulus_pa         50 MPa           radial modulus of a wound roll (not in seed);
                                             gives a 13 mm nip and 0.28 mm penetration
    roll_poisson            0.3              (not in seed)
    contact_damping_ratio   0.3              c_max for zeta = 0.3 of the symmetric nip mode
    damping_depth_m         50 um            delta_c of the seed's damping blend (< 0.28 mm)
    n_contact_elements      12               seed: "several" spring-dampers along the line
    carriage mu_s / mu_d    0.015 / 0.013    [seed, Paper IV] carriage rails
    sledge mu_s / mu_d      0.0045 / 0.0045  [seed, Paper III: 0.0045 sliding] without the
                                             Paper III static 0.015: with the roll's 150 kN
                                             per side on the sledges, that 1.6 kN breakaway
                                             excess drives a stick-slip limit cycle at the
                                             0.25 mm/s retreat speed (simulated after the
                                             carriage-A friction fault: the side-A end load
                                             keeps swinging between +10 % and +35 %
                                             instead of settling); rolling linear guides
                                             have no such excess
    stribeck / tanh vel.    0.1 / 0.02 mm/s  below the 0.25 mm/s retreat speed: sliding
    supply / tank           10 / 0.1 MPa     absolute
    bulk_modulus_pa         1.0 GPa          oil with hoses (effective)
    piston / rod diameter   80 / 45 mm       11 kN pull: annulus 7.2 MPa, piston side 2.8 MPa
    stroke_m                1.8 m            carriage travel (4 m - 0.8 m)/2 plus margins
    dead volumes            1.0 L each       hoses and ports
    centre distance X_0     1.05 m           at zero extension: 0.1 m of stroke left when the
                                             empty spool (0.8 m) touches the drum
    cylinder seal friction  100 N (150 st.)  plus 1000 N s/m viscous [seed IV: Coulomb+viscous]
    valve f_n / zeta        40 Hz / 0.7      proportional servo valve (-90 deg point)
    valve rated flow        10 L/min         per edge at 35 bar, at 10 V
    valve null leakage      1e-12 m^3/s/Pa   per edge: ~0.3 L/min per path at 100 bar
    kp / ki                 1e-3 V/N, 1e-2   V/(N s); linearized loop: crossover 23.5 rad/s,
                                             phase margin 63 deg, gain margin 22 dB
    sensor noise bandwidth  5 Hz             fault signal band (seed: "random noise")
    ======================  ===============  ==================================================
    """

    nip_ref_n_m: float = 4000.0
    web_width_m: float = 6.0
    bearing_span_m: float = 7.2
    drum_diameter_m: float = 1.5
    core_diameter_m: float = 0.8
    initial_diameter_m: float = 2.5
    web_thickness_m: float = 80e-6
    roll_density_kg_m3: float = 750.0
    web_speed_m_s: float = 25.0
    spool_mass_kg: float = 10000.0
    carriage_mass_kg: float = 2000.0
    sledge_mass_kg: float = 1000.0
    roll_modulus_pa: float = 50e6
    roll_poisson: float = 0.3
    contact_damping_ratio: float = 0.3
    damping_depth_m: float = 50e-6
    n_contact_elements: int = 12
    carriage_friction: RailFriction = field(
        default_factory=lambda: RailFriction(0.015, 0.013))
    sledge_friction: RailFriction = field(
        default_factory=lambda: RailFriction(0.0045, 0.0045))
    supply_pa: float = 10e6
    tank_pa: float = 1e5
    bulk_modulus_pa: float = 1.0e9
    density_kg_m3: float = 870.0
    piston_diameter_m: float = 0.080
    rod_diameter_m: float = 0.045
    stroke_m: float = 1.8
    dead_volume_m3: float = 1.0e-3
    cylinder_friction: CylinderFriction = field(default_factory=lambda: CylinderFriction(
        coulomb_n=100.0, static_n=150.0, stribeck_velocity_m_s=1e-3, viscous_n_s_m=1000.0,
        tanh_velocity_m_s=1e-4))
    centre_distance_at_zero_m: float = 1.05
    valve_natural_frequency_hz: float = 40.0
    valve_damping: float = 0.7
    valve_rated_command_v: float = 10.0
    valve_q_nominal_m3_s: float = 10e-3 / 60.0
    valve_dp_nominal_pa: float = 35e5
    valve_leakage_m3_s_pa: float = 1e-12
    kp_v_per_n: float = 1e-3
    ki_v_per_n_s: float = 1e-2
    noise_bandwidth_hz: float = 5.0

    def __post_init__(self) -> None:
        own = "ReelParameters"
        for name in ("nip_ref_n_m", "web_width_m", "bearing_span_m", "drum_diameter_m",
                     "core_diameter_m", "initial_diameter_m", "web_thickness_m",
                     "roll_density_kg_m3", "spool_mass_kg", "carriage_mass_kg",
                     "sledge_mass_kg", "roll_modulus_pa", "contact_damping_ratio",
                     "damping_depth_m", "supply_pa", "tank_pa", "bulk_modulus_pa",
                     "density_kg_m3", "piston_diameter_m", "rod_diameter_m", "stroke_m",
                     "dead_volume_m3", "centre_distance_at_zero_m",
                     "valve_natural_frequency_hz", "valve_damping", "valve_rated_command_v",
                     "valve_q_nominal_m3_s", "valve_dp_nominal_pa", "kp_v_per_n",
                     "ki_v_per_n_s", "noise_bandwidth_hz"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ParameterError(f"{own}: {name} must be finite and > 0, got {v!r}")
        if not (math.isfinite(self.web_speed_m_s) and self.web_speed_m_s >= 0):
            raise ParameterError(f"{own}: web_speed_m_s must be finite and >= 0, got "
                                 f"{self.web_speed_m_s!r}")
        if not self.rod_diameter_m < self.piston_diameter_m:
            raise ParameterError(f"{own}: rod_diameter_m ({self.rod_diameter_m!r}) must be "
                                 f"smaller than piston_diameter_m ({self.piston_diameter_m!r})")
        if not self.tank_pa < self.supply_pa:
            raise ParameterError(f"{own}: tank_pa must be below supply_pa")
        if not self.valve_leakage_m3_s_pa >= 0:
            raise ParameterError(f"{own}: valve_leakage_m3_s_pa must be >= 0, got "
                                 f"{self.valve_leakage_m3_s_pa!r}")

    # ------------------------------------------------------- derived values
    @property
    def area_piston_m2(self) -> float:
        return 0.25 * math.pi * self.piston_diameter_m ** 2

    @property
    def area_annulus_m2(self) -> float:
        return self.area_piston_m2 - 0.25 * math.pi * self.rod_diameter_m ** 2

    @property
    def fluid(self) -> Fluid:
        return Fluid(density_kg_m3=self.density_kg_m3, bulk_modulus=self.bulk_modulus_pa)

    def paper_mass(self, d: float) -> float:
        """Wound paper mass [kg] at roll diameter d."""
        return (self.roll_density_kg_m3 * self.web_width_m * 0.25 * math.pi
                * (d * d - self.core_diameter_m ** 2))

    def roll_mass(self, d: float) -> float:
        """Spool + paper [kg] at diameter d."""
        return self.spool_mass_kg + self.paper_mass(d)

    def power_law(self):
        """The Hertz fit (:func:`~blocks.paper.nip.fit_power_law`) at d0 over 0.25-2 q_ref."""
        q = self.nip_ref_n_m
        return fit_power_law(self.initial_diameter_m, self.drum_diameter_m,
                             self.roll_modulus_pa, self.roll_poisson, (0.25 * q, 2.0 * q))

    def contact_law(self) -> NipContactLaw:
        """Power law fitted to Hertz; damping for ``contact_damping_ratio`` of the nip mode.

        The symmetric mode: both ends together, mass :math:`2(m_c + m_s) + m_r(d_0)` on the
        contact stiffness :math:`W\\,dq/d\\delta` at the reference load.
        """
        fit = self.power_law()
        law = NipContactLaw(fit.k_a, fit.exponent, 0.0, self.damping_depth_m)
        k = self.web_width_m * law.stiffness(law.penetration(self.nip_ref_n_m))
        m = 2.0 * (self.carriage_mass_kg + self.sledge_mass_kg) \
            + self.roll_mass(self.initial_diameter_m)
        c = 2.0 * self.contact_damping_ratio * math.sqrt(k * m) / self.web_width_m
        return replace(law, damping_n_s_m2=c)

    def friction_feedforward(self, roll_mass_kg: float) -> float:
        """:math:`\\hat F_f` [N] per side (nominal dynamic coefficients)."""
        return G * (self.carriage_friction.mu_dynamic * self.carriage_mass_kg
                    + self.sledge_friction.mu_dynamic
                    * (self.sledge_mass_kg + 0.5 * roll_mass_kg))

    def force_reference(self, nip_ref_n_m: float, roll_mass_kg: float) -> float:
        """:math:`F_{ref} = q_{ref} W/2 - \\hat F_f` [N] per side."""
        return 0.5 * nip_ref_n_m * self.web_width_m - self.friction_feedforward(roll_mass_kg)


class NipForceReference(Block):
    """Cylinder force references from the nip-load reference (friction feed-forward).

    .. math:: F_{ref,A} = F_{ref,B} = q_{ref} W/2 - g\\big(\\hat\\mu_c m_c
              + \\hat\\mu_s (m_s + m_r/2)\\big)

    (see :mod:`blocks.paper.system`; :math:`\\hat\\mu` the nominal dynamic coefficients).

    Ports
    -----
    in   nip_ref      scalar [N/m]  nip-load reference q_ref
    in   roll_mass    scalar [kg]  m_r, spool + paper (known from the roll diameter)
    out  force_ref_A  scalar [N]   reads both inputs
    out  force_ref_B  scalar [N]   reads both inputs

    Parameters
    ----------
    params : ReelParameters
        Web width W, carriage and sledge masses and nominal friction coefficients
        (:meth:`ReelParameters.force_reference`).
    """

    def __init__(self, name: str, params: ReelParameters) -> None:
        super().__init__(name)
        self.p = params
        self.nip_ref = self.declare_input("nip_ref", unit="N/m")
        self.roll_mass = self.declare_input("roll_mass", unit="kg")

        def calc(ctx: Any) -> tuple[float, float]:
            f = params.force_reference(ctx.input(self.nip_ref), ctx.input(self.roll_mass))
            return f, f
        self.force_ref_A, self.force_ref_B = self.declare_outputs(
            [("force_ref_A", "N"), ("force_ref_B", "N")], calc)

    def c_model(self, cg: Any) -> Any:
        """The C form (:func:`blocks.paper._cforms.force_reference`)."""
        from ._cforms import force_reference
        return force_reference(self, cg, G)


# ------------------------------------------------------------ steady state
@dataclass(frozen=True)
class SteadyState:
    """Steady reeling at t = 0 (:func:`steady_state`); per-side values are equal."""

    velocity_m_s: float
    position_m: float
    nip_mean_n_m: float
    force_ref_n: float
    friction_n: float
    p_piston_pa: float
    p_annulus_pa: float
    spool: float
    command_v: float


def steady_state(params: ReelParameters, nip_ref_n_m: float | None = None,
                 web_speed_m_s: float | None = None) -> SteadyState:
    """Consistent initial state: both carriages retreat with the roll, forces balanced.

    Per side: velocity :math:`v_g = \\dot d/2`; rod force :math:`-F_{ref}`; nip load
    :math:`q = 2(F_{ref} + F_f(v_g))/W` (quasi-static: the inertia and momentum terms are
    below 1e-2 N); penetration from the spring part of the contact law (the penetration
    rate is 0); chamber flows :math:`q_A = A_1 v_g`, :math:`q_B = -A_2 v_g` and the
    force balance solved for (spool, p_1, p_2) with the valve's own flow functions.
    """
    p = params
    q_ref = p.nip_ref_n_m if nip_ref_n_m is None else float(nip_ref_n_m)
    vw = p.web_speed_m_s if web_speed_m_s is None else float(web_speed_m_s)
    d0 = p.initial_diameter_m
    vg = 0.5 * diameter_rate(d0, vw, p.web_thickness_m)
    m_r = p.roll_mass(d0)
    f_ref = p.force_reference(q_ref, m_r)
    n_c = G * p.carriage_mass_kg
    n_s = G * (p.sledge_mass_kg + 0.5 * m_r)
    ff = p.carriage_friction.force(vg, n_c) + p.sledge_friction.force(vg, n_s)
    q_mean = 2.0 * (f_ref + ff) / p.web_width_m
    law = p.contact_law()
    x = 0.5 * (d0 + p.drum_diameter_m) - p.centre_distance_at_zero_m - law.penetration(q_mean)
    a1, a2 = p.area_piston_m2, p.area_annulus_m2
    seal = p.cylinder_friction.force(vg)
    k = p.valve_q_nominal_m3_s / math.sqrt(p.valve_dp_nominal_pa)
    ps, pt, g = p.supply_pa, p.tank_pa, p.valve_leakage_m3_s_pa
    dp_tr = DEFAULT_TRANSITION_PA      # the ServoValve's default laminar transition
    scale = np.array([1.0, 1e6, 1e6])

    def eqs(z: np.ndarray) -> np.ndarray:
        s, p1, p2 = z * scale
        qa, qb, _, _ = port_flows(spool_edge_flows(s, ps, pt, p1, p2, k, 0.0, dp_tr, g))
        return np.array([(qa - a1 * vg) * 1e6, (qb + a2 * vg) * 1e6,
                         (p1 * a1 - p2 * a2 - seal + f_ref) * 1e-3])

    guess = np.array([-0.05, 0.2 * ps / 1e6, (f_ref + 0.2 * ps * a1) / a2 / 1e6])
    sol = root(eqs, guess, method="hybr", options={"xtol": 1e-13})
    if not sol.success or np.max(np.abs(eqs(sol.x))) > 1e-6:
        raise ParameterError(f"steady_state: no hydraulic equilibrium for F_ref = "
                             f"{f_ref:.6g} N ({sol.message}); check supply pressure and areas")
    s, p1, p2 = sol.x * scale
    if not (pt < p1 < ps and pt < p2 < ps and abs(s) < 1.0):
        raise ParameterError(f"steady_state: equilibrium outside the valve's range (spool "
                             f"{s:.4g}, p1 {p1:.4g} Pa, p2 {p2:.4g} Pa)")
    return SteadyState(vg, x, q_mean, f_ref, ff, p1, p2, s, s * p.valve_rated_command_v)


# ------------------------------------------------------------ the diagram
def reel_diagram(name: str, params: ReelParameters | None = None, *,
                 leak_onset_s: float | None = None, leak_ramp_s: float = 5.0,
                 sensor_seeds: tuple[int, int] = (11, 12),
                 initial: SteadyState | None = None, external_commands: bool = False) -> Any:
    """One reel instance as a sub-diagram (see the module docstring).

    Parameters
    ----------
    name : str
        Diagram name ("plant", "shadow").
    params : ReelParameters
    leak_onset_s, leak_ramp_s : float
        With ``leak_onset_s``, add the P->A leak orifice of side A (block ``leak``) whose
        area ramps from 0 at ``leak_onset_s`` to the parameter ``magnitude`` of block
        ``leak_ramp`` (:class:`~blocks.paper.faults.FaultRamp`, default 0: no leak) over
        ``leak_ramp_s``.
    sensor_seeds : (int, int)
        Noise seeds of force sensors A and B.
    initial : SteadyState, optional
        Initial state (default :func:`steady_state` at the parameters' reference and speed).
    external_commands : bool
        Drive the servo valves from the inputs ``valve_command_A/B`` instead of the own PI
        controllers (which still run, unconnected): the seed's Paper IV wording for a model
        beside the machine, "control signals of existing reel are utilized as input for the
        simulation model" (see :mod:`blocks.paper.fault_detection` for why the example does
        not use it for the 5 % criterion).

    Ports
    -----
    in   nip_ref     scalar [N/m]  nip-load reference
    in   web_speed   scalar [m/s]  web speed
    in   valve_command_A, valve_command_B   scalar [V]  only with ``external_commands``
    out  nip_A, nip_B, nip_mean [N/m]; x_A, x_B [m]; force_A, force_B (sensor signals) [N];
         p1_A, p2_A, p1_B, p2_B [Pa]; command_A, command_B [V]; spool_A, spool_B [1]

    Inside: ``mech`` (:class:`~blocks.paper.reel.ReelMechanics`), ``supply``, ``tank``,
    ``ref`` (:class:`NipForceReference`) and per side i: ``cyl_i``, ``valve_i``, ``sensor_i``,
    ``err_i``, ``pi_i``.
    """
    p = params or ReelParameters()
    st = initial or steady_state(p)
    b = DiagramBuilder(name)
    law = p.contact_law()
    mech = b.add(ReelMechanics(
        "mech", web_width_m=p.web_width_m, bearing_span_m=p.bearing_span_m,
        drum_diameter_m=p.drum_diameter_m, core_diameter_m=p.core_diameter_m,
        initial_diameter_m=p.initial_diameter_m, web_thickness_m=p.web_thickness_m,
        roll_density_kg_m3=p.roll_density_kg_m3, spool_mass_kg=p.spool_mass_kg,
        carriage_mass_kg=p.carriage_mass_kg, sledge_mass_kg=p.sledge_mass_kg, contact=law,
        carriage_friction=p.carriage_friction, sledge_friction=p.sledge_friction,
        centre_distance_at_zero_m=p.centre_distance_at_zero_m,
        n_contact_elements=p.n_contact_elements, x0_m=(st.position_m, st.position_m),
        v0_m_s=(st.velocity_m_s, st.velocity_m_s)))
    supply = b.add(PressureSource("supply", p.supply_pa))
    tank = b.add(PressureSource("tank", p.tank_pa))
    ref = b.add(NipForceReference("ref", p))
    b.connect(mech.roll_mass, ref.roll_mass)
    b.export_input(ref.nip_ref, "nip_ref")
    b.export_input(mech.web_speed, "web_speed")
    fluid = p.fluid
    for side, seed in zip(SIDES, sensor_seeds):
        cyl = b.add(DoubleActingCylinder(
            f"cyl_{side}", area_1_m2=p.area_piston_m2, area_2_m2=p.area_annulus_m2,
            stroke_m=p.stroke_m, dead_volume_1_m3=p.dead_volume_m3,
            dead_volume_2_m3=p.dead_volume_m3, fluid=fluid, p1_0_pa=st.p_piston_pa,
            p2_0_pa=st.p_annulus_pa, friction=p.cylinder_friction))
        valve = b.add(ServoValve(
            f"valve_{side}", natural_frequency_hz=p.valve_natural_frequency_hz,
            damping=p.valve_damping, rated_command=p.valve_rated_command_v, command_unit="V",
            q_nominal_m3_s=p.valve_q_nominal_m3_s, dp_nominal_pa=p.valve_dp_nominal_pa,
            leakage_m3_s_pa=p.valve_leakage_m3_s_pa, spool0=st.spool))
        sensor = b.add(ForceSensor(f"sensor_{side}", gain=-1.0,
                                   noise_bandwidth_hz=p.noise_bandwidth_hz, seed=seed))
        err = b.add(Sum(f"err_{side}", "+-", unit="N"))
        lim = p.valve_rated_command_v
        pi = b.add(PID(f"pi_{side}", kp=p.kp_v_per_n, ki=p.ki_v_per_n_s, lower=-lim,
                       upper=lim, input_unit="N", unit="V", initial=st.command_v))
        b.connect(supply.p, valve.p_P)
        b.connect(tank.p, valve.p_T)
        b.connect(cyl.p_1, valve.p_A)
        b.connect(cyl.p_2, valve.p_B)
        b.connect(valve.q_B, cyl.q_2)
        if side == "A" and leak_onset_s is not None:
            area = b.add(FaultRamp("leak_ramp", onset_s=leak_onset_s, ramp_s=leak_ramp_s,
                                   unit="m^2"))
            leak = b.add(Orifice("leak", area_m2=None, fluid=fluid))
            q_sum = b.add(Sum("q_A_total", "++", unit="m^3/s"))
            b.connect(supply.p, leak.p_a)
            b.connect(cyl.p_1, leak.p_b)
            b.connect(area.y, leak.area)
            b.connect(valve.q_A, q_sum.ins[0])
            b.connect(leak.q, q_sum.ins[1])
            b.connect(q_sum.y, cyl.q_1)
        else:
            b.connect(valve.q_A, cyl.q_1)
        b.connect(mech.output(f"x_{side}"), cyl.x)
        b.connect(mech.output(f"v_{side}"), cyl.v)
        b.connect(cyl.force, mech.input(f"force_{side}"))
        b.connect(cyl.force, sensor.force)
        b.connect(sensor.measured, err.ins[0])
        b.connect(ref.output(f"force_ref_{side}"), err.ins[1])
        b.connect(err.y, pi.e)
        if external_commands:
            b.export_input(valve.command, f"valve_command_{side}")
        else:
            b.connect(pi.u, valve.command)
        b.export_output(sensor.measured, f"force_{side}")
        b.export_output(cyl.p_1, f"p1_{side}")
        b.export_output(cyl.p_2, f"p2_{side}")
        b.export_output(pi.u, f"command_{side}")
        b.export_output(valve.spool, f"spool_{side}")
        b.export_output(mech.output(f"x_{side}"), f"x_{side}")
        b.export_output(mech.output(f"nip_{side}"), f"nip_{side}")
    b.export_output(mech.nip_mean, "nip_mean")
    return b.build()
