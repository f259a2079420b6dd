"""The coupled outputs of a co-simulation master as one vector ``z``: what iterative
coupling, the loop solver at a communication point and Richardson's step control iterate
and compare.

Only the Real coupled outputs are in ``z``; non-Real ones (Boolean, Integer, Enumeration,
String, Binary: a history that is ``exact``) are held and propagated, compared by ``==``
(:meth:`InterfaceVectors.exact_last`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import BuildError
from .extrapolation import evaluate
from .time import SECONDS_PER_TICK

_NS = SECONDS_PER_TICK


class InterfaceVectors:
    """``z`` of one master (module docstring).

    Parameters
    ----------
    subsystems : list
    histories : dict
        ``(subsystem, output)`` -> :class:`~cosim.extrapolation.SignalHistory`.
    coupled_sources : list
        The ``(subsystem, output)`` keys that feed an input, sorted.
    sources : dict
        ``(subsystem, input)`` -> ``((subsystem, output), scale, bias)``.
    orders : dict
        ``(subsystem, input)`` -> extrapolation order asked for.
    feeds : dict
        Per subsystem name, its ``(input, source history, order, scale, bias)``.
    """

    def __init__(self, subsystems: list, histories: dict, coupled_sources: list,
                 sources: dict, orders: dict, feeds: dict) -> None:
        self.subsystems = subsystems
        self.histories = histories
        self.coupled_sources = coupled_sources
        self.sources = sources
        self.orders = orders
        self.feeds = feeds
        self._real_keys: list | None = None
        self._predict_orders: list | None = None
        self._lists: tuple | None = None  # see _histories()

    @property
    def real_sources(self) -> list:
        """The coupled outputs the master iterates numerically: the Real ones; known once
        every output has been published (``MasterScheduler.initialize``)."""
        keys = self._real_keys
        if keys is None:
            hist = self.histories
            keys = [k for k in self.coupled_sources if not hist[k].exact]
            if all(hist[k].t for k in self.coupled_sources):
                self._real_keys = keys
        return keys

    def _histories(self) -> tuple:
        """``(Real histories, whether all are scalar, their sizes, non-Real histories, all
        coupled histories)``, in the order of ``z``; kept once :attr:`real_sources` is
        known (before, a history's kind may still change with its first value)."""
        lists = self._lists
        if lists is None:
            keys = self.real_sources
            hist = self.histories
            reals = [hist[k] for k in keys]
            coupled = [hist[k] for k in self.coupled_sources]
            lists = (reals, all(h.scalar for h in reals),
                     [h.last.size if h.v else 1 for h in reals],
                     [h for h in coupled if h.exact], coupled)
            if self._real_keys is not None:
                self._lists = lists
        return lists

    def pack_last(self) -> np.ndarray:
        """The latest published values of the Real coupled outputs as one vector."""
        reals, scalar = self._histories()[:2]
        if not reals:
            return np.zeros(0)
        if scalar:  # Python floats (SignalHistory keeps Real scalars so): one array
            return np.array([h.v[-1] for h in reals])
        return np.concatenate([h.last for h in reals])

    def pack_last_values(self) -> list:
        """:meth:`pack_last` as a list of floats (what iterative coupling iterates on)."""
        reals, scalar = self._histories()[:2]
        if scalar:
            return [h.v[-1] for h in reals]
        return self.pack_last().tolist()

    def exact_last(self) -> list:
        """The latest published values of the non-Real coupled outputs (compared by ``==``)."""
        return [h.last_value if h.scalar else h.last.tolist() for h in self._histories()[3]]

    def push(self, t: int, z: Any, held: list) -> None:
        """Push ``z`` (as :meth:`pack_last`) and the non-Real values ``held`` (as
        :meth:`exact_last`) onto the histories at ``t`` ticks (:meth:`truncate_after`
        takes them off)."""
        reals, scalar, sizes, exact, _ = self._histories()
        if scalar:
            for h, x in zip(reals, z if type(z) is list else z.tolist()):
                ts = h.t
                if ts and ts[-1] < t:  # SignalHistory.push's common case, inline
                    ts.append(t)
                    h.v.append(x)
                else:
                    h.push(t, x)
        else:
            i = 0
            for h, n in zip(reals, sizes):
                h.push(t, float(z[i]) if h.scalar else z[i:i + n])
                i += n
        for h, x in zip(exact, held):
            h.push(t, x)

    def truncate_after(self, t: int) -> None:
        """Forget the coupled outputs' samples later than ``t`` ticks."""
        for h in self._histories()[4]:
            ts = h.t
            while ts and ts[-1] > t:  # SignalHistory.truncate_after, inline
                ts.pop()
                h.v.pop()

    def unpack(self, z: np.ndarray) -> list[np.ndarray]:
        """``z`` (as :meth:`pack_last`) cut into the values of :attr:`real_sources`."""
        out, i = [], 0
        for k in self.real_sources:
            n = self.histories[k].last.size
            out.append(z[i:i + n])
            i += n
        return out

    def jacobian(self) -> np.ndarray:
        """``dy/dz`` of the Real coupled outputs ``z`` (as in :meth:`pack_last`) here.

        Chained from each subsystem's ``output_jacobian()`` through the connections (with
        their unit scale factors); direct feedthrough only.
        """
        offsets, i = {}, 0
        for key in self.real_sources:
            size = self.histories[key].last.size
            offsets[key] = (i, size)
            i += size
        J = np.zeros((i, i))
        for s in self.subsystems:
            outs = [o for o in s.output_names if (s.name, o) in offsets]
            if not outs:
                continue
            jac = s.output_jacobian()
            if jac is None:
                raise BuildError(f"subsystem '{s.name}' gives no output Jacobian "
                                 "(output_jacobian() returned None); use jacobian='fd'")
            for o in outs:
                r0, rn = offsets[(s.name, o)]
                for name, *_rest in self.feeds[s.name]:
                    block = jac.get((o, name))
                    if block is None:
                        continue
                    src, scale, _ = self.sources[(s.name, name)]
                    if src not in offsets:  # a non-Real source: held, not in z
                        continue
                    c0, cn = offsets[src]
                    J[r0:r0 + rn, c0:c0 + cn] += np.asarray(block, float).reshape(rn, cn) * scale
        return J

    def predict(self, t0: int, H: int) -> np.ndarray:
        """Extrapolated coupled outputs at ``t0 + H`` (the predictor of iterative coupling)."""
        return np.array(self.predict_values(t0, H))

    def predict_values(self, t0: int, H: int) -> list:
        """:meth:`predict` as a list of floats."""
        orders = self._predict_orders
        if orders is None:  # the highest order any consumer of each source asks for
            orders = self._predict_orders = [
                max(o for (dst, o) in self.orders.items() if self.sources[dst][0] == k)
                for k in self.real_sources]
        tau = H * _NS
        vals = []
        for h, order in zip(self._histories()[0], orders):
            if order <= 1 and h.scalar and h.t:  # SignalHistory.polynomial's common cases
                ts, vs = h.t, h.v
                if order == 0 or len(ts) == 1:
                    vals.append(float(vs[-1]))
                    continue
                tb, vb = ts[-1], vs[-1]  # its closed form, anchored at the newest sample
                slope = (vb - vs[-2]) / ((tb - ts[-2]) * 1e-9)
                vals.append(float(slope * tau + (vb - slope * ((tb - t0) * 1e-9))))
                continue
            c = h.polynomial(order, t0)
            if type(c) is tuple:  # scalar: Horner in plain floats
                if len(c) == 2:  # linear, the common case
                    vals.append(float(c[1] * tau + c[0]))
                    continue
                acc = c[-1]
                for x in c[-2::-1]:
                    acc = acc * tau + x
                vals.append(float(acc))
            else:
                vals.extend(evaluate(c, tau).tolist())
        return vals
