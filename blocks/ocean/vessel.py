r"""A rigid vessel in six degrees of freedom with constant added mass, damping and restoring.

Frames and coordinates (z up, as in the rest of :mod:`blocks.ocean`): the global frame has
:math:`x, y` horizontal and :math:`z` up from the still water level; the body frame has its
origin at the vessel's centre of gravity (CG), :math:`x` forward, :math:`y` to port,
:math:`z` up.  The pose is :math:`\eta = (\mathbf r, \mathbf q)`: the CG position
:math:`\mathbf r` (global) and a unit quaternion :math:`\mathbf q = (q_w, q_x, q_y, q_z)`
(scalar first) giving the rotation :math:`R` from body to global axes.  The velocities are
body-frame, :math:`\nu = (\mathbf v, \boldsymbol\omega)` = (surge, sway, heave; roll,
pitch, yaw rates), as in Fossen's *Handbook of Marine Craft Hydrodynamics and Motion
Control* (2011), whose notation the equations follow:

.. math::

    \dot{\mathbf r} &= R\,\mathbf v, \qquad
    \dot{\mathbf q} = \tfrac12\,\mathbf q\otimes(0, \boldsymbol\omega)
                      + \gamma\,(1 - \mathbf q^\mathsf T\mathbf q)\,\mathbf q \\
    (M_{RB} + M_A)\,\dot\nu &+ C_{RB}(\nu)\,\nu + C_A(\nu)\,\nu + D\,\nu + g(\eta) = \tau

with :math:`M_{RB} = \mathrm{diag}(m I_3, I_G)` (origin at the CG), :math:`M_A` a constant
symmetric 6x6 added mass about the CG in body axes, :math:`D` a constant 6x6 linear damping,
and the Coriolis-centripetal terms in Kirchhoff's form: for a symmetric mass matrix
:math:`M_c` with :math:`(\mathbf p, \mathbf h) = M_c\,\nu`,

.. math::

    C(\nu)\,\nu = \begin{bmatrix}\boldsymbol\omega\times\mathbf p \\
                  \boldsymbol\omega\times\mathbf h + \mathbf v\times\mathbf p\end{bmatrix}

(:math:`M_c = M_{RB}` gives :math:`C_{RB}`; :math:`M_c = M_A` gives :math:`C_A`, including
the Munk moment; ``coriolis_added_mass=False`` drops :math:`C_A`).  With
:math:`C_{RB} + C_A` and no forces the global impulse :math:`R\mathbf p` and angular impulse
:math:`R\mathbf h + \mathbf r\times R\mathbf p` (of :math:`M_c = M_{RB} + M_A`) are
conserved (Kirchhoff's equations); without :math:`C_A` only the energy is.

The quaternion is the state (no singularity); its norm is held by the stabilising term with
gain :math:`\gamma` [1/s] (``norm_gain``, Fossen eq. 2.90) and the rotation matrix is built
from the normalised quaternion.  The roll-pitch-yaw angles (:math:`R = R_z(\psi)R_y(\theta)
R_x(\phi)`, the convention of :func:`blocks.ocean.morison.rotation_rpy`) are outputs only;
they are singular at pitch :math:`\pm 90°`.

Hydrostatics (linear coefficients, geometrically consistent potential).  The vessel's weight
balances its buoyancy with the CG at height :math:`z_{eq}` (``z_eq``) and zero heel and
trim.  With :math:`\mathbf u = R^\mathsf T\mathbf e_z` the global vertical in body axes
(:math:`\mathbf u \approx (-\theta, \phi, 1)`), the restoring potential is

.. math::

    V = \tfrac12 C_{33}(z - z_{eq})^2 + \tfrac12 C_{44}u_y^2 + \tfrac12 C_{55}u_x^2, \qquad
    C_{33} = \rho g A_{wp},\; C_{44} = \rho g\nabla\,\overline{GM}_T,\;
    C_{55} = \rho g\nabla\,\overline{GM}_L

so :math:`g(\eta)` is a global vertical force :math:`-C_{33}(z - z_{eq})\mathbf e_z` at the
CG and the body moment :math:`\mathbf u\times\partial V/\partial\mathbf u` (roll:
:math:`-C_{44}\sin\phi\cos\phi\cos^2\theta`, Fossen's small-angle form for
:math:`\theta = 0`).  It linearises to :math:`\mathrm{diag}(C_{33}, C_{44}, C_{55})`, is
conservative at any angle and does not depend on the heading (a yaw leaves it unchanged).
The centre of flotation is taken above the CG (no heave-pitch coupling :math:`C_{35}`).

Natural periods and damping ratios of the uncoupled heave, roll and pitch modes
(:meth:`VesselData.natural_periods`, :meth:`VesselData.damping_ratios`):

.. math::

    T_i = 2\pi\sqrt{\frac{M_{ii} + A_{ii}}{C_{ii}}}, \qquad
    \zeta_i = \frac{D_{ii}}{2\sqrt{(M_{ii} + A_{ii})\,C_{ii}}}.

Applied loads :math:`\tau` (body axes, about the CG): ``force`` and ``moment`` (global axes,
the force at the CG), ``wave_force`` and ``wave_moment`` (body axes, about the CG: the
output of :class:`blocks.ocean.wave_loads.WaveLoads` with its RAOs referred to the CG), and
one ``<name>_force`` (global axes) per entry of ``load_points`` acting at that hull point
:math:`\mathbf s` (body coordinates): body force :math:`R^\mathsf T\mathbf F`, moment
:math:`\mathbf s\times R^\mathsf T\mathbf F`.  Such a force is conservative when constant
(a weight: :meth:`Vessel6DOF.energy` does not count it; add :math:`-\mathbf F\cdot\mathbf P`).

Hull points (``points``, body coordinates :math:`\mathbf s`) are output with
:math:`\mathbf P = \mathbf r + R\mathbf s`, :math:`\dot{\mathbf P} = R(\mathbf v +
\boldsymbol\omega\times\mathbf s)` and :math:`\ddot{\mathbf P} = R(\dot{\mathbf v} +
\boldsymbol\omega\times\mathbf v + \dot{\boldsymbol\omega}\times\mathbf s +
\boldsymbol\omega\times(\boldsymbol\omega\times\mathbf s))` (the acceleration reads the
inputs: feedthrough).

Limitations: constant (frequency-independent) added mass and damping, i.e. no memory
effects (Cummins' convolution) and no viscous roll damping beyond the linear :math:`D`;
linear hydrostatics about the upright floating position (no large-angle stability curve,
no deck immersion); Kirchhoff's :math:`C_A` is the unbounded-fluid form (Fossen uses it for
ships, but it is an approximation with a free surface); the wave loads come in as inputs
(first order at the mean position, no relative-motion effects).  The compiled run's C form
(:mod:`blocks.ocean.vessel_c`) equals the Python loop to 1e-12 of the range, not bit for
bit (NumPy's OpenBLAS products round in an order of their own).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim.block import Block, check_name
from cosim.codegen.model import CContext, CModel
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, Array

from .vessel_c import vessel6dof_c
from .waves import RHO_SEAWATER, G

__all__ = ["Vessel6DOF", "VesselData", "coriolis", "quat_from_rpy", "quat_matrix",
           "rpy_from_matrix"]

_DOF = ("surge", "sway", "heave", "roll", "pitch", "yaw")


# --------------------------------------------------------------------- rotations
def quat_matrix(q) -> np.ndarray:
    """Rotation matrix (body to global) of the quaternion ``q = (w, x, y, z)`` (normalised)."""
    w, x, y, z = np.asarray(q, dtype=float) / math.sqrt(float(np.dot(q, q)))
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def quat_from_rpy(rpy) -> np.ndarray:
    """Quaternion of :math:`R = R_z(\\psi)R_y(\\theta)R_x(\\phi)` from ``(roll, pitch, yaw)``."""
    r, p, y = (0.5 * float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return np.array([cy * cp * cr + sy * sp * sr, cy * cp * sr - sy * sp * cr,
                     cy * sp * cr + sy * cp * sr, sy * cp * cr - cy * sp * sr])


def rpy_from_matrix(R: np.ndarray) -> np.ndarray:
    """``(roll, pitch, yaw)`` of :math:`R = R_z R_y R_x` (singular at pitch = +-90 deg)."""
    return np.array([math.atan2(R[2, 1], R[2, 2]),
                     -math.asin(min(1.0, max(-1.0, R[2, 0]))),
                     math.atan2(R[1, 0], R[0, 0])])


def _quat_rate(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """:math:`\\frac12 q\\otimes(0, \\omega)` with body-frame :math:`\\omega`."""
    qw, qx, qy, qz = q
    p, r_, s = w
    return 0.5 * np.array([-qx * p - qy * r_ - qz * s,
                           qw * p + qy * s - qz * r_,
                           qw * r_ + qz * p - qx * s,
                           qw * s + qx * r_ - qy * p])


def coriolis(Mc: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """Kirchhoff's :math:`C(\\nu)\\nu` of a symmetric 6x6 mass matrix ``Mc`` (module docstring)."""
    ph = Mc @ nu
    v, w = nu[:3], nu[3:]
    p, h = ph[:3], ph[3:]
    return np.concatenate([np.cross(w, p), np.cross(w, h) + np.cross(v, p)])


# ------------------------------------------------------------------------ data
def _mat(value: Any, shape: tuple, who: str, what: str) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.shape == (shape[0],):
        a = np.diag(a)
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise ParameterError(f"{who}: {what} must be a finite {shape[0]}x{shape[1]} matrix "
                             f"(or its {shape[0]} diagonal entries), got shape {a.shape}")
    return a


@dataclass
class VesselData:
    """Mass, added mass, damping and hydrostatic data of a vessel (body axes, about the CG).

    Parameters
    ----------
    mass : float
        Mass [kg] (for a free-floating vessel :math:`\\rho\\nabla`).
    inertia : array_like (3,3) or (3,)
        Inertia tensor about the CG in body axes [kg m^2] (or its principal moments).
    added_mass : array_like (6,6) or (6,)
        Constant added mass :math:`M_A` [kg, kg m, kg m^2], symmetric.
    damping : array_like (6,6) or (6,)
        Linear damping :math:`D` [N s/m, N s, N m s/rad].
    volume, waterplane_area : float
        Displaced volume :math:`\\nabla` [m^3] and waterplane area :math:`A_{wp}` [m^2].
    gm_t, gm_l : float
        Transverse and longitudinal metacentric heights [m].
    rho, g : float
        Water density [kg/m^3], gravity [m/s^2].
    """

    mass: float
    inertia: Any
    added_mass: Any = field(default_factory=lambda: np.zeros((6, 6)))
    damping: Any = field(default_factory=lambda: np.zeros((6, 6)))
    volume: float = 0.0
    waterplane_area: float = 0.0
    gm_t: float = 0.0
    gm_l: float = 0.0
    rho: float = RHO_SEAWATER
    g: float = G
    description: str = ""

    def __post_init__(self) -> None:
        who = "VesselData"
        if not (np.isfinite(self.mass) and self.mass > 0):
            raise ParameterError(f"{who}: mass must be > 0 kg, got {self.mass!r}")
        self.inertia = _mat(self.inertia, (3, 3), who, "inertia")
        if not np.allclose(self.inertia, self.inertia.T) or \
                np.linalg.eigvalsh(self.inertia)[0] <= 0:
            raise ParameterError(f"{who}: inertia must be symmetric positive definite")
        self.added_mass = _mat(self.added_mass, (6, 6), who, "added_mass")
        if not np.allclose(self.added_mass, self.added_mass.T, rtol=1e-10,
                           atol=1e-12 * max(1.0, np.abs(self.added_mass).max())):
            raise ParameterError(f"{who}: added_mass must be symmetric (potential flow); "
                                 "symmetrise it as (A + A.T)/2 if it comes from a table")
        self.damping = _mat(self.damping, (6, 6), who, "damping")
        for k in ("volume", "waterplane_area", "gm_t", "gm_l"):
            v = getattr(self, k)
            if not np.isfinite(v) or (k in ("volume", "waterplane_area") and v < 0):
                raise ParameterError(f"{who}: {k} must be finite (and >= 0), got {v!r}")
        if not np.all(np.linalg.eigvalsh(self.mass_matrix() + self.added_mass) > 0):
            raise ParameterError(f"{who}: M_RB + M_A must be positive definite")

    # ----------------------------------------------------------- derived
    def rigid_body_mass(self) -> np.ndarray:
        """:math:`M_{RB} = \\mathrm{diag}(m I_3, I_G)`."""
        M = np.zeros((6, 6))
        M[:3, :3] = self.mass * np.eye(3)
        M[3:, 3:] = self.inertia
        return M

    def mass_matrix(self) -> np.ndarray:
        """Alias of :meth:`rigid_body_mass`."""
        return self.rigid_body_mass()

    def total_mass(self) -> np.ndarray:
        """:math:`M_{RB} + M_A`."""
        return self.rigid_body_mass() + self.added_mass

    def restoring(self) -> tuple[float, float, float]:
        """:math:`(C_{33}, C_{44}, C_{55})` [N/m, N m/rad, N m/rad]."""
        rg = self.rho * self.g
        return (rg * self.waterplane_area, rg * self.volume * self.gm_t,
                rg * self.volume * self.gm_l)

    def restoring_matrix(self) -> np.ndarray:
        """The linear 6x6 hydrostatic stiffness
        :math:`\\mathrm{diag}(0,0,C_{33},C_{44},C_{55},0)`."""
        c33, c44, c55 = self.restoring()
        return np.diag([0.0, 0.0, c33, c44, c55, 0.0])

    def natural_periods(self) -> dict:
        """Uncoupled heave, roll, pitch natural periods :math:`2\\pi\\sqrt{(M+A)_{ii}/C_{ii}}`."""
        Mt, C = self.total_mass(), self.restoring_matrix()
        return {n: 2 * math.pi * math.sqrt(Mt[i, i] / C[i, i]) if C[i, i] > 0 else math.inf
                for i, n in ((2, "heave"), (3, "roll"), (4, "pitch"))}

    def damping_ratios(self) -> dict:
        """Uncoupled heave, roll, pitch damping ratios
        :math:`D_{ii}/(2\\sqrt{(M+A)_{ii}C_{ii}})`."""
        Mt, C = self.total_mass(), self.restoring_matrix()
        return {n: self.damping[i, i] / (2 * math.sqrt(Mt[i, i] * C[i, i]))
                if C[i, i] > 0 else math.nan for i, n in ((2, "heave"), (3, "roll"),
                                                          (4, "pitch"))}

    def with_damping_ratios(self, heave: float, roll: float, pitch: float,
                            horizontal: Any = (0.0, 0.0, 0.0)) -> VesselData:
        """A copy with diagonal damping giving these heave/roll/pitch ratios and ``horizontal``
        = (surge, sway, yaw) linear damping coefficients [N s/m, N s/m, N m s/rad]."""
        Mt, C = self.total_mass(), self.restoring_matrix()
        d = np.zeros(6)
        d[[0, 1, 5]] = horizontal
        for i, z in ((2, heave), (3, roll), (4, pitch)):
            d[i] = 2 * z * math.sqrt(Mt[i, i] * C[i, i])
        import dataclasses
        return dataclasses.replace(self, damping=np.diag(d))

    @classmethod
    def box_barge(cls, length: float = 100.0, beam: float = 30.0, draught: float = 5.0,
                  kg: float = 8.0, rho: float = RHO_SEAWATER, g: float = G,
                  added_mass_fractions: Any = (0.05, 0.3, 1.0, 0.3, 1.0, 0.3),
                  radii_of_gyration: Any = None) -> VesselData:
        """A representative crane barge: a rectangular box (no damping; see
        :meth:`with_damping_ratios`).

        Box hydrostatics (exact for a box): :math:`\\nabla = LBT`, :math:`A_{wp} = LB`,
        :math:`KB = T/2`, :math:`BM_T = B^2/(12T)`, :math:`BM_L = L^2/(12T)`,
        :math:`GM = KB + BM - KG`; mass :math:`\\rho\\nabla` (free floating).  ``kg`` (8 m
        above the keel, i.e. 3 m above the waterline for the default draught) stands for a
        barge with a deck crane; it is a representative value, not a particular vessel.
        Radii of gyration default to :math:`0.35B, 0.25L, 0.26L` (the usual rules of thumb
        for roll, pitch, yaw of barges and ships, e.g. DNV-RP-C205 guidance values).
        Added mass = ``added_mass_fractions`` times the rigid-body diagonal (surge, sway,
        heave, roll, pitch, yaw): representative low-frequency values for a box barge of
        B/T = 6 (heave and pitch added mass of the order of the mass), not the output of a
        radiation code.
        """
        L, B, T = float(length), float(beam), float(draught)
        vol = L * B * T
        m = rho * vol
        kb, bmt, bml = T / 2, B * B / (12 * T), L * L / (12 * T)
        k = (0.35 * B, 0.25 * L, 0.26 * L) if radii_of_gyration is None else radii_of_gyration
        inertia = m * np.asarray(k, dtype=float) ** 2
        Mrb = np.concatenate([[m, m, m], inertia])
        return cls(mass=m, inertia=inertia, added_mass=np.asarray(added_mass_fractions) * Mrb,
                   volume=vol, waterplane_area=L * B, gm_t=kb + bmt - kg, gm_l=kb + bml - kg,
                   rho=rho, g=g,
                   description=f"box barge {L:g} m x {B:g} m x {T:g} m draught, KG {kg:g} m")


# ----------------------------------------------------------------------- block
class Vessel6DOF(Block):
    r"""A rigid vessel in 6 DOF (equations: module docstring).

    Parameters
    ----------
    name : str
    data : VesselData
        Mass, inertia, hydrostatics, added mass and damping of the hull.
    position, rpy : array_like (3,)
        Initial CG position [m] (global) and roll, pitch, yaw [rad].
    nu : array_like (6,)
        Initial body-frame velocities [m/s, rad/s].
    z_eq : float
        CG height [m] at which weight and buoyancy balance (still-water equilibrium without
        external loads).
    points : dict name -> (3,)
        Hull points (body coordinates [m]) whose position, velocity and acceleration are
        outputs (a crane tip).
    load_points : dict name -> (3,)
        Hull points (body coordinates [m]) with a force input ``<name>_force`` (global axes).
    external, wave : bool
        Declare the ``force``/``moment`` inputs (global axes) and the ``wave_force`` /
        ``wave_moment`` inputs (body axes): an input that is declared must be connected.
    coriolis_added_mass : bool
        Include :math:`C_A(\nu)\nu` (Kirchhoff / Munk terms of the added mass).
    norm_gain : float
        Quaternion norm stabilisation :math:`\gamma` [1/s].
    initial_state : array_like (13,), optional
        The whole initial state (CG position, unit quaternion, body velocities), instead
        of ``position``/``rpy``/``nu`` (a mode shape; :meth:`initial_state` builds one).

    Ports
    -----
    in   force             (3,) [N]    global axes, at the CG            (external=True)
    in   moment            (3,) [N*m]  global axes                       (external=True)
    in   wave_force        (3,) [N]    body axes, at the CG              (wave=True)
    in   wave_moment       (3,) [N*m]  body axes, about the CG           (wave=True)
    in   <name>_force      (3,) [N]    global axes, at load point <name>
    out  position          (3,) [m]    CG, global                        state only
    out  quaternion        (4,) [no unit]  body to global, (w, x, y, z)  state only
    out  rotation          (3,) [rad]  roll, pitch, yaw (Rz Ry Rx)       state only
    out  heading           scalar [rad]  yaw                               state only
    out  nu                (6,) [m/s, m/s, m/s, rad/s, rad/s, rad/s]  body velocities;
                                                    state only
    out  velocity          (3,) [m/s]  CG velocity, global               state only
    out  angular_velocity  (3,) [rad/s]  global axes                       state only
    out  nu_dot            (6,) [m/s^2, m/s^2, m/s^2, rad/s^2, rad/s^2, rad/s^2]  body
                                                    accelerations; all inputs
    out  <name>_pos        (3,) [m]    hull point, global                state only
    out  <name>_vel        (3,) [m/s]  hull point, global                state only
    out  <name>_acc        (3,) [m/s^2]  hull point, global                all inputs

    ``position``, ``rotation``, ``velocity`` and ``angular_velocity`` are the inputs of
    :class:`~blocks.ocean.morison.MorisonMember` (``motion="rigid_body"``); ``position`` and
    ``heading`` those of :class:`~blocks.ocean.mooring.CatenaryMooring`.
    """

    argument_checks = {"position": Array(shape=(3,)), "rpy": Array(shape=(3,)),
                       "nu": Array(shape=(6,)), "norm_gain": NON_NEGATIVE}

    def __init__(self, name: str, data: VesselData, *, position: Any = (0.0, 0.0, 0.0),
                 rpy: Any = (0.0, 0.0, 0.0), nu: Any = None, z_eq: float = 0.0,
                 points: dict | None = None, load_points: dict | None = None,
                 external: bool = True, wave: bool = True, coriolis_added_mass: bool = True,
                 norm_gain: float = 1.0, initial_state: Any = None) -> None:
        super().__init__(name)
        if not isinstance(data, VesselData):
            raise ParameterError(f"Vessel6DOF '{name}': data must be a VesselData, got "
                                 f"{type(data).__name__}")
        self.data = data
        self.z_eq = float(z_eq)
        self.norm_gain = float(norm_gain)
        if not self.norm_gain >= 0:
            raise ParameterError(f"Vessel6DOF '{name}': norm_gain must be >= 0 1/s")
        self.coriolis_added_mass = bool(coriolis_added_mass)
        self.Mt = data.total_mass()
        self.Minv = np.linalg.inv(self.Mt)
        self.Mc = self.Mt if self.coriolis_added_mass else data.rigid_body_mass()
        self.D = data.damping
        self.c33, self.c44, self.c55 = data.restoring()
        nu0 = np.zeros(6) if nu is None else np.asarray(nu, dtype=float).reshape(6)
        x0 = np.concatenate([np.asarray(position, dtype=float).reshape(3),
                             quat_from_rpy(np.asarray(rpy, dtype=float).reshape(3)), nu0])
        if initial_state is not None:   # the whole state (r, e, nu), e.g. a mode shape
            x0 = np.asarray(initial_state, dtype=float).reshape(-1)
            if x0.size != 13 or not np.all(np.isfinite(x0)) or abs(
                    np.linalg.norm(x0[3:7]) - 1.0) > 1e-9:
                raise ParameterError(f"Vessel6DOF '{name}': initial_state needs 13 finite "
                                     "values (position, unit quaternion, body velocities)")
        self.x = self.declare_continuous_state("x", x0)
        self.points = {k: self._vec(v, k, "point") for k, v in (points or {}).items()}
        self.load_points = {k: self._vec(v, k, "load point")
                            for k, v in (load_points or {}).items()}
        self.f_in = self.m_in = self.wf_in = self.wm_in = None
        if external:
            self.f_in = self.declare_input("force", shape=(3,), unit="N")
            self.m_in = self.declare_input("moment", shape=(3,), unit="N*m")
        if wave:
            self.wf_in = self.declare_input("wave_force", shape=(3,), unit="N")
            self.wm_in = self.declare_input("wave_moment", shape=(3,), unit="N*m")
        self.lp_in = [(self.declare_input(f"{k}_force", shape=(3,), unit="N"), s)
                      for k, s in self.load_points.items()]
        st, ctx_x = self.declare_output, self._x
        st("position", lambda c: ctx_x(c)[:3].copy(), shape=(3,), unit="m", depends_on=())
        st("quaternion", lambda c: self._q(c), shape=(4,), depends_on=())
        st("rotation", lambda c: rpy_from_matrix(self._R(c)), shape=(3,), unit="rad",
           depends_on=())
        st("heading", lambda c: float(rpy_from_matrix(self._R(c))[2]), unit="rad",
           depends_on=())
        st("nu", lambda c: ctx_x(c)[7:].copy(), shape=(6,), depends_on=())
        st("velocity", lambda c: self._R(c) @ ctx_x(c)[7:10], shape=(3,), unit="m/s",
           depends_on=())
        st("angular_velocity", lambda c: self._R(c) @ ctx_x(c)[10:], shape=(3,), unit="rad/s",
           depends_on=())
        st("nu_dot", lambda c: self.derivatives(c)[7:], shape=(6,))
        for k, s in self.points.items():
            self.declare_outputs([{"name": f"{k}_pos", "shape": (3,), "unit": "m"},
                                  {"name": f"{k}_vel", "shape": (3,), "unit": "m/s"}],
                                 self._point_calc(s), depends_on=())
            st(f"{k}_acc", self._acc_calc(s), shape=(3,), unit="m/s^2")

    def _vec(self, v: Any, k: str, what: str) -> np.ndarray:
        check_name(f"{k}_pos", "port")
        a = np.asarray(v, dtype=float)
        if a.shape != (3,) or not np.all(np.isfinite(a)):
            raise ParameterError(f"Vessel6DOF '{self.name}': {what} {k!r} must be 3 finite "
                                 f"body coordinates [m], got {v!r}")
        return a

    def c_model(self, cg: CContext) -> CModel:
        """C of :meth:`derivatives` and the outputs, expression by expression
        (:mod:`blocks.ocean.vessel_c`: NumPy's BLAS products round differently in the last
        bits, so equal to the Python loop to 1e-12 of the range, not bit for bit)."""
        return vessel6dof_c(self, cg)

    # ------------------------------------------------------------ helpers
    def _x(self, ctx: Any) -> np.ndarray:
        return ctx.state(self.x)

    def _q(self, ctx: Any) -> np.ndarray:
        q = ctx.state(self.x)[3:7]
        return q / math.sqrt(float(q @ q))

    def _R(self, ctx: Any) -> np.ndarray:
        return quat_matrix(ctx.state(self.x)[3:7])

    def _point_calc(self, s: np.ndarray):
        def calc(ctx):
            x = ctx.state(self.x)
            R = quat_matrix(x[3:7])
            v, w = x[7:10], x[10:]
            return x[:3] + R @ s, R @ (v + np.cross(w, s))
        return calc

    def _acc_calc(self, s: np.ndarray):
        def calc(ctx):
            x = ctx.state(self.x)
            R = quat_matrix(x[3:7])
            v, w = x[7:10], x[10:]
            nd = self.derivatives(ctx)[7:]
            return R @ (nd[:3] + np.cross(w, v) + np.cross(nd[3:], s)
                        + np.cross(w, np.cross(w, s)))
        return calc

    def hydrostatic_load(self, z: float, R: np.ndarray) -> np.ndarray:
        """:math:`-g(\\eta)` in body axes: the restoring force and moment (module docstring)."""
        u = R[2, :]  # global vertical in body axes
        dv = np.array([self.c55 * u[0], self.c44 * u[1], 0.0])
        return np.concatenate([-self.c33 * (z - self.z_eq) * u, np.cross(u, dv)])

    def applied_load(self, ctx: Any, R: np.ndarray) -> np.ndarray:
        """The input loads :math:`\\tau` in body axes about the CG."""
        tau = np.zeros(6)
        if self.f_in is not None:
            tau[:3] += R.T @ ctx.input(self.f_in)
            tau[3:] += R.T @ ctx.input(self.m_in)
        if self.wf_in is not None:
            tau[:3] += ctx.input(self.wf_in)
            tau[3:] += ctx.input(self.wm_in)
        for port, s in self.lp_in:
            fb = R.T @ ctx.input(port)
            tau[:3] += fb
            tau[3:] += np.cross(s, fb)
        return tau

    def derivatives(self, ctx: Any) -> np.ndarray:
        x = ctx.state(self.x)
        q, nu = x[3:7], x[7:]
        R = quat_matrix(q)
        tau = self.applied_load(ctx, R) + self.hydrostatic_load(x[2], R)
        tau -= coriolis(self.Mc, nu) + self.D @ nu
        qd = _quat_rate(q, nu[3:]) + self.norm_gain * (1.0 - float(q @ q)) * q
        return np.concatenate([R @ nu[:3], qd, self.Minv @ tau])

    # --------------------------------------------------------- invariants
    def energy(self, x: np.ndarray) -> float:
        """Kinetic energy :math:`\\frac12\\nu^\\mathsf T(M_{RB}+M_A)\\nu` plus the restoring
        potential :math:`V` of the state vector ``x`` (13,)."""
        x = np.asarray(x, dtype=float)
        nu = x[7:]
        u = quat_matrix(x[3:7])[2, :]
        V = 0.5 * (self.c33 * (x[2] - self.z_eq) ** 2 + self.c44 * u[1] ** 2
                   + self.c55 * u[0] ** 2)
        return float(0.5 * nu @ self.Mt @ nu + V)

    def impulse(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Global linear impulse :math:`R\\mathbf p` and angular impulse about the global origin
        :math:`R\\mathbf h + \\mathbf r\\times R\\mathbf p` of :math:`(M_{RB}+M_A)\\nu`."""
        x = np.asarray(x, dtype=float)
        R = quat_matrix(x[3:7])
        ph = self.Mt @ x[7:]
        P = R @ ph[:3]
        return P, R @ ph[3:] + np.cross(x[:3], P)

    def initial_state(self, position: Any = (0.0, 0.0, 0.0), rpy: Any = (0.0, 0.0, 0.0),
                      nu: Any = None) -> np.ndarray:
        """A state vector (13,) from a CG position, roll-pitch-yaw angles and body velocities."""
        nu = np.zeros(6) if nu is None else np.asarray(nu, dtype=float).reshape(6)
        return np.concatenate([np.asarray(position, dtype=float).reshape(3),
                               quat_from_rpy(rpy), nu])
