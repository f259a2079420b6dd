r"""Power bonds between co-simulation subsystems and the energy their coupling creates.

A power bond pairs an effort output of subsystem A (force, torque, pressure,
voltage) that feeds an input of B with a flow output of B (velocity, speed,
volume flow, current) that feeds an input of A.  Each side integrates with
the other's signal as a polynomial over the macro step, so the power A sends
and the power B receives differ; over a step the coupling creates

.. math:: \Delta E = \int_0^H \bigl(\tilde e(\tau) \hat f(\tau)
          - \hat e(\tau) \tilde f(\tau)\bigr)\, d\tau

``~e, ~f``: the polynomials the other side integrated with (converted back to
the source units); ``^e, ^f``: the published effort and flow, represented by
the polynomial one order higher through the new sample (the same pair as the
extrapolation-defect estimate of :mod:`cosim.step_control`).  Integrated by
5-point Gauss-Legendre (exact for these polynomials).  Zero for a converged
iterative coupling; units: effort x flow x s (J for N and m/s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import BuildError, PortError
from .extrapolation import SignalHistory, evaluate

_GL_X, _GL_W = np.polynomial.legendre.leggauss(5)


@dataclass
class PowerBond:
    """One resolved bond: source histories and the inputs they feed (with unit maps)."""

    effort: SignalHistory
    effort_input: tuple  # (subsystem, input) of B
    effort_scale: float
    effort_bias: float
    flow: SignalHistory
    flow_input: tuple  # (subsystem, input) of A
    flow_scale: float
    flow_bias: float

    def residual(self, fed: dict, t0: int, h: float) -> float:
        """Energy created over the step ``[t0, t0 + h]`` (``t0`` ticks, ``h`` s)."""
        e_poly = fed.get(self.effort_input[0], {}).get(self.effort_input[1])
        f_poly = fed.get(self.flow_input[0], {}).get(self.flow_input[1])
        if e_poly is None or f_poly is None:
            return 0.0
        e_hat = self.effort.polynomial(len(e_poly), t0)  # one order above what was fed
        f_hat = self.flow.polynomial(len(f_poly), t0)
        total = 0.0
        for x, w in zip(_GL_X, _GL_W):
            tau = 0.5 * h * (x + 1.0)
            e_in = (evaluate(e_poly, tau) - self.effort_bias) / self.effort_scale
            f_in = (evaluate(f_poly, tau) - self.flow_bias) / self.flow_scale
            total += 0.5 * h * w * float(e_in @ evaluate(f_hat, tau)
                                         - evaluate(e_hat, tau) @ f_in)
        return total


    def correction(self, order: int, t0: int, h: float, last_energy: float) -> float:
        r"""Effort offset (source units) that returns ``last_energy`` over the next step.

        .. math:: \delta = -\frac{\Delta E_{k-1}}{\int_0^H \tilde f(\tau)\, d\tau}

        with ``~f`` the flow extrapolated over the coming step (order ``order``): the
        receiving side gets ``e + delta`` and so absorbs the energy the coupling created
        in the step before (after Benedikt et al.'s nearly energy-preserving coupling
        element).  0 where the flow's integral is too small to carry it (|mean flow|
        below 1e-6 of the flow's size); the master clips the offset to 1 % of the effort
        (at flow reversals the full offset kicks the system: measured divergence).

        Measured on the LIM power-bond variant (2 s, H = 1 ms, max |energy drift|):
        Jacobi ZOH 1422 -> 942 J, linear 2.33 -> 1.65 J, quadratic 1.11 -> 0.56 J;
        Gauss-Seidel linear 1.81 -> 1.45 J, quadratic 0.48 -> 0.24 J, but ZOH 48 -> 76 J
        (worse).  A reduction, not an energy-preserving coupling.
        """
        if last_energy == 0.0 or not self.flow.t:
            return 0.0
        c = self.flow.polynomial(order, t0)
        rows = [np.asarray(x, float).reshape(-1) for x in c]
        integral = sum(r * h ** (j + 1) / (j + 1) for j, r in enumerate(rows))
        if integral.size != 1:
            return 0.0  # vector bonds: no scalar offset
        size = max(abs(float(self.flow.last[0])), float(np.max(np.abs(rows[0]))))
        if abs(float(integral[0])) <= 1e-6 * h * max(size, 1e-300):
            return 0.0
        return -last_energy / float(integral[0])


def resolve(master: Any, effort: str, flow: str) -> PowerBond:
    """The bond ``(effort, flow)`` of ``master``'s connections, or a PortError saying why not."""
    from .master_wiring import end
    e = end(master.by_name, effort, "output")
    f = end(master.by_name, flow, "output")
    if e[0] == f[0]:
        raise PortError(f"power bond ({effort}, {flow}): effort and flow come from the same "
                        "subsystem; give the effort output of A and the flow output of B")
    for src in (e, f):
        if master.by_name[src[0]].rate != 1:
            raise BuildError(f"power bond ({effort}, {flow}): subsystem '{src[0]}' has rate "
                             f"{master.by_name[src[0]].rate}; energy residuals need rate 1")

    def consumer(src: tuple, sub: str, what: str) -> tuple:
        hits = [(d, sc, b) for d, (s_, sc, b) in master.sources.items()
                if s_ == src and d[0] == sub]
        if len(hits) != 1:
            raise PortError(f"power bond ({effort}, {flow}): the {what} output "
                            f"'{'.'.join(src)}' must feed exactly one input of subsystem "
                            f"'{sub}' (found {len(hits)}); the bond pairs an effort output "
                            "of A feeding B with a flow output of B feeding A")
        return hits[0]
    ed, e_sc, e_b = consumer(e, f[0], "effort")
    fd, f_sc, f_b = consumer(f, e[0], "flow")
    return PowerBond(master.histories[e], ed, e_sc, e_b, master.histories[f], fd, f_sc, f_b)


def correct_inputs(bonds: list, sub: str, polys: dict, input_orders: dict, t0: int,
                   h: float, last_energy: float) -> None:
    """Add each bond's energy-returning offset (:meth:`PowerBond.correction`) to the
    effort inputs of subsystem ``sub`` in ``polys`` (in place), bounded to 1 % of the
    input's value (a small nudge, never a kick)."""
    for b in bonds:
        name, inp = b.effort_input
        if name != sub or inp not in polys:
            continue
        order = input_orders[b.flow_input]
        delta = b.correction(order, t0, h, last_energy) * b.effort_scale
        c = polys[inp]
        e0 = abs(float(np.ravel(c[0])[0]))
        delta = max(-0.01 * e0, min(0.01 * e0, delta))
        if delta:
            if isinstance(c, tuple):
                polys[inp] = (c[0] + delta,) + c[1:]
            else:
                c = c.copy()
                c[0] = c[0] + delta
                polys[inp] = c
