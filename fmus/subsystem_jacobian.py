"""Output Jacobians of an FMU subsystem (mixin of :class:`~fmus.subsystem.FMUSubsystem`).

``d output / d input`` at the current communication point, for the master's
Newton loop solver and the feedthrough part of iterative Newton coupling:
directional derivatives when the FMU provides them, else finite differences of
set-inputs / get-outputs (no step).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import FMUConfigError, FMUError


class FMUJacobians:
    """``output_jacobian`` of :class:`~fmus.subsystem.FMUSubsystem`."""

    def output_jacobian(self, rel_step: float = 1e-7) -> dict:
        """``{(output, input): d output / d input}`` for the feedthrough pairs.

        Directional derivatives when the FMU provides them, else finite
        differences of set-input / get-output at the current point (no step).
        """
        drv = self.inst.drv
        reals_out = [v for v in self.out_vars if v.kind == "real"]
        out: dict = {}
        directional = bool(self.caps.get("providesDirectionalDerivative"))
        for iv in self.in_vars:
            if iv.kind != "real":
                continue
            readers = [o for o in reals_out if iv.port in self._ft[o.port]]
            if not readers:
                continue
            if directional:
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
        drv = self.inst.drv
        key = next(k for k, vs in self._in_groups if iv in vs)
        vs = next(vs for k, vs in self._in_groups if k == key)
        base_vals = list(self._pushed.get(key) or drv.get(key))
        base = self.get_outputs()
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
                outs = [drv.get(k) for k in self._out_keys]
                self._outs, self._out_dict = outs, None
                now = self.get_outputs()
                for o in readers:
                    res[o.port][:, j] = (np.ravel(np.asarray(now[o.port], float))
                                         - base_o[o.port]) / delta
            drv.set(key, base_vals)
            self._outs = [drv.get(k) for k in self._out_keys]
            self._out_dict = None
        except FMUError:
            self.inst.broken = True
            raise
        return {(o.port, iv.port): res[o.port] for o in readers}

