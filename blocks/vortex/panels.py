r"""A body made of panels carrying bound vortices (lumped-vortex panel method).

The body is a polygon of nodes :math:`P_k` given in its own frame.  Two kinds:

``closed`` (a cylinder, a section): nodes counter-clockwise, the first repeated at the
    end (the polygon must be closed).  A bound point vortex :math:`\Gamma_k` sits at
    every node, a collocation point at every panel midpoint (the layout of Kobayashi et
    al., seed §12, Eqs. 14-18).  :math:`\Gamma_k/\ell_k` (with :math:`\ell_k` the mean
    length of the two panels at node :math:`k`) is the vortex-sheet strength, i.e. the
    slip speed along the counter-clockwise tangent outside a body at rest.
``open`` (a flat plate, a thin beam): nodes from the leading (fixed) end to the
    trailing (free) end.  Lumped-vortex method (Katz & Plotkin, *Low-Speed
    Aerodynamics*, §5.4 / §13.8): the bound vortex at 1/4 and the collocation point at
    3/4 of each panel; the Kutta condition at the trailing edge is then implicit, and
    a steady plate gets exactly :math:`C_L = 2\pi\sin\alpha` for any panel count.

Equations (one solve per time step, :meth:`PanelBody.solve`), for the body's node
positions and velocities (:class:`BodyMotion`, any motion: rigid via
:func:`rigid_motion`, or deforming, e.g. a beam's nodes):

* no penetration at every collocation point :math:`c_k` with normal :math:`n_k`:
  :math:`(\mathbf u(c_k) - \mathbf V_b(c_k))\cdot n_k = 0`, with :math:`\mathbf u` the
  free stream plus the velocity induced by bound, nascent and free vortices, and
  :math:`\mathbf V_b` the body velocity interpolated between the panel's nodes;
* Kelvin's theorem: :math:`\sum \Gamma_\text{bound} + \sum \Gamma_\text{nascent} =
  \Gamma_\text{target}` (the flow passes the circulation that keeps the total, bound
  plus free plus removed, constant);
* at each shedding node :math:`s` of a closed body, a Kutta-type condition
  :math:`\Gamma_s = 0` (zero bound vorticity: the flow leaves the edge smoothly; at a
  fixed separation point of a smooth body this is the vanishing wall vorticity that
  defines separation), with the strength of the nascent vortex placed at
  ``shed_distance`` from the node (outward bisector) as the unknown it buys.  An open
  body sheds from its trailing node only (along its last panel).

On a closed polygon the no-penetration equations are singular (a uniform
distribution adds circulation without normal flow), so Kelvin's row closes the system
and a uniform normal "leak" :math:`\lambda` is added as an unknown to keep it square.
:math:`\lambda` is the residual normal velocity: it is zero (to round-off) whenever the
imposed normal flux through the polygon vanishes, as it does for a rigid body, free
stream and outside vortices on a regular polygon; it is reported as
:attr:`PanelSolution.leak` (a discretisation-error indicator otherwise).

Limitations: an open body sheds from its trailing node only (no leading-edge
separation); nodes are point vortices at the collocation points (the velocity they
induce on free vortices is regularised with the free vortices' core).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim.errors import ParameterError

from .kernels import induced_velocity

_TWO_PI = 2.0 * np.pi


@dataclass
class BodyMotion:
    """World positions ``(n, 2)`` [m] and velocities ``(n, 2)`` [m/s] of the body's nodes
    (for a closed body without the repeated last node)."""

    nodes: np.ndarray
    velocities: np.ndarray


@dataclass
class PanelSolution:
    """Result of :meth:`PanelBody.solve` (world frame)."""

    bound_xy: np.ndarray        #: (nb, 2) bound vortex positions [m]
    bound_gamma: np.ndarray     #: (nb,) bound circulations [m²/s]
    nascent_xy: np.ndarray      #: (m, 2) positions of the vortices shed this step [m]
    nascent_gamma: np.ndarray   #: (m,) their circulations [m²/s]
    leak: float                 #: uniform residual normal velocity (closed bodies) [m/s]
    collocation: np.ndarray     #: (nc, 2) collocation points [m]
    normals: np.ndarray         #: (nc, 2) unit normals


def _finite(a: np.ndarray, who: str, what: str) -> None:
    if not np.all(np.isfinite(a)):
        raise ParameterError(f"{who}: {what} contain NaN or inf")


def _rot(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


class PanelBody:
    """A body of panels with bound vortices (see the module docstring).

    Parameters
    ----------
    nodes : (n, 2) array_like
        Polygon in the body frame [m]; ``closed``: counter-clockwise with the first node
        repeated at the end; ``open``: from the fixed/leading end to the free/trailing end.
    kind : {"closed", "open"}
    shedding : sequence of int
        Nodes that shed a vortex every step (sharp edges, fixed separation points).  An
        open body may only shed from its last node.
    name : str
        Used in error messages.
    """

    def __init__(self, nodes: Any, kind: str = "closed", shedding: Any = (),
                 name: str = "body") -> None:
        who = f"PanelBody '{name}'"
        self.name = name
        if kind not in ("closed", "open"):
            raise ParameterError(f"{who}: kind must be 'closed' or 'open', got {kind!r}")
        p = np.asarray(nodes, dtype=float)
        if p.ndim != 2 or p.shape[1] != 2:
            raise ParameterError(f"{who}: nodes must have shape (n, 2), got {p.shape}")
        _finite(p, who, "nodes")
        if kind == "closed":
            if p.shape[0] < 4:
                raise ParameterError(f"{who}: a closed body needs at least 3 panels (4 nodes "
                                     f"with the first repeated), got {max(p.shape[0] - 1, 0)}")
            if not np.array_equal(p[0], p[-1]):
                raise ParameterError(
                    f"{who}: the polygon is not closed (first node {p[0].tolist()} != last "
                    f"node {p[-1].tolist()}); repeat the first node at the end, or use "
                    "kind='open' for a plate")
            p = p[:-1]
            seg = np.roll(p, -1, axis=0) - p
            area = 0.5 * float(np.sum(p[:, 0] * np.roll(p[:, 1], -1)
                                      - np.roll(p[:, 0], -1) * p[:, 1]))
            if area <= 0.0:
                raise ParameterError(f"{who}: the polygon encloses no area or runs clockwise "
                                     f"(signed area {area:.3g} m²); give the nodes "
                                     "counter-clockwise")
            self.area = area
        else:
            if p.shape[0] < 2:
                raise ParameterError(f"{who}: an open body needs at least 1 panel (2 nodes), "
                                     f"got {p.shape[0]} node(s)")
            seg = p[1:] - p[:-1]
            self.area = 0.0
        lengths = np.hypot(seg[:, 0], seg[:, 1])
        if np.any(lengths <= 0.0):
            k = int(np.argmin(lengths))
            raise ParameterError(f"{who}: panel {k} has zero length (repeated node {k})")
        self.kind = kind
        self.nodes = p
        self.n_panels = int(lengths.size)
        self.panel_lengths = lengths
        shed = sorted({int(s) for s in np.atleast_1d(np.asarray(shedding, dtype=int))})
        nn = p.shape[0]
        for s in shed:
            if not 0 <= s < nn:
                raise ParameterError(f"{who}: shedding node {s} out of range 0..{nn - 1}")
        if kind == "open" and shed and shed != [nn - 1]:
            raise ParameterError(f"{who}: an open body sheds from its last node ({nn - 1}) "
                                 f"only, got {shed}")
        self.shedding = tuple(shed)

    # ------------------------------------------------------------ constructors
    @classmethod
    def circle(cls, radius: float, n_panels: int, center: Any = (0.0, 0.0),
               separation_deg: float | None = None, name: str = "cylinder") -> PanelBody:
        """Regular ``n_panels``-gon inscribed in a circle, node 0 at the upstream point
        (angle :math:`\\pi`, free stream along +x).  ``separation_deg``: shed from the two
        nodes nearest to :math:`\\pm` that angle measured from the upstream point."""
        who = f"PanelBody '{name}'"
        if not (np.isfinite(radius) and radius > 0):
            raise ParameterError(f"{who}: radius must be > 0, got {radius!r}")
        if int(n_panels) != n_panels or n_panels < 3:
            raise ParameterError(f"{who}: n_panels must be an integer >= 3, got {n_panels!r}")
        n = int(n_panels)
        th = np.pi + _TWO_PI * np.arange(n + 1) / n
        nodes = np.column_stack([np.cos(th), np.sin(th)]) * radius + np.asarray(center, float)
        nodes[-1] = nodes[0]
        shed: tuple = ()
        if separation_deg is not None:
            k = int(round(float(separation_deg) / 360.0 * n))
            if not 0 < k < n / 2:
                raise ParameterError(f"{who}: separation_deg must lie in (0, 180) and "
                                     f"resolve to distinct nodes, got {separation_deg!r}")
            shed = (k, n - k)  # node k is below (clockwise from the front), n - k above
        return cls(nodes, "closed", shed, name)

    @classmethod
    def plate(cls, chord: float, n_panels: int, angle_rad: float = 0.0, shed: bool = True,
              name: str = "plate") -> PanelBody:
        """Flat plate from its leading edge at the origin, inclined by ``angle_rad``
        (positive: nose up for a free stream along +x, i.e. the trailing edge below)."""
        who = f"PanelBody '{name}'"
        if not (np.isfinite(chord) and chord > 0):
            raise ParameterError(f"{who}: chord must be > 0, got {chord!r}")
        if int(n_panels) != n_panels or n_panels < 1:
            raise ParameterError(f"{who}: n_panels must be an integer >= 1, got {n_panels!r}")
        s = np.linspace(0.0, chord, int(n_panels) + 1)
        nodes = np.column_stack([s * np.cos(angle_rad), -s * np.sin(angle_rad)])
        return cls(nodes, "open", (int(n_panels),) if shed else (), name)

    # ---------------------------------------------------------------- geometry
    @property
    def size(self) -> float:
        """Largest node distance from the node centroid times 2 (a length scale) [m]."""
        c = self.nodes.mean(axis=0)
        return 2.0 * float(np.max(np.hypot(*(self.nodes - c).T)))

    def at_rest(self) -> BodyMotion:
        """The body where it was defined, not moving."""
        return BodyMotion(self.nodes.copy(), np.zeros_like(self.nodes))

    def layout(self, nodes: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(bound_xy, collocation, normals, tangents, lengths)`` for world ``nodes``."""
        if self.kind == "closed":
            b = np.roll(nodes, -1, axis=0)
            bound = nodes
            col = 0.5 * (nodes + b)
        else:
            b = nodes[1:]
            a = nodes[:-1]
            bound = a + 0.25 * (b - a)
            col = a + 0.75 * (b - a)
            nodes = a
        seg = b - nodes
        lengths = np.hypot(seg[:, 0], seg[:, 1])
        t = seg / lengths[:, None]
        normals = np.column_stack([t[:, 1], -t[:, 0]])  # outward for counter-clockwise
        return bound, col, normals, t, lengths

    def collocation_velocity(self, motion: BodyMotion) -> np.ndarray:
        """Body velocity at the collocation points (linear between nodes)."""
        v = motion.velocities
        if self.kind == "closed":
            return 0.5 * (v + np.roll(v, -1, axis=0))
        return 0.25 * v[:-1] + 0.75 * v[1:]

    def shed_directions(self, nodes: np.ndarray) -> np.ndarray:
        """Unit directions ``(m, 2)`` from each shedding node to its nascent vortex."""
        _, _, normals, t, _ = self.layout(nodes)
        out = []
        for s in self.shedding:
            if self.kind == "open":
                d = t[-1]
            else:
                d = normals[s - 1] + normals[s]
                d = d / np.hypot(*d)
            out.append(d)
        return np.array(out).reshape(-1, 2)

    def check_motion(self, motion: BodyMotion) -> BodyMotion:
        who = f"PanelBody '{self.name}'"
        n = np.asarray(motion.nodes, dtype=float)
        v = np.asarray(motion.velocities, dtype=float)
        if n.shape != self.nodes.shape or v.shape != self.nodes.shape:
            raise ParameterError(f"{who}: motion needs nodes and velocities of shape "
                                 f"{self.nodes.shape}, got {n.shape} and {v.shape}")
        _finite(n, who, "node positions")
        _finite(v, who, "node velocities")
        return BodyMotion(n, v)

    def inside(self, points: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Boolean mask of ``points`` inside the closed polygon ``nodes`` (even-odd rule);
        all False for an open body."""
        pts = np.asarray(points, dtype=float).reshape(-1, 2)
        if self.kind == "open" or pts.shape[0] == 0:
            return np.zeros(pts.shape[0], dtype=bool)
        a = nodes
        b = np.roll(nodes, -1, axis=0)
        x, y = pts[:, 0:1], pts[:, 1:2]
        cond = (a[None, :, 1] > y) != (b[None, :, 1] > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            xc = a[None, :, 0] + (y - a[None, :, 1]) * (b[None, :, 0] - a[None, :, 0]) / (
                b[None, :, 1] - a[None, :, 1])
        return (np.sum(cond & (x < xc), axis=1) % 2) == 1

    def centroid_velocity(self, motion: BodyMotion) -> np.ndarray:
        """Velocity of the centroid of a closed body moving rigidly (affine field)."""
        p, v = motion.nodes, motion.velocities
        if self.kind == "open":
            return v.mean(axis=0)
        a = p - p[0]
        b = np.roll(a, -1, axis=0)
        w = 0.5 * (a[:, 0] * b[:, 1] - b[:, 0] * a[:, 1])
        dv = v - v[0]
        return v[0] + (w[:, None] * (dv + np.roll(dv, -1, axis=0))).sum(axis=0) / (
            3.0 * w.sum())

    # ------------------------------------------------------------------ solve
    def solve(self, motion: BodyMotion, u_inf: Any = (0.0, 0.0),
              free_xy: Any = None, free_gamma: Any = None, free_core: Any = 0.0,
              gamma_target: float = 0.0, shed_distance: float | None = None,
              core_radius: float = 0.0, core_model: str = "krasny",
              backend: str = "auto", kelvin: bool = True,
              nascent_gamma: Any = None) -> PanelSolution:
        """Bound and nascent circulations for the body in ``motion`` (world frame).

        ``free_*``: the free vortices (positions, circulations, core radii);
        ``gamma_target``: what bound plus nascent circulation must add up to (Kelvin);
        ``shed_distance`` [m]: node-to-nascent-vortex distance (default half the mean
        panel length); ``core_radius``/``core_model``: the nascent vortices' core.
        ``kelvin=False`` (an open body that does not shed): the steady lumped-vortex
        solution, circulation set by the implicit Kutta condition.
        ``nascent_gamma`` (closed body): the nascent circulations are given (the
        vorticity-flux model of :mod:`blocks.vortex.flow`) instead of found from the
        Kutta-type conditions.
        """
        who = f"PanelBody '{self.name}'"
        motion = self.check_motion(motion)
        u_inf = np.broadcast_to(np.asarray(u_inf, dtype=float), (2,))
        _finite(u_inf, who, "free-stream velocity")
        bound, col, normals, _, lengths = self.layout(motion.nodes)
        nb, nc = bound.shape[0], col.shape[0]
        closed = self.kind == "closed"
        shedding = self.shedding if kelvin else ()
        m = len(shedding)
        if not kelvin and closed:
            raise ParameterError(f"{who}: a closed body needs Kelvin's condition (kelvin=True)")
        if shed_distance is None:
            shed_distance = 0.5 * float(lengths.mean())
        if not (np.isfinite(shed_distance) and shed_distance > 0):
            raise ParameterError(f"{who}: shed_distance must be > 0, got {shed_distance!r}")
        nascent = motion.nodes[list(shedding)] + shed_distance * self.shed_directions(
            motion.nodes)[: m]
        given = None
        if nascent_gamma is not None:
            given = np.asarray(nascent_gamma, dtype=float).reshape(-1)
            if not closed or given.shape != (m,):
                raise ParameterError(f"{who}: nascent_gamma needs a closed body and {m} "
                                     f"values, got {given.shape}")
            _finite(given, who, "nascent circulations")
        mu = 0 if given is not None else m  # unknown nascent strengths
        n_unk = nb + mu + (1 if closed else 0)
        n_eq = nc + (mu if closed else 0) + (1 if kelvin else 0)
        if n_unk != n_eq:  # pragma: no cover - guarded by the constructor
            raise ParameterError(f"{who}: {n_eq} equations for {n_unk} unknowns")
        A = np.zeros((n_eq, n_unk))
        # normal velocity at collocation points per unit bound (point) vortex
        dx = col[:, None, 0] - bound[None, :, 0]
        dy = col[:, None, 1] - bound[None, :, 1]
        r2 = dx * dx + dy * dy
        A[:nc, :nb] = (-dy * normals[:, None, 0] + dx * normals[:, None, 1]) / (_TWO_PI * r2)
        for i in range(mu):
            uv = induced_velocity(col, nascent[i:i + 1], [1.0], core_radius, core_model,
                                  backend="numpy")
            A[:nc, nb + i] = np.sum(uv * normals, axis=1)
        rhs = np.zeros(n_eq)
        vrel = self.collocation_velocity(motion) - u_inf[None, :]
        if given is not None and m:
            vrel = vrel - induced_velocity(col, nascent, given, core_radius, core_model,
                                           "numpy")
            gamma_target = gamma_target - float(given.sum())
        if free_xy is not None and len(free_gamma):
            vrel = vrel - induced_velocity(col, free_xy, free_gamma, free_core, core_model,
                                           backend)
        rhs[:nc] = np.sum(vrel * normals, axis=1)
        row = nc
        if closed:
            A[:nc, nb + mu] = 1.0  # uniform leak
            for i, s in enumerate(shedding[:mu]):
                A[row + i, s] = 1.0  # Kutta-type: zero bound vortex at the shedding node
            row += mu
        if kelvin:
            A[row, :nb + mu] = 1.0
            rhs[row] = gamma_target
        x = np.linalg.solve(A, rhs)
        ng = given.copy() if given is not None else x[nb:nb + m].copy()
        return PanelSolution(bound.copy(), x[:nb].copy(), nascent, ng,
                             float(x[-1]) if closed else 0.0, col, normals)

    def normal_velocity_residual(self, sol: PanelSolution, motion: BodyMotion,
                                 u_inf: Any = (0.0, 0.0), free_xy: Any = None,
                                 free_gamma: Any = None, free_core: Any = 0.0,
                                 core_radius: float = 0.0,
                                 core_model: str = "krasny") -> np.ndarray:
        """Relative normal velocity at the collocation points, recomputed from the
        solution (a check: zero to round-off, or the uniform ``leak``)."""
        col, nrm = sol.collocation, sol.normals
        dx = col[:, None, 0] - sol.bound_xy[None, :, 0]
        dy = col[:, None, 1] - sol.bound_xy[None, :, 1]
        r2 = dx * dx + dy * dy
        u = np.zeros_like(col) + np.asarray(u_inf, dtype=float)
        u[:, 0] += np.sum(-dy * sol.bound_gamma / r2, axis=1) / _TWO_PI
        u[:, 1] += np.sum(dx * sol.bound_gamma / r2, axis=1) / _TWO_PI
        if sol.nascent_gamma.size:
            u += induced_velocity(col, sol.nascent_xy, sol.nascent_gamma, core_radius,
                                  core_model, "numpy")
        if free_xy is not None and len(free_gamma):
            u += induced_velocity(col, free_xy, free_gamma, free_core, core_model, "numpy")
        u -= self.collocation_velocity(motion)
        return np.sum(u * nrm, axis=1)

    def slip_speed(self, sol: PanelSolution) -> np.ndarray:
        """Closed body at rest: vortex-sheet strength at the nodes, :math:`\\Gamma_k /
        \\ell_k` [m/s] (the outer slip velocity along the counter-clockwise tangent)."""
        if self.kind != "closed":
            raise ParameterError(f"PanelBody '{self.name}': slip_speed needs a closed body")
        L = np.hypot(*(np.roll(sol.bound_xy, -1, axis=0) - sol.bound_xy).T)
        return sol.bound_gamma / (0.5 * (L + np.roll(L, 1)))


def rigid_motion(body: PanelBody, position: Any = (0.0, 0.0), angle: float = 0.0,
                 velocity: Any = (0.0, 0.0), angular_velocity: float = 0.0) -> BodyMotion:
    """Node positions and velocities of ``body`` moved rigidly: its frame origin at
    ``position`` [m], rotated by ``angle`` [rad] (counter-clockwise), origin velocity
    ``velocity`` [m/s], ``angular_velocity`` [rad/s]."""
    who = f"PanelBody '{body.name}'"
    pos = np.broadcast_to(np.asarray(position, dtype=float), (2,))
    vel = np.broadcast_to(np.asarray(velocity, dtype=float), (2,))
    vals = np.concatenate([pos, vel, [float(angle), float(angular_velocity)]])
    _finite(vals, who, "rigid motion (position, velocity, angle, angular velocity)")
    r = body.nodes @ _rot(float(angle)).T
    nodes = pos + r
    v = vel + float(angular_velocity) * np.column_stack([-r[:, 1], r[:, 0]])
    return BodyMotion(nodes, v)
