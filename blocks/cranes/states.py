"""Crane states: naming, building from parts, and the static equilibrium."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.errors import ParameterError

from .dynamics import (
    E0,
    L0,
    N_STATES,
    RX,
    RY,
    STATE_NAMES,
    TH,
    VG,
    VT,
    VX,
    VY,
    VZ,
    WT,
    WX,
    XT,
    YT,
    ZG,
    CraneFault,
    make_rhs,
)
from .parameters import STS_CRANE, GantryCraneParameters, suspended_body, validate


def unpack(states: Any) -> dict[str, np.ndarray]:
    """Name the columns of a (n, 33) state history (``results["crane.state"]``) or of one
    state."""
    a = np.asarray(states, dtype=float)
    if a.shape[-1] != N_STATES:
        raise ParameterError(f"unpack: a crane state has {N_STATES} values, got "
                             f"{a.shape[-1]}")
    return {name: a[..., i] for i, name in enumerate(STATE_NAMES)}


def make_state(params: GantryCraneParameters = STS_CRANE, *, gantry_position_m: float = 0.0,
               trolley_position_m: float = 0.0, trolley_height_m: float | None = None,
               hoist_length_m: float = 20.0, spreader_position_m: Any = None,
               quaternion: Any = (1.0, 0.0, 0.0, 0.0), arms_down: bool = False,
               velocities: dict | None = None) -> np.ndarray:
    """A state vector from named parts (no equilibrium solve; see :func:`equilibrium`).

    Without ``spreader_position_m`` the spreader hangs with vertical, unstretched ropes
    below the trolley; ``velocities`` maps :data:`STATE_NAMES` to values.
    """
    body = suspended_body(params)
    x = np.zeros(N_STATES)
    yt = params.trolley_rest_height_m if trolley_height_m is None else trolley_height_m
    x[ZG], x[XT], x[YT], x[L0] = gantry_position_m, trolley_position_m, yt, hoist_length_m
    if spreader_position_m is None:
        a = body.attachments
        spreader_position_m = (trolley_position_m - float(np.mean(a[:, 0])),
                               yt - hoist_length_m - float(a[0, 1]),
                               gantry_position_m - float(np.mean(a[:, 2])))
    x[RX:RX + 3] = spreader_position_m
    q = np.asarray(quaternion, float)
    x[E0:E0 + 4] = q / np.linalg.norm(q)
    a = params.arms
    x[TH:TH + 6] = a.down_angle_rad if arms_down else a.up_angle_rad
    for name, v in (velocities or {}).items():
        if name not in STATE_NAMES:
            raise ParameterError(f"make_state: unknown state {name!r}; valid: "
                                 + ", ".join(STATE_NAMES))
        x[STATE_NAMES.index(name)] = v
    return x


def _small_rotation(q: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """``q`` rotated by the body-frame rotation vector ``phi``."""
    ang = float(np.linalg.norm(phi))
    if ang == 0.0:
        return q
    ax = phi / ang
    dq = np.concatenate([[math.cos(ang / 2)], math.sin(ang / 2) * ax])
    e0, e = q[0], q[1:]
    d0, d = dq[0], dq[1:]
    return np.concatenate([[e0 * d0 - e @ d], e0 * d + d0 * e + np.cross(e, d)])


def equilibrium(params: GantryCraneParameters = STS_CRANE, gantry_position_m: float = 0.0,
                trolley_position_m: float = 0.0, hoist_length_m: float = 20.0, *,
                arms_down: bool = False, tol: float = 1e-10,
                report: dict | None = None) -> np.ndarray:
    """Static equilibrium of the trolley height and the spreader pose for the given gantry
    and trolley positions and unstretched rope length, at rest (Newton on the state
    derivative; wind included).  ``report`` receives the holding forces the drives must
    give (``gantry_force``, ``trolley_force``, ``hoist_force``), the rope tensions and the
    residual.  Raises :class:`~cosim.errors.ParameterError` when there is none (e.g. slack
    ropes, the spreader below the ground).
    """
    from scipy.optimize import root

    validate(params, "equilibrium")
    rhs = make_rhs(params)
    body = suspended_body(params)
    g = params.gravity_m_s2
    tension = body.mass * g / 4.0
    yt = params.trolley_rest_height_m - (params.trolley_mass_kg + body.mass) * g \
        / params.trolley_vertical_stiffness_n_m
    length = hoist_length_m * (1.0 + tension / params.rope_axial_stiffness_n)
    x0 = make_state(params, gantry_position_m=gantry_position_m,
                    trolley_position_m=trolley_position_m, trolley_height_m=yt,
                    hoist_length_m=hoist_length_m, arms_down=arms_down)
    x0[RY] -= length - hoist_length_m
    q0 = x0[E0:E0 + 4].copy()
    cmd = (1.0, 1.0, 1.0, 1.0) if arms_down else (0.0, 0.0, 0.0, 0.0)

    def state(u):
        x = x0.copy()
        x[YT] = u[0]
        x[RX:RX + 3] = u[1:4]
        x[E0:E0 + 4] = _small_rotation(q0, u[4:7])
        return x

    def residual(u):
        x = state(u)
        try:
            d = rhs(x.tolist(), 0.0, 0.0, 0.0, *cmd)
        except CraneFault as exc:
            raise ParameterError(f"equilibrium: {exc}") from None
        return np.array([d[WT], d[VX], d[VY], d[VZ], d[WX], d[WX + 1], d[WX + 2]])

    u0 = np.concatenate([[x0[YT]], x0[RX:RX + 3], np.zeros(3)])
    sol = root(residual, u0, method="hybr", tol=1e-14)
    res = float(np.max(np.abs(residual(sol.x))))
    x = state(sol.x)
    x[E0:E0 + 4] /= np.linalg.norm(x[E0:E0 + 4])
    out: dict = {}
    d = rhs(x.tolist(), 0.0, 0.0, 0.0, *cmd, out)
    if res > tol * max(1.0, g) or min(out["rope_tension"]) <= 0.0:
        raise ParameterError(
            f"equilibrium: no static equilibrium with all ropes taut for hoist length "
            f"{hoist_length_m!r} m (residual {res:.3g} m/s^2, tensions "
            f"{[round(t) for t in out['rope_tension']]} N)")
    m_zg = params.gantry_mass_kg + params.trolley_mass_kg + \
        params.gantry_drive.equivalent_mass_kg
    m_xt = params.trolley_mass_kg + params.trolley_drive.equivalent_mass_kg
    if report is not None:
        report.update({"gantry_force": -d[VG] * m_zg, "trolley_force": -d[VT] * m_xt,
                       "hoist_force": out["hoist_load"], "rope_tension": out["rope_tension"],
                       "residual": res})
    return x
