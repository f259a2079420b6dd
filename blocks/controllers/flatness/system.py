r"""Flat-system description: the maps between (state, input) and the flat flag.

A system :math:`\dot x = f(x, u)` with :math:`m` inputs is *differentially flat* when
:math:`m` outputs :math:`z = h(x, u, \dot u, \dots)` exist such that

.. math::

    x = \Phi(z, \dot z, \dots, z^{(q-1)}), \qquad u = \Psi(z, \dot z, \dots, z^{(q)})

(Fliess, Lévine, Martin, Rouchon 1995).  The *flag* of output :math:`z_i` is the array
:math:`(z_i, \dot z_i, \dots, z_i^{(q_i)})` of length ``flaglen[i]``; a flag is a list of
such arrays, as python-control's :mod:`control.flatsys` uses it, so a
:class:`FlatSystem` converts to a ``control.flatsys.FlatSystem`` (:meth:`to_flatsys`)
and back (:meth:`FlatSystem.from_flatsys`) for its basis functions, costs and
constraints (:func:`~blocks.controllers.flatness.plan.plan_flatsys`).

A subclass gives ``states``, ``inputs``, ``outputs`` (names), ``flaglen``, and implements
:meth:`forward` (state and input to flag), :meth:`reverse` (flag to state and input) and
:meth:`rhs` (the model, used by the checks and the plant blocks); where the inverse map
is singular it implements :meth:`singularity` (a scalar that is zero on the singular set,
:func:`~blocks.controllers.flatness.plan.check_plan` reports where a plan crosses it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.errors import ParameterError


def as_flag(zflag: Any, flaglen: tuple[int, ...]) -> list[np.ndarray]:
    """A flag as a list of float arrays, each at least ``flaglen[i]`` long (zero-padded)."""
    out = []
    for i, q in enumerate(flaglen):
        zi = np.atleast_1d(np.asarray(zflag[i], dtype=float))
        if zi.size < q:
            zi = np.concatenate([zi, np.zeros(q - zi.size)])
        out.append(zi)
    return out


class FlatSystem:
    """A differentially flat system: names, flag lengths, forward and reverse maps.

    Subclasses set the class attributes and implement :meth:`forward`, :meth:`reverse`
    and :meth:`rhs`; :meth:`singularity` when the inverse map has a singular set.
    """

    states: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    flaglen: tuple[int, ...] = ()

    @property
    def nstates(self) -> int:
        return len(self.states)

    @property
    def ninputs(self) -> int:
        return len(self.inputs)

    # -- the maps -----------------------------------------------------------------------
    def forward(self, x: Any, u: Any) -> list[np.ndarray]:
        """The flat flag of state ``x`` and input ``u``."""
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def reverse(self, zflag: Any) -> tuple[np.ndarray, np.ndarray]:
        """State and input ``(x, u)`` of a flat flag."""
        raise NotImplementedError(f"{type(self).__name__}.reverse")

    def rhs(self, x: Any, u: Any) -> np.ndarray:
        """The model :math:`\\dot x = f(x, u)`."""
        raise NotImplementedError(f"{type(self).__name__}.rhs")

    def singularity(self, zflag: Any) -> float | None:
        """A scalar that vanishes where the inverse map is singular (None: nowhere)."""
        return None

    # -- checks -------------------------------------------------------------------------
    def check_inverse(self, x: Any, u: Any) -> tuple[float, float]:
        """Max abs errors of ``reverse(forward(x, u))`` against ``(x, u)``."""
        xr, ur = self.reverse(self.forward(x, u))
        return (float(np.max(np.abs(np.asarray(xr) - np.asarray(x, float)))),
                float(np.max(np.abs(np.asarray(ur) - np.asarray(u, float)))))

    def check_dimensions(self) -> None:
        """Raise :class:`ParameterError` unless there are as many flat outputs as inputs."""
        if len(self.outputs) != len(self.inputs) or len(self.flaglen) != len(self.outputs):
            raise ParameterError(
                f"{type(self).__name__}: a flat system has as many flat outputs as inputs "
                f"(outputs {self.outputs}, inputs {self.inputs}, flaglen {self.flaglen})")

    # -- python-control interoperability -------------------------------------------------
    def to_flatsys(self, name: str | None = None):
        """This system as a ``control.flatsys.FlatSystem`` (python-control, lazily imported).

        The update function is :meth:`rhs`, the output function the full state.
        """
        try:
            from control import flatsys
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_flatsys() needs python-control, a dependency of cosim that "
                              "is missing here: reinstall cosim (pip install cosim)") from exc
        me = self
        return flatsys.flatsys(
            lambda x, u, params=None: me.forward(x, u),
            lambda zflag, params=None: me.reverse(zflag),
            updfcn=lambda t, x, u, params=None: me.rhs(x, u),
            outfcn=lambda t, x, u, params=None: np.asarray(x, dtype=float),
            inputs=list(self.inputs), outputs=list(self.states), states=list(self.states),
            name=name or type(self).__name__)

    @staticmethod
    def from_flatsys(sys: Any, flaglen: Any, outputs: Any = None) -> FlatSystem:
        """Wrap a ``control.flatsys.FlatSystem`` (its update function becomes :meth:`rhs`)."""
        wrapped = _Wrapped()
        wrapped.sys = sys
        wrapped.states = tuple(sys.state_labels)
        wrapped.inputs = tuple(sys.input_labels)
        wrapped.flaglen = tuple(int(q) for q in flaglen)
        if len(wrapped.flaglen) != len(wrapped.inputs):
            raise ParameterError(f"from_flatsys: flaglen {wrapped.flaglen} needs one entry "
                                 f"per input {wrapped.inputs}")
        wrapped.outputs = tuple(outputs or (f"z{i + 1}" for i in range(len(wrapped.inputs))))
        return wrapped


class _Wrapped(FlatSystem):
    """A python-control flat system seen as a :class:`FlatSystem`."""

    sys: Any = None

    def forward(self, x, u):
        return as_flag(self.sys.forward(x, u), self.flaglen)

    def reverse(self, zflag):
        x, u = self.sys.reverse(zflag)
        return np.asarray(x, dtype=float), np.asarray(u, dtype=float)

    def rhs(self, x, u):
        return np.asarray(self.sys._rhs(0.0, x, u), dtype=float)
