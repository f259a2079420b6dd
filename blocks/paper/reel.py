"""Reel mechanics: a growing paper roll on two carriages pressed against the reel drum.

The seed's reel (Papers III and IV; research/seed-001.md sec. 2.9): the reel spool lies on
sledges that run on rails; carriages, joined to the spool by hydraulically locked arms, are
pulled by hydraulic cylinders A and B (one per side) so that the growing paper roll is
pressed against the reel drum.  The seed's multibody models (6 or 11 bodies, 11 DOF) are not
reproducible (topology figures missing, no data); this block keeps the two motions that carry
the nip load: the translation of each spool end along the rails.

Model (planar, in the horizontal plane of the rails)
----------------------------------------------------
Coordinates :math:`x_A, x_B`: positions of carriage A and B along the rails (= the extension
of cylinder A and B; x grows away from the drum).  Carriage i, sledge i and spool end i move
together (locked arms, sledges carried by the spool), so the spool with the wound roll is a
rigid rod whose ends move with the carriages: centre translation
:math:`(x_A + x_B)/2` and yaw :math:`(x_A - x_B)/L_b` (small), with :math:`L_b` the bearing
span.  The centre distance between spool and drum axes at axial position z (z = 0 mid-web,
side A at negative z) is

.. math:: X(z) = X_0 + \\alpha(z)\\, x_A + \\beta(z)\\, x_B, \\qquad
          \\alpha = \\tfrac12 - z/L_b, \\quad \\beta = \\tfrac12 + z/L_b

Equations of motion (variable mass: the wound paper arrives with no velocity along the
rails, so the generalized momentum :math:`M\\dot q` changes only by the applied forces):

.. math::

    M(t)\\,\\ddot q &= Q - \\dot M(t)\\,\\dot q, \\qquad q = (x_A, x_B) \\\\
    M &= (m_c + m_s) I + \\frac{m_r}{4}\\begin{pmatrix}1&1\\\\1&1\\end{pmatrix}
         + \\frac{J}{L_b^2}\\begin{pmatrix}1&-1\\\\-1&1\\end{pmatrix} \\\\
    Q_i &= F_i + \\sum_j w_j\\, q_j\\, \\{\\alpha_j, \\beta_j\\}_i - F_{f,i}(\\dot x_i)

with :math:`m_r = m_{spool} + m_{paper}`, the yaw inertia
:math:`J = m_{spool}(d_c^2/8 + L_b^2/12) + m_{paper}((d^2 + d_c^2)/16 + W^2/12)` (thin tube
spool of diameter :math:`d_c`, thick-walled paper roll of width W), :math:`F_i` the applied
rail force (the cylinder rod force, positive pushing the carriage away from the drum) and
the nip contact discretized, as in the seed, into n spring-dampers of width
:math:`w_j = W/n` at the element centres :math:`z_j`, each with the line load
:math:`q_j = q(\\delta_j, \\dot\\delta_j)` of :class:`~blocks.paper.nip.NipContactLaw`,

.. math:: \\delta_j = \\frac{d + d_1}{2} - X(z_j), \\qquad
          \\dot\\delta_j = \\frac{\\dot d}{2} - \\dot X(z_j)

Roll growth (seed eq. 25): :math:`\\dot\\ell = v_{web}`,
:math:`d = \\sqrt{d_0^2 + 4\\tau\\ell/\\pi}`, :math:`m_{paper} = \\rho_r W \\pi (d^2 - d_c^2)/4`.

States: ``gap_A``, ``gap_B`` = :math:`X_0 + x_i - (d + d_1)/2` (minus the penetration at
bearing i, about -0.3 mm; integrating these instead of :math:`x_i \\approx 1` m lets a
solver's absolute tolerance resolve the nip load: 1e-9 m is 0.015 N/m), ``v_A``, ``v_B``
and the wound length :math:`\\ell`.

Rail friction (seed eq. 24: coefficient times the normal reaction; coulomb + viscous with a
static level): per side, carriage rails with normal load :math:`m_c g` and sledge rails with
normal load :math:`(m_s + m_r/2) g` (the sledges carry the roll),
:math:`F_{f,i} = \\mu_{c,i}(v) m_c g + \\mu_{s,i}(v)(m_s + m_r/2) g` with
:class:`RailFriction`.  The eight coefficients are tunable parameters
(``mu_static_carriage_A``, ``mu_dynamic_carriage_A``, ... ``mu_dynamic_sledge_B``), which is
how the rail-friction faults are injected.

Outputs: the nip line load at the two ends of the contact line (z = -W/2 side A, +W/2
side B; where a tilt of the spool changes it most), its mean over the line (total nip force
/ W) and the total nip force.

Ports: :class:`ReelMechanics`.

Limitations: rigid spool (no bending: a tilt changes the end loads by the lever rule, no
crown or deflection compensation); yaw angle small (linear kinematics); the carriages do
not rotate; the arms are rigid; no vertical dynamics (the sledge normal loads are static
weights); no rotation of spool and drum and no centre/surface drive torques (they do not
enter the nip load in this planar model); friction without true stiction (tanh
regularization, as the seed's smoothed model); the wound paper brings no momentum along the
rails (it comes off the drum surface, whose velocity at the nip is perpendicular to the line
of centres); constant contact fit (see
:mod:`blocks.paper.nip`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError

from ..checks import check_number as _finite
from .nip import NipContactLaw, diameter_rate, roll_diameter

SIDES = ("A", "B")
RAILS = ("carriage", "sledge")


@dataclass(frozen=True)
class RailFriction:
    """Friction of a rail with linear bearings: Coulomb + Stribeck static level + viscous.

    .. math:: F_f = N\\Big[\\mu_d + (\\mu_s - \\mu_d)\\, e^{-(v/v_S)^2}\\Big]
              \\tanh(v / v_t) + \\sigma v

    (the form of :class:`blocks.hydraulics.CylinderFriction`, with coefficients times the
    normal load N instead of forces).  The seed's values: static 0.015, sliding 0.013
    (Paper IV) or 0.0045 (Paper III).  The tanh stands for the seed's smoothing: below
    :math:`v_t` the friction acts as a steep viscous damper (no true stiction).

    Parameters
    ----------
    mu_static, mu_dynamic : float
        Default coefficients (the block exposes them as tunable parameters).
    stribeck_velocity_m_s, tanh_velocity_m_s : float
        :math:`v_S` and :math:`v_t`.
    viscous_n_s_m : float
        :math:`\\sigma` [N s/m] (absolute, not scaled by N).
    """

    mu_static: float
    mu_dynamic: float
    stribeck_velocity_m_s: float = 1e-4
    tanh_velocity_m_s: float = 2e-5
    viscous_n_s_m: float = 0.0

    def __post_init__(self) -> None:
        own = "RailFriction"
        for label in ("mu_static", "mu_dynamic", "viscous_n_s_m"):
            object.__setattr__(self, label, _finite(own, label, getattr(self, label),
                                                    nonnegative=True))
        for label in ("stribeck_velocity_m_s", "tanh_velocity_m_s"):
            object.__setattr__(self, label, _finite(own, label, getattr(self, label),
                                                    positive=True))

    def force(self, v: float, normal_n: float, mu_static: float | None = None,
              mu_dynamic: float | None = None) -> float:
        """Friction force [N] opposing v [m/s] under the normal load [N]."""
        ms = self.mu_static if mu_static is None else mu_static
        md = self.mu_dynamic if mu_dynamic is None else mu_dynamic
        r = v / self.stribeck_velocity_m_s
        mu = (md + (ms - md) * math.exp(-r * r)) * math.tanh(v / self.tanh_velocity_m_s)
        return normal_n * mu + self.viscous_n_s_m * v


class ReelMechanics(Block):
    """Paper-machine reel: growing roll on carriages A and B, nip contact, rail friction.

    See the module docstring for the equations and limitations.

    Ports
    -----
    in   force_A     scalar [N]    rail force on carriage A (cylinder rod force), + away
                                   from the drum
    in   force_B     scalar [N]    rail force on carriage B
    in   web_speed   scalar [m/s]  web speed v (winding rate)
    out  x_A, x_B    scalar [m]    carriage positions (cylinder extensions); state only
    out  v_A, v_B    scalar [m/s]  carriage velocities; state only
    out  nip_A       scalar [N/m]  nip line load at the side-A end of the contact; reads
                                   web_speed
    out  nip_B       scalar [N/m]  nip line load at the side-B end; reads web_speed
    out  nip_mean    scalar [N/m]  total nip force / W; reads web_speed
    out  nip_force   scalar [N]    total nip force; reads web_speed
    out  diameter    scalar [m]    roll diameter d; state only
    out  roll_mass   scalar [kg]   spool + wound paper; state only
    out  friction_A  scalar [N]    rail friction on side A (carriage + sledge), + opposing
                                   + v; state only
    out  friction_B  scalar [N]    rail friction on side B; state only

    Parameters
    ----------
    web_width_m : float
        W, the roll width = length of the nip contact line.
    bearing_span_m : float
        :math:`L_b` >= W, distance between the carriages (spool bearings).
    drum_diameter_m, core_diameter_m, initial_diameter_m : float
        :math:`d_1`, spool shell :math:`d_c`, roll diameter at t = 0 (:math:`d_0 \\ge d_c`).
    web_thickness_m, roll_density_kg_m3 : float
        :math:`\\tau` and :math:`\\rho_r` (basis weight = :math:`\\rho_r \\tau`).
    spool_mass_kg, carriage_mass_kg, sledge_mass_kg : float
        Empty spool; one carriage; one sledge.
    contact : NipContactLaw
        The nip's force per unit length against the deformation (:mod:`blocks.paper.nip`).
    carriage_friction, sledge_friction : RailFriction
        Laws and default coefficients (both sides start equal).
    centre_distance_at_zero_m : float
        :math:`X_0`: spool-drum centre distance with both cylinders fully retracted.
    n_contact_elements : int
        n spring-dampers along the contact line (>= 2).
    x0_m, v0_m_s : (float, float)
        Initial carriage positions (default: the roll touching the drum, no load) and
        velocities.
    gravity_m_s2 : float
        g [m/s^2].
    """

    def __init__(self, name: str, *, web_width_m: float, bearing_span_m: float,
                 drum_diameter_m: float, core_diameter_m: float, initial_diameter_m: float,
                 web_thickness_m: float, roll_density_kg_m3: float, spool_mass_kg: float,
                 carriage_mass_kg: float, sledge_mass_kg: float, contact: NipContactLaw,
                 carriage_friction: RailFriction, sledge_friction: RailFriction,
                 centre_distance_at_zero_m: float, n_contact_elements: int = 12,
                 x0_m: tuple[float, float] | None = None,
                 v0_m_s: tuple[float, float] = (0.0, 0.0),
                 gravity_m_s2: float = 9.81) -> None:
        super().__init__(name)
        own = f"ReelMechanics '{name}'"
        vals = {k: _finite(own, k, v, positive=True) for k, v in dict(
            web_width_m=web_width_m, bearing_span_m=bearing_span_m,
            drum_diameter_m=drum_diameter_m, core_diameter_m=core_diameter_m,
            initial_diameter_m=initial_diameter_m, web_thickness_m=web_thickness_m,
            roll_density_kg_m3=roll_density_kg_m3, spool_mass_kg=spool_mass_kg,
            carriage_mass_kg=carriage_mass_kg, sledge_mass_kg=sledge_mass_kg,
            centre_distance_at_zero_m=centre_distance_at_zero_m,
            gravity_m_s2=gravity_m_s2).items()}
        if vals["bearing_span_m"] < vals["web_width_m"]:
            raise ParameterError(f"{own}: bearing_span_m ({bearing_span_m!r}) must be >= "
                                 f"web_width_m ({web_width_m!r}): the carriages hold the spool "
                                 "outside the roll")
        if vals["initial_diameter_m"] < vals["core_diameter_m"]:
            raise ParameterError(f"{own}: initial_diameter_m ({initial_diameter_m!r}) must be "
                                 f">= core_diameter_m ({core_diameter_m!r})")
        if not isinstance(contact, NipContactLaw):
            raise ParameterError(f"{own}: contact must be a NipContactLaw, got "
                                 f"{type(contact).__name__}")
        for label, fr in (("carriage_friction", carriage_friction),
                          ("sledge_friction", sledge_friction)):
            if not isinstance(fr, RailFriction):
                raise ParameterError(f"{own}: {label} must be a RailFriction, got "
                                     f"{type(fr).__name__}")
        if not isinstance(n_contact_elements, int) or n_contact_elements < 2:
            raise ParameterError(f"{own}: n_contact_elements must be an int >= 2, got "
                                 f"{n_contact_elements!r}")
        xz = 0.5 * (vals["initial_diameter_m"] + vals["drum_diameter_m"]) \
            - vals["centre_distance_at_zero_m"]        # x where the roll touches the drum
        try:
            x0 = [_finite(own, "x0_m", v) for v in ((xz, xz) if x0_m is None else x0_m)]
            v0 = [_finite(own, "v0_m_s", v) for v in v0_m_s]
        except TypeError:
            x0 = v0 = []
        if len(x0) != 2 or len(v0) != 2:
            raise ParameterError(f"{own}: x0_m and v0_m_s need two values (sides A, B), got "
                                 f"{x0_m!r} and {v0_m_s!r}")

        self.W, self.Lb = vals["web_width_m"], vals["bearing_span_m"]
        self.d1, self.dc = vals["drum_diameter_m"], vals["core_diameter_m"]
        self.d0, self.tau = vals["initial_diameter_m"], vals["web_thickness_m"]
        self.rho = vals["roll_density_kg_m3"]
        self.m_spool, self.m_c = vals["spool_mass_kg"], vals["carriage_mass_kg"]
        self.m_s, self.g = vals["sledge_mass_kg"], vals["gravity_m_s2"]
        self.X0 = vals["centre_distance_at_zero_m"]
        self.contact = contact
        self.friction = {"carriage": carriage_friction, "sledge": sledge_friction}
        n = n_contact_elements
        self.n = n
        z = -0.5 * self.W + (np.arange(n) + 0.5) * self.W / n
        self.alpha = 0.5 - z / self.Lb
        self.beta = 0.5 + z / self.Lb
        self.w = self.W / n
        self.end_alpha = 0.5 + 0.5 * self.W / self.Lb   # z = -W/2 (side A end)
        self.end_beta = 0.5 - 0.5 * self.W / self.Lb

        self.force_A = self.declare_input("force_A", unit="N")
        self.force_B = self.declare_input("force_B", unit="N")
        self.web_speed = self.declare_input("web_speed", unit="m/s")
        # states "gap_A", "gap_B": centre distance at each bearing minus the zero-penetration
        # distance (d + d1)/2, i.e. minus the penetration there (~1e-4 m): scaled so that a
        # solver's absolute tolerance resolves the nip load (x itself is ~1 m; x_positions)
        self.x_gap = [self.declare_continuous_state(f"gap_{s}", x0[i] - xz)
                      for i, s in enumerate(SIDES)]
        self.x_vel = [self.declare_continuous_state(f"v_{s}", v0[i])
                      for i, s in enumerate(SIDES)]
        self.x_l = self.declare_continuous_state("wound_length", 0.0)
        self._ab = list(zip(self.alpha.tolist(), self.beta.tolist()))
        self.mu = {}
        for rail in RAILS:
            fr = self.friction[rail]
            for side in SIDES:
                for kind, default in (("static", fr.mu_static), ("dynamic", fr.mu_dynamic)):
                    pname = f"mu_{kind}_{rail}_{side}"
                    self.mu[(kind, rail, side)] = self.declare_parameter(
                        pname, default, "1", validate=self._mu_validator(own, pname))

        state = ()
        self.x_A, self.x_B = self.declare_outputs(
            [("x_A", "m"), ("x_B", "m")], self.x_positions, depends_on=state)
        self.v_A = self.declare_output("v_A", lambda ctx: ctx.state(self.x_vel[0]),
                                       unit="m/s", depends_on=state)
        self.v_B = self.declare_output("v_B", lambda ctx: ctx.state(self.x_vel[1]),
                                       unit="m/s", depends_on=state)
        self.nip_A, self.nip_B, self.nip_mean, self.nip_force = self.declare_outputs(
            [("nip_A", "N/m"), ("nip_B", "N/m"), ("nip_mean", "N/m"), ("nip_force", "N")],
            self._nip_outputs, depends_on=(self.web_speed,))
        self.diameter = self.declare_output(
            "diameter", lambda ctx: self.roll(ctx.state(self.x_l))[0], unit="m",
            depends_on=state)
        self.roll_mass = self.declare_output(
            "roll_mass", lambda ctx: self.m_spool + self.roll(ctx.state(self.x_l))[1],
            unit="kg", depends_on=state)
        self.friction_A, self.friction_B = self.declare_outputs(
            [("friction_A", "N"), ("friction_B", "N")], self._friction_outputs,
            depends_on=state)

    @staticmethod
    def _mu_validator(own: str, pname: str):
        def check(v: Any) -> float:
            return _finite(own, pname, v, nonnegative=True)
        return check

    # ------------------------------------------------------------ equations
    def roll(self, wound_length: float) -> tuple[float, float]:
        """(diameter d [m], paper mass [kg]) after ``wound_length`` m of web."""
        d = roll_diameter(wound_length, self.d0, self.tau)
        return d, self.rho * self.W * 0.25 * math.pi * (d * d - self.dc * self.dc)

    def yaw_inertia(self, d: float, m_paper: float) -> float:
        """J [kg m^2] of spool + paper about the vertical axis through the roll centre."""
        return (self.m_spool * (self.dc ** 2 / 8.0 + self.Lb ** 2 / 12.0)
                + m_paper * ((d * d + self.dc ** 2) / 16.0 + self.W ** 2 / 12.0))

    def mass_matrix(self, d: float, m_paper: float) -> np.ndarray:
        """M(t) of the module docstring."""
        pp, qq = self._mass_entries(d, m_paper)
        return np.array([[pp, qq], [qq, pp]])

    def _mass_entries(self, d: float, m_paper: float) -> tuple[float, float]:
        m_r = self.m_spool + m_paper
        j = self.yaw_inertia(d, m_paper) / self.Lb ** 2
        return self.m_c + self.m_s + 0.25 * m_r + j, 0.25 * m_r - j

    def x_positions(self, ctx: Any) -> tuple[float, float]:
        """Carriage positions (x_A, x_B) [m] from the gap states and the roll diameter."""
        xz = 0.5 * (self.roll(ctx.state(self.x_l))[0] + self.d1) - self.X0
        return ctx.state(self.x_gap[0]) + xz, ctx.state(self.x_gap[1]) + xz

    def element_loads(self, gap: Any, v: Any, d_rate: float) -> np.ndarray:
        """Line loads q_j [N/m] of the contact elements (gap = (gap_A, gap_B) = -penetration
        at the bearings, v = carriage velocities, d_rate = dd/dt)."""
        law, h = self.contact, 0.5 * d_rate
        return np.array([law.line_load(-(a * gap[0] + b * gap[1]), h - a * v[0] - b * v[1])
                         for a, b in self._ab])

    def nip_sums(self, g0: float, g1: float, v0: float, v1: float,
                 d_rate: float) -> tuple[float, float, float]:
        """(total nip force, generalized nip forces on x_A and x_B) [N]: the sums
        :math:`\\sum_j w_j q_j (1, \\alpha_j, \\beta_j)` over the contact elements."""
        law, h = self.contact, 0.5 * d_rate
        total = fa = fb = 0.0
        for a, b in self._ab:
            q = law.line_load(-(a * g0 + b * g1), h - a * v0 - b * v1)
            if q:
                total += q
                fa += q * a
                fb += q * b
        w = self.w
        return total * w, fa * w, fb * w

    def end_loads(self, gap: Any, v: Any, d_rate: float) -> tuple[float, float]:
        """Line loads [N/m] at the side-A and side-B ends of the contact line."""
        ea, eb, law = self.end_alpha, self.end_beta, self.contact
        qa = law.line_load(-ea * gap[0] - eb * gap[1], 0.5 * d_rate - ea * v[0] - eb * v[1])
        qb = law.line_load(-eb * gap[0] - ea * gap[1], 0.5 * d_rate - eb * v[0] - ea * v[1])
        return qa, qb

    def rail_friction(self, ctx: Any, v: Any, m_paper: float) -> tuple[float, float]:
        """(F_f,A, F_f,B) [N], each opposing its carriage velocity."""
        n_c = self.m_c * self.g
        n_s = (self.m_s + 0.5 * (self.m_spool + m_paper)) * self.g
        fc, fs, mu, p = self.friction["carriage"], self.friction["sledge"], self.mu, ctx.param
        out = []
        for i, side in enumerate(SIDES):
            out.append(fc.force(v[i], n_c, p(mu[("static", "carriage", side)]),
                                p(mu[("dynamic", "carriage", side)]))
                       + fs.force(v[i], n_s, p(mu[("static", "sledge", side)]),
                                  p(mu[("dynamic", "sledge", side)])))
        return out[0], out[1]

    def _kinematics(self, ctx: Any) -> tuple:
        d, m_p = self.roll(ctx.state(self.x_l))
        st = ctx.state
        return ((st(self.x_gap[0]), st(self.x_gap[1])), (st(self.x_vel[0]), st(self.x_vel[1])),
                d, m_p, diameter_rate(d, ctx.input(self.web_speed), self.tau))

    def _nip_outputs(self, ctx: Any) -> tuple[float, float, float, float]:
        gap, v, _, _, dd = self._kinematics(ctx)
        total = self.nip_sums(gap[0], gap[1], v[0], v[1], dd)[0]
        qa, qb = self.end_loads(gap, v, dd)
        return qa, qb, total / self.W, total

    def _friction_outputs(self, ctx: Any) -> tuple[float, float]:
        _, m_p = self.roll(ctx.state(self.x_l))
        return self.rail_friction(ctx, (ctx.state(self.x_vel[0]), ctx.state(self.x_vel[1])),
                                  m_p)

    def derivatives(self, ctx: Any) -> np.ndarray:
        gap, v, d, m_p, dd = self._kinematics(ctx)
        vw = ctx.input(self.web_speed)
        _, qa, qb = self.nip_sums(gap[0], gap[1], v[0], v[1], dd)
        ff = self.rail_friction(ctx, v, m_p)
        r0 = ctx.input(self.force_A) + qa - ff[0]
        r1 = ctx.input(self.force_B) + qb - ff[1]
        # dM/dt: paper mass rate and yaw-inertia rate
        m_rate = self.rho * self.W * self.tau * vw
        j_rate = (m_rate * ((d * d + self.dc ** 2) / 16.0 + self.W ** 2 / 12.0)
                  + m_p * d * dd / 8.0) / self.Lb ** 2
        a, b = 0.25 * m_rate + j_rate, 0.25 * m_rate - j_rate
        r0 -= a * v[0] + b * v[1]
        r1 -= b * v[0] + a * v[1]
        # M = [[p, q], [q, p]] (symmetric sides): solve by hand
        pp, qq = self._mass_entries(d, m_p)
        det = pp * pp - qq * qq
        acc0 = (pp * r0 - qq * r1) / det
        acc1 = (pp * r1 - qq * r0) / det
        return np.array([v[0] - 0.5 * dd, v[1] - 0.5 * dd, acc0, acc1, vw])

    def c_model(self, cg: Any) -> Any:
        """The C form (:func:`blocks.paper._cforms.reel_mechanics`)."""
        from ._cforms import reel_mechanics
        return reel_mechanics(self, cg)
