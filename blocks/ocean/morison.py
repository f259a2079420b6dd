r"""Morison loads on slender cylinders: per unit length and integrated along a member.

Per unit length, normal to the member axis :math:`\mathbf e` (relative-motion form, the
seed's Kreuzer & Ellermann form with :math:`C_a\rho\frac{\pi D^2}{4}` and
:math:`C_D\rho\frac D2`):

.. math::

    \mathbf f = \rho\frac{\pi D^2}{4}\big[(1 + C_a)\dot{\mathbf u}_n
                - C_a\ddot{\mathbf x}_n\big]
                + \tfrac12\rho C_D D\,(\mathbf u_n - \dot{\mathbf x}_n)
                \,|\mathbf u_n - \dot{\mathbf x}_n|

where :math:`\mathbf v_n = \mathbf v - (\mathbf v\cdot\mathbf e)\mathbf e` is the part normal
to the axis, :math:`\mathbf u, \dot{\mathbf u}` the fluid velocity and (local) acceleration,
:math:`\dot{\mathbf x}, \ddot{\mathbf x}` the member's.  For a fixed cylinder
:math:`C_M = 1 + C_a`.  :math:`KC = U_m T/D`.

Member (strip theory): the wetted part of the member, from its lower end up to where it
pierces the instantaneous free surface :math:`\eta` (or the SWL with ``wet_to="swl"``), is
integrated with Gauss-Legendre points (``n_gauss`` per segment, ``n_segments`` equal
segments); force :math:`\mathbf F = \int\mathbf f\,ds` and moment
:math:`\mathbf M = \int(\mathbf r - \mathbf r_{ref})\times\mathbf f\,ds`.  Member velocity
and acceleration vary linearly between the ends (exact for a rigid member).

Analytic check (vertical pile from the seabed to the SWL, inertia only, linear wave):

.. math::

    F_I = \rho C_M\frac{\pi D^2}{4}\frac{a\omega^2}{k}\sin\theta, \qquad
    M_I = \rho C_M\frac{\pi D^2}{4}\frac{a\omega^2}{k^2}
          \frac{kh\sinh kh - \cosh kh + 1}{\sinh kh}\sin\theta

about the seabed (:func:`pile_inertia_base_shear`).

Limitations: no axial (tangential) force, no end (pressure) forces on the member ends, no
Froude-Krylov buoyancy variation (hydrostatics are the body's business), no slamming, no
convective acceleration; :math:`C_D, C_a` are constants (no KC/Re dependence); a member
piercing the surface more than once (nearly horizontal in steep waves) is cut at one
crossing only.
"""

from __future__ import annotations

import math

import numpy as np

from cosim.block import Block
from cosim.codegen.model import CContext, CModel, c_float
from cosim.errors import ParameterError
from cosim.params import COUNT, POSITIVE, Array

from .waves import RHO_SEAWATER, LinearWaves

__all__ = ["MorisonMember", "MorisonMemberModel", "keulegan_carpenter", "morison_force",
           "pile_inertia_base_shear"]


def _check_coeffs(who: str, diameter: float, cd: float, ca: float, rho: float) -> None:
    if not (np.isfinite(diameter) and diameter > 0):
        raise ParameterError(f"{who}: diameter must be > 0 m, got {diameter!r}")
    if not (np.isfinite(cd) and cd >= 0):
        raise ParameterError(f"{who}: cd must be >= 0, got {cd!r}")
    if not (np.isfinite(ca) and ca >= 0):
        raise ParameterError(f"{who}: ca must be >= 0, got {ca!r}")
    if not (np.isfinite(rho) and rho > 0):
        raise ParameterError(f"{who}: rho must be > 0 kg/m^3, got {rho!r}")


def morison_force(u, du, diameter: float, cd: float, ca: float = 1.0,
                  rho: float = RHO_SEAWATER, xdot=0.0, xddot=0.0):
    """Morison force per unit length [N/m] (module docstring).

    ``u, du, xdot, xddot``: scalars (1-D flow, ``|.|`` = abs) or arrays (..., 3) of
    components normal to the member (``|.|`` = Euclidean norm over the last axis).
    """
    _check_coeffs("morison_force", diameter, cd, ca, rho)
    area = 0.25 * math.pi * diameter * diameter
    u, du = np.asarray(u, dtype=float), np.asarray(du, dtype=float)
    ur = u - np.asarray(xdot, dtype=float)
    inertia = rho * area * ((1.0 + ca) * du - ca * np.asarray(xddot, dtype=float))
    speed = np.abs(ur) if ur.ndim == 0 else np.linalg.norm(ur, axis=-1, keepdims=True)
    out = inertia + 0.5 * rho * cd * diameter * ur * speed
    return float(out) if out.ndim == 0 else out


def keulegan_carpenter(velocity_amplitude: float, period: float, diameter: float) -> float:
    """:math:`KC = U_m T / D`."""
    if not (diameter > 0 and period > 0):
        raise ParameterError("keulegan_carpenter: period and diameter must be > 0")
    return float(velocity_amplitude * period / diameter)


def pile_inertia_base_shear(wave, diameter: float, cm: float = 2.0,
                            t: float = 0.0) -> tuple[float, float]:
    """Closed-form inertia base shear [N] and overturning moment about the seabed [N m] of a
    vertical pile at ``x = y = 0`` from the seabed to the SWL in a :class:`RegularWave`
    of finite depth (module docstring)."""
    if math.isinf(wave.depth):
        raise ParameterError("pile_inertia_base_shear: needs a finite depth")
    a, w, k, h = wave.amplitude[0], wave.omega[0], wave.k[0], wave.depth
    th = float(-w * t + wave.phase[0])
    amp = wave.rho * cm * 0.25 * math.pi * diameter ** 2 * a * w * w
    force = amp / k * math.sin(th)
    moment = amp / k ** 2 * (k * h * math.sinh(k * h) - math.cosh(k * h) + 1.0) \
        / math.sinh(k * h) * math.sin(th)
    return float(force), float(moment)


class MorisonMemberModel:
    """A slender cylindrical member between two points, loaded by a :class:`LinearWaves` sea.

    Parameters
    ----------
    wave : LinearWaves
        The sea (regular or irregular); its ``rho`` is used.
    diameter : float
        Member diameter [m].
    cd, ca : float
        Drag and added-mass coefficients (:math:`C_M = 1 + C_a`).
    n_gauss, n_segments : int
        Gauss-Legendre points per segment and number of segments of the wetted length.
    wet_to : {"surface", "swl"}
        Integrate up to the instantaneous surface :math:`\\eta` or to :math:`z = 0`.
    """

    def __init__(self, wave: LinearWaves, diameter: float, cd: float = 1.0, ca: float = 1.0,
                 n_gauss: int = 8, n_segments: int = 4, wet_to: str = "surface") -> None:
        if not isinstance(wave, LinearWaves):
            raise ParameterError("MorisonMemberModel: wave must be a RegularWave, an "
                                 f"IrregularSea or LinearWaves, got {type(wave).__name__}")
        _check_coeffs("MorisonMemberModel", diameter, cd, ca, wave.rho)
        if wet_to not in ("surface", "swl"):
            raise ParameterError(f"MorisonMemberModel: wet_to must be 'surface' or 'swl', "
                                 f"got {wet_to!r}")
        if not (n_gauss >= 1 and n_segments >= 1):
            raise ParameterError("MorisonMemberModel: n_gauss and n_segments must be >= 1")
        self.wave, self.diameter, self.cd, self.ca = wave, float(diameter), float(cd), float(ca)
        self.wet_to = wet_to
        self.area = 0.25 * math.pi * self.diameter ** 2
        xg, wg = np.polynomial.legendre.leggauss(int(n_gauss))
        m = int(n_segments)
        # nodes and weights on [0, 1]
        self._s = ((np.arange(m)[:, None] + 0.5 * (xg + 1.0)) / m).ravel()
        self._w = np.tile(0.5 * wg / m, m)

    def _surface_s(self, p1: np.ndarray, p2: np.ndarray, t: float) -> tuple[float, float]:
        """Wetted interval [s0, s1] of the parameter s in [0, 1] along p1 -> p2."""
        if self.wet_to == "swl":
            def g(s):
                return p1[2] + s * (p2[2] - p1[2])
        else:
            def g(s):
                p = p1 + s * (p2 - p1)
                return p[2] - self.wave.elevation(p, t)
        g0, g1 = g(0.0), g(1.0)
        if g0 <= 0 and g1 <= 0:
            return 0.0, 1.0
        if g0 > 0 and g1 > 0:
            return 0.0, 0.0
        lo, hi = 0.0, 1.0  # bisection + secant (Illinois) on the crossing
        glo, ghi = g0, g1
        for _ in range(60):
            s = (lo * ghi - hi * glo) / (ghi - glo)
            gs = g(s)
            if abs(gs) < 1e-12 or hi - lo < 1e-13:
                break
            if (gs > 0) == (glo > 0):
                lo, glo = s, gs
                ghi *= 0.5
            else:
                hi, ghi = s, gs
                glo *= 0.5
        return (0.0, s) if g0 <= 0 else (s, 1.0)

    def loads(self, p1, p2, t: float, v1=None, v2=None, a1=None, a2=None,
              reference=None, include_added_mass: bool = True):
        """Force [N] (3,) and moment [N m] (3,) about ``reference`` (default ``p1``).

        ``p1, p2`` member end positions [m]; ``v1, v2`` [m/s] and ``a1, a2`` [m/s^2] their
        velocities and accelerations (default zero: a fixed member).  With
        ``include_added_mass=False`` the :math:`-C_a\\rho A\\ddot x_n` term is left out: the
        body carries the added mass in its mass matrix (no algebraic loop through the
        acceleration).  Also returns the wetted length [m] as a third value.
        """
        p1, p2 = np.asarray(p1, dtype=float), np.asarray(p2, dtype=float)
        axis = p2 - p1
        length = float(np.linalg.norm(axis))
        if not length > 0:
            raise ParameterError("MorisonMemberModel.loads: the member ends coincide")
        e = axis / length
        ref = p1 if reference is None else np.asarray(reference, dtype=float)
        s0, s1 = self._surface_s(p1, p2, t)
        if s1 <= s0:
            return np.zeros(3), np.zeros(3), 0.0
        s = s0 + (s1 - s0) * self._s
        w = (s1 - s0) * length * self._w
        pts = p1 + np.outer(s, axis)
        kin = self.wave.kinematics(pts, t)
        z3 = np.zeros(3)
        v1 = z3 if v1 is None else np.asarray(v1, dtype=float)
        v2 = z3 if v2 is None else np.asarray(v2, dtype=float)
        xd = v1 + np.outer(s, v2 - v1)
        ur = kin.velocity - xd
        ur -= np.outer(ur @ e, e)
        du = kin.acceleration - np.outer(kin.acceleration @ e, e)
        rho = self.wave.rho
        f = rho * self.area * (1.0 + self.ca) * du
        if include_added_mass and (a1 is not None or a2 is not None):
            a1 = z3 if a1 is None else np.asarray(a1, dtype=float)
            a2 = z3 if a2 is None else np.asarray(a2, dtype=float)
            xdd = a1 + np.outer(s, a2 - a1)
            xdd -= np.outer(xdd @ e, e)
            f -= rho * self.area * self.ca * xdd
        f += 0.5 * rho * self.cd * self.diameter * ur * np.linalg.norm(ur, axis=1)[:, None]
        f *= kin.wet[:, None]
        force = w @ f
        moment = w @ np.cross(pts - ref, f)
        return force, moment, float((s1 - s0) * length)

    def added_mass_matrix(self, p1, p2, t: float = 0.0, reference=None) -> np.ndarray:
        """6x6 added-mass matrix [kg, kg m, kg m^2] about ``reference`` of the currently
        wetted part (still water: the part below the SWL when ``t`` is None-like)."""
        p1, p2 = np.asarray(p1, dtype=float), np.asarray(p2, dtype=float)
        axis = p2 - p1
        length = float(np.linalg.norm(axis))
        e = axis / length
        ref = p1 if reference is None else np.asarray(reference, dtype=float)
        s0, s1 = self._surface_s(p1, p2, t)
        P = np.eye(3) - np.outer(e, e)
        ma = self.wave.rho * self.area * self.ca
        M = np.zeros((6, 6))
        if s1 <= s0:
            return M
        for si, wi in zip(s0 + (s1 - s0) * self._s, (s1 - s0) * length * self._w):
            r = p1 + si * axis - ref
            R = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
            # point acceleration a + alpha x r = [I, -R] [a; alpha]
            T = np.hstack([np.eye(3), -R])
            M += wi * ma * (np.vstack([np.eye(3), R]) @ P @ T)
        return M


def rotation_rpy(rpy) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def rotation_rpy_c(roll: str, pitch: str, yaw: str, out: str) -> str:
    """C statements filling ``double out[9]`` (row-major) as :func:`rotation_rpy` does."""
    e = [["cy * cp", "cy * sp * sr - sy * cr", "cy * sp * cr + sy * sr"],
         ["sy * cp", "sy * sp * sr + cy * cr", "sy * sp * cr - cy * sr"],
         ["-sp", "cp * sr", "cp * cr"]]
    return ("{\n" + f"    double cr = cos({roll}), sr = sin({roll}), cp = cos({pitch}), "
            f"sp = sin({pitch}), cy = cos({yaw}), sy = sin({yaw});\n"
            + "".join(f"    {out}[{3 * i + j}] = {e[i][j]};\n" for i in range(3)
                      for j in range(3)) + "}")


#: C of :meth:`LinearWaves.elevation` and :meth:`LinearWaves.kinematics` at one point (the
#: C forms' helper; the sea's data in the table of :func:`_wave_table`)
_C_KIN = r"""/* blocks.ocean.waves: LinearWaves.elevation and .kinematics (velocity, acceleration)
   at one point; W: k cos b, k sin b, omega, phase, a, k, e2h, 1 - e2h, a w cos b, a w sin b, a w,
   a w^2 cos b, a w^2 sin b, a w^2 (n each); mode: 0 extrapolate, 1 wheeler, 2 vertical */
static double cosim_oc_eta(const double *W, int n, double x, double y, double t) {
    double eta = 0.0;
    int i;
    for (i = 0; i < n; i++)
        eta += cos(x * W[i] + y * W[n + i] - W[2 * n + i] * t + W[3 * n + i]) * W[4 * n + i];
    return eta;
}

/* returns 1 if the point lies below the seabed */
static int cosim_oc_kin(const double *W, int n, double h, int mode, int deep_e2h,
                        double x, double y, double z, double t, double *vel, double *acc,
                        int *wet_out) {
    double eta = 0.0, zs, wt, uh0 = 0.0, uh1 = 0.0, ww = 0.0, du0 = 0.0, du1 = 0.0,
           dw = 0.0;
    int i, wet;
    for (i = 0; i < n; i++)
        eta += cos(x * W[i] + y * W[n + i] - W[2 * n + i] * t + W[3 * n + i]) * W[4 * n + i];
    wet = z <= eta;
    if (z < -h * (1 + 1e-12)) return 1;
    if (mode == 1) zs = isinf(h) ? z - eta : h * (z - eta) / (h + eta);
    else if (mode == 2) zs = (z < 0.0) ? z : 0.0;
    else zs = z;
    zs = wet ? zs : 0.0;
    for (i = 0; i < n; i++) {
        double th = x * W[i] + y * W[n + i] - W[2 * n + i] * t + W[3 * n + i];
        double c = cos(th), s = sin(th), zk = zs * W[5 * n + i], ez, em, ch_sh, sh_sh;
        ez = exp((zk < 700.0) ? zk : 700.0);
        em = deep_e2h ? exp(-zk) * W[6 * n + i] : 0.0 * ez;
        ch_sh = (ez + em) / W[7 * n + i];
        sh_sh = (ez - em) / W[7 * n + i];
        uh0 += ch_sh * c * W[8 * n + i];
        uh1 += ch_sh * c * W[9 * n + i];
        ww += sh_sh * s * W[10 * n + i];
        du0 += ch_sh * s * W[11 * n + i];
        du1 += ch_sh * s * W[12 * n + i];
        dw += sh_sh * c * W[13 * n + i];
    }
    *wet_out = wet;
    wt = wet ? 1.0 : 0.0;
    vel[0] = uh0 * wt; vel[1] = uh1 * wt; vel[2] = ww * wt;
    acc[0] = du0 * wt; acc[1] = du1 * wt; acc[2] = -dw * wt;
    return 0;
}"""


def _wave_table(wv: LinearWaves) -> np.ndarray:
    """The per-component constants of ``cosim_oc_kin``, as ``kinematics`` computes them."""
    a, w = wv.amplitude, wv.omega
    aw, aw2 = a * w, a * w ** 2
    return np.concatenate([wv.k * wv._cb, wv.k * wv._sb, w, wv.phase, a, wv.k, wv._e2h,
                           1.0 - wv._e2h, aw * wv._cb, aw * wv._sb, aw, aw2 * wv._cb,
                           aw2 * wv._sb, aw2])


def _cross(a, b: str, k: int) -> str:
    """Component ``k`` of ``a x b`` in C as :func:`numpy.cross` (``b`` a C array name)."""
    i, j = (k + 1) % 3, (k + 2) % 3
    return f"{a[i]} * {b}[{j}] - {a[j]} * {b}[{i}]"


class MorisonMember(Block):
    """Morison loads on one slender member (strip theory; module docstring).

    ``motion="fixed"``: ``end_a``, ``end_b`` are global positions [m]; no inputs; the
    moment is about ``end_a``.  ``motion="rigid_body"``: ``end_a``, ``end_b`` are body-frame
    coordinates relative to the body reference point; the member moves with the body
    (rotation ``R = Rz(yaw) Ry(pitch) Rx(roll)``, point velocity
    :math:`\\mathbf v + \\boldsymbol\\omega\\times\\mathbf r`); force and moment act on the
    body, the moment about its reference point, both in the global frame.

    The added-mass reaction :math:`-C_a\\rho A\\ddot{\\mathbf x}_n` is left out by default
    (``include_added_mass=False``): put :meth:`MorisonMemberModel.added_mass_matrix` into
    the body's mass instead, which avoids an algebraic loop through the body acceleration.
    With ``include_added_mass=True`` the block takes the body accelerations as inputs.

    Limitation of the C form (:meth:`c_model`): NumPy's matrix products and ``exp`` round
    differently from C loops and libm in the last bit, so a compiled run equals the Python
    loop to about 1e-15 of each signal's range, not bit for bit.

    Ports
    -----
    in   position              (3,) [m]      rigid_body only, body reference point
    in   rotation              (3,) [rad]    rigid_body only, roll, pitch, yaw
    in   velocity              (3,) [m/s]    rigid_body only
    in   angular_velocity      (3,) [rad/s]  rigid_body only (global frame)
    in   acceleration          (3,) [m/s^2]  rigid_body with include_added_mass only
    in   angular_acceleration  (3,) [rad/s^2]  rigid_body with include_added_mass only
    out  force                 (3,) [N]      global frame; reads every input
    out  moment                (3,) [N*m]    about ``end_a`` (fixed) or the body reference
                                             point (rigid_body), global frame; reads every
                                             input
    out  wetted_length         scalar [m]    the member's length below the surface; reads
                                             every input

    Parameters
    ----------
    wave : LinearWaves
        The sea (regular or irregular); its ``rho`` is used.
    end_a, end_b : array_like (3,)
        The member's ends [m]: global positions (fixed) or body-frame coordinates
        relative to the body reference point (rigid_body).
    diameter : float
        Member diameter [m].
    cd, ca : float
        Drag and added-mass coefficients (:math:`C_M = 1 + C_a`).
    motion : {"fixed", "rigid_body"}
        A fixed member, or one moving with a body (the inputs).
    include_added_mass : bool
        Take the body accelerations as inputs and include the added-mass reaction.
    n_gauss, n_segments : int
        Gauss-Legendre points per segment and number of segments of the wetted length.
    wet_to : {"surface", "swl"}
        Integrate up to the instantaneous surface :math:`\\eta` or to :math:`z = 0`.
    """

    argument_checks = {"end_a": Array(shape=(3,)), "end_b": Array(shape=(3,)), "diameter": POSITIVE,
                       "n_gauss": COUNT, "n_segments": COUNT}

    def __init__(self, name: str, wave: LinearWaves, end_a, end_b, diameter: float,
                 cd: float = 1.0, ca: float = 1.0, motion: str = "fixed",
                 include_added_mass: bool = False, n_gauss: int = 8, n_segments: int = 4,
                 wet_to: str = "surface") -> None:
        super().__init__(name)
        try:
            self.model = MorisonMemberModel(wave, diameter, cd, ca, n_gauss, n_segments, wet_to)
        except ParameterError as exc:
            raise ParameterError(f"MorisonMember '{name}': {exc}") from None
        self.end_a = np.asarray(end_a, dtype=float).reshape(3)
        self.end_b = np.asarray(end_b, dtype=float).reshape(3)
        if not np.linalg.norm(self.end_b - self.end_a) > 0:
            raise ParameterError(f"MorisonMember '{name}': end_a and end_b coincide")
        if motion not in ("fixed", "rigid_body"):
            raise ParameterError(f"MorisonMember '{name}': motion must be 'fixed' or "
                                 f"'rigid_body', got {motion!r}")
        self.motion, self.include_added_mass = motion, bool(include_added_mass)
        if motion == "rigid_body":
            self.position = self.declare_input("position", shape=(3,), unit="m")
            self.rotation = self.declare_input("rotation", shape=(3,), unit="rad")
            self.velocity = self.declare_input("velocity", shape=(3,), unit="m/s")
            self.angular_velocity = self.declare_input("angular_velocity", shape=(3,),
                                                       unit="rad/s")
            if self.include_added_mass:
                self.acceleration = self.declare_input("acceleration", shape=(3,),
                                                       unit="m/s^2")
                self.angular_acceleration = self.declare_input(
                    "angular_acceleration", shape=(3,), unit="rad/s^2")
        deps = () if motion == "fixed" else None  # None: every input
        self.force, self.moment, self.wetted_length = self.declare_outputs(
            [dict(name="force", shape=(3,), unit="N"),
             dict(name="moment", shape=(3,), unit="N*m"),
             dict(name="wetted_length", unit="m")], self._calc, depends_on=deps)

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`_calc` with :meth:`MorisonMemberModel.loads` (its surface crossing
        and :meth:`LinearWaves.kinematics` at the Gauss points); sea, member and nodes are
        constants.  NumPy's matrix products and ``exp`` round differently from a C loop and
        libm in the last bit: equal to the Python loop to about 1e-15, not bit for bit."""
        cg.helper("cosim_oc_kin", _C_KIN)
        md, wv = self.model, self.model.wave
        W = cg.const(_wave_table(wv))
        n = wv.n_components
        nodes, wts = cg.const(md._s), cg.const(md._w)
        c_i = c_float(wv.rho * md.area * (1.0 + md.ca))
        c_a = c_float(wv.rho * md.area * md.ca)
        c_d = c_float(0.5 * wv.rho * md.cd * md.diameter)
        mode = ("extrapolate", "wheeler", "vertical").index(wv.stretching)
        kin = (f"cosim_oc_kin({W.ptr}, {n}, {c_float(wv.depth)}, {mode}, "
               f"{int(np.any(wv._e2h > 0))}, pt[0], pt[1], pt[2], {cg.t}, vel, acc, &wet)")
        eta = f"cosim_oc_eta({W.ptr}, {n}, pp[0], pp[1], {cg.t})"
        added = self.motion == "rigid_body" and self.include_added_mass
        if self.motion == "fixed":
            head = "".join(f"p1[{k}] = {c_float(self.end_a[k])}; p2[{k}] = "
                           f"{c_float(self.end_b[k])}; v1[{k}] = 0.0; v2[{k}] = 0.0; "
                           f"ref[{k}] = p1[{k}];\n" for k in range(3))
        else:
            u = {nm: [cg.u(getattr(self, nm), k) for k in range(3)] for nm in
                 ("position", "rotation", "velocity", "angular_velocity")
                 + (("acceleration", "angular_acceleration") if added else ())}
            head = rotation_rpy_c(*u["rotation"], "R") + "\n"
            for nm, end in (("ra", self.end_a), ("rb", self.end_b)):
                e = [c_float(v) for v in end]
                head += "".join(f"{nm}[{k}] = R[{3 * k}] * {e[0]} + R[{3 * k + 1}] * {e[1]} "
                                f"+ R[{3 * k + 2}] * {e[2]};\n" for k in range(3))
            om, pos, vv = u["angular_velocity"], u["position"], u["velocity"]
            for k in range(3):
                head += f"p1[{k}] = {pos[k]} + ra[{k}]; p2[{k}] = {pos[k]} + rb[{k}]; " \
                        f"ref[{k}] = {pos[k]};\n"
            for nm, r in (("v1", "ra"), ("v2", "rb")):
                head += "".join(f"{nm}[{k}] = {vv[k]} + ({_cross(om, r, k)});\n"
                                for k in range(3))
            if added:
                a, al = u["acceleration"], u["angular_acceleration"]
                for nm, r in (("a1", "ra"), ("a2", "rb")):
                    head += "".join(f"wr[{k}] = {_cross(om, r, k)};\n" for k in range(3))
                    head += "".join(f"{nm}[{k}] = {a[k]} + ({_cross(al, r, k)}) + "
                                    f"({_cross(om, 'wr', k)});\n" for k in range(3))
        surf = ("{\n    double pp[3];\n"
                + "".join(f"    pp[{k}] = p1[{k}] + S * (p2[{k}] - p1[{k}]);\n"
                          for k in range(3))
                + (f"    G = pp[2] - {eta};\n}}\n" if md.wet_to == "surface" else
                   "    G = p1[2] + S * (p2[2] - p1[2]);\n}\n"))
        code = (
            "double R[9], ra[3], rb[3], wr[3], a1[3], a2[3], p1[3], p2[3], v1[3], v2[3], "
            "ref[3], ax[3], e[3], len, s0, s1, g0, g1, S, G, F[3] = {0.0, 0.0, 0.0}, "
            "Mo[3] = {0.0, 0.0, 0.0};\nint j, bad = 0;\n"
            "(void)R; (void)ra; (void)rb; (void)wr; (void)a1; (void)a2;\n" + head
            + "for (j = 0; j < 3; j++) ax[j] = p2[j] - p1[j];\n"
            "len = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);\n"
            "for (j = 0; j < 3; j++) e[j] = ax[j] / len;\n"
            "S = 0.0;\n" + surf + "g0 = G;\nS = 1.0;\n" + surf + "g1 = G;\n"
            "if (g0 <= 0 && g1 <= 0) { s0 = 0.0; s1 = 1.0; }\n"
            "else if (g0 > 0 && g1 > 0) { s0 = 0.0; s1 = 0.0; }\n"
            "else {\n    double lo = 0.0, hi = 1.0, glo = g0, ghi = g1;\n    int it;\n"
            "    for (it = 0; it < 60; it++) {\n"
            "        S = (lo * ghi - hi * glo) / (ghi - glo);\n"
            "        " + surf.replace("\n", "\n        ") + "\n"
            "        if (fabs(G) < 1e-12 || hi - lo < 1e-13) break;\n"
            "        if ((G > 0) == (glo > 0)) { lo = S; glo = G; ghi *= 0.5; }\n"
            "        else { hi = S; ghi = G; glo *= 0.5; }\n    }\n"
            "    if (g0 <= 0) { s0 = 0.0; s1 = S; } else { s0 = S; s1 = 1.0; }\n}\n"
            f"if (s1 > s0) for (j = 0; j < {md._s.size}; j++) {{\n"
            f"    double s = s0 + (s1 - s0) * {nodes.ptr}[j], "
            f"wj = (s1 - s0) * len * {wts.ptr}[j];\n"
            "    double pt[3], vel[3], acc[3], ur[3], du[3], f[3], rr[3], d, da, nr;\n"
            "    int k, wet;\n"
            "    for (k = 0; k < 3; k++) pt[k] = p1[k] + s * ax[k];\n"
            f"    if ({kin}) bad = 1;\n"
            "    for (k = 0; k < 3; k++) ur[k] = vel[k] - (v1[k] + s * (v2[k] - v1[k]));\n"
            "    d = ur[0] * e[0] + ur[1] * e[1] + ur[2] * e[2];\n"
            "    da = acc[0] * e[0] + acc[1] * e[1] + acc[2] * e[2];\n"
            "    for (k = 0; k < 3; k++) { ur[k] -= d * e[k]; du[k] = acc[k] - da * e[k]; }\n"
            f"    for (k = 0; k < 3; k++) f[k] = {c_i} * du[k];\n"
            + ("    {\n        double xdd[3], dd;\n"
               "        for (k = 0; k < 3; k++) xdd[k] = a1[k] + s * (a2[k] - a1[k]);\n"
               "        dd = xdd[0] * e[0] + xdd[1] * e[1] + xdd[2] * e[2];\n"
               f"        for (k = 0; k < 3; k++) f[k] -= {c_a} * (xdd[k] - dd * e[k]);\n"
               "    }\n" if added else "")
            + "    nr = sqrt(ur[0] * ur[0] + ur[1] * ur[1] + ur[2] * ur[2]);\n"
            f"    for (k = 0; k < 3; k++) f[k] = (f[k] + {c_d} * ur[k] * nr) * "
            "(wet ? 1.0 : 0.0);\n"
            "    for (k = 0; k < 3; k++) { rr[k] = pt[k] - ref[k]; F[k] += wj * f[k]; }\n"
            "    Mo[0] += wj * (rr[1] * f[2] - rr[2] * f[1]);\n"
            "    Mo[1] += wj * (rr[2] * f[0] - rr[0] * f[2]);\n"
            "    Mo[2] += wj * (rr[0] * f[1] - rr[1] * f[0]);\n}\n"
            f"if (bad) {cg.fail(f'MorisonMember {self.path!r}: a point lies below the seabed')}\n"
            + "".join(f"{cg.y(self.force, k)} = F[{k}];\n{cg.y(self.moment, k)} = Mo[{k}];\n"
                      for k in range(3))
            + f"{cg.y(self.wetted_length)} = (s1 > s0) ? (s1 - s0) * len : 0.0;")
        return CModel(outputs={"force": "{\n" + code + "\n}", "moment": "",
                               "wetted_length": ""}, time_dependent=True)

    def _calc(self, ctx):
        t = ctx.time
        if self.motion == "fixed":
            return self.model.loads(self.end_a, self.end_b, t)
        pos = ctx.input(self.position)
        R = rotation_rpy(ctx.input(self.rotation))
        ra, rb = R @ self.end_a, R @ self.end_b
        v, om = ctx.input(self.velocity), ctx.input(self.angular_velocity)
        kw = {}
        if self.include_added_mass:
            a, al = ctx.input(self.acceleration), ctx.input(self.angular_acceleration)
            kw = dict(a1=a + np.cross(al, ra) + np.cross(om, np.cross(om, ra)),
                      a2=a + np.cross(al, rb) + np.cross(om, np.cross(om, rb)))
        return self.model.loads(pos + ra, pos + rb, t, v + np.cross(om, ra),
                                v + np.cross(om, rb), reference=pos,
                                include_added_mass=self.include_added_mass, **kw)
