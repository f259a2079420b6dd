r"""Operator references for the crane: velocity levers and guide-arm buttons as a program.

:class:`OperatorProgram` plays a recorded or scripted operator: piecewise-linear velocity
references for the gantry, trolley and hoist (m/s, hoisting positive; linear between
breakpoints, held after the last) and piecewise-constant guide-arm commands (1 = down,
0 = up, per control group of the seed: arms 1+2, 3+4, 5, 6).  Every breakpoint is a time
event, so fixed-step integrators stop exactly there and the ramps' corners and the
commands' steps are never straddled.  :func:`trapezoid` builds a move of a given distance
with acceleration ramps, its corners on the solver's time grid.

Ports: :class:`OperatorProgram`.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

import numpy as np

from blocks.electric.crane_drive import BISECT_RIGHT_C
from cosim.block import Block
from cosim.codegen.model import CModel
from cosim.errors import ParameterError

VELOCITY_CHANNELS = ("gantry", "trolley", "hoist")
ARM_CHANNELS = ("arms_12", "arms_34", "arm_5", "arm_6")


def trapezoid(t0: float, distance_m: float, v_max: float, accel: float,
              grid_s: float = 0.005) -> list[tuple[float, float]]:
    """Breakpoints ``[(t, v)]`` of a move of ``distance_m`` (signed) starting at ``t0``:
    ramp up at about ``accel``, cruise at most at ``v_max``, ramp down; the corner times
    are multiples of ``grid_s`` (``t0`` should be one) and the cruise speed is adjusted
    (down) so the integral of the profile is exactly ``distance_m``."""
    if not (v_max > 0 and accel > 0 and grid_s > 0):
        raise ParameterError("trapezoid: v_max, accel and grid_s must be > 0")
    d = abs(distance_m)
    sign = 1.0 if distance_m >= 0 else -1.0
    if d == 0.0:
        return [(t0, 0.0)]
    ta = v_max / accel
    if v_max * ta > d:  # triangular: never reaches v_max
        ta = math.sqrt(d / accel)
    n = max(1, round(ta / grid_s))
    ta = n * grid_s
    # cruise time rounded up, so the adjusted cruise speed stays at or below v_max
    tc = max(0.0, math.ceil((d / min(v_max, accel * ta) - ta) / grid_s - 1e-9) * grid_s)
    v = d / (ta + tc)
    ts = [t0, t0 + ta, t0 + ta + tc, t0 + 2 * ta + tc]
    pts = [(round(ts[0], 9), 0.0), (round(ts[1], 9), sign * v)]
    if tc > 0:
        pts.append((round(ts[2], 9), sign * v))
    pts.append((round(ts[3], 9), 0.0))
    return pts


def _check_points(owner: str, name: str, pts: Any) -> list[tuple[float, float]]:
    try:
        out = [(float(t), float(v)) for t, v in pts]
    except (TypeError, ValueError):
        raise ParameterError(f"{owner}: {name} must be (time, value) pairs, got "
                             f"{pts!r}") from None
    for (t1, _), (t2, _) in zip(out, out[1:]):
        if not t2 > t1:
            raise ParameterError(f"{owner}: {name} breakpoint times must increase, got "
                                 f"{t1!r} then {t2!r}")
    if any(not (math.isfinite(t) and math.isfinite(v)) or t < 0 for t, v in out):
        raise ParameterError(f"{owner}: {name} must be finite with times >= 0")
    return out


class OperatorProgram(Block):
    r"""Scripted operator (module docstring): piecewise-linear velocities, piecewise-constant
    arm commands.

    .. math:: v(t) = v_k + \frac{t - t_k}{t_{k+1} - t_k}(v_{k+1} - v_k), \qquad
              c(t) = c_k \quad (t_k \le t < t_{k+1})

    Ports
    -----
    out  gantry_velocity_ref   scalar [m/s]  time only (as every output)
    out  trolley_velocity_ref  scalar [m/s]  time only
    out  hoist_velocity_ref    scalar [m/s]  time only, hoisting positive
    out  arms_12, arms_34, arm_5, arm_6  scalar [1]  guide-arm commands (1 = down); time
                                         only

    Parameters
    ----------
    gantry, trolley, hoist : list of (t, v)
        Velocity breakpoints [s, m/s]; before the first breakpoint the first value, after
        the last the last value.  Concatenate :func:`trapezoid` moves for point-to-point
        motions.
    arms_12, arms_34, arm_5, arm_6 : list of (t, level)
        Command changes [s, 1]; 0 before the first.
    """

    def __init__(self, name: str, *, gantry: Any = (), trolley: Any = (), hoist: Any = (),
                 arms_12: Any = (), arms_34: Any = (), arm_5: Any = (),
                 arm_6: Any = ()) -> None:
        super().__init__(name)
        own = f"OperatorProgram '{name}'"
        vel = {k: _check_points(own, k, v) for k, v in
               (("gantry", gantry), ("trolley", trolley), ("hoist", hoist))}
        arm = {k: _check_points(own, k, v) for k, v in
               (("arms_12", arms_12), ("arms_34", arms_34), ("arm_5", arm_5),
                ("arm_6", arm_6))}
        self.program = {**vel, **arm}
        times = sorted({t for pts in self.program.values() for t, _ in pts})
        # segments [times[k], times[k+1]): every channel is a + b t on each
        self._t = [0.0] + [t for t in times if t > 0.0]
        segs = []
        for k, ts in enumerate(self._t):
            te = self._t[k + 1] if k + 1 < len(self._t) else ts + 1.0
            row = []
            for ch in VELOCITY_CHANNELS:
                va, vb = self._linear(vel[ch], ts), self._linear(vel[ch], te)
                b = (vb - va) / (te - ts)
                row.extend((va - b * ts, b))
            for ch in ARM_CHANNELS:
                row.append(self._step(arm[ch], ts))
            segs.append(tuple(row))
        self._segs = segs
        if len(self._t) > 1:
            self.declare_time_event(self._t[1:])
        specs = [(f"{ch}_velocity_ref", "m/s") for ch in VELOCITY_CHANNELS] + \
            [(ch, "1") for ch in ARM_CHANNELS]
        outs = self.declare_outputs(specs, self._values, depends_on=())
        (self.gantry_velocity_ref, self.trolley_velocity_ref, self.hoist_velocity_ref,
         self.arms_12, self.arms_34, self.arm_5, self.arm_6) = outs

    @staticmethod
    def _linear(pts: list, t: float) -> float:
        if not pts:
            return 0.0
        if t <= pts[0][0]:
            return pts[0][1]
        for (t1, v1), (t2, v2) in zip(pts, pts[1:]):
            if t <= t2:
                return v1 + (v2 - v1) * (t - t1) / (t2 - t1)
        return pts[-1][1]

    @staticmethod
    def _step(pts: list, t: float) -> float:
        v = 0.0
        for ti, vi in pts:
            if ti <= t + 1e-12:
                v = vi
        return v

    def _values(self, ctx: Any) -> tuple:
        # segment chosen at ctx.mode_time (the start of the integration interval), so a
        # step ending exactly on a breakpoint sees the left segment (cf. sources.Step)
        k = bisect_right(self._t, ctx.mode_time + 1e-12) - 1
        ag, bg, at, bt, ah, bh, c12, c34, c5, c6 = self._segs[k if k > 0 else 0]
        t = ctx.time
        return ag + bg * t, at + bt * t, ah + bh * t, c12, c34, c5, c6

    def c_model(self, cg: Any) -> CModel:
        """C form: mirrors :meth:`_values` (the segment of ``mode_time + 1e-12`` by
        ``bisect_right`` in the breakpoint times, then ``a + b t`` or the command level)."""
        cg.helper("cosim_bisect_right", BISECT_RIGHT_C)
        T = cg.const(np.array(self._t))
        S = cg.const(np.array(self._segs, dtype=float))
        n, w = len(self._t), len(self._segs[0])
        head = (f"int k = cosim_bisect_right({T.ptr}, {n}, {cg.mode_t} + 1e-12) - 1;\n"
                f"const double *r = {S.ptr} + {w} * (k > 0 ? k : 0);\n")
        out = {}
        ports = (self.gantry_velocity_ref, self.trolley_velocity_ref, self.hoist_velocity_ref)
        for j, port in enumerate(ports):
            out[port.name] = ("{\n" + head + f"{cg.y(port)} = r[{2 * j}] + r[{2 * j + 1}] * "
                              f"{cg.t};\n}}")
        for j, port in enumerate((self.arms_12, self.arms_34, self.arm_5, self.arm_6)):
            out[port.name] = "{\n" + head + f"{cg.y(port)} = r[{6 + j}];\n}}"
        return CModel(outputs=out, time_dependent=True)

    def at(self, t: float) -> dict[str, float]:
        """All channels at time ``t`` (right-continuous), for plots and tests."""
        k = max(0, bisect_right(self._t, t + 1e-12) - 1)
        ag, bg, at, bt, ah, bh, c12, c34, c5, c6 = self._segs[k]
        return {"gantry": ag + bg * t, "trolley": at + bt * t, "hoist": ah + bh * t,
                "arms_12": c12, "arms_34": c34, "arm_5": c5, "arm_6": c6}
