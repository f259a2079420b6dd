"""Output Jacobians of an FMU subsystem: an object the subsystem holds
(:class:`OutputJacobian`, ``subsystem.jacobian``), using it only through
:class:`JacobianHost`.

``d output / d input`` at the current communication point, for the master's
Newton loop solver and the feedthrough part of iterative Newton coupling:
directional derivatives when the FMU provides them, else finite differences of
set-inputs / get-outputs (no step).  It is made with the subsystem's variables,
feedthrough and value-reference sets; a test reads this module for any other host name
(``tests/unit/test_held_objects.py``).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from .errors import FMUConfigError, FMUError


class JacobianHost(Protocol):
    """What :class:`OutputJacobian` may use of its :class:`~fmus.subsystem.FMUSubsystem`."""

    #: the FMU instance (:class:`~fmus.instance.FMUInstance`: ``drv``, ``broken``)
    inst: Any

    def get_outputs(self) -> dict[str, Any]:
        """The outputs by port name, from the values read last."""

    def take_outputs(self, outs: list) -> None:
        """The output values ``outs`` (per output key) were just read from the FMU."""


class OutputJacobian:
    """``d output / d input`` of a Co-Simulation FMU (module docstring).

    Parameters
    ----------
    host : JacobianHost
        The subsystem.
    in_vars, out_vars : list
        The input and output variables.
    feedthrough : dict
        ``{output port: set of input ports}``.
    in_groups : list of (key, variables)
        The input value-reference sets.
    out_keys : list
        The output value-reference keys (in the order :meth:`JacobianHost.take_outputs`
        takes them).
    sent : dict
        The input values last set, by key (the subsystem's, shared).
    directional : bool
        The FMU provides directional derivatives.
    """

    def __init__(self, host: JacobianHost, *, in_vars: list, out_vars: list,
                 feedthrough: dict, in_groups: list, out_keys: list, sent: dict,
                 directional: bool) -> None:
        self._host = host
        self.in_vars, self.out_vars = in_vars, out_vars
        self.feedthrough = feedthrough
        self.in_groups, self.out_keys = in_groups, out_keys
        self.sent = sent
        self.directional = directional

    def __call__(self, rel_step: float = 1e-7) -> dict:
        """``{(output, input): d output / d input}`` for the feedthrough pairs.

        Directional derivatives when the FMU provides them, else finite
        differences of set-input / get-output at the current point (no step).
        """
        drv = self._host.inst.drv
        reals_out = [v for v in self.out_vars if v.kind == "real"]
        out: dict = {}
        for iv in self.in_vars:
            if iv.kind != "real":
                continue
            readers = [o for o in reals_out if iv.port in self.feedthrough[o.port]]
            if not readers:
                continue
            if self.directional:
                unknowns = [o.vr for o in readers]
                cols = []
                for j in range(iv.size):
                    seed = [0.0] * iv.size
                    seed[j] = 1.0
                    if iv.size == 1:
                        cols.append(drv.directional(unknowns, [iv.vr], [1.0]))
                    else:
                        raise FMUConfigError("directional derivatives of array inputs are "
                                             "not supported")
                col = np.array(cols, dtype=float).T
                for i, o in enumerate(readers):
                    out[(o.port, iv.port)] = col[i:i + 1, :]
                continue
            out.update(self._fd_column(iv, readers, rel_step))
        return out

    def _fd_column(self, iv: Any, readers: list, rel_step: float) -> dict:
        host = self._host
        drv = host.inst.drv
        key = next(k for k, vs in self.in_groups if iv in vs)
        vs = next(vs for k, vs in self.in_groups if k == key)
        base_vals = list(self.sent.get(key) or drv.get(key))
        base = host.get_outputs()
        base_o = {o.port: np.ravel(np.asarray(base[o.port], float)).copy() for o in readers}
        offset = 0
        for v in vs:
            if v is iv:
                break
            offset += v.size
        res = {o.port: np.empty((o.size, iv.size)) for o in readers}
        try:
            for j in range(iv.size):
                vals = list(base_vals)
                x = float(vals[offset + j])
                delta = rel_step * max(1.0, abs(x))
                vals[offset + j] = x + delta
                drv.set(key, vals)
                host.take_outputs([drv.get(k) for k in self.out_keys])
                now = host.get_outputs()
                for o in readers:
                    res[o.port][:, j] = (np.ravel(np.asarray(now[o.port], float))
                                         - base_o[o.port]) / delta
            drv.set(key, base_vals)
            host.take_outputs([drv.get(k) for k in self.out_keys])
        except FMUError:
            host.inst.broken = True
            raise
        return {(o.port, iv.port): res[o.port] for o in readers}
