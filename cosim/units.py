"""Physical units following the FMI 2/3 ``BaseUnit`` model.

A :class:`Unit` is a product of integer powers of the eight FMI base units
``kg m s A K mol cd rad`` together with a ``factor`` and an ``offset``, so it
maps one-to-one onto an FMI ``<BaseUnit>`` element.  The parser has no
dependencies and caches its results.

Conversion
----------
A value ``v`` expressed in a unit is, in SI base units (FMI semantics)::

    v_SI = factor * v + offset

so converting from ``src`` to ``dst`` (same exponents) is
``v_dst = scale * v_src + bias`` with ``scale = f_src / f_dst`` and
``bias = (o_src - o_dst) / f_dst``; see :func:`conversion`.  As in FMI the
radian is a base unit: ``rad/s`` is *not* compatible with ``1/s`` or ``Hz``.

Grammar
-------
::

    text     := ""  (unspecified, like None)  |  expr
    expr     := factor (op factor)*        left-associative, one precedence level
    op       := "*" | "." | "/" | whitespace (implicit product)
    factor   := operand [exponent]
    operand  := symbol | "1" | "(" expr ")"
    exponent := ("^" | "**") int  |  ("^" | "**") "(" int ")"  |  int
    int      := ["+" | "-"] digits
    symbol   := name | prefix name         (exact name tried first)

Examples: ``kg.m2/s2`` (Modelica), ``N*m``, ``m/s/s`` (= ``m s^-2``),
``s-1``, ``s^-2``, ``m**3``, ``(N*m)/(rad/s)``, ``1/s``, ``%``, ``degC``.
``W/m*K`` is ``(W/m)*K``: write ``W/(m*K)``.  Numeric prefactors are not
supported (only the operand ``1``).

Symbols: ``g t m s A K mol cd rad Hz N J W Pa bar V Ohm S F H C Wb T L``
accept the SI prefixes ``Y Z E P T G M k h da d c m u µ n p f a``; ``min h d
degC degF deg rev rpm psi atm cc %`` do not (``d`` is the day, ``deg`` =
pi/180 rad, ``rev`` = 2 pi rad, ``rpm`` = rev/min).  Aliases: ``ohm Ω l
percent °C °F °``.  A symbol is first looked up exactly, then split as prefix +
name: ``m`` is metre, ``mm`` millimetre, ``min`` minute, ``ms`` millisecond,
``mol`` mole, ``cd`` candela, ``dm`` decimetre, ``dam`` decametre.

Offsets
-------
An offset (``degC``, ``degF``) is kept only when the offset unit is used
alone (``degC``, ``(degC)``, ``degC^1``).  In any compound (``degC/s``,
``degC^2``, ``kg*degC``) the offset is dropped: the unit then denotes a
temperature *difference* (``degC/s`` is ``K/s``).

Examples
--------
>>> conversion("rpm", "rad/s")[0] == 2 * math.pi / 60
True
>>> conversion("degC", "K")
(1.0, 273.15)
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field, replace

from .errors import UnitError

__all__ = ["BASE_UNITS", "DIMENSIONLESS", "Unit", "compatible", "conversion", "from_fmi",
           "parse_unit"]

BASE_UNITS: tuple[str, ...] = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")
_ZERO = (0,) * len(BASE_UNITS)


@dataclass(frozen=True)
class Unit:
    """A unit: ``v_SI = factor * v + offset`` with SI dimension ``exponents``.

    Equality and hashing ignore ``name``: ``parse_unit("J") == parse_unit("N*m")``.
    """

    exponents: tuple[int, ...] = _ZERO
    factor: float = 1.0
    offset: float = 0.0
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        exps = tuple(int(e) for e in self.exponents)
        if len(exps) != len(BASE_UNITS):
            raise UnitError(f"a unit needs {len(BASE_UNITS)} exponents {BASE_UNITS}, "
                            f"got {self.exponents!r}")
        if not (math.isfinite(self.factor) and self.factor != 0 and math.isfinite(self.offset)):
            raise UnitError(f"unit {self.name!r}: factor must be finite and non-zero and "
                            f"offset finite, got factor={self.factor!r}, offset={self.offset!r}")
        object.__setattr__(self, "exponents", exps)
        object.__setattr__(self, "factor", float(self.factor))
        object.__setattr__(self, "offset", float(self.offset))

    @classmethod
    def dimensionless(cls) -> Unit:
        """The unit ``1``."""
        return cls(_ZERO, 1.0, 0.0, "1")

    @property
    def is_dimensionless(self) -> bool:
        """True if all exponents are zero (``1``, ``%``, ...)."""
        return not any(self.exponents)

    @property
    def has_offset(self) -> bool:
        """True for absolute offset units such as ``degC``."""
        return self.offset != 0.0

    def dimension_string(self) -> str:
        """SI base dimension, positive powers first, e.g. ``"kg m^2 s^-2"``, or ``"1"``."""
        pairs = list(zip(BASE_UNITS, self.exponents, strict=True))
        parts = [b if e == 1 else f"{b}^{e}" for b, e in pairs if e > 0]
        parts += [f"{b}^{e}" for b, e in pairs if e < 0]
        return " ".join(parts) or "1"

    def to_fmi(self) -> dict[str, int | float]:
        """FMI ``BaseUnit`` attributes: ``kg m s A K mol cd rad factor offset``."""
        d: dict[str, int | float] = dict(zip(BASE_UNITS, self.exponents, strict=True))
        return d | {"factor": self.factor, "offset": self.offset}

    # Arithmetic (used by the parser).  Offsets are dropped: see module docstring.
    def __mul__(self, other: Unit) -> Unit:
        exps = tuple(a + b for a, b in zip(self.exponents, other.exponents, strict=True))
        return Unit(exps, self.factor * other.factor, 0.0, f"{self.name}*{_group(other.name)}")

    def __truediv__(self, other: Unit) -> Unit:
        exps = tuple(a - b for a, b in zip(self.exponents, other.exponents, strict=True))
        return Unit(exps, self.factor / other.factor, 0.0, f"{self.name}/{_group(other.name)}")

    def __pow__(self, n: int) -> Unit:
        if n == 1:
            return self
        exps = tuple(e * n for e in self.exponents)
        return Unit(exps, self.factor ** n, 0.0, f"{_group(self.name)}^{n}")

    def __str__(self) -> str:
        plain = self.factor == 1.0 and not self.offset
        return self.name or (self.dimension_string() if plain else repr(self))


def _group(name: str) -> str:
    return name if re.fullmatch(r"[^\W\d_]+|\d+|%", name) else f"({name})"


DIMENSIONLESS = Unit.dimensionless()


def from_fmi(kg: int = 0, m: int = 0, s: int = 0, A: int = 0, K: int = 0,  # noqa: N803
             mol: int = 0, cd: int = 0, rad: int = 0, factor: float = 1.0,
             offset: float = 0.0, name: str = "") -> Unit:
    """Build a :class:`Unit` from FMI ``BaseUnit`` attributes (inverse of ``Unit.to_fmi``)."""
    return Unit((kg, m, s, A, K, mol, cd, rad), factor, offset, name)


# ------------------------------------------------------------------- tables
_PREFIXES = {"Y": 1e24, "Z": 1e21, "E": 1e18, "P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6,
             "k": 1e3, "h": 1e2, "da": 1e1, "d": 1e-1, "c": 1e-2, "m": 1e-3, "u": 1e-6,
             "\u00b5": 1e-6, "\u03bc": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15, "a": 1e-18}


def _u(factor: float = 1.0, offset: float = 0.0, **exps: int) -> Unit:
    return from_fmi(**exps, factor=factor, offset=offset)


_PI = math.pi
_UNITS: dict[str, Unit] = {
    "g": _u(1e-3, kg=1), "t": _u(1e3, kg=1), "m": _u(m=1), "s": _u(s=1), "A": _u(A=1),
    "min": _u(60.0, s=1), "h": _u(3600.0, s=1), "d": _u(86400.0, s=1),
    "K": _u(K=1), "degC": _u(1.0, 273.15, K=1), "degF": _u(5 / 9, 459.67 * 5 / 9, K=1),
    "mol": _u(mol=1), "cd": _u(cd=1), "rad": _u(rad=1), "deg": _u(_PI / 180, rad=1),
    "rev": _u(2 * _PI, rad=1), "rpm": _u(2 * _PI / 60, rad=1, s=-1), "Hz": _u(s=-1),
    "N": _u(kg=1, m=1, s=-2), "J": _u(kg=1, m=2, s=-2), "W": _u(kg=1, m=2, s=-3),
    "Pa": _u(kg=1, m=-1, s=-2), "bar": _u(1e5, kg=1, m=-1, s=-2),
    "psi": _u(6894.757293168361, kg=1, m=-1, s=-2), "atm": _u(101325.0, kg=1, m=-1, s=-2),
    "V": _u(kg=1, m=2, s=-3, A=-1), "Ohm": _u(kg=1, m=2, s=-3, A=-2),
    "S": _u(kg=-1, m=-2, s=3, A=2), "F": _u(kg=-1, m=-2, s=4, A=2),
    "H": _u(kg=1, m=2, s=-2, A=-2), "C": _u(s=1, A=1), "Wb": _u(kg=1, m=2, s=-2, A=-1),
    "T": _u(kg=1, s=-2, A=-1), "L": _u(1e-3, m=3), "cc": _u(1e-6, m=3), "%": _u(0.01),
}
_NO_PREFIX = frozenset("min h d degC degF deg rev rpm psi atm cc %".split())
_ALIASES = {"ohm": "Ohm", "\u03a9": "Ohm", "\u2126": "Ohm", "l": "L", "percent": "%",
            "\u00b0C": "degC", "\u00b0F": "degF", "\u00b0": "deg"}

_TOKEN = re.compile(r"\s*(?:(?P<int>[+-]?\d+)|(?P<op>\*\*|[*./^()\u00b7\u22c5])"
                    r"|(?P<sym>[^\W\d_]+|%|\u00b0[CF]?))")


def _known() -> str:
    pre = " ".join(s for s in _UNITS if s not in _NO_PREFIX)
    other = " ".join([*(s for s in _UNITS if s in _NO_PREFIX), *_ALIASES, "1"])
    return (f"known symbols: {other}; with SI prefixes ({' '.join(_PREFIXES)}): {pre}")


def _lookup(sym: str, text: str) -> Unit:
    sym = _ALIASES.get(sym, sym)
    if sym in _UNITS:
        return replace(_UNITS[sym], name=sym)
    hint = ""
    for p in sorted(_PREFIXES, key=len, reverse=True):
        if sym.startswith(p) and len(sym) > len(p):
            rest = _ALIASES.get(sym[len(p):], sym[len(p):])
            if (base := _UNITS.get(rest)) is not None:
                if rest not in _NO_PREFIX:
                    return Unit(base.exponents, _PREFIXES[p] * base.factor, 0.0, sym)
                hint = f" ({rest!r} does not accept SI prefixes)"
    raise UnitError(f"unknown unit symbol {sym!r} in unit {text!r}{hint}; {_known()}")


class _Parser:
    """Recursive-descent parser over (kind, value, position) tokens."""

    def __init__(self, text: str) -> None:
        self.text, self.i, self.toks, pos = text, 0, [], 0
        while text[pos:].strip():
            mt = _TOKEN.match(text, pos)
            if mt is None:
                bad = text[pos:].lstrip()[:1]
                raise UnitError(f"unexpected character {bad!r} in unit {text!r}; {_known()}")
            kind = mt.lastgroup or ""
            self.toks.append((kind, mt.group(kind), mt.start(kind)))
            pos = mt.end()
        self.toks.append(("end", "", len(text)))

    def accept(self, *values: str, kind: str = "") -> str | None:
        k, val, _ = self.toks[self.i]
        if (k == kind) if kind else (k in ("op", "int") and val in values):
            self.i += 1
            return val
        return None

    def fail(self, what: str) -> UnitError:
        _, val, pos = self.toks[self.i]
        got = repr(val) if val else "end of string"
        return UnitError(f"bad unit {self.text!r}: expected {what} at position {pos}, got {got}")

    def parse(self) -> Unit:
        u = self.expr()
        if self.toks[self.i][0] != "end":
            raise self.fail("an operator")
        return u

    def expr(self) -> Unit:
        u = self.factor()
        while True:
            op = self.accept("*", ".", "/", "\u00b7", "\u22c5")
            if op is None and self.toks[self.i][0] != "sym" and self.toks[self.i][1] != "(":
                return u
            rhs = self.factor()  # op None: implicit product, e.g. "kg m^2"
            u = u / rhs if op == "/" else u * rhs

    def factor(self) -> Unit:
        if (sym := self.accept(kind="sym")) is not None:
            u = _lookup(sym, self.text)
        elif self.accept("1"):
            u = DIMENSIONLESS
        elif self.accept("("):
            u = self.expr()
            if not self.accept(")"):
                raise self.fail("')'")
        elif self.toks[self.i][0] == "int":
            raise self.fail("a unit symbol (numeric factors other than 1 are not supported)")
        else:
            raise self.fail("a unit symbol, '1' or '('")
        if self.accept("^", "**"):
            paren = self.accept("(")
            if (n := self.accept(kind="int")) is None:
                raise self.fail("an integer exponent")
            if paren and not self.accept(")"):
                raise self.fail("')'")
            return u ** int(n)
        n = self.accept(kind="int")
        return u if n is None else u ** int(n)


@functools.lru_cache(maxsize=1024)
def parse_unit(text: str | None) -> Unit | None:
    """Parse a unit string; ``None`` or ``""`` (unspecified) gives ``None``.

    Raises :class:`~cosim.errors.UnitError` for unknown symbols or bad syntax.
    """
    if text is None:
        return None
    if not isinstance(text, str):
        raise UnitError(f"a unit must be a string, got {type(text).__name__} {text!r}")
    if not text.strip():
        return None
    return replace(_Parser(text).parse(), name=text)


def _as_unit(u: str | Unit | None) -> Unit | None:
    return u if isinstance(u, Unit) or u is None else parse_unit(u)


def compatible(a: str | Unit | None, b: str | Unit | None) -> bool:
    """True if ``a`` and ``b`` have the same dimension; unspecified is compatible with all."""
    ua, ub = _as_unit(a), _as_unit(b)
    return ua is None or ub is None or ua.exponents == ub.exponents


def conversion(src: str | Unit | None, dst: str | Unit | None) -> tuple[float, float]:
    """``(scale, bias)`` with ``v_dst = scale * v_src + bias``.

    Identical units and unspecified (``None``/``""``) units give exactly
    ``(1.0, 0.0)``.  Raises :class:`~cosim.errors.UnitError` if incompatible.
    """
    us, ud = _as_unit(src), _as_unit(dst)
    if us is None or ud is None or us == ud:
        return (1.0, 0.0)
    if us.exponents != ud.exponents:
        raise UnitError(f"incompatible units {str(us)!r} [{us.dimension_string()}] and "
                        f"{str(ud)!r} [{ud.dimension_string()}]")
    return (us.factor / ud.factor, (us.offset - ud.offset) / ud.factor)


# ------------------------------------------------------------ related units
def per_second(unit: str | None) -> str | None:
    """The unit of the time derivative of a signal in ``unit`` (``m`` -> ``m/s``,
    ``m/s`` -> ``m/s2``); None for None."""
    if not unit:
        return None
    m = re.fullmatch(r"(.*)/s(\d*)", unit)
    if m and "/" not in m.group(1) and "(" not in unit:
        return f"{m.group(1)}/s{int(m.group(2) or 1) + 1}"
    return f"{unit}/s" if re.fullmatch(r"[\w.*^]+", unit) else f"({unit})/s"


def times_second(unit: str | None) -> str | None:
    """The unit of the time integral of a signal in ``unit`` (``m/s`` -> ``m``,
    ``m/s2`` -> ``m/s``, ``N`` -> ``N.s``); None for None."""
    if not unit:
        return None
    m = re.fullmatch(r"(.*)/s(\d*)", unit)
    if m and "/" not in m.group(1) and "(" not in unit:
        n = int(m.group(2) or 1) - 1
        return m.group(1) if n == 0 else f"{m.group(1)}/s{n if n > 1 else ''}"
    if unit == "1/s":
        return "1"
    return f"{unit}.s" if re.fullmatch(r"[\w.*^]+", unit) else f"({unit}).s"
