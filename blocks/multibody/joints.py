"""Joints: constraint primitives composed between two markers.

Joint frames are the markers' frames: a marker's axes ``f, g, h`` are its x, y
and z axes (planar: x and y).  The joint axis is ``h`` (spatial), the sliding
direction of a planar prismatic joint is the x axis of marker i.

===================  =====================================================  =========
joint                primitives (Korkealaakso's Table 3)                    removes
===================  =====================================================  =========
planar revolute      points                                                 2
planar prismatic     dot2(g_i, d), angle                                    2
planar fixed         points, angle                                          3
spherical            points                                                 3
universal            points, dot1(g_i, f_j)                                 4
revolute             points, dot1(f_i, h_j), dot1(g_i, h_j)                 5
cylindrical          dot1(f_i, h_j), dot1(g_i, h_j), dot2(f_i, d), dot2(g_i, d)  4
prismatic            cylindrical + dot1(f_i, g_j)                           5
planar (3-D)         dot1(f_i, h_j), dot1(g_i, h_j), dot2(h_i, d)          3
fixed                points, dot1(f_i,h_j), dot1(g_i,h_j), dot1(f_i,g_j)    6
distance             |d|^2 = L^2                                            1
knife edge           n_j . P_j' = 0 (nonholonomic, velocity level)          1
rolling disk         disk_plane + disk_slip (2 nonholonomic rows)          1 + 2
path driver          P_j = r_i + A_i c(t) (prescribed relative path)        dim
===================  =====================================================  =========

Driving constraints prescribe a joint coordinate as ``f(t)`` (a callable
returning ``(f, f', f'')``, see :func:`driver`): ``AngleDriver`` (planar
relative angle), ``SlideDriver`` (displacement along marker i's x axis),
``DistanceDriver``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cosim.errors import BuildError

from .constraints import (
    Angle,
    DiskNoSlip,
    DiskPlane,
    Distance,
    Dot1,
    Dot2,
    NoSideSlip,
    PathPoint,
    Points,
    const,
)


def driver(f: Callable | float, df: Callable | None = None,
           ddf: Callable | None = None) -> Callable:
    """A driving function ``t -> (f, f', f'')`` from callables (or a constant).

    ``driver(lambda t: w * t, lambda t: w, lambda t: 0)``; derivatives by
    central differences when not given (accurate to ~1e-6 of f'').
    """
    if not callable(f):
        return const(f)
    if df is None or ddf is None:
        h = 1e-4

        def df_(t):
            return (f(t + h) - f(t - h)) / (2 * h)

        def ddf_(t):
            return (f(t + h) - 2 * f(t) + f(t - h)) / (h * h)
        df = df or df_
        ddf = ddf or ddf_
    return lambda t: (float(f(t)), float(df(t)), float(ddf(t)))


class Joint:
    """A named set of constraint primitives between marker ``mi`` (on body i) and ``mj``."""

    kind = "joint"
    dims: tuple[int, ...] = (2, 3)

    def __init__(self, name: str, mi: Any, mj: Any) -> None:
        self.name, self.mi, self.mj = name, mi, mj
        if mi.body is mj.body:
            raise BuildError(f"joint '{name}': both markers are on body '{mi.body.name}'; a "
                             "joint connects two different bodies")
        dim = mi.body.dim
        if dim not in self.dims:
            raise BuildError(f"joint '{name}' ({self.kind}) is not defined for "
                             f"{'planar' if dim == 2 else 'spatial'} mechanisms")
        self.primitives: list = []
        self.labels: list[str] = []
        self.build()
        self.rows = sum(p.rows for p in self.primitives)

    def build(self) -> None:
        raise NotImplementedError

    def _add(self, prim: Any, label: str) -> None:
        self.primitives.append(prim)
        self.labels.extend([label] if prim.rows == 1 else
                           [f"{label}[{k}]" for k in range(prim.rows)])

    def _axes(self, m: Any) -> tuple:
        """Marker axes in body coordinates (columns of R)."""
        return tuple(m.R[:, k] for k in range(m.R.shape[1]))


class Revolute(Joint):
    kind = "revolute"

    def build(self):
        self._add(Points(self, self.mi, self.mj), "point")
        if self.mi.body.dim == 3:
            fi, gi, _ = self._axes(self.mi)
            hj = self._axes(self.mj)[2]
            self._add(Dot1(self, self.mi, self.mj, fi, hj), "axis_x")
            self._add(Dot1(self, self.mi, self.mj, gi, hj), "axis_y")


class Spherical(Joint):
    kind = "spherical"
    dims = (3,)

    def build(self):
        self._add(Points(self, self.mi, self.mj), "point")


class Universal(Joint):
    """Cross axes: marker i's y axis stays perpendicular to marker j's x axis."""

    kind = "universal"
    dims = (3,)

    def build(self):
        self._add(Points(self, self.mi, self.mj), "point")
        self._add(Dot1(self, self.mi, self.mj, self._axes(self.mi)[1], self._axes(self.mj)[0]),
                  "cross")


class Cylindrical(Joint):
    kind = "cylindrical"
    dims = (3,)

    def build(self):
        fi, gi, _ = self._axes(self.mi)
        hj = self._axes(self.mj)[2]
        self._add(Dot1(self, self.mi, self.mj, fi, hj), "axis_x")
        self._add(Dot1(self, self.mi, self.mj, gi, hj), "axis_y")
        self._add(Dot2(self, self.mi, self.mj, fi), "line_x")
        self._add(Dot2(self, self.mi, self.mj, gi), "line_y")


class Prismatic(Joint):
    """Sliding along marker i's x axis (planar) or z axis (spatial), no rotation."""

    kind = "prismatic"

    def build(self):
        if self.mi.body.dim == 2:
            gi = self._axes(self.mi)[1]
            self._add(Dot2(self, self.mi, self.mj, gi), "line")
            self._add(Angle(self, self.mi, self.mj), "angle")
            return
        fi, gi, _ = self._axes(self.mi)
        fj, gj, hj = self._axes(self.mj)
        self._add(Dot1(self, self.mi, self.mj, fi, hj), "axis_x")
        self._add(Dot1(self, self.mi, self.mj, gi, hj), "axis_y")
        self._add(Dot2(self, self.mi, self.mj, fi), "line_x")
        self._add(Dot2(self, self.mi, self.mj, gi), "line_y")
        self._add(Dot1(self, self.mi, self.mj, fi, gj), "twist")


class Planar(Joint):
    """Spatial planar joint: marker j's origin moves in marker i's x-y plane, z axes parallel."""

    kind = "planar"
    dims = (3,)

    def build(self):
        fi, gi, hi = self._axes(self.mi)
        hj = self._axes(self.mj)[2]
        self._add(Dot1(self, self.mi, self.mj, fi, hj), "normal_x")
        self._add(Dot1(self, self.mi, self.mj, gi, hj), "normal_y")
        self._add(Dot2(self, self.mi, self.mj, hi), "plane")


class Fixed(Joint):
    kind = "fixed"

    def build(self):
        self._add(Points(self, self.mi, self.mj), "point")
        if self.mi.body.dim == 2:
            self._add(Angle(self, self.mi, self.mj), "angle")
            return
        fi, gi, _ = self._axes(self.mi)
        fj, gj, hj = self._axes(self.mj)
        self._add(Dot1(self, self.mi, self.mj, fi, hj), "axis_x")
        self._add(Dot1(self, self.mi, self.mj, gi, hj), "axis_y")
        self._add(Dot1(self, self.mi, self.mj, fi, gj), "twist")


class DistanceJoint(Joint):
    """``|P_j - P_i| = L`` (a massless rod with ball ends)."""

    kind = "distance"

    def __init__(self, name, mi, mj, length: float) -> None:
        if not length > 0:
            raise BuildError(f"joint '{name}': distance must be positive, got {length!r} m")
        self.length = float(length)
        super().__init__(name, mi, mj)

    def build(self):
        self._add(Distance(self, self.mi, self.mj, const(self.length)), "distance")


class _Driven(Joint):
    """A joint whose constraint follows a driving function ``fn(t) -> (f, f', f'')``."""

    def __init__(self, name, mi, mj, fn: Callable) -> None:
        self.fn = fn
        super().__init__(name, mi, mj)


class AngleDriver(_Driven):
    """Planar: the angle from marker i's x axis to marker j's x axis is ``f(t)``."""

    kind = "angle_driver"
    dims = (2,)

    def build(self):
        self._add(Angle(self, self.mi, self.mj, self.fn), "angle")


class SlideDriver(_Driven):
    """Displacement of marker j's origin along marker i's x axis is ``f(t)``."""

    kind = "slide_driver"

    def build(self):
        self._add(Dot2(self, self.mi, self.mj, self._axes(self.mi)[0], self.fn), "slide")


class DistanceDriver(_Driven):
    """``|P_j - P_i| = L(t)`` (a linear actuator between two points)."""

    kind = "distance_driver"

    def build(self):
        self._add(Distance(self, self.mi, self.mj, self.fn), "length")


class PathDriver(_Driven):
    """Marker j's origin follows ``c(t)`` given in body i's frame (prescribed relative motion).

    ``fn(t) -> (c, c', c'')`` (vectors in body-i coordinates, marker i unused
    except for its body).
    """

    kind = "path_driver"

    def build(self):
        self._add(PathPoint(self, self.mi, self.mj, self.fn), "path")


class KnifeEdge(Joint):
    """Nonholonomic: marker j's origin cannot move along its y axis (blade along x).

    Marker i must be on the ground (velocities are absolute).  Planar (knife
    edge, skate, non-slipping wheel seen from above) and spatial.
    """

    kind = "knife_edge"

    def build(self):
        if self.mi.body.kind != "ground":
            raise BuildError(f"joint '{self.name}': a knife edge acts relative to the ground; "
                             "give a ground marker as marker i")
        self._add(NoSideSlip(self, self.mi, self.mj), "no_side_slip")


class RollingDisk(Joint):
    """A thin disk of ``radius`` rolling without slip on a plane (spatial).

    Marker i is on the ground: its origin is a point of the plane, its z axis
    the plane's normal (pointing to the disk's side), its x and y axes the
    directions of the two no-slip rows.  Marker j is at the disk's centre with
    its z axis along the disk's axis (the disk lies in marker j's x-y plane).
    Rows: ``contact`` (holonomic: the lowest rim point lies on the plane) and
    ``no_slip[0..1]`` (nonholonomic: the disk's material point there has no
    velocity along the plane); see :class:`.constraints.DiskPlane` and
    :class:`.constraints.DiskNoSlip`.  Singular when the disk lies flat.
    The compiled kernel does not cover it: mechanisms with a rolling disk use
    the Python evaluation.
    """

    kind = "rolling_disk"
    dims = (3,)

    def __init__(self, name, mi, mj, radius: float) -> None:
        try:
            r = float(radius)
        except (TypeError, ValueError):
            r = float("nan")
        if not (np.isfinite(r) and r > 0):
            raise BuildError(f"joint '{name}': radius must be positive and finite, got "
                             f"{radius!r} m")
        self.radius = r
        super().__init__(name, mi, mj)

    def build(self):
        if self.mi.body.kind != "ground":
            raise BuildError(f"joint '{self.name}': a rolling disk rolls on the ground; give a "
                             "ground marker (a point of the plane, z axis = its normal) as "
                             "marker i")
        if self.mj.body.kind != "spatial":
            raise BuildError(f"joint '{self.name}': the disk must be a rigid body (marker j on "
                             f"a spatial body, not a {self.mj.body.kind})")
        self._add(DiskPlane(self, self.mi, self.mj, self.radius), "contact")
        self._add(DiskNoSlip(self, self.mi, self.mj, self.radius), "no_slip")


JOINTS = {"revolute": Revolute, "spherical": Spherical, "universal": Universal,
          "cylindrical": Cylindrical, "prismatic": Prismatic, "planar": Planar,
          "fixed": Fixed, "distance": DistanceJoint, "angle_driver": AngleDriver,
          "slide_driver": SlideDriver, "distance_driver": DistanceDriver,
          "knife_edge": KnifeEdge, "path_driver": PathDriver,
          "rolling_disk": RollingDisk}
