r"""The crane mechanics rebuilt with :mod:`blocks.multibody`: an independent formulation.

:class:`~blocks.cranes.GantryCrane` removes the joints by its choice of coordinates and
integrates the spreader as a Newton-Euler body in plain floats.  Here the same machine is
a :class:`~blocks.multibody.Mechanism` in absolute coordinates (every body 7 coordinates,
Euler parameters, the library's mass matrix, gyroscopic terms, point Jacobians) with
joints solved by Lagrange multipliers (Baumgarte-stabilised), as in the seed's own
formulation:

* gantry: spatial body, ``prismatic`` joint to the ground along Z;
* trolley: spatial body, ``planar`` joint to the gantry (moves in the gantry's X-Y plane)
  plus :class:`NoTwist` (one ``Dot1`` row: no rotation about Z); its vertical
  flexibility is a :class:`~blocks.multibody.forces.Bushing` with stiffness only in Y;
* hoist drum: a body sliding along X (``prismatic``), its displacement is the rope wound
  in, :math:`l_0 = l_{0,0} - s`;
* spreader (+ container): free spatial body;
* ropes: :class:`MultibodyRope`, the brief's unilateral spring-damper between a trolley
  sheave and a spreader point, whose stiffness :math:`EA/l_0` reads the drum body, with
  the generalized forces assembled from the library's point Jacobians
  (:math:`Q = J^T f`);
* drive forces: constant forces at the bodies; wind drag: a marker force.

Used by the system tests (same trajectory as the block to round-off) and by
``bench/crane.py`` (what the general formulation costs).  Not modelled here: the guide
arms (give the crane no target container), drives (constant forces instead).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from blocks.multibody import Mechanism, MultibodyBlock
from blocks.multibody.constraints import Dot1
from blocks.multibody.joints import Joint

from .dynamics import E0, L0, RX, VG, VH, VT, VX, WT, WX, XT, YT, ZG, rotation
from .parameters import ROPE_SIGNS, GantryCraneParameters, suspended_body, validate

#: Rotation taking a marker's z axis to global X (for the drum's prismatic joint).
_Z_TO_X = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])


class NoTwist(Joint):
    """One row: marker i's x axis stays perpendicular to marker j's y axis (locks the
    relative rotation about z left free by a ``planar`` joint)."""

    kind = "no_twist"
    dims = (3,)

    def build(self) -> None:
        self._add(Dot1(self, self.mi, self.mj, self._axes(self.mi)[0],
                       self._axes(self.mj)[1]), "twist")


class MultibodyRope:
    """Unilateral rope from a trolley point to a spreader point whose unstretched length is
    wound by a drum body sliding along X: :math:`l_0 = l_{0,0} - x_{drum}`,
    :math:`T = (EA/l_0)(L - l_0 + \\tau \\dot L)` while positive and taut; the drum gets
    :math:`-(T + \\tfrac12 (EA/l_0)(L - l_0)^2 / l_0)` (see :mod:`blocks.cranes.gantry`)."""

    force = None  # not writable as data

    def __init__(self, name: str, trolley: Any, spreader: Any, drum: Any, sheave: Any,
                 attachment: Any, length0: float, axial_stiffness: float,
                 damping_time: float) -> None:
        self.name, self.trolley, self.spreader, self.drum = name, trolley, spreader, drum
        self.sheave = np.asarray(sheave, float)
        self.attachment = np.asarray(attachment, float)
        self.l00, self.EA, self.tau = float(length0), float(axial_stiffness), float(damping_time)

    def apply(self, kins: dict, Q: np.ndarray, memory: dict | None = None) -> float:
        kt, ks, kd = kins[self.trolley], kins[self.spreader], kins[self.drum]
        Pi, Ji, Vi, _ = kt.point(self.sheave)
        Pj, Jj, Vj, _ = ks.point(self.attachment)
        l0 = self.l00 - float(kd.r[0])
        d = Pi - Pj
        length = float(np.linalg.norm(d))
        u = d / length
        e = length - l0
        if e <= 0.0:
            return 0.0
        k = self.EA / l0
        T = k * e + self.tau * k * float(u @ (Vi - Vj))
        if T <= 0.0:
            return 0.0
        Q[ks.cols] += Jj.T @ (T * u)
        Q[kt.cols] -= Ji.T @ (T * u)
        Q[kd.cols.start] -= T + 0.5 * k * e * e / l0
        return T


def mechanism(params: GantryCraneParameters, state: Any, forces: dict) -> Mechanism:
    """The crane at ``state`` (33 values, :data:`~blocks.cranes.STATE_NAMES`) as a
    :class:`Mechanism` with constant drive ``forces`` (``gantry``, ``trolley``, ``hoist``
    [N]).  The drive-train inertias of the gantry and trolley must be zero (they act on one
    direction of a body only; the hoist's is the drum body's mass)."""
    validate(params, "reference.mechanism")
    if params.gantry_drive.equivalent_mass_kg or params.trolley_drive.equivalent_mass_kg:
        raise ValueError("reference.mechanism: give the gantry and trolley drives zero "
                         "motor_inertia_kgm2 and extra_mass_kg")
    if params.target is not None:
        raise ValueError("reference.mechanism: the guide arms' contact is not modelled here "
                         "(target must be None)")
    x = np.asarray(state, float)
    body = suspended_body(params)
    g = params.gravity_m_s2
    mech = Mechanism("crane_multibody", dim=3, gravity=(0.0, -g, 0.0))
    y_g = params.trolley_rest_height_m
    heavy = [1.0e6] * 3  # rotational inertia of bodies whose rotation is locked
    gan = mech.add_body("gantry", params.gantry_mass_kg, heavy, (0.0, y_g, x[ZG]),
                        velocity=(0.0, 0.0, x[VG]))
    tro = mech.add_body("trolley", params.trolley_mass_kg, heavy, (x[XT], x[YT], x[ZG]),
                        velocity=(x[VT], x[WT], x[VG]))
    A = np.array(rotation(*x[E0:E0 + 4])).reshape(3, 3)
    spr = mech.add_body("spreader", body.mass, body.inertia, x[RX:RX + 3],
                        orientation=x[E0:E0 + 4] / np.linalg.norm(x[E0:E0 + 4]),
                        velocity=x[VX:VX + 3], angular_velocity=A @ x[WX:WX + 3])
    drum = mech.add_body("drum", params.hoist_drive.equivalent_mass_kg, heavy,
                         (0.0, 0.0, 0.0), velocity=(x[VH], 0.0, 0.0))
    mech.add_joint("prismatic", "gantry_rails", mech.ground.marker("rail", (0.0, y_g, 0.0)),
                   gan.marker("rail", (0.0, 0.0, 0.0)))
    mech.add_joint("prismatic", "drum_slide", mech.ground.marker("drum", (0.0, 0.0, 0.0), _Z_TO_X),
                   drum.marker("slide", (0.0, 0.0, 0.0), _Z_TO_X))
    mech.add_joint("planar", "trolley_rails", gan.marker("trolley", (0.0, 0.0, 0.0)),
                   tro.marker("rails", (0.0, 0.0, 0.0)))
    mech.joints["trolley_twist"] = NoTwist("trolley_twist", mech.marker("gantry", "trolley"),
                                           mech.marker("trolley", "rails"))
    mech.add_bushing("girder", gan.marker("trolley"), tro.marker("cm"),
                     translational=(0.0, params.trolley_vertical_stiffness_n_m, 0.0),
                     rotational=0.0,
                     damping_translational=(0.0, params.trolley_vertical_damping_ns_m, 0.0))
    ssx, ssz = params.sheave_half_spacing_m
    for k, ((sx, sz), att) in enumerate(zip(ROPE_SIGNS, body.attachments)):
        mech.elements[f"rope{k}"] = MultibodyRope(
            f"rope{k}", mech.body("trolley"), mech.body("spreader"), mech.body("drum"),
            (sx * ssx, 0.0, sz * ssz), att, x[L0], params.rope_axial_stiffness_n,
            params.rope_damping_time_s)
    fg, ft, fh = (float(forces[a]) for a in ("gantry", "trolley", "hoist"))
    mech.add_force("gantry_drive", gan.marker("cm"), lambda P, V, t: np.array([0.0, 0.0, fg]))
    mech.add_force("trolley_drive", tro.marker("cm"), lambda P, V, t: np.array([ft, 0.0, 0.0]))
    mech.add_force("hoist_drive", drum.marker("cm"), lambda P, V, t: np.array([fh, 0.0, 0.0]))
    q = 0.5 * params.air_density_kg_m3 * params.drag_coefficient
    if q > 0.0:
        area = q * np.array(body.areas)
        wind = np.array(params.wind_velocity_m_s, float)

        def drag(P, V, t):
            rel = wind - V
            return area * rel * float(np.linalg.norm(rel))
        mech.add_force("wind", spr.marker("cm"), drag)
    return mech


def multibody_block(name: str, params: GantryCraneParameters, state: Any,
                    forces: dict) -> MultibodyBlock:
    """:func:`mechanism` as a :class:`MultibodyBlock` (Lagrange, Baumgarte 10/s)."""
    return MultibodyBlock(name, mechanism(params, state, forces), "lagrange", alpha=10.0,
                          beta=10.0)


def crane_states(q: np.ndarray, length0: float) -> dict[str, np.ndarray]:
    """The block's coordinates from the mechanism's ``q`` history (n, 28): gantry, trolley,
    spreader position and Euler parameters, unstretched rope length."""
    q = np.atleast_2d(q)
    return {"gantry_position": q[:, 2], "trolley_position": q[:, 7],
            "trolley_height": q[:, 8], "spreader": q[:, 14:17], "quaternion": q[:, 17:21],
            "hoist_length": length0 - q[:, 21]}


__all__ = ["MultibodyRope", "NoTwist", "crane_states", "mechanism", "multibody_block"]
