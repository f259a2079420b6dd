"""Conditions on signals whose margins are known: ``sig("gap") >= 20``.

``sig(name)`` is an expression; constants and other expressions combine with ``+ - * /``,
unary ``-`` and ``abs()``; a comparison (``> >= < <=``) makes a :class:`Cond`; conditions
combine with ``&`` (and), ``|`` (or), ``~`` (not).  Evaluated on a trace
(:meth:`Cond.evaluate`) a condition gives per sample a boolean ``ok`` **and** a
``margin``: the signed distance to switching, in the compared signal's unit, positive
where it holds:

==============  ===============  ================================
condition       margin           holds where
==============  ===============  ================================
``a > b``       ``a - b``        ``margin > 0``
``a >= b``      ``a - b``        ``margin >= 0``
``a < b``       ``b - a``        ``margin > 0``
``a <= b``      ``b - a``        ``margin >= 0``
``c & d``       ``min(mc, md)``  both hold
``c | d``       ``max(mc, md)``  either holds
``~c``          ``-mc``          ``c`` does not hold
==============  ===============  ================================

(the robustness of signal temporal logic).  A failing ``gap >= 20`` with ``gap = 18.3 m``
has margin ``-1.7`` m: "failed by 1.7 m".  Each sample also names the comparison that
decides it (for ``&`` the smaller margin, for ``|`` the larger), so a message names the
signal and unit that failed.

A plain callable ``f(trace) -> bool array`` is a condition too (:func:`as_cond`), with an
unknown margin (messages say so).

NaN: a sample where any signal the condition reads is NaN is **NaN**: it does not hold
(under ``~`` neither), its margin is NaN, and the checks fail on it ("NaN at t = ...").
A callable's NaN samples are those where a signal of ``reads`` (default: every signal of
the trace) is NaN.

Limitations: ``==``/``!=`` are not conditions (sampled floats are compared with a
tolerance: ``abs(sig("a") - 3) < 1e-6``); ``and``/``or``/``not`` and chained comparisons
(``0 < sig("x") < 5``) raise, use ``&``, ``|``, ``~``; margins of comparisons in different
units are compared as plain numbers by ``&`` and ``|`` (the message names the unit of the
deciding one); units are checked for ``+``/``-``/comparisons (two different declared units
are an error) but products and quotients only compose the unit text (``m*s``), no algebra.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import TraceError
from .signals import fmt_value


def _unit(op: str, ua: str, ub: str, text: str) -> str:
    if op in "+-<>":
        if ua and ub and ua != ub:
            raise TraceError(f"condition {text}: units differ ({ua!r} and {ub!r}); convert "
                             f"one side (a constant factor) so both are in one unit")
        return ua or ub
    if op == "*":
        return f"{ua}*{ub}" if ua and ub else (ua or ub)
    return f"{ua}/{ub}" if ua and ub else (ua or (f"1/{ub}" if ub else ""))


class Expr:
    """A numeric expression of signals and constants; compare it to make a condition."""

    prec = 9  # binding strength, for parentheses in the text

    def values(self, trace: Any) -> tuple[np.ndarray, str]:
        raise NotImplementedError

    def reads(self) -> set[str]:
        raise NotImplementedError

    def _bin(self, op, other, swap=False):
        other = _expr(other)
        return _BinOp(op, other, self) if swap else _BinOp(op, self, other)

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    def __truediv__(self, o): return self._bin("/", o)
    def __rtruediv__(self, o): return self._bin("/", o, True)
    def __neg__(self): return _Unary("-", self)
    def __abs__(self): return _Unary("abs", self)
    def __gt__(self, o): return Compare(self, ">", _expr(o))
    def __ge__(self, o): return Compare(self, ">=", _expr(o))
    def __lt__(self, o): return Compare(self, "<", _expr(o))
    def __le__(self, o): return Compare(self, "<=", _expr(o))

    def __bool__(self):
        raise TypeError(f"{self} has no truth value: compare it (sig('x') > 3) to make a "
                        f"condition, and let a check evaluate it")

    __hash__ = object.__hash__


class Sig(Expr):
    prec = 10

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"sig(name): a signal name (str), got {name!r}")
        self.name = name

    def values(self, trace):
        return np.asarray(trace[self.name], dtype=float), trace.unit(self.name)

    def reads(self):
        return {self.name}

    def __str__(self):
        return self.name


def sig(name: str) -> Sig:
    """The signal ``name`` of the trace a condition is evaluated on."""
    return Sig(name)


class Const(Expr):
    prec = 10

    def __init__(self, value: float) -> None:
        self.value = float(value)

    def values(self, trace):
        return np.float64(self.value), ""

    def reads(self):
        return set()

    def __str__(self):
        return fmt_value(self.value)


def _expr(x: Any) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer,
                                                                 np.floating)):
        raise TypeError(f"an expression combines signals (sig('x')) and numbers, got "
                        f"{type(x).__name__} {x!r}")
    return Const(x)


_PREC = {"+": 5, "-": 5, "*": 6, "/": 6}
_NP = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}


class _BinOp(Expr):
    def __init__(self, op, a, b):
        self.op, self.a, self.b, self.prec = op, a, b, _PREC[op]

    def values(self, trace):
        (va, ua), (vb, ub) = self.a.values(trace), self.b.values(trace)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _NP[self.op](va, vb), _unit(self.op, ua, ub, str(self))

    def reads(self):
        return self.a.reads() | self.b.reads()

    def __str__(self):
        a = f"({self.a})" if self.a.prec < self.prec else str(self.a)
        b = f"({self.b})" if self.b.prec <= self.prec else str(self.b)
        return f"{a} {self.op} {b}"


class _Unary(Expr):
    prec = 10

    def __init__(self, op, a):
        self.op, self.a = op, a

    def values(self, trace):
        v, u = self.a.values(trace)
        return (np.abs(v) if self.op == "abs" else -v), u

    def reads(self):
        return self.a.reads()

    def __str__(self):
        return f"abs({self.a})" if self.op == "abs" else f"-{self.a}" if self.a.prec >= 10 \
            else f"-({self.a})"


@dataclass
class Evaluation:
    """A condition on a trace, per sample: ``ok`` (holds), ``margin`` (signed distance to
    switching; None when unknown: a callable), ``nan`` (a signal read is NaN there),
    ``atom`` (index into ``atoms`` of the comparison deciding each sample) and ``atoms``:
    ``(text, unit)`` of each comparison; ``text`` the whole condition with units."""

    ok: np.ndarray
    margin: np.ndarray | None
    nan: np.ndarray
    atom: np.ndarray
    atoms: list
    text: str

    def unit(self, i: int) -> str:
        return self.atoms[int(self.atom[i])][1]

    def deciding(self, i: int) -> str:
        return self.atoms[int(self.atom[i])][0]


class Cond:
    """A condition on the signals of a trace; see the module docstring."""

    prec = 3

    def evaluate(self, trace: Any) -> Evaluation:
        raise NotImplementedError

    def reads(self) -> set[str] | None:
        """The signals read; None: not known (a callable without ``reads``)."""
        raise NotImplementedError

    def __and__(self, o): return _Logic("&", self, as_cond(o))
    def __rand__(self, o): return _Logic("&", as_cond(o), self)
    def __or__(self, o): return _Logic("|", self, as_cond(o))
    def __ror__(self, o): return _Logic("|", as_cond(o), self)
    def __invert__(self): return _Not(self)

    def __bool__(self):
        raise TypeError(f"condition {self} has no truth value: combine conditions with "
                        f"&, |, ~ (not and/or/not), write 0 < x < 5 as "
                        f"(sig('x') > 0) & (sig('x') < 5), and let a check evaluate it")

    __hash__ = object.__hash__


class Compare(Cond):
    prec = 4

    def __init__(self, a: Expr, op: str, b: Expr) -> None:
        self.a, self.op, self.b = a, op, b

    def evaluate(self, trace):
        (va, ua), (vb, ub) = self.a.values(trace), self.b.values(trace)
        unit = _unit("<", ua, ub, str(self))
        with np.errstate(invalid="ignore"):
            m = (va - vb) if self.op[0] == ">" else (vb - va)
            m = np.broadcast_to(np.asarray(m, float), (len(trace),)).copy()
            nan = np.isnan(m)
            ok = (m >= 0) if self.op.endswith("=") else (m > 0)
        ok &= ~nan
        text = str(self) + (f" {unit}" if unit and isinstance(self.b, Const) else "")
        return Evaluation(ok, m, nan, np.zeros(len(m), int), [(text, unit)], text)

    def reads(self):
        return self.a.reads() | self.b.reads()

    def __str__(self):
        return f"{self.a} {self.op} {self.b}"


class _Logic(Cond):
    def __init__(self, op, c, d):
        self.op, self.c, self.d = op, c, d
        self.prec = 2 if op == "&" else 1

    def evaluate(self, trace):
        e, f = self.c.evaluate(trace), self.d.evaluate(trace)
        nan = e.nan | f.nan
        ok = ((e.ok & f.ok) if self.op == "&" else (e.ok | f.ok)) & ~nan
        if e.margin is None or f.margin is None:
            margin, atom = None, e.atom
        else:
            pick_e = (e.margin <= f.margin) if self.op == "&" else (e.margin >= f.margin)
            margin = np.where(pick_e, e.margin, f.margin)
            margin[nan] = np.nan
            atom = np.where(pick_e, e.atom, f.atom + len(e.atoms))
        text = f"{_paren(self.c, e.text, self.prec)} {self.op} {_paren(self.d, f.text, self.prec)}"
        return Evaluation(ok, margin, nan, atom, e.atoms + f.atoms, text)

    def reads(self):
        r, s = self.c.reads(), self.d.reads()
        return None if r is None or s is None else r | s

    def __str__(self):
        return f"{_paren(self.c, str(self.c), self.prec)} {self.op} " \
               f"{_paren(self.d, str(self.d), self.prec)}"


def _paren(c: Cond, text: str, prec: int) -> str:
    return f"({text})" if c.prec < 4 and c.prec != prec else text


class _Not(Cond):
    prec = 5

    def __init__(self, c):
        self.c = c

    def evaluate(self, trace):
        e = self.c.evaluate(trace)
        return Evaluation(~e.ok & ~e.nan, None if e.margin is None else -e.margin, e.nan,
                          e.atom, [(f"not {t}", u) for t, u in e.atoms], f"~({e.text})")

    def reads(self):
        return self.c.reads()

    def __str__(self):
        return f"~({self.c})"


class Predicate(Cond):
    """A plain callable ``fn(trace) -> bool array`` as a condition: margin unknown.
    ``reads``: the signals whose NaN samples make it NaN (default: all of the trace's)."""

    prec = 10

    def __init__(self, fn: Callable, reads: list[str] | None = None,
                 name: str | None = None) -> None:
        self.fn, self._reads = fn, None if reads is None else list(reads)
        self.name = name or getattr(fn, "__name__", "condition")

    def evaluate(self, trace):
        ok = np.asarray(self.fn(trace))
        if ok.shape != (len(trace),) or ok.dtype.kind != "b":
            raise TraceError(f"condition {self.name}: a callable condition returns one bool "
                             f"per sample (shape ({len(trace)},)), got {ok.dtype} "
                             f"{ok.shape}")
        names = trace.names if self._reads is None else self._reads
        nan = np.zeros(len(trace), bool)
        for k in names:
            nan |= np.isnan(trace[k])
        return Evaluation(ok & ~nan, None, nan, np.zeros(len(trace), int),
                          [(self.name, "")], self.name)

    def reads(self):
        return None if self._reads is None else set(self._reads)

    def __str__(self):
        return self.name


def as_cond(x: Any) -> Cond:
    """A condition from a :class:`Cond` or a callable ``fn(trace) -> bool array``."""
    if isinstance(x, Cond):
        return x
    if isinstance(x, Expr):
        raise TypeError(f"{x} is an expression, not a condition: compare it "
                        f"({x} > 0)")
    if callable(x):
        return Predicate(x)
    hint = " (== is not a condition: use abs(sig('a') - b) < tol)" \
        if isinstance(x, (bool, np.bool_)) else ""
    raise TypeError(f"expected a condition (sig('x') > 3) or a callable on the trace, got "
                    f"{type(x).__name__} {x!r}{hint}")
