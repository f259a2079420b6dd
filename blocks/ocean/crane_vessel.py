r"""A moored crane vessel in surge with a pendulum load (planar), after Kreuzer & Ellermann.

Reference (seed, "Multibody System Dynamics in Ocean Engineering", E. Kreuzer and
K. Ellermann, TU Hamburg-Harburg slides): a crane vessel or barge with a
nonlinear mooring, periodic wave forcing, linear hydrodynamics and a load
hanging from the crane on a hoisting rope of length :math:`l`; the mooring
restoring force is the polynomial

.. math:: F_m(x) = c_1 x + c_2 x^2 + c_3 x^3 ,

and two cases are published (parameters only; vessel mass, added mass,
damping, geometry and load mass are not in the source):

* barge "P3-motion" (period-3 subharmonic): :math:`a = 0.5` m,
  :math:`\Omega = 0.8` rad/s, :math:`l = 25` m, :math:`c_1 = 33.4` kN/m,
  :math:`c_2 = 2.9` kN/m², :math:`c_3 = 45.5` kN/m³;
* crane ship "P2 solution" (period 2, experiment TUB vs simulation):
  :math:`A = 2.25` m, :math:`\omega = 0.23` rad/s, :math:`l = 49.5` m,
  :math:`c_1 = 669.8` kN/m, :math:`c_2 = -37.5` kN/m², :math:`c_3 = 8`
  (units illegible; taken as kN/m³).

Model
-----
Generalised coordinates: vessel surge :math:`x` [m] (positive down-wave) and
rope angle :math:`\varphi` [rad] from the vertical (positive when the load
swings to :math:`+x`).  The crane tip moves with the vessel (surge only: no
roll, pitch or heave), so its height :math:`h` above the vessel's reference
point enters only the load position.  With :math:`M` the vessel mass,
:math:`A_{11}` its constant surge added mass, :math:`m` the load (a point mass)
and :math:`M_t = M + A_{11} + m`, Lagrange's equations are

.. math::

    M_t \ddot x + m l (\ddot\varphi \cos\varphi - \dot\varphi^2 \sin\varphi)
        &= F_w(t) - F_m(x) - b \dot x \\
    l \ddot\varphi + \ddot x \cos\varphi + g \sin\varphi
        &= -\frac{1}{m}\big(d_1 v_t + d_2 |v_t| v_t\big), \qquad v_t = l\dot\varphi

(the second equation is the pendulum's divided by :math:`m l`; :math:`v_t` is
the load's velocity relative to the crane tip, :math:`d_1` [N s/m] and
:math:`d_2` [N s²/m²] a linear and a quadratic drag on it).  The wave force is
first order and monochromatic,

.. math:: F_w(t) = a f_w \cos(\Omega t) + F_\mathrm{ext}(t),

with :math:`f_w` [N/m] the surge force per metre of wave amplitude (a
documented choice: see :func:`froude_krylov_surge_force_per_amplitude`) and
:math:`F_\mathrm{ext}` an optional input (``external_force=True``) through
which a Morison or spectral wave block can drive the vessel.  The two
accelerations follow from the 2x2 mass matrix

.. math::

    \begin{bmatrix} M_t & m l \cos\varphi \\ \cos\varphi & l \end{bmatrix}
    \begin{bmatrix} \ddot x \\ \ddot\varphi \end{bmatrix} =
    \begin{bmatrix} F_w - F_m - b\dot x + m l \dot\varphi^2 \sin\varphi \\
                    -g\sin\varphi - (d_1 v_t + d_2|v_t|v_t)/m \end{bmatrix},

whose determinant :math:`l (M_t - m\cos^2\varphi) \ge l(M + A_{11}) > 0`.
The rope force (tension) is
:math:`S = m (g\cos\varphi + l\dot\varphi^2 - \ddot x \sin\varphi)`
(Newton's law for the load along the rope).  Without forcing and damping the
energy

.. math::

    E = \tfrac12 M_t \dot x^2 + m l \cos\varphi\,\dot x\dot\varphi
        + \tfrac12 m l^2 \dot\varphi^2 + \tfrac12 c_1 x^2 + \tfrac13 c_2 x^3
        + \tfrac14 c_3 x^4 + m g l (1 - \cos\varphi)

is conserved (:meth:`CraneVessel.energy`).  Linearised about
:math:`x = \varphi = 0` (mass matrix :math:`[[M_t, ml], [ml, ml^2]]`,
stiffness :math:`\mathrm{diag}(c_1, mgl)`) the two natural frequencies are the
roots of :math:`(c_1 - \omega^2 M_t)(g - \omega^2 l) = \omega^4 m l`
(:func:`linearized_frequencies`).

The mooring polynomial is used exactly as written: with :math:`c_2 \ne 0` it
is asymmetric (stiffer on one side; :math:`c_2 > 0` stiffens the
:math:`+x` side and softens :math:`-x`), which brings even harmonics, a mean
offset, and the quadratic nonlinearity behind a 1/2 subharmonic at
:math:`\Omega \approx 2\omega_0`; for large :math:`|x|` the potential is
dominated by :math:`c_3 x^4/4` (bounded below for :math:`c_3 > 0`), but for
:math:`c_2^2 > 4 c_1 c_3` the restoring force would change sign: not the case
for either published set.  The cubic term gives the hardening behind the 1/3
subharmonic at :math:`\Omega \approx 3\omega_0`.

Limitations: surge only (no heave, pitch or roll, so no parametric
excitation of the pendulum by vertical tip motion); frequency-independent
added mass and linear damping (no radiation memory, no drift forces); a point
load on a rigid, always taut rope (the tension is an output, not checked for
slack); a monochromatic first-order wave force.

Ports: :class:`CraneVessel`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CContext, CModel
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE

G = 9.81
RHO_SEAWATER = 1025.0


def _positive(label: str, allow_zero: bool = False):
    def check(v: Any) -> float:
        v = float(v)
        if not math.isfinite(v) or v < 0.0 or (v == 0.0 and not allow_zero):
            raise ValueError(f"{label} must be {'>= 0' if allow_zero else '> 0'}")
        return v
    return check


def _finite(label: str):
    def check(v: Any) -> float:
        v = float(v)
        if not math.isfinite(v):
            raise ValueError(f"{label} must be finite")
        return v
    return check


class CraneVessel(Block):
    r"""Moored vessel (surge) with a crane load on a rope (pendulum); see the module docstring.

    Parameters
    ----------
    name : str
    mass_kg, added_mass_kg : float
        Vessel mass :math:`M` and constant surge added mass :math:`A_{11}`.
    damping_n_s_per_m : float
        Linear surge damping :math:`b` (radiation and viscous, lumped).
    c1_n_per_m, c2_n_per_m2, c3_n_per_m3 : float
        Mooring polynomial :math:`F_m = c_1 x + c_2 x^2 + c_3 x^3` [N].
    wave_amplitude_m, wave_frequency_rad_s : float
        :math:`a`, :math:`\Omega` of the built-in wave force.
    wave_force_per_amplitude_n_per_m : float
        :math:`f_w`: surge force amplitude per metre of wave amplitude at
        :math:`\Omega`.
    rope_length_m, load_mass_kg : float
        :math:`l`, :math:`m`.
    load_damping_n_s_per_m, load_quadratic_damping_n_s2_per_m2 : float
        :math:`d_1`, :math:`d_2`: drag on the load's velocity relative to the tip.
    crane_tip_height_m : float
        :math:`h`, only for the load position.
    gravity_m_s2 : float
        :math:`g`.
    external_force : bool
        Declare the ``wave_force`` input.
    x0_m, v0_m_s, phi0_rad, phi_dot0_rad_s : float
        Initial state; the state vector is ``[x, v, phi, phi_dot]``.

    Every physical value is a parameter of the context (``ctx.set_param(
    "vessel.rope_length_m", 30.0)``), so sweeps need no rebuild.

    Ports
    -----
    in   wave_force     scalar [N]      external surge force (only with
                                        ``external_force=True``)
    out  x              scalar [m]      surge of the vessel; state only
    out  v              scalar [m/s]    surge velocity; state only
    out  phi            scalar [rad]    rope angle from the vertical; state only
    out  phi_dot        scalar [rad/s]  state only
    out  rope_force     scalar [N]      rope tension; reads wave_force
    out  mooring_force  scalar [N]      :math:`F_m(x)`; state only
    out  load_position  (2,) [m]        load (horizontal, vertical) relative to the
                                        vessel's reference point at rest:
                                        :math:`(x + l\sin\varphi,\ h - l\cos\varphi)`;
                                        state only
    """

    argument_checks = {"wave_frequency_rad_s": NON_NEGATIVE}

    def __init__(self, name: str, *, mass_kg: float, added_mass_kg: float = 0.0,
                 damping_n_s_per_m: float = 0.0, c1_n_per_m: float, c2_n_per_m2: float = 0.0,
                 c3_n_per_m3: float = 0.0, wave_amplitude_m: float = 0.0,
                 wave_frequency_rad_s: float = 1.0,
                 wave_force_per_amplitude_n_per_m: float = 0.0, rope_length_m: float,
                 load_mass_kg: float, load_damping_n_s_per_m: float = 0.0,
                 load_quadratic_damping_n_s2_per_m2: float = 0.0,
                 crane_tip_height_m: float = 0.0, gravity_m_s2: float = G,
                 external_force: bool = False, x0_m: float = 0.0, v0_m_s: float = 0.0,
                 phi0_rad: float = 0.0, phi_dot0_rad_s: float = 0.0) -> None:
        super().__init__(name)
        p = self.declare_parameter
        try:
            self.M = p("mass_kg", mass_kg, "kg", _positive("mass_kg"))
            self.A = p("added_mass_kg", added_mass_kg, "kg", _positive("added_mass_kg", True))
            self.b = p("damping_n_s_per_m", damping_n_s_per_m, "N*s/m",
                       _positive("damping_n_s_per_m", True))
            self.c1 = p("c1_n_per_m", c1_n_per_m, "N/m", _finite("c1_n_per_m"))
            self.c2 = p("c2_n_per_m2", c2_n_per_m2, "N/m^2", _finite("c2_n_per_m2"))
            self.c3 = p("c3_n_per_m3", c3_n_per_m3, "N/m^3", _finite("c3_n_per_m3"))
            self.a = p("wave_amplitude_m", wave_amplitude_m, "m", _finite("wave_amplitude_m"))
            self.W = p("wave_frequency_rad_s", wave_frequency_rad_s, "rad/s",
                       _positive("wave_frequency_rad_s", True))
            self.fw = p("wave_force_per_amplitude_n_per_m", wave_force_per_amplitude_n_per_m,
                        "N/m", _finite("wave_force_per_amplitude_n_per_m"))
            self.l = p("rope_length_m", rope_length_m, "m", _positive("rope_length_m"))
            self.m = p("load_mass_kg", load_mass_kg, "kg", _positive("load_mass_kg"))
            self.d1 = p("load_damping_n_s_per_m", load_damping_n_s_per_m, "N*s/m",
                        _positive("load_damping_n_s_per_m", True))
            self.d2 = p("load_quadratic_damping_n_s2_per_m2",
                        load_quadratic_damping_n_s2_per_m2, "N*s^2/m^2",
                        _positive("load_quadratic_damping_n_s2_per_m2", True))
            self.h = p("crane_tip_height_m", crane_tip_height_m, "m",
                       _finite("crane_tip_height_m"))
            self.g = p("gravity_m_s2", gravity_m_s2, "m/s^2", _positive("gravity_m_s2"))
        except ParameterError as exc:
            raise ParameterError(f"CraneVessel '{name}': {exc}") from None
        self.f_ext = (self.declare_input("wave_force", unit="N",
                                         description="external surge force (waves)")
                      if external_force else None)
        self.state = self.declare_continuous_state(
            "q", [float(x0_m), float(v0_m_s), float(phi0_rad), float(phi_dot0_rad_s)])
        self.x = self.declare_output("x", lambda c: float(c.state(self.state)[0]), unit="m",
                                     depends_on=())
        self.v = self.declare_output("v", lambda c: float(c.state(self.state)[1]), unit="m/s",
                                     depends_on=())
        self.phi = self.declare_output("phi", lambda c: float(c.state(self.state)[2]),
                                       unit="rad", depends_on=())
        self.phi_dot = self.declare_output("phi_dot", lambda c: float(c.state(self.state)[3]),
                                           unit="rad/s", depends_on=())
        self.rope_force = self.declare_output(
            "rope_force", self._rope_force, unit="N",
            depends_on=("wave_force",) if external_force else ())
        self.mooring_force = self.declare_output(
            "mooring_force", lambda c: self._mooring(c, float(c.state(self.state)[0])),
            unit="N", depends_on=())
        self.load_position = self.declare_output("load_position", self._load_position,
                                                 shape=(2,), unit="m", depends_on=())

    # ----------------------------------------------------------- physics
    def _mooring(self, ctx: Any, x: float) -> float:
        return x * (ctx.param(self.c1) + x * (ctx.param(self.c2) + x * ctx.param(self.c3)))

    def _accelerations(self, ctx: Any) -> tuple[float, float]:
        x, v, ph, w = ctx.state(self.state)
        param = ctx.param
        M_t = param(self.M) + param(self.A)
        m = param(self.m)
        l_ = param(self.l)
        g = param(self.g)
        F = param(self.a) * param(self.fw) * math.cos(param(self.W) * ctx.time)
        if self.f_ext is not None:
            F += ctx.input(self.f_ext)
        F -= self._mooring(ctx, x) + param(self.b) * v
        s, c = math.sin(ph), math.cos(ph)
        vt = l_ * w
        r1 = F + m * l_ * w * w * s
        r2 = -g * s - (param(self.d1) * vt + param(self.d2) * abs(vt) * vt) / m
        M_t += m
        det = l_ * (M_t - m * c * c)
        xdd = l_ * (r1 - m * c * r2) / det
        phdd = (M_t * r2 - c * r1) / det
        return xdd, phdd

    def derivatives(self, ctx: Any) -> np.ndarray:
        q = ctx.state(self.state)
        xdd, phdd = self._accelerations(ctx)
        return np.array([q[1], xdd, q[3], phdd])

    def _rope_force(self, ctx: Any) -> float:
        _, _, ph, w = ctx.state(self.state)
        xdd, _ = self._accelerations(ctx)
        m, l_ = ctx.param(self.m), ctx.param(self.l)
        return m * (ctx.param(self.g) * math.cos(ph) + l_ * w * w - xdd * math.sin(ph))

    def _load_position(self, ctx: Any) -> np.ndarray:
        x, _, ph, _ = ctx.state(self.state)
        l_ = ctx.param(self.l)
        return np.array([x + l_ * math.sin(ph), ctx.param(self.h) - l_ * math.cos(ph)])

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`_accelerations`, :meth:`derivatives`, :meth:`_rope_force`,
        :meth:`_load_position` and :meth:`_mooring` (libm ``sin``/``cos``/``fabs`` as
        ``math``'s); every parameter tunable."""
        names = ("M", "A", "b", "c1", "c2", "c3", "a", "W", "fw", "l", "m", "d1", "d2",
                 "h", "g")
        P = {k: cg.param(getattr(self, k).name, float(cg.value(getattr(self, k))),
                         unit=getattr(self, k).unit) for k in names}
        x, v, ph, w = (cg.x(self.state, i) for i in range(4))
        moor = f"({x} * ({P['c1']} + {x} * ({P['c2']} + {x} * {P['c3']})))"
        acc = (f"double M_t = {P['M']} + {P['A']}, m = {P['m']}, l_ = {P['l']};\n"
               f"double F = {P['a']} * {P['fw']} * cos({P['W']} * {cg.t});\n"
               + (f"F += {cg.u(self.f_ext)};\n" if self.f_ext is not None else "")
               + f"F -= {moor} + {P['b']} * {v};\n"
               f"double sn = sin({ph}), cs = cos({ph});\n"
               f"double vt = l_ * {w};\n"
               f"double r1 = F + m * l_ * {w} * {w} * sn;\n"
               f"double r2 = -{P['g']} * sn - ({P['d1']} * vt + {P['d2']} * fabs(vt) * vt)"
               " / m;\n"
               "M_t += m;\n"
               "double det = l_ * (M_t - m * cs * cs);\n"
               "double xdd = l_ * (r1 - m * cs * r2) / det;\n"
               "double phdd = (M_t * r2 - cs * r1) / det;\n"
               "(void)xdd; (void)phdd;\n")
        rope = (acc + f"{cg.y(self.rope_force)} = m * ({P['g']} * cos({ph}) + l_ * {w} * {w}"
                f" - xdd * sin({ph}));")
        outputs = {
            "x": f"{cg.y(self.x)} = {x};", "v": f"{cg.y(self.v)} = {v};",
            "phi": f"{cg.y(self.phi)} = {ph};",
            "phi_dot": f"{cg.y(self.phi_dot)} = {w};",
            "rope_force": rope,
            "mooring_force": f"{cg.y(self.mooring_force)} = {moor};",
            "load_position": (f"{cg.y(self.load_position, 0)} = {x} + {P['l']} * sin({ph});\n"
                              f"{cg.y(self.load_position, 1)} = {P['h']} - {P['l']}"
                              f" * cos({ph});")}
        der = (acc + f"{cg.dx(self.state, 0)} = {v};\n{cg.dx(self.state, 1)} = xdd;\n"
               f"{cg.dx(self.state, 2)} = {w};\n{cg.dx(self.state, 3)} = phdd;")
        return CModel(outputs={k: "{\n" + c + "\n}" for k, c in outputs.items()},
                      derivatives=der, time_dependent=True)

    def energy(self, ctx: Any) -> float:
        """Mechanical energy :math:`E` (module docstring) [J] of the state in ``ctx``."""
        x, v, ph, w = ctx.state(self.state)
        p = ctx.param
        m, l_ = p(self.m), p(self.l)
        M_t = p(self.M) + p(self.A) + m
        return (0.5 * M_t * v * v + m * l_ * math.cos(ph) * v * w + 0.5 * m * l_ * l_ * w * w
                + 0.5 * p(self.c1) * x * x + p(self.c2) * x ** 3 / 3 + 0.25 * p(self.c3) * x ** 4
                + m * p(self.g) * l_ * (1.0 - math.cos(ph)))


# -------------------------------------------------------------- helpers
def linearized_frequencies(total_surge_mass_kg: float, stiffness_n_per_m: float,
                           load_mass_kg: float, rope_length_m: float,
                           gravity_m_s2: float = G) -> np.ndarray:
    r"""Undamped natural frequencies [rad/s] of the linearised vessel-pendulum, ascending.

    ``total_surge_mass_kg`` is :math:`M + A_{11}` (without the load); the roots of
    :math:`\det(K - \omega^2 \mathbf{M}) = 0` with
    :math:`\mathbf{M} = [[M+A_{11}+m, ml], [ml, ml^2]]`,
    :math:`K = \mathrm{diag}(k, mgl)`; :math:`k = c_1 + 2 c_2 x^* + 3 c_3 x^{*2}`
    about an equilibrium :math:`x^*`.
    """
    m, l_, k = load_mass_kg, rope_length_m, stiffness_n_per_m
    Mm = np.array([[total_surge_mass_kg + m, m * l_], [m * l_, m * l_ * l_]])
    K = np.diag([k, m * gravity_m_s2 * l_])
    w2 = np.linalg.eigvals(np.linalg.solve(Mm, K))
    return np.sort(np.sqrt(np.real(w2)))


def mooring_equilibrium(force_n: float, c1: float, c2: float, c3: float) -> float:
    r"""Static offset :math:`x^*` with :math:`c_1 x + c_2 x^2 + c_3 x^3 = F`: the real
    root nearest to 0 on which the mooring is stable (:math:`F_m'(x^*) > 0`)."""
    roots = np.roots([c3, c2, c1, -force_n]) if c3 != 0 else (
        np.roots([c2, c1, -force_n]) if c2 != 0 else np.array([force_n / c1]))
    real = [float(r.real) for r in np.atleast_1d(roots) if abs(r.imag) < 1e-9 * max(1, abs(r))]
    stable = [r for r in real if c1 + 2 * c2 * r + 3 * c3 * r * r > 0]
    if not stable:
        raise ValueError(f"no stable mooring equilibrium for F = {force_n!r} N")
    return min(stable, key=abs)


def froude_krylov_surge_force_per_amplitude(length_m: float, beam_m: float, draught_m: float,
                                            omega_rad_s: float, rho: float = RHO_SEAWATER,
                                            g: float = G) -> float:
    r"""Froude-Krylov surge force amplitude per metre of wave amplitude on a box [N/m].

    Deep water, a regular wave :math:`\zeta = a\cos(\Omega t - kx)` along the
    box (:math:`k = \Omega^2/g`); integrating the undisturbed pressure
    :math:`\rho g a e^{kz}\cos(\Omega t - kx)` over the end faces gives

    .. math::

        f_w = \rho g B \,\frac{1 - e^{-kT}}{k}\; 2\sin\!\big(\tfrac{kL}{2}\big).

    Diffraction (and the added-mass part of the long-wave force) is neglected:
    an estimate of the order of magnitude, not a hydrodynamic analysis.
    """
    k = omega_rad_s ** 2 / g
    return float(rho * g * beam_m * (-math.expm1(-k * draught_m)) / k
                 * 2.0 * abs(math.sin(0.5 * k * length_m)))
