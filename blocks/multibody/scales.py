"""The scales that make a mechanism's checks and penalties the same in any units.

Computed once when the mechanism is finalized (:meth:`.Mechanism.finalize`): the length
scale and per constraint row the size of a unit violation (:func:`length_scales`), the
metric of the rank measure (:func:`rank_metric`), the weight of each row in the penalty
formulations (:func:`penalty_rows`), and the rows the user dropped
(:func:`dropped_mask`).
"""

from __future__ import annotations

import numpy as np

from cosim.block import did_you_mean
from cosim.errors import BuildError

__all__ = ["dropped_mask", "length_scales", "penalty_rows", "rank_metric"]


def length_scales(markers: dict, bodies: dict, joints: dict,
                  prims: list) -> tuple[float, np.ndarray]:
    """The mechanism's length scale ``L`` (largest marker offset on a moving body or
    distance-joint length, 1 m if none) and per constraint row the size of a unit
    violation: ``L`` for point and plane rows, 1 for angle rows, ``2 l L`` for a
    distance row ``|d|^2 - l^2`` (so ``Phi / scale`` is a length error over ``L`` or
    an angle)."""
    L = 0.0
    for (bname, _), mk in markers.items():
        if bodies[bname].kind != "ground":
            L = max(L, float(np.linalg.norm(mk.s)))
    for j in joints.values():
        L = max(L, float(getattr(j, "length", 0.0)))
    L = L if L > 0 else 1.0
    scale = []
    for p in prims:
        name = type(p).__name__
        if name in ("Dot1", "Angle"):
            scale += [1.0] * p.rows
        elif name == "Distance":
            scale += [2.0 * max(abs(float(p.fn(0.0)[0])), 1e-12) * L] * p.rows
        else:
            scale += [L] * p.rows
    return L, np.array(scale)


def rank_metric(markers: dict, moving: list, nv: int, length_scale: float) -> np.ndarray:
    """``W = D^-2`` (nv x nv, diagonal) of the rank measure ``J W J'``
    (:meth:`.Mechanism.rank_measure`): ``D`` is 1 on translational velocities and the body's
    length (its largest marker offset, else the mechanism's ``L``) on angular ones, so
    that ``J D^-1`` is dimensionless: the measure is the same in any unit of length
    (and mass and time, which ``J`` does not hold).  Kinematic, not the mass metric
    ``M^-1``: a light link between two joints would make its rows look dependent."""
    size: dict = {}
    for (bname, _), mk in markers.items():
        size[bname] = max(size.get(bname, 0.0), float(np.linalg.norm(mk.s)))
    w = np.ones(nv)
    for b in moving:
        rot = {"planar": (2,), "spatial": (3, 4, 5)}.get(b.kind, ())
        Lb = size.get(b.name, 0.0) or length_scale
        for k in rot:
            w[b.iv + k] = 1.0 / (Lb * Lb)
    return np.diag(w)


def penalty_rows(moving: list, M: np.ndarray, length_scale: float, row_scale: np.ndarray,
                 prims: list) -> np.ndarray:
    """Per constraint row, the weight the penalty formulations multiply by their
    ``penalty`` factor: the largest body mass ``m`` on a point row, ``m L^2`` on an
    angle row (``L`` the length scale), ``m / l^2`` on a distance row ``|d|^2 - l^2``
    (``J' a J = 4 m`` along the link), so that ``J' a J`` has the units of ``M`` row by
    row and the run is the same in any units (one ``penalty * max(diag M)`` for all
    rows mixed kg and kg m^2; a point row and a distance row of 1 m weigh as before)."""
    mass = 0.0
    for b in moving:
        n = {"planar": 2, "spatial": 3}.get(b.kind, b.nv)
        if n:
            mass = max(mass, float(np.max(np.diag(M)[b.iv:b.iv + n])))
    mass = mass if mass > 0 else 1.0
    w = mass * (length_scale / row_scale) ** 2
    r = 0
    for p in prims:
        if type(p).__name__ == "Distance":  # row_scale 2 l L: m / (4 l^2) -> m / l^2
            w[r:r + p.rows] *= 4.0
        r += p.rows
    return w


def dropped_mask(name: str, row_labels: list, drop: list) -> np.ndarray:
    """The rows named in :meth:`.Mechanism.drop_rows` (unknown names are a BuildError)."""
    mask = np.zeros(len(row_labels), bool)
    index = {label: i for i, label in enumerate(row_labels)}
    for label in drop:
        if label not in index:
            joint = label.split(".")[0]
            rows = [r for r in row_labels if r.split(".")[0] == joint]
            raise BuildError(f"mechanism '{name}': drop_rows('{label}'): no such "
                             "constraint row; "
                             + (f"joint '{joint}' has rows {', '.join(rows)}" if rows else
                                f"rows are named 'joint.row'{did_you_mean(label, index)}"))
        mask[index[label]] = True
    return mask
