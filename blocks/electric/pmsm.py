r"""Permanent-magnet synchronous motor (PMSM) in the rotor (dq) frame, with its drive.

Blocks
------
:class:`PMSM`
    The machine: dq voltage equations, torque, optionally the rotor inertia.
:class:`DQCurrentController`
    Field-oriented current control: a PI controller per axis with decoupling
    feed-forward, the voltage-circle limit and back-calculation anti-windup.
:class:`AveragedInverter`
    Voltage-source inverter averaged over a switching period: the dq voltage
    vector limited to the circle :math:`u_{dc}/\sqrt 3`, an optional first-order
    delay, and the DC-link current from the power balance.
:class:`TorqueToCurrent`
    Torque reference to current references with :math:`i_d^* = 0`.
:class:`PMSMDrive`
    A diagram of the four: torque reference in, torque out.

Conventions
-----------
Amplitude-invariant Park transform (hence the factor 3/2 in torque and power):
:math:`i_d, i_q` are peak phase-current amplitudes, :math:`u_d, u_q` peak
phase voltages.  ``speed`` is always the *mechanical* angular velocity
:math:`\omega` [rad/s]; the electrical one is :math:`\omega_e = p\,\omega`.
Motoring is positive torque at positive speed.

The voltage limit
-----------------
With space-vector modulation (or sine-triangle with third-harmonic injection)
the largest phase-voltage amplitude in the linear range is the radius of the
circle inscribed in the inverter's voltage hexagon, :math:`u_{max} = u_{dc}/\sqrt 3`.
Both the controller and the inverter scale a longer reference vector back onto
the circle, keeping its direction:

.. math::

    (u_d, u_q) = (u_d^*, u_q^*)\,\min\!\left(1, \frac{u_{max}}{\sqrt{u_d^{*2} + u_q^{*2}}}\right)

Overmodulation (up to the hexagon, :math:`2u_{dc}/\pi` in six-step) and field
weakening are not modelled: above the speed where the back-EMF and the
inductive drop exceed :math:`u_{max}` the currents, and so the torque, fall
short of the reference (the tests show it).  A field-weakening strategy would
feed a negative :math:`i_d^*` to :class:`DQCurrentController`.

Compiled runs: every block here has a C form (``c_model``), equal to the Python loop bit
for bit; the limit's :func:`math.hypot` is CPython 3.11's algorithm in C
(:data:`cosim.codegen.pymath.PY_HYPOT_C`; glibc's ``hypot`` differs in the last bit), so another
interpreter with a different ``hypot`` would differ in the last bit on the circle (the C
forms and their C text are in :mod:`.pmsm_c`).  The inverter's ``i_dc`` reads ``u_dc``: a
:class:`~blocks.electric.Battery` fed directly with ``i_dc`` closes an algebraic loop, which
the Python loop solves and the compiled run refuses (put the DC-link capacitor, a lag, between).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from cosim.block import Block
from cosim.codegen.model import CModel
from cosim.diagram import Diagram, DiagramBuilder
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, POSITIVE, Number

from .pmsm_c import (
    averaged_inverter_c_model,
    dq_current_controller_c_model,
    pmsm_c_model,
    torque_to_current_c_model,
)

SQRT3 = math.sqrt(3.0)


def _positive(owner: str, label: str, v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ParameterError(f"{owner}: {label} must be a number, got {v!r}") from None
    if not (f > 0 and math.isfinite(f)):
        raise ParameterError(f"{owner}: {label} must be finite and > 0, got {v!r}")
    return f


def _nonnegative(owner: str, label: str, v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ParameterError(f"{owner}: {label} must be a number, got {v!r}") from None
    if not (f >= 0 and math.isfinite(f)):
        raise ParameterError(f"{owner}: {label} must be finite and >= 0, got {v!r}")
    return f


def circle_limit(u_d: float, u_q: float, u_max: float) -> tuple[float, float]:
    """Scale ``(u_d, u_q)`` onto the circle of radius ``u_max`` if it lies outside.

    The direction of the vector is kept (no d- or q-axis priority).
    """
    m = math.hypot(u_d, u_q)
    if m <= u_max:
        return u_d, u_q
    if u_max <= 0.0:
        return 0.0, 0.0
    s = u_max / m
    return u_d * s, u_q * s




@dataclass(frozen=True)
class PMSMParameters:
    """Electrical data of a PMSM (SI units, amplitude-invariant dq frame).

    Parameters
    ----------
    resistance_ohm : float
        Stator phase resistance :math:`R_s`.
    d_inductance_h, q_inductance_h : float
        :math:`L_d`, :math:`L_q` (equal for a surface-mounted magnet machine).
    pole_pairs : int
        :math:`p`.
    flux_linkage_wb : float
        Permanent-magnet flux linkage :math:`\\psi_p` (peak, per phase).
    """

    resistance_ohm: float
    d_inductance_h: float
    q_inductance_h: float
    pole_pairs: int
    flux_linkage_wb: float

    def __post_init__(self) -> None:
        own = "PMSMParameters"
        for label in ("resistance_ohm", "d_inductance_h", "q_inductance_h", "flux_linkage_wb"):
            object.__setattr__(self, label, _positive(own, label, getattr(self, label)))
        p = self.pole_pairs
        if isinstance(p, bool) or not isinstance(p, int) or p < 1:
            raise ParameterError(f"{own}: pole_pairs must be an int >= 1, got {p!r}")

    def torque(self, i_d: float, i_q: float) -> float:
        """Electromagnetic torque :math:`1.5\\,p\\,(\\psi_p + (L_d - L_q) i_d)\\,i_q` [N m]."""
        return 1.5 * self.pole_pairs * (self.flux_linkage_wb
                                        + (self.d_inductance_h - self.q_inductance_h) * i_d) * i_q

    def steady_state_voltages(self, i_d: float, i_q: float, speed: float) -> tuple[float, float]:
        """``(u_d, u_q)`` holding constant currents at mechanical speed ``speed`` [rad/s]."""
        we = self.pole_pairs * speed
        return (self.resistance_ohm * i_d - we * self.q_inductance_h * i_q,
                self.resistance_ohm * i_q + we * (self.d_inductance_h * i_d
                                                  + self.flux_linkage_wb))


#: The default PMSM of gym-electric-motor (``PermanentMagnetSynchronousMotor``,
#: after Brosch et al., IEEE TPEL 2020): R_s = 18 mOhm, L_d = 0.37 mH,
#: L_q = 1.2 mH, p = 3, psi_p = 66 mWb (rotor inertia 0.03883 kg m^2 there).
GEM_PMSM = PMSMParameters(resistance_ohm=18e-3, d_inductance_h=0.37e-3,
                          q_inductance_h=1.2e-3, pole_pairs=3, flux_linkage_wb=66e-3)


class PMSM(Block):
    r"""Permanent-magnet synchronous motor in the rotor (dq) frame.

    .. math::

        u_d &= R_s i_d + L_d \frac{di_d}{dt} - p\,\omega\, L_q i_q \\
        u_q &= R_s i_q + L_q \frac{di_q}{dt} + p\,\omega\,(L_d i_d + \psi_p) \\
        T &= \tfrac32\, p\, (\psi_p + (L_d - L_q)\, i_d)\, i_q \\
        P_{el} &= \tfrac32\,(u_d i_d + u_q i_q)

    With ``inertia_kgm2`` the block also integrates the rotor,
    :math:`J\dot\omega = T - b\,\omega - T_L`, and takes the load torque as
    input; without it the mechanical speed is an input (the rotor belongs to a
    mechanical model downstream that takes ``torque``).

    Ports
    -----
    in   u_d, u_q      scalar [V]    dq stator voltages
    in   speed         scalar [rad/s]  mechanical speed (without inertia)
    in   load_torque   scalar [N*m]  (with inertia)
    out  i_d, i_q      scalar [A]    state only
    out  torque        scalar [N*m]  electromagnetic torque; state only
    out  speed         scalar [rad/s]  (with inertia) state only
    out  power         scalar [W]    electrical input power; reads u_d, u_q

    Parameters
    ----------
    params : PMSMParameters
    inertia_kgm2 : float, optional
        Rotor (plus rigidly attached load) inertia; see above.
    friction_nms_per_rad : float
        Viscous friction :math:`b` (with inertia only).
    i_d0_a, i_q0_a, speed0_rad_s : float
        Initial states.
    """

    argument_checks = {"inertia_kgm2": POSITIVE, "friction_nms_per_rad": NON_NEGATIVE}

    def __init__(self, name: str, params: PMSMParameters, *, inertia_kgm2: float | None = None,
                 friction_nms_per_rad: float = 0.0, i_d0_a: float = 0.0, i_q0_a: float = 0.0,
                 speed0_rad_s: float = 0.0) -> None:
        super().__init__(name)
        own = f"PMSM '{name}'"
        if not isinstance(params, PMSMParameters):
            raise ParameterError(f"{own}: params must be a PMSMParameters, got "
                                 f"{type(params).__name__}")
        self.params = params
        self.R, self.Ld, self.Lq = params.resistance_ohm, params.d_inductance_h, \
            params.q_inductance_h
        self.p, self.psi = params.pole_pairs, params.flux_linkage_wb
        self.has_inertia = inertia_kgm2 is not None
        self.u_d = self.declare_input("u_d", unit="V")
        self.u_q = self.declare_input("u_q", unit="V")
        self.x_d = self.declare_continuous_state("i_d", float(i_d0_a))
        self.x_q = self.declare_continuous_state("i_q", float(i_q0_a))
        if self.has_inertia:
            self.J = _positive(own, "inertia_kgm2", inertia_kgm2)
            self.b = _nonnegative(own, "friction_nms_per_rad", friction_nms_per_rad)
            self.load_torque = self.declare_input("load_torque", unit="N*m")
            self.x_w = self.declare_continuous_state("omega", float(speed0_rad_s))
            self.speed_in = None
        else:
            if friction_nms_per_rad:
                raise ParameterError(f"{own}: friction_nms_per_rad needs inertia_kgm2 (without "
                                     "it the mechanics are outside the block)")
            self.speed_in = self.declare_input("speed", unit="rad/s")
            self.load_torque = self.x_w = None
        self.i_d = self.declare_output("i_d", lambda ctx: ctx.state(self.x_d), unit="A",
                                       depends_on=())
        self.i_q = self.declare_output("i_q", lambda ctx: ctx.state(self.x_q), unit="A",
                                       depends_on=())
        self.torque = self.declare_output(
            "torque", lambda ctx: params.torque(ctx.state(self.x_d), ctx.state(self.x_q)),
            unit="N*m", depends_on=())
        if self.has_inertia:
            self.speed = self.declare_output("speed", lambda ctx: ctx.state(self.x_w),
                                             unit="rad/s", depends_on=())
        self.power = self.declare_output("power", self._power, unit="W",
                                         depends_on=(self.u_d, self.u_q))

    def _power(self, ctx: Any) -> float:
        return 1.5 * (ctx.input(self.u_d) * ctx.state(self.x_d)
                      + ctx.input(self.u_q) * ctx.state(self.x_q))

    def derivatives(self, ctx: Any) -> list[float]:
        i_d, i_q = ctx.state(self.x_d), ctx.state(self.x_q)
        w = ctx.state(self.x_w) if self.has_inertia else ctx.input(self.speed_in)
        we = self.p * w
        did = (ctx.input(self.u_d) - self.R * i_d + we * self.Lq * i_q) / self.Ld
        diq = (ctx.input(self.u_q) - self.R * i_q - we * (self.Ld * i_d + self.psi)) / self.Lq
        if not self.has_inertia:
            return [did, diq]
        t = self.params.torque(i_d, i_q)
        return [did, diq, (t - self.b * w - ctx.input(self.load_torque)) / self.J]

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`PMSMParameters.torque`, :meth:`_power` and
        :meth:`derivatives`."""
        return pmsm_c_model(self, cg)


class DQCurrentController(Block):
    r"""Field-oriented dq current controller: PI per axis, decoupling, voltage limit.

    .. math::

        v_d &= k_{p,d}\, e_d + x_d - p\,\omega L_q i_q, \qquad e_d = i_d^* - i_d \\
        v_q &= k_{p,q}\, e_q + x_q + p\,\omega (L_d i_d + \psi_p), \qquad e_q = i_q^* - i_q \\
        (u_d^*, u_q^*) &= \mathrm{lim}_{u_{dc}/\sqrt3}(v_d, v_q) \\
        \dot x_{d,q} &= k_{i}\, e_{d,q} + k_{aw}\,(u^*_{d,q} - v_{d,q})
            \quad \text{(gains per axis)}

    The feed-forward cancels the motional coupling terms of :class:`PMSM`, so
    with exact parameters each axis sees :math:`L s + R_s`.  The default gains
    cancel that pole (pole-zero cancellation, "technical optimum" without
    delay): :math:`k_p = L\,\omega_c`, :math:`k_i = R_s\,\omega_c`, giving the
    closed loop :math:`i/i^* = \omega_c/(s + \omega_c)` on each axis, a first
    order with time constant :math:`1/\omega_c`, exactly, as long as the voltage
    is not limited and the inverter has no delay.  An inverter delay
    :math:`T_{inv}` adds a pole (at standstill the loop is exactly
    :math:`\omega_c/(T_{inv}s^2 + s + \omega_c)`; keep :math:`\omega_c T_{inv}
    \lesssim 0.3`), and at speed the feed-forward then misses during
    transients, which excites the cancelled :math:`L/R_s` mode: a slow tail
    (:data:`GEM_PMSM`, 200 rad/s, :math:`T_{inv}` = 0.1 ms, 67 A step: 1.7e-4
    short after 50 ms, :math:`L_q/R_s` = 67 ms time constant).

    Anti-windup, active only while the voltage is limited:
    ``"back_calculation"`` (above) with tracking gain :math:`k_{aw} = k_i/k_p`
    per axis by default (tracking time constant :math:`T_t = T_i`, here
    :math:`L/R_s`, as :mod:`blocks.pid`), or ``"clamping"``: an axis stops
    integrating while the vector is limited and its integrator would push
    further out.  A faster tracking (:math:`k_{aw} = \omega_c`) drives the
    integrators far from their final values during a limited transient, and
    the pole-zero cancellation then leaves a slow :math:`L/R_s` tail after it
    (measured on :data:`GEM_PMSM` at 200 rad/s and 300 V, a 100 A step with
    :math:`\omega_c` = 2000 rad/s: 9 % short of the reference 19 ms later).
    The controller is continuous (a sampled implementation adds about one and
    a half sampling periods of delay, which the inverter delay can stand for).

    Ports
    -----
    in   i_d_ref, i_q_ref   scalar [A]    current references
    in   i_d, i_q           scalar [A]    measured currents
    in   speed              scalar [rad/s]  mechanical speed (for the feed-forward)
    in   u_dc               scalar [V]    DC-link voltage (for the limit)
    out  u_d_ref, u_q_ref   scalar [V]    limited voltage references; read every input

    Parameters
    ----------
    params : PMSMParameters
        The controller's model of the motor (feed-forward and default gains).
    bandwidth_rad_s : float
        :math:`\omega_c` of the current loops.
    kp_d, ki_d, kp_q, ki_q : float, optional
        Override the designed gains [V/A, V/(A s)].
    decoupling : bool
        Add the feed-forward terms (default True).
    anti_windup : {"back_calculation", "clamping"}
    tracking_gain : float, optional
        :math:`k_{aw}` [1/s] for both axes (back-calculation); 0 disables the
        anti-windup.
    """

    argument_checks = {"bandwidth_rad_s": POSITIVE, "kp_d": NON_NEGATIVE,
                       "ki_d": NON_NEGATIVE, "kp_q": NON_NEGATIVE, "ki_q": NON_NEGATIVE,
                       "tracking_gain": NON_NEGATIVE}

    def __init__(self, name: str, params: PMSMParameters, *, bandwidth_rad_s: float,
                 kp_d: float | None = None, ki_d: float | None = None,
                 kp_q: float | None = None, ki_q: float | None = None,
                 decoupling: bool = True, anti_windup: str = "back_calculation",
                 tracking_gain: float | None = None) -> None:
        super().__init__(name)
        own = f"DQCurrentController '{name}'"
        if not isinstance(params, PMSMParameters):
            raise ParameterError(f"{own}: params must be a PMSMParameters, got "
                                 f"{type(params).__name__}")
        self.params = params
        wc = self.bandwidth = _positive(own, "bandwidth_rad_s", bandwidth_rad_s)
        R, Ld, Lq = params.resistance_ohm, params.d_inductance_h, params.q_inductance_h

        def gain(label: str, given: float | None, designed: float) -> float:
            return designed if given is None else _nonnegative(own, label, given)

        self.kp_d = gain("kp_d", kp_d, Ld * wc)
        self.ki_d = gain("ki_d", ki_d, R * wc)
        self.kp_q = gain("kp_q", kp_q, Lq * wc)
        self.ki_q = gain("ki_q", ki_q, R * wc)
        if tracking_gain is None:  # T_t = T_i = kp/ki per axis (as blocks.pid)
            self.k_aw_d = self.ki_d / self.kp_d if self.kp_d > 0 else wc
            self.k_aw_q = self.ki_q / self.kp_q if self.kp_q > 0 else wc
        else:
            self.k_aw_d = self.k_aw_q = _nonnegative(own, "tracking_gain", tracking_gain)
        self.decoupling = bool(decoupling)
        if anti_windup not in ("back_calculation", "clamping"):
            raise ParameterError(f"{own}: anti_windup must be 'back_calculation' or "
                                 f"'clamping', got {anti_windup!r}")
        self.anti_windup = anti_windup
        self.i_d_ref = self.declare_input("i_d_ref", unit="A")
        self.i_q_ref = self.declare_input("i_q_ref", unit="A")
        self.i_d = self.declare_input("i_d", unit="A")
        self.i_q = self.declare_input("i_q", unit="A")
        self.speed = self.declare_input("speed", unit="rad/s")
        self.u_dc = self.declare_input("u_dc", unit="V")
        self.x_d = self.declare_continuous_state("integral_d", 0.0)
        self.x_q = self.declare_continuous_state("integral_q", 0.0)
        self.u_d_ref, self.u_q_ref = self.declare_outputs(
            [("u_d_ref", "V"), ("u_q_ref", "V")], lambda ctx: self.voltages(ctx)[2:4])

    def voltages(self, ctx: Any) -> tuple[float, float, float, float, float, float]:
        """``(v_d, v_q, u_d, u_q, e_d, e_q)``: unlimited and limited voltages, errors."""
        i_d, i_q = ctx.input(self.i_d), ctx.input(self.i_q)
        e_d = ctx.input(self.i_d_ref) - i_d
        e_q = ctx.input(self.i_q_ref) - i_q
        v_d = self.kp_d * e_d + ctx.state(self.x_d)
        v_q = self.kp_q * e_q + ctx.state(self.x_q)
        if self.decoupling:
            p = self.params
            we = p.pole_pairs * ctx.input(self.speed)
            v_d -= we * p.q_inductance_h * i_q
            v_q += we * (p.d_inductance_h * i_d + p.flux_linkage_wb)
        u_d, u_q = circle_limit(v_d, v_q, max(ctx.input(self.u_dc), 0.0) / SQRT3)
        return v_d, v_q, u_d, u_q, e_d, e_q

    def derivatives(self, ctx: Any) -> list[float]:
        v_d, v_q, u_d, u_q, e_d, e_q = self.voltages(ctx)
        dx_d, dx_q = self.ki_d * e_d, self.ki_q * e_q
        if self.anti_windup == "clamping":
            if u_d != v_d or u_q != v_q:  # limited: hold an integrator that pushes outwards
                if dx_d * v_d > 0:
                    dx_d = 0.0
                if dx_q * v_q > 0:
                    dx_q = 0.0
            return [dx_d, dx_q]
        return [dx_d + self.k_aw_d * (u_d - v_d), dx_q + self.k_aw_q * (u_q - v_q)]

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`voltages` and :meth:`derivatives` (the limit through
        :data:`.pmsm_c.CIRCLE_LIMIT_C`)."""
        return dq_current_controller_c_model(self, cg)


class AveragedInverter(Block):
    r"""Two-level voltage-source inverter averaged over the switching period, dq side.

    .. math::

        (\bar u_d, \bar u_q) &= \mathrm{lim}_{u_{dc}/\sqrt3}(u_d^*, u_q^*) \\
        T_{inv}\,\dot u_{d,q} &= \bar u_{d,q} - u_{d,q}
            \qquad (u_{d,q} = \bar u_{d,q} \text{ if } T_{inv} = 0) \\
        i_{dc} &= \frac{\tfrac32 (u_d i_d + u_q i_q)}{u_{dc}}

    The first-order delay :math:`T_{inv}` stands for the modulation and
    sampling delay (typically 1.5 switching periods); the output vector stays
    inside the circle.  The DC-link current comes from the lossless power
    balance :math:`u_{dc} i_{dc} = P_{ac}` (zero for :math:`u_{dc} \le 0`).
    Switching ripple, dead time and semiconductor losses are not modelled.

    Ports
    -----
    in   u_d_ref, u_q_ref  scalar [V]  voltage references
    in   u_dc              scalar [V]  DC-link voltage
    in   i_d, i_q          scalar [A]  motor currents (for the DC-link current)
    out  u_d, u_q          scalar [V]  applied voltages; state only with a delay, else read
                                      u_d_ref, u_q_ref, u_dc
    out  i_dc              scalar [A]  DC-link current drawn from the source

    Parameters
    ----------
    time_constant_s : float
        :math:`T_{inv}` [s] (default 0: no delay, the outputs read the references).
    """

    argument_checks = {"time_constant_s": NON_NEGATIVE}

    def __init__(self, name: str, *, time_constant_s: float = 0.0) -> None:
        super().__init__(name)
        own = f"AveragedInverter '{name}'"
        self.T = _nonnegative(own, "time_constant_s", time_constant_s)
        self.u_d_ref = self.declare_input("u_d_ref", unit="V")
        self.u_q_ref = self.declare_input("u_q_ref", unit="V")
        self.u_dc = self.declare_input("u_dc", unit="V")
        self.i_d = self.declare_input("i_d", unit="A")
        self.i_q = self.declare_input("i_q", unit="A")
        refs = (self.u_d_ref, self.u_q_ref, self.u_dc)
        if self.T > 0:
            self.x_d = self.declare_continuous_state("u_d", 0.0)
            self.x_q = self.declare_continuous_state("u_q", 0.0)
            self.u_d = self.declare_output("u_d", lambda ctx: ctx.state(self.x_d), unit="V",
                                           depends_on=())
            self.u_q = self.declare_output("u_q", lambda ctx: ctx.state(self.x_q), unit="V",
                                           depends_on=())
            dc_deps: tuple = (self.u_dc, self.i_d, self.i_q)
        else:
            self.x_d = self.x_q = None
            self.u_d, self.u_q = self.declare_outputs([("u_d", "V"), ("u_q", "V")],
                                                      self._limited, depends_on=refs)
            dc_deps = (*refs, self.i_d, self.i_q)
        self.i_dc = self.declare_output("i_dc", self._i_dc, unit="A", depends_on=dc_deps)

    def _limited(self, ctx: Any) -> tuple[float, float]:
        return circle_limit(ctx.input(self.u_d_ref), ctx.input(self.u_q_ref),
                            max(ctx.input(self.u_dc), 0.0) / SQRT3)

    def applied(self, ctx: Any) -> tuple[float, float]:
        """The applied voltages ``(u_d, u_q)``."""
        if self.T > 0:
            return ctx.state(self.x_d), ctx.state(self.x_q)
        return self._limited(ctx)

    def _i_dc(self, ctx: Any) -> float:
        u_dc = ctx.input(self.u_dc)
        if u_dc <= 0.0:
            return 0.0
        u_d, u_q = self.applied(ctx)
        return 1.5 * (u_d * ctx.input(self.i_d) + u_q * ctx.input(self.i_q)) / u_dc

    def derivatives(self, ctx: Any) -> list[float]:
        ud, uq = self._limited(ctx)
        return [(ud - ctx.state(self.x_d)) / self.T, (uq - ctx.state(self.x_q)) / self.T]

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`_limited`, :meth:`applied`, :meth:`_i_dc` and
        :meth:`derivatives`."""
        return averaged_inverter_c_model(self, cg)


class TorqueToCurrent(Block):
    r"""Current references for a torque reference with :math:`i_d^* = 0`.

    .. math::

        i_d^* = 0, \qquad
        i_q^* = \mathrm{clip}\!\left(\frac{T^*}{\tfrac32\, p\, \psi_p},\ -i_{max},\ i_{max}\right)

    With :math:`i_d = 0` the reluctance term vanishes, so the torque is exactly
    :math:`\tfrac32 p \psi_p i_q` for any :math:`L_d, L_q`; for a salient
    machine (:math:`L_d < L_q`) this is not the maximum torque per ampere
    (MTPA), which would use a negative :math:`i_d`.

    Ports
    -----
    in   torque_ref  scalar [N*m]
    out  i_d_ref     scalar [A]  zero; reads nothing
    out  i_q_ref     scalar [A]  reads torque_ref

    Parameters
    ----------
    params : PMSMParameters
        Pole pairs :math:`p` and flux linkage :math:`\psi_p` of the machine.
    current_limit_a : float, optional
        :math:`i_{max}` [A] (default: no limit).
    """

    argument_checks = {"current_limit_a": Number(low=0.0, low_open=True, infinite=True)}

    def __init__(self, name: str, params: PMSMParameters, *,
                 current_limit_a: float | None = None) -> None:
        super().__init__(name)
        own = f"TorqueToCurrent '{name}'"
        self.kt = 1.5 * params.pole_pairs * params.flux_linkage_wb
        self.i_max = math.inf if current_limit_a is None else _positive(
            own, "current_limit_a", current_limit_a)
        self.torque_ref = self.declare_input("torque_ref", unit="N*m")
        self.i_d_ref = self.declare_output("i_d_ref", lambda ctx: 0.0, unit="A", depends_on=())
        self.i_q_ref = self.declare_output("i_q_ref", self._iq, unit="A",
                                           depends_on=(self.torque_ref,))

    def _iq(self, ctx: Any) -> float:
        i = ctx.input(self.torque_ref) / self.kt
        return min(max(i, -self.i_max), self.i_max)

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`_iq` (Python's min/max tie rules)."""
        return torque_to_current_c_model(self, cg)


def PMSMDrive(name: str, params: PMSMParameters, *, bandwidth_rad_s: float,  # noqa: N802
              inverter_time_constant_s: float = 0.0, current_limit_a: float | None = None,
              inertia_kgm2: float | None = None, friction_nms_per_rad: float = 0.0,
              controller_params: PMSMParameters | None = None) -> Diagram:
    r"""Torque-controlled PMSM drive: a frozen diagram with torque reference in, torque out.

    ::

        torque_ref -> [ref: TorqueToCurrent] -i_d*, i_q*-> [cc: DQCurrentController]
                   -u*-> [inverter: AveragedInverter] -u_d, u_q-> [motor: PMSM] -> torque
                        i_d, i_q, speed fed back to cc; u_dc to cc and inverter

    Ports
    -----
    in   torque_ref   scalar [N*m]
    in   u_dc         scalar [V]    DC-link voltage (a Constant or a :class:`Battery`)
    in   speed        scalar [rad/s]  mechanical speed (without ``inertia_kgm2``)
    in   load_torque  scalar [N*m]  (with ``inertia_kgm2``)
    out  torque       scalar [N*m]  electromagnetic torque; state only
    out  speed        scalar [rad/s]  (with ``inertia_kgm2``)
    out  i_d, i_q     scalar [A]
    out  u_d, u_q     scalar [V]    applied voltages
    out  i_dc         scalar [A]    DC-link current (lossless inverter)

    The blocks are reachable as ``drive.blocks["motor"]`` etc., recorded paths
    are ``"<name>/motor.i_q"`` and so on.

    Parameters
    ----------
    params : PMSMParameters
        The motor; the controller uses the same values (``controller_params``
        to give it a mismatched model).
    bandwidth_rad_s : float
        Current-loop bandwidth.
    inverter_time_constant_s : float
        Inverter delay (0: none).
    current_limit_a : float, optional
        Clamp of :math:`i_q^*`.
    inertia_kgm2, friction_nms_per_rad : float, optional
        Put the rotor in the motor block (see :class:`PMSM`).
    """

    b = DiagramBuilder(name)
    ref = b.add(TorqueToCurrent("ref", params, current_limit_a=current_limit_a))
    cc = b.add(DQCurrentController("cc", controller_params or params,
                                   bandwidth_rad_s=bandwidth_rad_s))
    inv = b.add(AveragedInverter("inverter", time_constant_s=inverter_time_constant_s))
    motor = b.add(PMSM("motor", params, inertia_kgm2=inertia_kgm2,
                       friction_nms_per_rad=friction_nms_per_rad))
    b.connect(ref.i_d_ref, cc.i_d_ref)
    b.connect(ref.i_q_ref, cc.i_q_ref)
    b.connect(cc.u_d_ref, inv.u_d_ref)
    b.connect(cc.u_q_ref, inv.u_q_ref)
    b.connect(inv.u_d, motor.u_d)
    b.connect(inv.u_q, motor.u_q)
    for dst in (cc.i_d, inv.i_d):
        b.connect(motor.i_d, dst)
    for dst in (cc.i_q, inv.i_q):
        b.connect(motor.i_q, dst)
    b.export_input(ref.torque_ref, "torque_ref")
    b.export_input([cc.u_dc, inv.u_dc], "u_dc")
    if motor.has_inertia:
        b.connect(motor.speed, cc.speed)
        b.export_input(motor.load_torque, "load_torque")
    else:
        b.export_input([cc.speed, motor.speed_in], "speed")
    b.export_output(motor.torque, "torque")
    if motor.has_inertia:
        b.export_output(motor.speed, "speed")
    for port in (motor.i_d, motor.i_q, inv.u_d, inv.u_q, inv.i_dc):
        b.export_output(port)
    return b.build(loops="error")
