"""Linear time-invariant blocks: state space and transfer functions.

Continuous blocks implement ``linear_model`` so the compiler fuses connected
LTI blocks into one state-space update; they also implement the generic
``calc``/``derivatives`` path (used when fusion is off), and the two are tested
against each other.  python-control ``StateSpace``/``TransferFunction``
objects are accepted (continuous, or discrete with their ``dt``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.linear import LinearModel
from cosim.params import POSITIVE, VALUES, refuse

from ._units import refuse_renamed


def _is_system(v: Any) -> bool:
    """A python-control system (state space or transfer function)."""
    return (hasattr(v, "A") and hasattr(v, "B")) or (hasattr(v, "num") and hasattr(v, "den"))


def check_matrices(owner: str, **given: Any) -> None:
    """Refuse a given matrix or vector (``A=...``, ``x0=...``) that is not finite numbers."""
    for pname, v in given.items():
        if v is not None and not _is_system(v) and not VALUES.accepts(v):
            raise refuse(owner, pname, v, VALUES.expected)


def _as_ss(owner: str, sys_or_A: Any, B=None, C=None, D=None):
    """(A, B, C, D, dt) from matrices or a python-control system; a shape that does not
    fit is refused naming the matrix (``owner``: "Kind 'name'", for the message)."""
    if B is None and hasattr(sys_or_A, "A") and hasattr(sys_or_A, "B"):
        s = sys_or_A
        return (np.atleast_2d(np.asarray(s.A, float)), np.atleast_2d(np.asarray(s.B, float)),
                np.atleast_2d(np.asarray(s.C, float)), np.atleast_2d(np.asarray(s.D, float)),
                getattr(s, "dt", 0) or 0)
    if B is None and hasattr(sys_or_A, "num") and hasattr(sys_or_A, "den"):
        import control
        return _as_ss(owner, control.ss(sys_or_A))
    if B is None or C is None:
        raise ParameterError(f"{owner}: give A, B, C (and D), or a python-control system "
                             "as A")
    check_matrices(owner, A=sys_or_A, B=B, C=C, D=D)
    A = np.atleast_2d(np.asarray(sys_or_A, float)) if np.size(sys_or_A) else np.zeros((0, 0))
    n = A.shape[0]
    if A.ndim != 2 or A.shape != (n, n):
        raise refuse(owner, "A", sys_or_A, "a square matrix (n, n)")
    try:
        B = np.asarray(B, float).reshape(n, -1) if n else np.atleast_2d(np.asarray(B, float))
    except ValueError:
        raise refuse(owner, "B", B, f"a matrix of {n} rows, one per state (A is {n} x {n})") \
            from None
    try:
        C = np.atleast_2d(np.asarray(C, float))
        if C.ndim != 2 or C.shape[1] != n:
            C = C.reshape(-1, n)
    except ValueError:
        raise refuse(owner, "C", C, f"a matrix of {n} columns, one per state (A is {n} x {n})") \
            from None
    # D omitted: no feedthrough (np.asarray(None, float) would be NaN)
    D_in = D
    D = np.zeros((C.shape[0], B.shape[1])) if D is None else np.atleast_2d(np.asarray(D, float))
    if D.shape != (C.shape[0], B.shape[1]):
        raise refuse(owner, "D", D_in, f"shape {(C.shape[0], B.shape[1])}: rows of C by "
                     "columns of B")
    return A, B, C, D, 0


def tf_to_ss(num: Any, den: Any):
    """Controllable canonical form of a proper SISO transfer function."""
    num = np.atleast_1d(np.asarray(num, float))
    den = np.atleast_1d(np.asarray(den, float))
    den = np.trim_zeros(den, "f")
    if den.size == 0 or den[0] == 0:
        raise ParameterError("transfer function denominator must be non-zero")
    # leading zeros of the numerator do not raise its degree (and must not be padded)
    num = np.trim_zeros(num, "f") if np.any(num) else np.zeros(1)
    if num.size > den.size:
        raise ParameterError(f"transfer function {num.tolist()}/{den.tolist()} is improper "
                             "(numerator degree above denominator degree)")
    n = den.size - 1
    num = np.concatenate([np.zeros(den.size - num.size), num]) / den[0]
    den = den / den[0]
    d = num[0]
    if n == 0:
        return np.zeros((0, 0)), np.zeros((0, 1)), np.zeros((1, 0)), np.array([[d]])
    A = np.zeros((n, n))
    A[0, :] = -den[1:]
    A[1:, :-1] = np.eye(n - 1)
    B = np.zeros((n, 1))
    B[0, 0] = 1.0
    C = (num[1:] - d * den[1:]).reshape(1, n)
    return A, B, C, np.array([[d]])


class StateSpace(Block):
    """Continuous linear state-space system.

    .. math:: \\dot x = A x + B u, \\qquad y = C x + D u

    Ports
    -----
    in   u   (m,), or scalar when m = 1 and ``scalar=True`` [input_unit]
    out  y   (p,), or scalar when p = 1 and ``scalar=True`` [unit]; depends on u
             only if D != 0

    Parameters
    ----------
    A, B, C, D : array_like, or a python-control system as ``A``
        The matrices, (n, n), (n, m), (p, n), (p, m) (``D`` default zero).
    x0 : array_like, optional
        Initial state (default zero).
    scalar : bool
        Scalar ports for single-input single-output systems (default).
    input_unit, unit : str, optional
        Units of ``u`` and ``y``.
    """

    def __init__(self, name: str, A: Any, B: Any = None, C: Any = None, D: Any = None, *,
                 x0: Any = None, scalar: bool = True, input_unit: str | None = None,
                 unit: str | None = None, **old: Any) -> None:
        super().__init__(name)
        refuse_renamed(type(self).__name__, name, old)
        output_unit = unit
        what = f"{type(self).__name__} '{name}'"
        check_matrices(what, x0=x0)
        A, B, C, D, dt = _as_ss(what, A, B, C, D)
        if dt:
            raise ParameterError(f"{what}: the system is discrete (dt={dt}); "
                                 "use DiscreteStateSpace")
        self.A, self.B, self.C, self.D = A, B, C, D
        n, m, p = A.shape[0], B.shape[1], C.shape[0]
        self.m, self.p, self.n = m, p, n
        x0_in = x0
        x0 = np.zeros(n) if x0 is None else np.array(x0, dtype=float).reshape(-1)
        if x0.size != n:
            raise refuse(what, "x0", x0_in, f"{n} values, one per state")
        in_shape = () if (scalar and m == 1) else (m,)
        out_shape = () if (scalar and p == 1) else (p,)
        self.u = self.declare_input("u", shape=in_shape, unit=input_unit)
        deps = ("u",) if np.any(D) else ()
        self.x = self.declare_continuous_state("x", x0) if n else None
        self._out_scalar = out_shape == ()
        self.y = self.declare_output("y", self._calc_y, shape=out_shape, unit=output_unit,
                                     depends_on=deps)
        self._has_d = bool(np.any(D))

    def _calc_y(self, ctx):
        y = self.C @ ctx.state(self.x) if self.n else np.zeros(self.p)
        if self._has_d:
            y = y + self.D @ np.atleast_1d(ctx.input(self.u))
        return float(y[0]) if self._out_scalar else y

    def derivatives(self, ctx):
        return self.A @ ctx.state(self.x) + self.B @ np.atleast_1d(ctx.input(self.u))

    def linear_model(self, ctx):
        return LinearModel(self.A, self.B, self.C, self.D, [self.u], [self.y],
                           [self.x] if self.n else [])


class TransferFunction(StateSpace):
    """Continuous SISO transfer function ``num(s)/den(s)`` (coefficients, highest power first).

    .. math:: Y(s) = \\frac{b_0 s^n + \\dots + b_n}{a_0 s^n + \\dots + a_n} U(s)

    Realised in controllable canonical form.

    Ports
    -----
    in   u   scalar [input_unit]
    out  y   scalar [unit]; depends on u only if the transfer function is biproper

    Parameters
    ----------
    num, den : array_like
        Coefficients :math:`b_i` and :math:`a_i`, highest power of :math:`s` first (or a
        python-control ``TransferFunction`` as ``num``).
    **kw
        ``x0``, ``scalar``, ``input_unit``, ``unit``, as :class:`StateSpace`.
    """

    def __init__(self, name: str, num: Any, den: Any = None, **kw: Any) -> None:
        check_matrices(f"TransferFunction '{name}'", num=num, den=den)
        try:
            if den is None and hasattr(num, "num"):
                import control
                try:
                    real = control.ss(num)
                except ValueError as exc:  # e.g. an improper transfer function
                    raise ParameterError(str(exc)) from None
            else:
                real = tf_to_ss(num, den)
        except ParameterError as exc:
            raise ParameterError(f"TransferFunction '{name}': {exc}") from None
        if isinstance(real, tuple):  # (A, B, C, D)
            super().__init__(name, *real, **kw)
        else:
            super().__init__(name, real, **kw)


class FirstOrderLag(StateSpace):
    """First-order lag ``K / (tau s + 1)``.

    .. math:: \\tau \\dot y = K u - y, \\qquad y(0) = y_0

    Ports
    -----
    in   u   scalar [unit]
    out  y   scalar [unit]; state only

    Parameters
    ----------
    tau_s : float
        :math:`\\tau` [s], > 0.
    gain : float
        :math:`K`.
    y0 : float
        :math:`y_0`.
    unit : str, optional
        Unit of ``u`` and ``y``.
    """

    argument_checks = {"tau_s": POSITIVE}

    def __init__(self, name: str, tau_s: float, gain: float = 1.0, y0: float = 0.0,
                 unit: str | None = None) -> None:
        super().__init__(name, [[-1.0 / tau_s]], [[gain / tau_s]], [[1.0]], [[0.0]],
                         x0=[y0], input_unit=unit, unit=unit)
