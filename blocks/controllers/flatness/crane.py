r"""Planar crane with a hoisted cable as a flat system (Fliess, Lévine, Martin, Rouchon 1995).

Model (one vertical plane; :math:`x` horizontal along the trolley rails, :math:`y` **up**,
origin of :math:`y` at the trolley's sheave level :math:`y_t`, fixed): a trolley of mass
:math:`M` at :math:`x_t` pushed by the force :math:`F`; a massless inextensible cable of
length :math:`L` from the sheave to a point load of mass :math:`m` at angle :math:`\theta`
from the downward vertical (positive: load on the :math:`+x` side); the cable is wound by a
hoist on the trolley (equivalent mass :math:`m_h` of drum and drive train, reflected to
the cable) with the hoisting force :math:`F_h` (positive pulls the cable in, as the
gantry crane's ``hoist_force``).  State :math:`(x_t, L, \theta, \dot x_t, \dot L,
\dot\theta)`, inputs :math:`(F, F_h)`, cable tension :math:`T`:

.. math::

    x_L = x_t + L\sin\theta, \quad y_L = y_t - L\cos\theta \\
    m\ddot x_L = -T\sin\theta, \quad m\ddot y_L = T\cos\theta - m g \\
    M\ddot x_t = F + T\sin\theta, \quad m_h \ddot L = T - F_h \\
    L\ddot\theta = -g\sin\theta - \ddot x_t\cos\theta - 2\dot L\dot\theta \\
    T = \frac{m g\cos\theta + m L\dot\theta^2 - m\sin\theta\,F/M + m F_h/m_h}
             {1 + m\sin^2\theta/M + m/m_h}

Flat outputs: the load position :math:`z = (x_L, y_L)` (Fliess et al. 1995, the crane of
§4).  The cable is parallel to the load's acceleration plus gravity,
:math:`(x_t - x_L, y_t - y_L) \parallel (\ddot x_L, \ddot y_L + g)`, so with
:math:`a = \ddot x_L`, :math:`b = \ddot y_L + g`:

.. math::

    x_t = x_L + (y_t - y_L)\,\frac{a}{b}, \quad
    L = (y_t - y_L)\sqrt{1 + a^2/b^2}, \quad \tan\theta = -\frac{a}{b}, \quad
    T = m\sqrt{a^2 + b^2} \\
    F = M\ddot x_t + m\ddot x_L, \qquad F_h = T - m_h\ddot L

The state needs :math:`z` to the 3rd derivative, the inputs to the 4th (``flaglen`` 5).
The derivatives are computed exactly by truncated Taylor-series arithmetic (no symbolic
differentiation).  Singular set: :math:`b = \ddot y_L + g = 0` (the load in free fall, a
slack cable); :meth:`PlanarCrane.singularity` returns :math:`b`, which must stay
positive (:func:`~.plan.check_plan` raises :class:`~.plan.SingularityError` where it
crosses zero).  :meth:`PlanarCrane.forward` fills the 3rd and 4th derivatives of the flag
for constant inputs (:math:`\dot u = 0`; they are not functions of state and input).

Rest-to-rest transfers: :func:`plan_transfer` builds a :class:`~.plan.PolynomialPlan` in
:math:`(x_L, y_L)` from :math:`(x_0, L_0)` to :math:`(x_f, L_f)` with derivatives 1..k-1
zero at both ends (default :math:`k = 5`, degree 9: trolley acceleration and hoist
acceleration continuous, zero at both ends); :func:`transfer_profile` gives the trolley
and hoist references (position, velocity, acceleration, forces) on a time grid.

The gantry crane of :mod:`blocks.cranes` (four parallel ropes, a spreader that tilts a
little): :func:`sts_planar_crane` (masses, the effective pendulum length) and
:func:`crane_references` (velocity references for its drives, optionally compensating the
drives' P speed loops); see their docstrings and ``examples/flatness_crane.py``.

Measured on the full crane (``examples/flatness_crane.py``: 40 t, trolley 30 m, rope
20 -> 12 m, 24 s, RK4 at 5 ms; residual = half peak-to-peak of spreader X minus trolley X
over the 20 s after the move): flat plan with drive compensation 0.87 mm; trapezoids of
the same distance and duration 518 mm (0.3 m/s^2), 1016 mm (0.5), 972 mm (0.8): ratio
0.17 % of the smallest.  Where the 0.87 mm comes from: air drag on the load (not in the
flat model) 0.77 mm (0.097 mm without drag).  Sensitivities (no drag): the plain velocity
references :math:`\dot x_t, -\dot l_0` without drive compensation 21.5 mm (4 %: the P
speed loops are soft, ~1.5e5 N s/m on the trolley, and the hoist droops 2.2 cm/s under
40 t); the pendulum length taken as the stretched rope without the tilt correction
1.1 mm; taken sheave to centre of mass (:math:`h` = 1.85 m longer) 14.3 mm (2.8 %).

Limitations: planar (no gantry travel, no skew), point load on a massless inextensible
cable, trolley height fixed, no friction or drag; the hoist equivalent mass :math:`m_h`
must be positive (with :math:`m_h = 0` the cable length would be an input of its own).
For the full crane: the effective length is the small-sway, static-tension value (the
rope stretch and the spreader tilt follow the dynamic tension only approximately); the
drive compensation assumes unsaturated drives without motor damping (the STS drives'
``damping_ns_per_rad`` is 0) and neglects the hoist's rope-strain term; air drag on the
load is not compensated (it leaves 1.5 cm of trolley position error through the P loop
and most of the residual sway); the plan is open loop (no sway feedback), so wind or
an initial sway are not corrected.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.params import Array, refuse

from .plan import PolynomialPlan
from .system import FlatSystem, as_flag

# ----------------------------------------------------------- truncated Taylor series
# A jet is an array of normalised Taylor coefficients c_k = f^(k)(t) / k!.


def _mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = min(len(a), len(b))
    return np.convolve(a[:n], b[:n])[:n]


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    n = min(len(a), len(b))
    c = np.zeros(n)
    for k in range(n):
        c[k] = (a[k] - np.dot(b[1:k + 1], c[k - 1::-1][:k])) / b[0]
    return c


def _sqrt(a: np.ndarray) -> np.ndarray:
    n = len(a)
    s = np.zeros(n)
    s[0] = math.sqrt(a[0])
    for k in range(1, n):
        s[k] = (a[k] - np.dot(s[1:k], s[k - 1:0:-1])) / (2.0 * s[0])
    return s


def _sincos(th: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(th)
    s, c = np.zeros(n), np.zeros(n)
    s[0], c[0] = math.sin(th[0]), math.cos(th[0])
    j = np.arange(n, dtype=float)
    for k in range(1, n):
        w = j[1:k + 1] * th[1:k + 1]
        s[k] = np.dot(w, c[k - 1::-1][:k]) / k
        c[k] = -np.dot(w, s[k - 1::-1][:k]) / k
    return s, c


def _atan(u: np.ndarray) -> np.ndarray:
    """atan of a jet: theta' = u' / (1 + u^2)."""
    n = len(u)
    th = np.zeros(n)
    th[0] = math.atan(u[0])
    if n > 1:
        du = _deriv(u)
        q = _div(du, (1.0 + _mul(u, u))[:n - 1])
        th[1:] = q / np.arange(1, n)
    return th


def _deriv(a: np.ndarray) -> np.ndarray:
    """The jet of the derivative (one coefficient shorter)."""
    return a[1:] * np.arange(1, len(a))


def _to_jet(derivs: np.ndarray) -> np.ndarray:
    return np.asarray(derivs, float) / np.array([math.factorial(k) for k in range(len(derivs))])


def _from_jet(jet: np.ndarray) -> np.ndarray:
    return jet * np.array([math.factorial(k) for k in range(len(jet))])


class PlanarCrane(FlatSystem):
    """Planar crane with cable-length control (module docstring).

    Parameters
    ----------
    trolley_mass_kg : float
        :math:`M` (trolley plus its drive train reflected to the rails).
    load_mass_kg : float
        :math:`m`.
    hoist_mass_kg : float
        :math:`m_h` > 0 (drum and hoist drive train reflected to the cable).
    gravity_m_s2 : float
    trolley_height_m : float
        :math:`y_t`, the sheave level (default 0: :math:`y_L = -L` at rest).
    """

    states = ("x_t", "L", "theta", "v_t", "L_dot", "theta_dot")
    inputs = ("F", "F_h")
    outputs = ("x_L", "y_L")
    flaglen = (5, 5)

    def __init__(self, trolley_mass_kg: float, load_mass_kg: float, hoist_mass_kg: float,
                 gravity_m_s2: float = 9.81, trolley_height_m: float = 0.0) -> None:
        own = "PlanarCrane"
        for name, v in (("trolley_mass_kg", trolley_mass_kg), ("load_mass_kg", load_mass_kg),
                        ("hoist_mass_kg", hoist_mass_kg), ("gravity_m_s2", gravity_m_s2)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ParameterError(f"{own}: {name} must be a finite number > 0, got {v!r}")
        if not (isinstance(trolley_height_m, (int, float)) and math.isfinite(trolley_height_m)):
            raise ParameterError(f"{own}: trolley_height_m must be finite, got "
                                 f"{trolley_height_m!r}")
        self.M, self.m, self.mh = float(trolley_mass_kg), float(load_mass_kg), \
            float(hoist_mass_kg)
        self.g, self.yt = float(gravity_m_s2), float(trolley_height_m)

    # -- the model, on jets (floats are jets of length 1) ---------------------------------
    def _accel(self, X: list[np.ndarray], u: np.ndarray) -> tuple:
        """Jets of (x_t'', L'', theta'', T) from state jets ``X`` and constant inputs."""
        L, th, dL, dth = X[1], X[2], X[4], X[5]
        F, Fh = float(u[0]), float(u[1])
        M, m, mh, g = self.M, self.m, self.mh, self.g
        s, c = _sincos(th)
        R = m * g * c + m * _mul(L, _mul(dth, dth))
        num = R - (m * F / M) * s
        num[0] += m * Fh / mh
        den = (m / M) * _mul(s, s)
        den[0] += 1.0 + m / mh
        T = _div(num, den)
        p = _mul(s, T) / M
        p[0] += F / M
        q = T / mh
        q[0] -= Fh / mh
        dd = -g * s - _mul(p, c) - 2.0 * _mul(dL, dth)
        thdd = _div(dd, L)
        return p, q, thdd, T

    def rhs(self, x, u):
        X = [np.array([float(v)]) for v in x]
        p, q, thdd, _ = self._accel(X, np.asarray(u, float))
        return np.array([x[3], x[4], x[5], p[0], q[0], thdd[0]], dtype=float)

    def tension(self, x, u) -> float:
        """Cable tension :math:`T` [N] at state ``x`` and input ``u``."""
        X = [np.array([float(v)]) for v in x]
        return float(self._accel(X, np.asarray(u, float))[3][0])

    # -- the maps -------------------------------------------------------------------------
    def forward(self, x, u):
        """Flag of the load position; 3rd and 4th derivatives for constant ``u``."""
        n = 5
        X = np.zeros((6, n))
        X[:, 0] = np.asarray(x, float)
        u = np.asarray(u, float)
        for k in range(n - 1):  # Taylor coefficients of the solution, order by order
            J = [X[i, :k + 1].copy() for i in range(6)]
            p, q, thdd, _ = self._accel(J, u)
            d = [J[3], J[4], J[5], p, q, thdd]
            for i in range(6):
                X[i, k + 1] = d[i][k] / (k + 1)
        s, c = _sincos(X[2])
        xl = X[0] + _mul(X[1], s)
        yl = -_mul(X[1], c)
        yl[0] += self.yt
        return [_from_jet(xl), _from_jet(yl)]

    def _reverse_jets(self, zflag) -> dict:
        zx, zy = as_flag(zflag, self.flaglen)
        jx, jy = _to_jet(zx[:5]), _to_jet(zy[:5])
        a = _deriv(_deriv(jx))                       # x_L'' (orders 0..2)
        b = _deriv(_deriv(jy))
        b[0] += self.g                               # y_L'' + g
        h = -jy[:3]
        h[0] += self.yt                              # y_t - y_L
        r = _div(a, b)
        xt = jx[:3] + _mul(h, r)
        one_r2 = _mul(r, r)
        one_r2[0] += 1.0
        L = _mul(h, _sqrt(one_r2))
        th = _atan(-r)
        T = self.m * math.hypot(a[0], b[0])
        return {"xt": xt, "L": L, "th": th, "T": T, "a": a, "b": b}

    def reverse(self, zflag):
        j = self._reverse_jets(zflag)
        xt, L, th = _from_jet(j["xt"]), _from_jet(j["L"]), _from_jet(j["th"])
        x = np.array([xt[0], L[0], th[0], xt[1], L[1], th[1]])
        u = np.array([self.M * xt[2] + self.m * j["a"][0], j["T"] - self.mh * L[2]])
        return x, u

    def singularity(self, zflag):
        """:math:`\\ddot y_L + g` (zero: the load in free fall, the cable slack)."""
        return float(np.asarray(zflag[1], float)[2] + self.g)

    def profile(self, zflag) -> dict:
        """Trolley position, velocity, acceleration (``x_t``, ``v_t``, ``a_t``), cable length
        and its rates (``L``, ``L_dot``, ``L_ddot``), ``theta``, tension ``T``, inputs ``F``,
        ``F_h`` at one flag."""
        j = self._reverse_jets(zflag)
        xt, L, th = _from_jet(j["xt"]), _from_jet(j["L"]), _from_jet(j["th"])
        F = self.M * xt[2] + self.m * j["a"][0]
        return {"x_t": xt[0], "v_t": xt[1], "a_t": xt[2], "L": L[0], "L_dot": L[1],
                "L_ddot": L[2], "theta": th[0], "T": j["T"], "F": F,
                "F_h": j["T"] - self.mh * L[2]}


# ------------------------------------------------------------------------ planning
def plan_transfer(system: PlanarCrane, t0: float, duration_s: float, x0: float, L0: float,
                  xf: float, Lf: float, k: int = 5) -> PolynomialPlan:
    """Rest-to-rest transfer of the load from below the trolley at ``x0`` on cable ``L0``
    to below ``xf`` on cable ``Lf``: a :class:`PolynomialPlan` in :math:`(x_L, y_L)`,
    derivatives 1..k-1 zero at both ends (degree :math:`2k - 1`).  ``k`` >= 4 keeps the
    trolley velocity continuous (it needs the 3rd derivative); the default 5 also keeps
    the trolley acceleration and the forces continuous."""
    if int(k) < 4:
        raise ParameterError(f"plan_transfer: k must be >= 4 (the trolley velocity uses the "
                             f"3rd derivative of the load position), got {k!r}")
    if not (L0 > 0 and Lf > 0):
        raise ParameterError(f"plan_transfer: cable lengths must be > 0, got L0={L0!r}, "
                             f"Lf={Lf!r}")
    k = int(k)
    start = np.zeros((2, k))
    end = np.zeros((2, k))
    start[:, 0] = (x0, system.yt - L0)
    end[:, 0] = (xf, system.yt - Lf)
    return PolynomialPlan(t0, t0 + duration_s, start, end)


def transfer_profile(system: PlanarCrane, plan: Any, times: Any) -> dict[str, np.ndarray]:
    """:meth:`PlanarCrane.profile` along ``plan`` at ``times``: arrays keyed as there, plus
    ``time``, ``x_L``, ``y_L``, the 5th derivatives' effect ``F_dot`` and ``F_h_dot``
    (by the same Taylor arithmetic, for drive compensation; needs the plan's 5th
    derivative)."""
    times = np.asarray(times, float)
    keys = ("x_t", "v_t", "a_t", "L", "L_dot", "L_ddot", "theta", "T", "F", "F_h")
    out: dict[str, Any] = {k: np.empty(times.size) for k in keys}
    out["F_dot"], out["F_h_dot"] = np.empty(times.size), np.empty(times.size)
    out["x_L"], out["y_L"] = np.empty(times.size), np.empty(times.size)
    for i, t in enumerate(times):
        fl = plan.flag_array(t, 5)
        p = system.profile([fl[0, :5], fl[1, :5]])
        for k in keys:
            out[k][i] = p[k]
        out["x_L"][i], out["y_L"][i] = fl[0, 0], fl[1, 0]
        fd, fhd = _force_rates(system, fl)
        out["F_dot"][i], out["F_h_dot"][i] = fd, fhd
    out["time"] = times
    return out


def _force_rates(system: PlanarCrane, fl: np.ndarray) -> tuple[float, float]:
    """dF/dt and dF_h/dt from a flag with 6 derivatives (orders 0..5)."""
    jx, jy = _to_jet(fl[0, :6]), _to_jet(fl[1, :6])
    a = _deriv(_deriv(jx))                            # orders 0..3
    b = _deriv(_deriv(jy))
    b[0] += system.g
    h = -jy[:4]
    h[0] += system.yt
    r = _div(a, b)
    xt = jx[:4] + _mul(h, r)
    one_r2 = _mul(r, r)
    one_r2[0] += 1.0
    L = _mul(h, _sqrt(one_r2))
    ab = _mul(a, a) + _mul(b, b)
    T = system.m * _sqrt(ab)
    F = system.M * _deriv(_deriv(xt)) + system.m * a[:2]
    Fh = T[:2] - system.mh * _deriv(_deriv(L))
    return float(F[1]), float(Fh[1])


def simulate_planar(system: PlanarCrane, plan: Any, t_end: float, x0: Any = None,
                    rtol: float = 1e-11, atol: float = 1e-11) -> Any:
    """Integrate :meth:`PlanarCrane.rhs` from the plan's initial state with the
    feedforward inputs :math:`u(t) = \\Psi(z_d(t), \\dots)` (``scipy.integrate.solve_ivp``,
    DOP853); returns the ``OdeResult`` (dense output on)."""
    from scipy.integrate import solve_ivp

    def flag(t):
        fl = plan.flag_array(t, 4)
        return [fl[0], fl[1]]

    if x0 is None:
        x0 = system.reverse(flag(plan.t0))[0]

    def f(t, x):
        return system.rhs(x, system.reverse(flag(t))[1])

    return solve_ivp(f, (plan.t0, t_end), np.asarray(x0, float), method="DOP853",
                     rtol=rtol, atol=atol, dense_output=True)


# -------------------------------------------------------------- the STS gantry crane
def effective_length(params: Any, l0: Any) -> Any:
    """Pendulum length of the :class:`~blocks.cranes.GantryCrane`'s sway at rest with the
    unstretched rope length ``l0`` (float or array): the stretched rope
    :math:`L = l_0(1 + mg/(4EA))` (four parallel ropes) plus the spreader's quasi-static
    tilt :math:`m g h^2/K_\\phi`, :math:`K_\\phi = 4 (EA/l_0) a^2 + m g h (1 + h/L)`
    (:math:`h`: rope attachments above the centre of mass, :math:`a`: half spacing along
    X).  With equal sheave and attachment spacings the ropes form a parallelogram: the
    spreader translates, so the pendulum length is the rope's, *not* sheave to centre of
    mass (that would be :math:`h` longer: 1.85 m with a container).  The crane's sway
    frequency :math:`\\omega^2 = g/L_e (1 + m/M)` uses the same :math:`L_e`
    (``tests/system/test_gantry_crane.py``: 3e-7 relative)."""
    from blocks.cranes import suspended_body

    b = suspended_body(params)
    m, g = b.mass, params.gravity_m_s2
    EA = params.rope_axial_stiffness_n
    l0 = np.asarray(l0, float)
    L = l0 * (1.0 + m * g / 4.0 / EA)
    h = float(b.attachments[0][1])
    a = float(params.attachment_half_spacing_m[0])
    K_phi = 4.0 * EA / l0 * a * a + m * g * h * (1.0 + h / L)
    out = L + m * g * h * h / K_phi
    return float(out) if out.ndim == 0 else out


def rope_length(params: Any, L_e: Any) -> Any:
    """Inverse of :func:`effective_length`: the unstretched rope length :math:`l_0` [m]
    (float or array; Newton's method to 1e-12 m)."""
    L_e = np.asarray(L_e, float)
    l0 = L_e.copy()
    d = 1e-6
    for _ in range(30):
        f = np.asarray(effective_length(params, l0)) - L_e
        df = (np.asarray(effective_length(params, l0 + d)) - L_e - f) / d
        l0 = l0 - f / df
        if np.max(np.abs(f)) < 1e-12:
            break
    return float(l0) if l0.ndim == 0 else l0


def sts_planar_crane(params: Any) -> PlanarCrane:
    """The :class:`PlanarCrane` of a :class:`~blocks.cranes.GantryCraneParameters` in the
    trolley's plane: :math:`M` = trolley + trolley drive train, :math:`m` = spreader (+
    container), :math:`m_h` = hoist drive train and drum, the load point at the
    effective pendulum length (:func:`effective_length`) below the sheaves."""
    from blocks.cranes import suspended_body

    return PlanarCrane(params.trolley_mass_kg + params.trolley_drive.equivalent_mass_kg,
                       suspended_body(params).mass, params.hoist_drive.equivalent_mass_kg,
                       params.gravity_m_s2, 0.0)


def crane_references(params: Any, plan: Any, times: Any, compensate_drives: bool = True,
                     system: PlanarCrane | None = None) -> dict[str, np.ndarray]:
    r"""Velocity references for the gantry crane's trolley and hoist drives along ``plan``.

    Plain (``compensate_drives=False``): :math:`v_{t,ref} = \dot x_t`, :math:`v_{h,ref} =
    -\dot l_0` (hoisting positive), :math:`l_0 = ` :func:`rope_length` of the plan's
    :math:`L` (the rope's stretch taken at the static tension, its change with the
    dynamic tension neglected).

    Compensated: the drives are P speed loops (:class:`~blocks.electric.CraneDrive`,
    :math:`\tau_m\dot T_{ref} = K(\omega_{ref} - \omega) - T_{ref}`, force
    :math:`F = n\eta T/i`, unsaturated, no motor damping), so the reference that makes a
    drive produce the planned force :math:`F(t)` while moving at the planned speed is

    .. math::

        v_{ref} = v + \frac{i^2}{n\eta K}\,(F + \tau_m \dot F)

    with :math:`F` the trolley force :math:`M\ddot x_t + m\ddot x_L` and the hoist force
    :math:`F_h = T - m_h\ddot L` of the flat model (the rope strain term of the crane's
    hoist load, :math:`T\varepsilon/2`, ~0.05 %, is neglected).  This is the force
    feedforward the drive block has no port for, passed through its speed reference; it
    also removes the hoist's droop under load.

    Returns arrays ``time``, ``trolley`` and ``hoist`` (velocity references [m/s]) and the
    profile of :func:`transfer_profile`.
    """
    sysm = system or sts_planar_crane(params)
    prof = transfer_profile(sysm, plan, times)
    l0 = rope_length(params, prof["L"])
    # dl0/dt = dL/dt * dl0/dL (the static stretch and tilt make l0 a function of L)
    eps = 1e-4
    dl0_dL = (rope_length(params, prof["L"] + eps) - rope_length(params, prof["L"] - eps)) \
        / (2 * eps)
    v_t = prof["v_t"].copy()
    v_h = -prof["L_dot"] * dl0_dL
    if compensate_drives:
        for axis, F, Fd in (("trolley", prof["F"], prof["F_dot"]),
                            ("hoist", prof["F_h"], prof["F_h_dot"])):
            d = getattr(params, f"{axis}_drive")
            gain = d.travel_per_rad_m ** 2 / (d.motors * d.efficiency * d.gain_nms_per_rad)
            corr = gain * (F + d.time_constant_s * Fd)
            if axis == "trolley":
                v_t = v_t + corr
            else:
                v_h = v_h + corr
    return {"time": np.asarray(times, float), "trolley": v_t, "hoist": v_h, "l0": l0,
            **{f"plan_{k}": v for k, v in prof.items() if k != "time"}}


class TableReference(Block):
    r"""Velocity references as tables of time, linearly interpolated (held outside).

    Tables sampled at half the RK4 step reproduce the sampled signal exactly at the
    solver's stages.

    .. math:: v(t) = v_k + \frac{t - t_k}{t_{k+1} - t_k}\,(v_{k+1} - v_k), \qquad
              t_k \le t < t_{k+1}

    Ports
    -----
    out  gantry_velocity_ref   scalar [m/s]  time only
    out  trolley_velocity_ref  scalar [m/s]  time only
    out  hoist_velocity_ref    scalar [m/s]  time only

    Parameters
    ----------
    time_s : array_like
        Breakpoint times [s], strictly increasing.
    gantry, trolley, hoist : array_like, optional
        Velocities [m/s] at ``time_s`` (default zero).
    """

    argument_checks = {"time_s": Array(ndim=1), "gantry": Array(ndim=1),
                       "trolley": Array(ndim=1), "hoist": Array(ndim=1)}

    def __init__(self, name: str, time_s: Any, *, gantry: Any = None, trolley: Any = None,
                 hoist: Any = None) -> None:
        super().__init__(name)
        t = np.asarray(time_s, float)
        if t.size < 2 or np.any(np.diff(t) <= 0):
            raise refuse(self, "time_s", time_s, "at least 2 strictly increasing times")
        self._t = t
        self._tab = []
        for ch, v in (("gantry", gantry), ("trolley", trolley), ("hoist", hoist)):
            arr = np.zeros_like(t) if v is None else np.asarray(v, float)
            if arr.shape != t.shape:
                raise refuse(self, ch, v, f"{t.size} finite values, one per time of time_s")
            self._tab.append(arr)
        (self.gantry_velocity_ref, self.trolley_velocity_ref, self.hoist_velocity_ref) = \
            self.declare_outputs([("gantry_velocity_ref", "m/s"), ("trolley_velocity_ref", "m/s"),
                                  ("hoist_velocity_ref", "m/s")], self._values, depends_on=())

    def _values(self, ctx: Any) -> tuple:
        t = ctx.time
        return tuple(float(np.interp(t, self._t, v)) for v in self._tab)
