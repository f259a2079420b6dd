"""What a parameter value must be, and the one message that refuses a bad one.

Two kinds of parameters are checked here, with the same rules and the same message:

* **Constructor arguments of a block**, checked before the constructor runs (every
  :class:`~cosim.block.Block` subclass's ``__init__`` is wrapped by :func:`checked_init`).
  The rule of an argument comes from its annotation (``float``: a finite number; ``int``:
  an integer; ``bool``: a Boolean; ``str``: a string; ``X | None``: also None; other
  annotations: not checked) unless the class names one in ``argument_checks``, a dict
  of rules by argument name::

      class DCMotor(Block):
          argument_checks = {"resistance_ohm": POSITIVE, "friction_nms_per_rad": NON_NEGATIVE}

  Checks that relate several arguments (a state-space model's matrix shapes) stay in the
  constructor and raise :func:`refuse`, which words them the same way.

* **Context parameters** (``ctx.set_param``): the kind of a parameter is the kind of
  its declared default (:func:`parameter_kind`): a number (an ``int`` default too), a
  Boolean, a string, an array of the default's shape (of whole numbers for an integer
  array), or an instance of the default's type.

A refusal is a :class:`~cosim.errors.ParameterError` naming the block (class and name)
or the parameter path, the parameter, the value and what is expected::

    DCMotor 'motor': resistance_ohm = -1.0: expected a finite number > 0

Limitations: a default's own value is not checked (only the arguments a caller gives);
annotations other than the four simple types and their ``| None`` forms are not
checked; the fields of parameter dataclasses (``params=BodyData(...)``) are checked
by those dataclasses, if at all; a context parameter declared with the default None
takes any value (its kind is unknown), and one with an ``int`` default takes any number
unless its block's validator says otherwise.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .errors import ParameterError


def show(value: Any, limit: int = 60) -> str:
    """A short repr of ``value`` for a message (arrays abbreviated)."""
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=8, edgeitems=2, separator=", ")
        text = text.replace("\n", "")
    else:
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def refuse(owner: Any, param: str, value: Any, expected: str) -> ParameterError:
    """The error for a bad value of ``param`` of ``owner`` (a block, or a label such as
    ``"Saturation 'sat'"``): raise it."""
    if not isinstance(owner, str):
        owner = f"{type(owner).__name__} '{getattr(owner, 'name', '?')}'"
    return ParameterError(f"{owner}: {param} = {show(value)}: expected {expected}")


# -------------------------------------------------------------------------- rules
def _is_bool(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_))


def _real(v: Any) -> float | None:
    """``v`` as a float if it is a real number (not a Boolean, not a string), else None."""
    if _is_bool(v):
        return None
    if isinstance(v, numbers.Real):
        return float(v)
    if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iuf":
        return float(v)
    return None


@dataclass(frozen=True)
class Number:
    """A real number: finite unless ``infinite``, never NaN; an integer if ``integer``;
    within ``low``..``high`` (``low_open``/``high_open``: the bound itself excluded).
    ``meaning``: what the number is, for the message (``POSITIVE.means("the wheelbase")``)."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    infinite: bool = False
    optional: bool = False
    meaning: str = ""

    def means(self, meaning: str) -> Number:
        """This rule, saying in its message what the number is."""
        return replace(self, meaning=meaning)

    def accepts(self, v: Any) -> bool:
        if v is None:
            return self.optional
        x = _real(v)
        if x is None or math.isnan(x) or (math.isinf(x) and not self.infinite):
            return False
        if self.integer and not isinstance(v, numbers.Integral):
            return False
        if x < self.low or (self.low_open and x == self.low):
            return False
        return not (x > self.high or (self.high_open and x == self.high))

    def coerce(self, v: Any) -> Any:
        return v

    @property
    def expected(self) -> str:
        what = "an integer" if self.integer else (
            "a number (not NaN; +-inf allowed)" if self.infinite else "a finite number")
        lo, hi = self.low, self.high
        if lo > -math.inf and hi < math.inf:
            what += (f" in {'(' if self.low_open else '['}{lo:g}, {hi:g}"
                     f"{')' if self.high_open else ']'}")
        elif lo > -math.inf:
            what += f" {'>' if self.low_open else '>='} {lo:g}"
        elif hi < math.inf:
            what += f" {'<' if self.high_open else '<='} {hi:g}"
        what += " or None" if self.optional else ""
        return f"{self.meaning}: {what}" if self.meaning else what


@dataclass(frozen=True)
class Flag:
    """A Boolean (``True``/``False``; not a string, not a number)."""

    optional: bool = False

    def accepts(self, v: Any) -> bool:
        return _is_bool(v) or (v is None and self.optional)

    def coerce(self, v: Any) -> Any:
        return v

    @property
    def expected(self) -> str:
        return "True or False" + (" or None" if self.optional else "")


@dataclass(frozen=True)
class Text:
    """A string, one of ``choices`` if given."""

    choices: tuple = ()
    optional: bool = False

    def accepts(self, v: Any) -> bool:
        if v is None:
            return self.optional
        return isinstance(v, str) and (not self.choices or v in self.choices)

    def coerce(self, v: Any) -> Any:
        return v

    @property
    def expected(self) -> str:
        what = ("one of " + ", ".join(repr(c) for c in self.choices)) if self.choices \
            else "a string"
        return what + (" or None" if self.optional else "")


@dataclass(frozen=True)
class Array:
    """Numbers (a scalar or an array-like), never NaN, finite unless ``infinite``; of
    ``ndim`` dimensions and of ``shape`` if given (``None`` in ``shape``: any length)."""

    shape: tuple | None = None
    ndim: int | None = None
    infinite: bool = False
    optional: bool = False

    def _array(self, v: Any) -> np.ndarray | None:
        """``v`` as a float array if it is numbers (not strings, Booleans, None), else None."""
        try:
            raw = np.asarray(v)
        except ValueError:   # ragged
            return None
        return raw.astype(float) if raw.dtype.kind in "iuf" else None

    def accepts(self, v: Any) -> bool:
        if v is None:
            return self.optional
        a = self._array(v)
        if a is None or np.isnan(a).any() or (not self.infinite and np.isinf(a).any()):
            return False
        ndim = len(self.shape) if self.shape is not None else self.ndim
        if ndim is not None and a.ndim != ndim:
            return False
        return self.shape is None or all(s is None or s == n for s, n in zip(self.shape,
                                                                             a.shape))

    def coerce(self, v: Any) -> Any:
        return v

    @property
    def expected(self) -> str:
        finite = "" if self.infinite else "finite "
        if self.shape is not None:
            dims = ", ".join("n" if s is None else str(s) for s in self.shape)
            comma = "," if len(self.shape) == 1 else ""
            what = f"an array of shape ({dims}{comma}) of {finite}numbers"
        elif self.ndim is not None:
            what = f"a {self.ndim}-D array of {finite}numbers"
        else:
            what = f"a {finite}number or array of {finite}numbers"
        return what + (" or None" if self.optional else "")


@dataclass(frozen=True)
class Instance:
    """An instance of ``types``."""

    types: tuple

    def accepts(self, v: Any) -> bool:
        return isinstance(v, self.types)

    def coerce(self, v: Any) -> Any:
        return v

    @property
    def expected(self) -> str:
        return "an instance of " + " or ".join(t.__name__ for t in self.types)



#: rules for the common physical cases (combine others with :class:`Number`)
FINITE = Number()
POSITIVE = Number(low=0.0, low_open=True)
NON_NEGATIVE = Number(low=0.0)
FRACTION = Number(low=0.0, high=1.0)             # a share, a ratio in [0, 1]
EFFICIENCY = Number(low=0.0, high=1.0, low_open=True)
UNBOUNDED = Number(infinite=True)                # a limit: +-inf means none
COUNT = Number(low=1.0, integer=True)
VALUES = Array()                                 # a number or an array of numbers


def one_of(*choices: str) -> Text:
    """A string among ``choices``."""
    return Text(tuple(choices))


# ----------------------------------------------------------- constructor arguments
_SIMPLE = {"float": Number(), "int": Number(integer=True), "bool": Flag(), "str": Text()}


def _annotation_text(ann: Any) -> str:
    if isinstance(ann, str):
        return ann
    if ann is inspect.Parameter.empty:
        return ""
    return ann.__name__ if isinstance(ann, type) else str(ann)


def argument_rule(p: inspect.Parameter, explicit: Rule | None) -> Rule | None:
    """The rule of constructor argument ``p``: ``explicit`` (from ``argument_checks``) or
    its annotation's; made optional where the annotation or the default allows None."""
    parts = [s.strip() for s in _annotation_text(p.annotation).split("|")]
    optional = "None" in parts or p.default is None
    parts = [s for s in parts if s != "None"]
    simple = _SIMPLE.get(parts[0]) if len(parts) == 1 else None
    rule = explicit if explicit is not None else simple
    if rule is None:
        return None
    if isinstance(rule, Number) and parts == ["int"]:
        rule = replace(rule, integer=True)
    if optional and hasattr(rule, "optional"):
        rule = replace(rule, optional=True)
    return rule


def checked_init(init: Callable, checks: dict[str, Rule], owner: str) -> Callable:
    """``init`` (a block class's ``__init__``) wrapped so that the arguments a caller gives
    are checked first against their rules (:func:`argument_rule`); a bad one raises
    :func:`refuse` naming the block's class and name.  ``owner``: the class name, for
    errors in ``checks`` itself."""
    sig = inspect.signature(init)
    unknown = set(checks) - set(sig.parameters)
    if unknown:
        raise TypeError(f"{owner}.argument_checks names {sorted(unknown)}, which "
                        f"{owner}.__init__ does not take")
    rules = {}
    for p in list(sig.parameters.values())[1:]:
        if p.name == "name" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        rule = argument_rule(p, checks.get(p.name))
        if rule is not None:
            rules[p.name] = rule
    if not rules:
        return init
    # the names of the positional parameters after self, in order (a call with more
    # positional arguments, or an unknown keyword, gets Python's own error from init)
    positional = [p.name for p in list(sig.parameters.values())[1:]
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    def check(self: Any, args: tuple, kwargs: dict) -> None:
        given = dict(zip(positional, args))
        given.update(kwargs)
        for param, value in given.items():
            rule = rules.get(param)
            if rule is not None and not rule.accepts(value):
                who = f"{type(self).__name__} '{given.get('name', '?')}'"
                raise refuse(who, param, value, rule.expected)

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        check(self, args, kwargs)
        init(self, *args, **kwargs)

    __init__.__checked__ = rules
    return __init__


# ----------------------------------------------------------------- context parameters
def parameter_kind(default: Any) -> Rule | None:
    """The kind of a context parameter, from its declared default (None: any value)."""
    if default is None:
        return None
    if _is_bool(default):
        return Flag()
    if isinstance(default, numbers.Real):
        # an int default is a number too (``mass_kg=1000`` declares a real parameter);
        # a parameter that must stay whole says so in its block's validator
        return Number(infinite=True)
    if isinstance(default, str):
        return Text()
    if isinstance(default, (bytes, bytearray)):
        return Instance((bytes, bytearray))
    if isinstance(default, np.ndarray):
        if default.dtype.kind in "iuf":
            return ArrayKind(tuple(default.shape), default.dtype)
        return Instance((np.ndarray,))
    if isinstance(default, (list, tuple)):
        try:
            a = np.asarray(default, dtype=float)
        except (TypeError, ValueError):
            return Instance((type(default),))
        return Array(shape=a.shape, infinite=True)
    return Instance((type(default),))


@dataclass(frozen=True)
class ArrayKind:
    """A numeric array parameter: the default's ``shape``, stored as an array of ``dtype``
    (an integer array takes whole numbers only)."""

    shape: tuple
    dtype: np.dtype

    def accepts(self, v: Any) -> bool:
        if not Array(shape=self.shape, infinite=True).accepts(v):
            return False
        return self.dtype.kind not in "iu" or bool(
            np.all(np.mod(np.asarray(v, dtype=float), 1.0) == 0.0))

    def coerce(self, v: Any) -> Any:
        return np.array(v, dtype=self.dtype)

    @property
    def expected(self) -> str:
        dims = ", ".join(str(s) for s in self.shape)
        of = "whole numbers" if self.dtype.kind in "iu" else "numbers"
        return f"an array of shape ({dims}{',' if len(self.shape) == 1 else ''}) of {of}"


#: any of the rules above
Rule = Number | Flag | Text | Array | Instance | ArrayKind
