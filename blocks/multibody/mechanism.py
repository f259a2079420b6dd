"""A mechanism: bodies, markers, joints and force elements in absolute coordinates.

Build it from Python (or from a dict/JSON/YAML file, :mod:`.io`), then wrap it in
a :class:`~blocks.multibody.block.MultibodyBlock` to simulate it::

    mech = Mechanism("pendulum", dim=2, gravity=(0, -9.81))
    bob = mech.add_particle("bob", mass=1.0, position=(1.0, 0.0))
    mech.add_joint("distance", "link", mech.ground.marker("O"), bob.marker("cm"), length=1.0)

Equations (:mod:`.formulations`): ``q' = T(q) v``; ``M v̇ = Q - J' λ``;
``Phi(q, t) = 0``.  Checks at :meth:`finalize` and :meth:`assemble`: unknown
bodies and markers, non-positive mass or inertia, redundant constraints
(rank-revealing QR of ``J``, named, and handled by every formulation:
:mod:`.redundancy`; :meth:`Mechanism.drop_rows` drops a row by name), inconsistent
initial conditions (made consistent by Newton projection and reported, or refused when
``strict=True``), singular configurations (reported with the joint rows that
lost rank).  Rank, projections, partitioning and assembly are an object the
mechanism holds (:class:`~.corrections.Corrections`, ``mech.corrections``); the scales
that make its checks the same in any units are :mod:`.scales`.  ``q`` and ``v`` hold
the bodies' coordinates in the order the bodies were added; :meth:`Mechanism.layout`
gives each body's slices and the names of their entries (:mod:`.bodies` for the
conventions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import did_you_mean
from cosim.errors import BuildError, StepError

from . import forces as _forces
from . import scales
from .bodies import Body, Kin, Marker
from .bodies import planar_offset as _planar_offset
from .corrections import Corrections, partition
from .formulations import Formulation, solve
from .geometry import cross, quat_axis_angle, quat_from_matrix, quat_matrix, quat_rate, rot2
from .joints import JOINTS
from .redundancy import RowSet


class _LazyKins(dict):
    """``{body: Kin}`` filled on first access (only the bodies that loads and force
    elements touch are evaluated)."""

    def __init__(self, q: np.ndarray, v: np.ndarray) -> None:
        super().__init__()
        self.q, self.v = q, v

    def __missing__(self, body: Body) -> Kin:
        k = self[body] = Kin(body, self.q, self.v)
        return k


class BodyHandle:
    """What ``add_body`` returns: the body plus ``marker(name)`` lookup/creation."""

    def __init__(self, mech: Mechanism, body: Body) -> None:
        self.mech, self.body = mech, body

    @property
    def name(self) -> str:
        return self.body.name

    def marker(self, name: str, position: Any = None, orientation: Any = None) -> Marker:
        """The marker ``name`` (created at ``position`` / ``orientation`` if given or new)."""
        return self.mech.marker(self.body.name, name, position, orientation)


class Mechanism:
    """See the module docstring.  ``dim`` is 2 (planar) or 3 (spatial)."""

    def __init__(self, name: str, dim: int = 2, gravity: Any = None,
                 compiled: bool | None = None) -> None:
        if dim not in (2, 3):
            raise BuildError(f"mechanism '{name}': dim must be 2 (planar) or 3 (spatial)")
        self.name, self.dim = name, dim
        self.gravity = np.zeros(dim) if gravity is None else np.asarray(gravity, float)
        if self.gravity.shape != (dim,):
            raise BuildError(f"mechanism '{name}': gravity needs {dim} components")
        self.bodies: dict[str, Body] = {}
        self.markers: dict[tuple[str, str], Marker] = {}
        self.joints: dict[str, Any] = {}
        self.elements: dict[str, Any] = {}
        self.loads: dict[str, tuple[str, Marker]] = {}  # input name -> (kind, marker)
        self._all_loads_planar: bool | None = None  # see _planar_loads (None: not known)
        self._final = False
        self.compiled = compiled  # None: use the compiled kernel (:mod:`.fast`) when available
        self._tables = None
        self._drop: list[str] = []  # constraint rows the user dropped (drop_rows)
        g = Body("ground", "ground", dim)
        self.bodies["ground"] = g
        self.ground = BodyHandle(self, g)

    _LAYOUT = ("nq", "nv", "m", "M", "Minv", "q0", "v0", "prims", "row_labels", "joint_rows",
               "holonomic", "moving", "load_names", "length_scale", "row_scale",
               "rank_metric", "penalty_rows", "dropped", "rows", "corrections")

    def __getattr__(self, name: str) -> Any:
        """Layout attributes (``nq``, ``nv``, ``M``, ...) finalize the mechanism on first use."""
        if name in Mechanism._LAYOUT and not self.__dict__.get("_final", True):
            self.finalize()
            return getattr(self, name)
        raise AttributeError(f"'Mechanism' object has no attribute {name!r}")

    # ------------------------------------------------------------ building
    def _new(self, body: Body) -> BodyHandle:
        if self._final:
            raise BuildError(f"mechanism '{self.name}' is finalized; build it before use")
        if body.name in self.bodies:
            raise BuildError(f"mechanism '{self.name}': duplicate body name '{body.name}'")
        body.check()
        self.bodies[body.name] = body
        h = BodyHandle(self, body)
        self.marker(body.name, "cm", np.zeros(self.dim))
        return h

    def add_particle(self, name: str, mass: float, position: Any,
                     velocity: Any = None) -> BodyHandle:
        """A point mass (no orientation; only its ``cm`` marker)."""
        q0 = np.asarray(position, float).reshape(self.dim)
        v0 = np.zeros(self.dim) if velocity is None else np.asarray(velocity, float)
        return self._new(Body(name, "particle", self.dim, float(mass), None, q0, v0))

    def add_body(self, name: str, mass: float, inertia: Any, position: Any,
                 orientation: Any = 0.0, velocity: Any = None,
                 angular_velocity: Any = None) -> BodyHandle:
        """A rigid body; frame at its centre of mass.

        Planar: ``inertia`` J [kg m^2], ``orientation`` angle [rad],
        ``angular_velocity`` w [rad/s].  Spatial: ``inertia`` 3x3 (or the 3
        principal moments) in the body frame, ``orientation`` a rotation matrix,
        Euler parameters (4) or ``("axis", angle)``; ``angular_velocity`` in
        global components.
        """
        r = np.asarray(position, float).reshape(self.dim)
        vel = np.zeros(self.dim) if velocity is None else np.asarray(velocity, float)
        if self.dim == 2:
            q0 = np.array([r[0], r[1], float(orientation)])
            w = 0.0 if angular_velocity is None else float(angular_velocity)
            v0 = np.array([vel[0], vel[1], w])
            J = float(inertia)
        else:
            p = _orientation(orientation)
            J = np.asarray(inertia, float)
            J = np.diag(J) if J.shape == (3,) else J
            A = quat_matrix(p)
            w_g = np.zeros(3) if angular_velocity is None else np.asarray(angular_velocity,
                                                                          float)
            q0 = np.concatenate([r, p])
            v0 = np.concatenate([vel, A.T @ w_g])
        return self._new(Body(name, "planar" if self.dim == 2 else "spatial", self.dim,
                              float(mass), J, q0, v0))

    def body(self, name: str) -> Body:
        try:
            return self.bodies[name]
        except KeyError:
            raise BuildError(f"mechanism '{self.name}': body '{name}' not found; "
                             + did_you_mean(name, self.bodies)) from None

    def marker(self, body: str, name: str, position: Any = None,
               orientation: Any = None) -> Marker:
        """Get marker ``body.name``, or create it at ``position`` (body frame).

        ``orientation``: planar angle, or a 3x3 matrix / Euler parameters /
        ``("axis", angle)``; by default aligned with the body frame.
        """
        b = self.body(body)
        key = (body, name)
        if key in self.markers and position is None and orientation is None:
            return self.markers[key]
        if key in self.markers:
            raise BuildError(f"body '{body}' already has a marker '{name}'")
        if position is None:
            if name == "cm" or b.kind == "ground":
                position = np.zeros(self.dim)
            else:
                known = [m for (bn, m) in self.markers if bn == body]
                raise BuildError(f"marker '{body}.{name}' not found; give its position to "
                                 f"create it ({did_you_mean(name, known)})")
        s = np.asarray(position, float).reshape(self.dim)
        if b.kind == "particle" and np.any(s != 0):
            raise BuildError(f"marker '{body}.{name}': a particle has markers only at its "
                             "position (offset 0)")
        if self.dim == 2:
            R = rot2(0.0 if orientation is None else float(orientation))
        else:
            R = np.eye(3) if orientation is None else quat_matrix(_orientation(orientation))
        m = Marker(name, b, s, R)
        self.markers[key] = m
        return m

    def _m(self, ref: Any) -> Marker:
        if isinstance(ref, Marker):
            return ref
        if isinstance(ref, str) and "." in ref:
            b, n = ref.split(".", 1)
            return self.marker(b, n)
        raise BuildError(f"marker reference {ref!r} must be a Marker or 'body.marker'")

    def add_joint(self, kind: str, name: str, marker_i: Any, marker_j: Any,
                  **options: Any) -> Any:
        """A joint of ``kind`` (see :mod:`.joints`) between two markers."""
        if kind not in JOINTS:
            raise BuildError(f"unknown joint kind {kind!r}; " + did_you_mean(kind, JOINTS))
        if name in self.joints:
            raise BuildError(f"mechanism '{self.name}': duplicate joint name '{name}'")
        j = JOINTS[kind](name, self._m(marker_i), self._m(marker_j), **options)
        self.joints[name] = j
        return j

    def add_spring_damper(self, name: str, marker_i: Any, marker_j: Any, **options: Any) -> Any:
        """A point-to-point spring-damper or rope (:class:`.forces.PointToPoint`)."""
        mi, mj = self._m(marker_i), self._m(marker_j)
        if options.get("length0") is None:
            options["length0"] = float(np.linalg.norm(self._global_point(mj)
                                                      - self._global_point(mi)))
        e = _forces.PointToPoint(name, mi, mj, **options)
        self.elements[name] = e
        return e

    def add_force(self, name: str, marker: Any, fn: Any) -> Any:
        """A force ``fn(P, P', t)`` (global components) at ``marker``."""
        if name in self.elements:
            raise BuildError(f"mechanism '{self.name}': duplicate force element '{name}'")
        e = _forces.MarkerForce(name, self._m(marker), fn)
        self.elements[name] = e
        return e

    def add_contact(self, name: str, marker: Any, radius: float, point: Any, normal: Any,
                    **options: Any) -> Any:
        """Sphere-plane contact (:class:`.forces.SpherePlaneContact`)."""
        if name in self.elements:
            raise BuildError(f"mechanism '{self.name}': duplicate force element '{name}'")
        e = _forces.SpherePlaneContact(name, self._m(marker), radius, point, normal, **options)
        self.elements[name] = e
        return e

    def add_bushing(self, name: str, marker_i: Any, marker_j: Any, **options: Any) -> Any:
        """A linear bushing between two markers (:class:`.forces.Bushing`)."""
        if name in self.elements:
            raise BuildError(f"mechanism '{self.name}': duplicate force element '{name}'")
        e = _forces.Bushing(name, self._m(marker_i), self._m(marker_j), **options)
        self.elements[name] = e
        return e

    def drop_rows(self, *labels: str) -> None:
        """Leave the constraint rows ``labels`` (``"joint.row"``, as in
        ``assemble()["redundant"]``, e.g. ``"T2.x"``) out of every formulation: their
        equations are not enforced and their reactions are 0.  For redundant rows whose
        reactions should be 0 by choice instead of shared (:mod:`.redundancy`), as in
        codes that remove them; the mechanism then runs on the Python path.  Call it before
        the mechanism is used."""
        if self._final:
            raise BuildError(f"mechanism '{self.name}' is finalized; call drop_rows before "
                             "it is used (before MultibodyBlock, assemble or a stepper)")
        self._drop.extend(str(label) for label in labels)

    def add_load(self, name: str, marker: Any, kind: str = "force") -> None:
        """An input of the mechanism block: a force (global) at ``marker`` or a torque."""
        if kind not in ("force", "torque"):
            raise BuildError(f"load '{name}': kind must be 'force' or 'torque'")
        self.loads[name] = (kind, self._m(marker))
        self._all_loads_planar = None

    def _global_point(self, m: Marker) -> np.ndarray:
        """Global position of a marker in the initial configuration."""
        b = m.body
        if b.kind in ("ground", "particle"):
            return (b.q0 if b.kind == "particle" else 0.0) + m.s
        if b.kind == "planar":
            return b.q0[:2] + rot2(b.q0[2]) @ m.s
        return b.q0[:3] + quat_matrix(b.q0[3:]) @ m.s

    # ---------------------------------------------------------- layout
    def finalize(self) -> None:
        """Fix the coordinate layout and the constraint rows."""
        if self._final:
            return
        iq = iv = 0
        for b in self.bodies.values():
            b.iq, b.iv = iq, iv
            iq += b.nq
            iv += b.nv
        self.nq, self.nv = iq, iv
        self.moving = [b for b in self.bodies.values() if b.kind != "ground"]
        self.prims = [p for j in self.joints.values() for p in j.primitives]
        self.holonomic = np.array([p.holonomic for p in self.prims for _ in range(p.rows)],
                                  dtype=bool)
        self.row_labels = [f"{j.name}.{lab}" for j in self.joints.values() for lab in j.labels]
        self.m = len(self.row_labels)
        self.joint_rows: dict[str, slice] = {}
        r = 0
        for j in self.joints.values():
            self.joint_rows[j.name] = slice(r, r + j.rows)
            r += j.rows
        M = np.zeros((self.nv, self.nv))
        for b in self.moving:
            s = slice(b.iv, b.iv + b.nv)
            d = b.mass_diag()
            if d is not None:
                M[s, s] = np.diag(d)
            else:
                M[b.iv:b.iv + 3, b.iv:b.iv + 3] = b.mass * np.eye(3)
                M[b.iv + 3:b.iv + 6, b.iv + 3:b.iv + 6] = b.inertia
        self.M = M
        self.Minv = np.linalg.inv(M) if self.nv else M
        self.q0 = np.concatenate([b.q0 for b in self.moving]) if self.moving else np.zeros(0)
        self.v0 = np.concatenate([b.v0 for b in self.moving]) if self.moving else np.zeros(0)
        self.load_names = list(self.loads)
        self.length_scale, self.row_scale = scales.length_scales(self.markers, self.bodies,
                                                                 self.joints, self.prims)
        self.rank_metric = scales.rank_metric(self.markers, self.moving, self.nv,
                                              self.length_scale)
        self.penalty_rows = scales.penalty_rows(self.moving, self.M, self.length_scale,
                                                self.row_scale, self.prims)
        self.dropped = scales.dropped_mask(self.name, self.row_labels, self._drop)
        self.rows = RowSet(self.rank_metric, self.row_scale / self.length_scale)
        from . import fast
        if self.compiled is True and not fast.HAVE_NUMBA:
            raise BuildError("compiled=True needs Numba: pip install 'cosim[fast]'")
        if self.compiled is True and self.dropped.any():
            raise BuildError(f"mechanism '{self.name}': compiled=True, but rows were dropped "
                             "(drop_rows), which the compiled kernel does not support; "
                             "leave compiled unset to use the Python path")
        if self.compiled is not False and fast.HAVE_NUMBA and not self.dropped.any():
            try:
                self._tables = fast.Tables(self)
            except fast.NotSupported as exc:  # e.g. a rolling disk: the Python path
                if self.compiled is True:
                    raise BuildError(f"mechanism '{self.name}': compiled=True, but {exc}; "
                                     "leave compiled unset to use the Python path") from None
                self._tables = None
        self.corrections = Corrections(
            self, nv=self.nv, m=self.m, Minv=self.Minv, holonomic=self.holonomic,
            dropped=self.dropped, row_scale=self.row_scale, rank_metric=self.rank_metric,
            row_labels=self.row_labels, rows=self.rows, q0=self.q0, v0=self.v0,
            tables=self._tables)
        self._final = True

    def layout(self) -> dict[str, dict]:
        """Where each body's coordinates are in ``q`` and ``v``: ``{body: {"kind", "q",
        "v", "q_names", "v_names"}}`` (slices and the names of their entries; see
        :mod:`.bodies` for the conventions)."""
        self.finalize()
        names = {"particle": (("x", "y", "z")[:self.dim], ("vx", "vy", "vz")[:self.dim]),
                 "planar": (("x", "y", "theta"), ("vx", "vy", "w")),
                 "spatial": (("x", "y", "z", "e0", "e1", "e2", "e3"),
                             ("vx", "vy", "vz", "wx'", "wy'", "wz'"))}
        return {b.name: {"kind": b.kind, "q": slice(b.iq, b.iq + b.nq),
                         "v": slice(b.iv, b.iv + b.nv), "q_names": names[b.kind][0],
                         "v_names": names[b.kind][1]} for b in self.moving}

    def coordinate_name(self, i: int) -> str:
        """The name of entry ``i`` of the state ``x = [q, v]`` (``"crank.theta"``,
        ``"coupler.vx"``): error messages name what went wrong."""
        for name, lay in self.layout().items():
            for part in ("q", "v"):
                s = lay[part]
                k = i - (0 if part == "q" else self.nq)
                if s.start <= k < s.stop:
                    return f"{name}.{lay[part + '_names'][k - s.start]}"
        return f"x[{i}]"

    @property
    def dof(self) -> int:
        """Degrees of freedom (velocity variables minus independent constraint rows)."""
        self.finalize()
        return self.nv - self.rank(self.q0, 0.0)[0]

    # ------------------------------- corrections (:class:`.corrections.Corrections`)
    def rank_measure(self, q: np.ndarray, t: float, eps: float = 1e-10) -> tuple:
        """:meth:`.corrections.Corrections.rank_measure`."""
        self.finalize()
        return self.corrections.rank_measure(q, t, eps)

    def rank(self, q: np.ndarray, t: float, tol: float = 1e-9) -> tuple[int, list[str]]:
        """:meth:`.corrections.Corrections.rank`."""
        self.finalize()
        return self.corrections.rank(q, t, tol)

    def weak_rows(self, q: np.ndarray, t: float, rho: float, skip: int = 0) -> list[str]:
        """:meth:`.corrections.Corrections.weak_rows`."""
        self.finalize()
        return self.corrections.weak_rows(q, t, rho, skip)

    def project_positions(self, q: np.ndarray, t: float, tol: float = 1e-12,
                          max_iter: int = 30) -> tuple[np.ndarray, int]:
        """:meth:`.corrections.Corrections.project_positions`."""
        self.finalize()
        return self.corrections.project_positions(q, t, tol, max_iter)

    def project_velocities(self, q: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
        """:meth:`.corrections.Corrections.project_velocities`."""
        self.finalize()
        return self.corrections.project_velocities(q, v, t)

    #: :func:`.corrections.partition`
    partition = staticmethod(partition)

    def correct_partitioned(self, q: np.ndarray, v: np.ndarray, t: float, tol: float = 1e-12,
                            max_iter: int = 30, dep: Any = None,
                            with_partition: bool = False) -> tuple:
        """:meth:`.corrections.Corrections.correct_partitioned`."""
        self.finalize()
        return self.corrections.correct_partitioned(q, v, t, tol, max_iter, dep,
                                                    with_partition)

    def assemble(self, t: float = 0.0, strict: bool = False, tol: float = 1e-9) -> dict:
        """Consistent initial positions and velocities (``q_init``, ``v_init``); returns the
        report (``assembly``): :meth:`.corrections.Corrections.assemble`."""
        self.finalize()
        report, self.q_init, self.v_init = self.corrections.assemble(t, strict, tol)
        self.assembly = report
        return report

    # --------------------------------------------------------- evaluation
    def kins(self, q: np.ndarray, v: np.ndarray) -> dict:
        return {b: Kin(b, q, v) for b in self.bodies.values()}

    def lazy_kins(self, q: np.ndarray, v: np.ndarray) -> dict:
        """Like :meth:`kins`, but each body's :class:`Kin` is built on first use."""
        return _LazyKins(q, v)

    def constraints(self, q: np.ndarray, v: np.ndarray, t: float,
                    kins: dict | None = None) -> tuple:
        """``(Phi, J, Phi_t, gamma)`` of all joints (compiled kernel when available)."""
        self.finalize()
        if self._tables is not None:
            return self._tables.constraints(q, v, t)
        return self.constraints_py(q, v, t, kins)

    def constraints_py(self, q: np.ndarray, v: np.ndarray, t: float,
                       kins: dict | None = None) -> tuple:
        """The Python evaluation (reference for the compiled kernel)."""
        self.finalize()
        kins = kins or self.kins(q, v)
        if not self.prims:
            z = np.zeros(0)
            return z, np.zeros((0, self.nv)), z, z
        parts = [p.eval(kins, t, self.nv) for p in self.prims]
        out = (np.concatenate([p[0] for p in parts]), np.vstack([p[1] for p in parts]),
               np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]))
        if self.dropped.any():  # dropped rows (drop_rows): zero, so no formulation sees them
            for a in out:
                a[self.dropped] = 0.0
        return out

    def forces(self, q: np.ndarray, v: np.ndarray, t: float, loads: dict | None = None,
               kins: dict | None = None, memory: dict | None = None) -> np.ndarray:
        """Generalized forces: gravity, gyroscopic terms, force elements, loads.

        ``memory``: impact speeds of contacts (``{name: v_i}``), kept by the block.
        """
        if self._tables is not None:
            Q = self._tables.forces(v)
            if self.elements or loads:
                kins = kins or self.lazy_kins(q, v)
                self._elements_and_loads(kins, t, loads, memory, Q)
            return Q
        kins = kins or self.kins(q, v)
        Q = self.body_forces_py(v)
        self._elements_and_loads(kins, t, loads, memory, Q)
        return Q

    def body_forces_py(self, v: np.ndarray) -> np.ndarray:
        """Gravity and the gyroscopic terms ``-w' x J' w'`` (the Python path, in the type
        of ``v``: complex too)."""
        Q = np.zeros(self.nv, np.result_type(v, float))
        for b in self.moving:
            i = b.iv
            if b.kind == "spatial":
                Q[i:i + 3] += b.mass * self.gravity
                w = v[i + 3:i + 6]
                Q[i + 3:i + 6] -= cross(w, b.inertia @ w)
            else:
                Q[i:i + self.dim] += b.mass * self.gravity
        return Q

    def external_forces(self, q: np.ndarray, v: np.ndarray, t: float,
                        loads: dict | None = None,
                        memory: dict | None = None) -> np.ndarray:
        """Generalized forces of the force elements and ``loads`` alone (no gravity)."""
        if not self.elements and self._planar_loads():
            return self._planar_load_forces(q, loads)
        Q = np.zeros(self.nv)
        self._elements_and_loads(self.lazy_kins(q, v), t, loads, memory, Q)
        return Q

    def _planar_loads(self) -> bool:
        """Whether every load acts on a planar body (then :meth:`external_forces` without
        force elements needs no :class:`Kin`, only each body's angle)."""
        ok = self._all_loads_planar
        if ok is None:
            ok = self._all_loads_planar = all(m.body.kind == "planar"
                                              for _, m in self.loads.values())
        return ok

    def _planar_load_forces(self, q: np.ndarray, loads: dict | None) -> np.ndarray:
        """:meth:`external_forces` for loads on planar bodies, no force elements: the
        operations of :func:`forces.apply_force` / :func:`forces.apply_torque`'s planar
        branches in floats (bit for bit), with the angle read from ``q`` instead of a
        :class:`Kin` (its construction was most of the cost)."""
        Q = [0.0] * self.nv
        for name, value in (loads or {}).items():
            kind, m = self.loads[name]
            i = m.body.iv
            if kind == "force":
                fx, fy = np.asarray(value, float).reshape(2).tolist()
                a0, a1 = _planar_offset(*m.s.tolist(), float(q[m.body.iq + 2]))
                Q[i] += fx
                Q[i + 1] += fy
                Q[i + 2] += a0 * fy - a1 * fx
            else:
                Q[i + 2] += float(value)
        return np.array(Q, dtype=float)

    def _elements_and_loads(self, kins: dict, t: float, loads: dict | None,
                            memory: dict | None, Q: np.ndarray) -> None:
        for e in self.elements.values():
            e._t = t
            e.apply(kins, Q, memory)
        for name, value in (loads or {}).items():
            kind, m = self.loads[name]
            k = kins[m.body]
            if kind == "force":
                _forces.apply_force(k, m, value, Q)
            else:
                _forces.apply_torque(k, value, Q)

    def qdot(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``q' = T(q) v``."""
        if self._tables is not None:
            return self._tables.qdot(q, v)
        return self.qdot_py(q, v)

    def qdot_py(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """:meth:`qdot` on the Python path, in the inputs' type (complex too: the complex
        step of :mod:`.complex_dynamics`)."""
        qd = np.empty(self.nq, np.result_type(q, v, float))
        for b in self.moving:
            if b.kind == "spatial":
                qd[b.iq:b.iq + 3] = v[b.iv:b.iv + 3]
                qd[b.iq + 3:b.iq + 7] = quat_rate(q[b.iq + 3:b.iq + 7], v[b.iv + 3:b.iv + 6])
            else:
                qd[b.iq:b.iq + b.nq] = v[b.iv:b.iv + b.nv]
        return qd

    def displace(self, q: np.ndarray, dv: np.ndarray, python: bool = False) -> np.ndarray:
        """``q`` moved by a small velocity-space displacement ``dv`` (unit quaternions,
        divided by ``sqrt(p . p)``: analytic, so ``python=True`` takes complex input)."""
        qn = q + (self.qdot_py(q, dv) if python else self.qdot(q, dv))
        for b in self.moving:
            if b.kind == "spatial":
                p = qn[b.iq + 3:b.iq + 7]
                qn[b.iq + 3:b.iq + 7] = p / np.sqrt(p @ p)
        return qn

    def accelerations(self, q: np.ndarray, v: np.ndarray, t: float, form: Formulation,
                      loads: dict | None = None, memory: dict | None = None,
                      reactions: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """``(v̇, λ)`` at ``(q, v, t)`` (compiled banded solve when available).  With
        redundant rows the index-1 formulations solve in independent rows and ``λ`` holds
        the minimum-norm reactions of all rows (:mod:`.redundancy`), or is None there
        with ``reactions=False`` (the caller needs ``v̇`` only)."""
        t_ = self._tables
        index1 = form.kind in ("lagrange", "projection", "partitioning")
        if t_ is not None and self.m and not (index1 and self.rows.reduced):
            phi, Jc, phit, gamma = t_.constraints_compact(q, v, t)
            Q = self.forces(q, v, t, loads, None, memory)
            phid = t_.jmul(Jc, v) + phit
            if index1:
                rhs = gamma
                if form.kind == "lagrange" and (form.alpha or form.beta):
                    rhs = gamma - 2.0 * form.alpha * phid - form.beta ** 2 * phi
                vd, lam, ok, _ = t_.lagrange(self.Minv, Q, Jc, rhs)
            else:
                a = form.penalty * self.penalty_rows
                b = -gamma + 2.0 * form.mu * form.omega * phid + form.omega ** 2 * phi
                vd, lam, ok = t_.penalty(self.Minv, Q, Jc, a, b, form.iterations
                                         if form.kind == "augmented_lagrangian" else 0,
                                         self.M)
            if ok:
                return vd, lam
            J = t_.dense(Jc)  # the general path: redundant rows, or a singular position
        else:
            kins = None if t_ is not None else self.kins(q, v)
            phi, J, phit, gamma = self.constraints(q, v, t, kins)
            Q = self.forces(q, v, t, loads, kins, memory)
            phid = J @ v + phit
        where = f"mechanism '{self.name}' at t = {t:.9g} s"
        A = self.rows.update(J) if index1 else None
        try:
            if A is None:
                try:
                    return solve(form, self.M, Q, J, gamma, phi, phid, where,
                                 self.penalty_rows)
                except StepError:
                    if not (index1 and self.rows.select(J)):
                        raise
                    A = self.rows.A
            vd, lam_a = solve(form, self.M, Q, J[A], gamma[A], phi[A], phid[A], where)
            return vd, self.rows.reactions(J, lam_a) if reactions else None
        except StepError as exc:
            rank, dep = self.rank(q, t, tol=1e-6)
            raise StepError(f"{exc} [rank {rank} of {self.m}; dependent rows: "
                            f"{', '.join(dep) or 'none found at 1e-6'}]") from None


def _orientation(o: Any) -> np.ndarray:
    """Euler parameters from a matrix, 4 parameters or ``(axis, angle)``."""
    if isinstance(o, tuple) and len(o) == 2:
        return quat_axis_angle(o[0], float(o[1]))
    a = np.asarray(o, float)
    if a.shape == (3, 3):
        return quat_from_matrix(a)
    if a.shape == (4,):
        return a / np.linalg.norm(a)
    if a.shape == ():
        if float(a) != 0.0:
            raise BuildError("a spatial orientation needs a 3x3 matrix, 4 Euler parameters or "
                             "(axis, angle)")
        return np.array([1.0, 0.0, 0.0, 0.0])
    raise BuildError(f"orientation of shape {a.shape}: give a 3x3 matrix, 4 Euler parameters "
                     "or (axis, angle)")

