"""The values and calls of a translated FunctionBlock function (:mod:`cosim.codegen.pyfunc`):
the Python kind of each value (a float, an int, a bool) and the C of each function it may
call, with CPython's errors as C failures.

Kinds: a float (Python's; an input is taken as one: the core blocks give Python floats,
and where an input is a NumPy float64 whose arithmetic gives inf or NaN instead of raising,
the C fails and the Python loop takes over, so the results are the Python loop's); a NumPy
float64 (the result of a NumPy function, a NumPy constant: NumPy's scalar arithmetic, which
does not raise); an int (constants, ``math.floor``/``ceil``): kept in C as an exact
double without a negative zero (an int has none), and never combined with another int
(Python's int arithmetic is exact); a value that may be either (``max(0, x)``); a bool
(comparisons: only in conditions).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .model import c_float
from .pymath import opaque, py_hypot

__all__ = ["ARR", "ARRAY_FORMS", "BOOL", "FLOAT", "INT", "MAYBE", "NPF", "OBJ", "RAW_FORMS",
           "Refused", "Val", "builtin_form", "call", "const_val", "join_kinds", "kind_name"]

FLOAT, NPF, INT, MAYBE, BOOL, OBJ, ARR = ("float", "NumPy float64", "int", "int or float",
                                         "bool", "object", "array")
#: forms of calls given the call's node (``np.array([...])``) and of NumPy functions of an
#: array, by function (filled by :mod:`cosim.codegen.pyfunc_arrays`)
RAW_FORMS: dict = {}
ARRAY_FORMS: dict = {}


class Refused(Exception):  # noqa: N818 - a reason, not an error of the program
    """Why a function has no C form (the construct and its line)."""


@dataclass
class Val:
    """A translated expression: C text and Python kind; ``const``: its value (folded)."""

    c: str
    kind: str
    const: Any = None
    is_const: bool = False


def const_val(v: Any) -> Val:
    """A constant's value (ints beyond 2**53 have no exact C: their ``c`` is empty)."""
    if isinstance(v, bool):
        return Val("1" if v else "0", BOOL, v, True)
    if isinstance(v, (int, np.integer)):  # a NumPy int (a folded np.abs(-2)) too
        return Val(c_float(v) if abs(int(v)) <= 2 ** 53 else "", INT, v, True)
    if isinstance(v, np.floating) and isinstance(v, float):
        return Val(c_float(v), NPF, v, True)
    if isinstance(v, float):
        return Val(c_float(v), FLOAT, v, True)
    return Val("", OBJ, v, True)


def kind_name(kind: str) -> str:
    return {INT: "an int", MAYBE: "a value that is an int or a float", BOOL: "a bool",
            OBJ: "an object", FLOAT: "a float", NPF: "a NumPy float64",
            ARR: "a float64 array"}[kind]


def join_kinds(kinds: list[str], tr: Any = None) -> str:
    """The kind of a value that is one of these (``min``, ``max``, ``a if c else b``, a name
    an ``if`` assigns): a Python float where it may be a Python float or a NumPy float64
    (the C then fails where Python's float would raise, also where the value is NumPy's,
    which would not: safe, the Python loop takes over; ``tr.conservative`` notes it)."""
    ks = set(kinds)
    if len(ks) == 1:
        return ks.pop()
    if ks <= {FLOAT, NPF}:
        if tr is not None:
            tr.conservative = True
        return FLOAT
    return MAYBE


def _name_of(obj: Any) -> str:
    if isinstance(obj, np.ufunc):
        return f"np.{obj.__name__}"
    mod = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    if mod == "math":
        return f"math.{name}"
    if mod.split(".")[0] == "numpy":
        return f"np.{name}"
    return str(name)


# ------------------------------------------------------------------ the forms
_MATH1 = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
          "acosh", "atanh", "exp", "expm1", "log2", "log10", "log1p", "sqrt")
_MATH_ERR = "math domain or range error (Python raises ValueError or OverflowError)"


def _args(tr: Any, obj: Any, args: list, n: int | tuple) -> list[str]:
    ok = n if isinstance(n, tuple) else (n,)
    if len(args) not in ok:
        raise tr.refuse(f"calls {_name_of(obj)} with {len(args)} arguments")
    return [tr.number(a) for a in args]


def _floats(tr: Any, obj: Any, args: list, n: int) -> list[str]:
    cs = _args(tr, obj, args, n)
    if any(a.kind not in (FLOAT, NPF) and not (a.is_const and a.kind == INT) for a in args):
        raise tr.refuse(f"calls {_name_of(obj)} with an int that is not a constant (NumPy "
                        "cannot take Python's large ints); pass floats")
    return cs


#: functions that never give NaN from non-NaN nor an infinity from finite arguments
_NEVER_FAIL = ("tanh", "atan", "asinh", "atan2")


def _checked(tr: Any, name: str, c_fn: str, xs: list[str]) -> str:
    """``c_fn(xs)`` failing as CPython's ``math_1``: NaN from non-NaN, inf from finite."""
    ts = [x if x.isidentifier() else tr.tmp(x) for x in xs]
    op = opaque(tr.sink)  # no compile-time folding: the C library's result, as Python's
    call = f"{c_fn}({', '.join(f'{op}({t})' for t in ts)})"
    if name in _NEVER_FAIL:
        return f"({call})"
    r = tr.tmp(call)
    nan = " && ".join(f"!isnan({t})" for t in ts)
    fin = " && ".join(f"isfinite({t})" for t in ts)
    tr.fail(f"(isnan({r}) && {nan}) || (isinf({r}) && {fin})", f"math.{name}: {_MATH_ERR}")
    return r


def _math1(name: str) -> Any:
    def form(tr: Any, obj: Any, args: list) -> Val:
        return Val(_checked(tr, name, name, _args(tr, obj, args, 1)), FLOAT)
    return form


def _log(tr: Any, obj: Any, args: list) -> Val:
    cs = _args(tr, obj, args, (1, 2))
    r = _checked(tr, "log", "log", cs[:1])
    if len(cs) == 1:
        return Val(r, FLOAT)
    rb = _checked(tr, "log", "log", cs[1:])  # CPython: log(x) / log(base)
    tr.fail(f"{rb} == 0.0", "math.log with base 1: float division by zero (Python raises "
                            "ZeroDivisionError)")
    return Val(f"({r} / {rb})", FLOAT)


def _round_int(c_fn: str) -> Any:
    def form(tr: Any, obj: Any, args: list) -> Val:
        x = tr.tmp(_args(tr, obj, args, 1)[0])
        tr.fail(f"!isfinite({x})", f"math.{c_fn} of an infinity or NaN (Python raises "
                                   "OverflowError or ValueError)")
        return Val(f"({c_fn}({x}) + 0.0)", INT)  # an int: no negative zero
    return form


def _np1(c_fn: str) -> Any:
    def form(tr: Any, obj: Any, args: list) -> Val:
        return Val(f"{c_fn}({_floats(tr, obj, args, 1)[0]})", NPF)
    return form


def _abs(tr: Any, obj: Any, args: list) -> Val:
    c = _args(tr, obj, args, 1)[0]
    if obj is abs:
        return Val(f"fabs({c})", args[0].kind)
    if obj is math.fabs:
        return Val(f"fabs({c})", FLOAT)
    _floats(tr, obj, args, 1)
    return Val(f"fabs({c})", NPF)


def _minmax(tr: Any, obj: Any, args: list) -> Val:
    if len(args) < 2:
        raise tr.refuse(f"calls {_name_of(obj)} with fewer than two items")
    cs = [tr.number(a) for a in args]
    op = ">" if obj is max else "<"
    kinds = {a.kind for a in args}
    items = [c if c.isidentifier() or a.is_const else tr.tmp(c) for a, c in zip(args, cs)]
    m = tr.tmp(items[0])
    for c in items[1:]:  # Python: the first is kept; a later one replaces it if greater
        tr.out.append(f"if ({c} {op} {m}) {m} = {c};")
    return Val(m, join_kinds(list(kinds), tr))


def _np_minmax(tr: Any, obj: Any, args: list) -> Val:
    a, b = (tr.tmp(c) for c in _floats(tr, obj, args, 2))
    op = ">" if obj is np.maximum else "<"  # NumPy: NaN propagates, else b on ties
    return Val(f"(({a} {op} {b} || isnan({a})) ? {a} : {b})", NPF)


def _copysign(tr: Any, obj: Any, args: list) -> Val:
    """``copysign``; the sign of a NaN is not reproduced (CPython's and the C's arithmetic
    may propagate either NaN operand of ``a * b``), so a NaN sign source fails the C (the
    Python loop takes over: ``tr.conservative``)."""
    xs = _args(tr, obj, args, 2) if obj is math.copysign else _floats(tr, obj, args, 2)
    y = tr.tmp(xs[1])
    tr.conservative = True
    tr.fail(f"isnan({y})", f"{_name_of(obj)} takes the sign of a NaN, which the C does not "
                           "reproduce")
    return Val(f"copysign({xs[0]}, {y})", FLOAT if obj is math.copysign else NPF)


def _atan2(tr: Any, obj: Any, args: list) -> Val:
    return Val(_checked(tr, "atan2", "atan2", _args(tr, obj, args, 2)), FLOAT)


def _fmod(tr: Any, obj: Any, args: list) -> Val:
    x, y = (tr.tmp(c) for c in _args(tr, obj, args, 2))
    r = tr.tmp(f"fmod({x}, {y})")
    tr.fail(f"isnan({r}) && !isnan({x}) && !isnan({y})", f"math.fmod: {_MATH_ERR}")
    return Val(r, FLOAT)


def _hypot(tr: Any, obj: Any, args: list) -> Val:
    x, y = _args(tr, obj, args, 2)
    return Val(f"{py_hypot(tr.sink)}({x}, {y})", FLOAT)


def _float(tr: Any, obj: Any, args: list) -> Val:
    if not args:
        return const_val(0.0)
    if len(args) == 1 and args[0].kind == BOOL:
        return Val(f"({args[0].c} ? 1.0 : 0.0)", FLOAT)
    return Val(_args(tr, obj, args, 1)[0], FLOAT)


_FORMS: dict = {getattr(math, n): _math1(n) for n in _MATH1}
_FORMS.update({
    math.log: _log, math.floor: _round_int("floor"), math.ceil: _round_int("ceil"),
    np.sqrt: _np1("sqrt"), np.floor: _np1("floor"), np.ceil: _np1("ceil"),
    abs: _abs, math.fabs: _abs, np.absolute: _abs, np.fabs: _abs,
    min: _minmax, max: _minmax, np.minimum: _np_minmax, np.maximum: _np_minmax,
    math.copysign: _copysign, np.copysign: _copysign, math.atan2: _atan2, math.fmod: _fmod,
    math.hypot: _hypot, float: _float})


def _form(obj: Any, forms: dict | None = None) -> Any:
    try:
        return (_FORMS if forms is None else forms).get(obj)
    except TypeError:  # unhashable
        return None


def _refusal(tr: Any, obj: Any) -> Exception:
    name = _name_of(obj)
    if name.startswith("np.") and (name[3:] in _REDUCE or "linalg" in str(
            getattr(obj, "__module__", ""))):
        return tr.refuse(f"calls {name} (line {{line}}), a reduction or linear algebra: NumPy's "
                         "order of summation is its own; write the sum of elements out")
    if name.startswith("np.") and not isinstance(obj, np.ufunc):
        return tr.refuse(f"calls {name} (line {{line}}), which has no C form (arrays: "
                         "np.array([e0, e1, ...]) only)")
    if name.startswith("np."):
        return tr.refuse(f"calls {name} (line {{line}}): NumPy may compute it with its own "
                         "SIMD implementation, which can differ from the C library's in the "
                         "last bit; use the math module's function")
    if name.startswith("math."):
        return tr.refuse(f"calls {name} (line {{line}}), which has no C form here")
    return tr.refuse(f"calls '{name}' (line {{line}}), which has no C form")


_REDUCE = ("sum", "dot", "prod", "mean", "inner", "matmul", "vdot", "cross", "einsum",
           "cumsum", "linalg", "norm", "average", "trace", "tensordot", "outer")


def call(tr: Any, node: ast.Call, env: dict) -> Val:
    """The value of a call in the translated function (``tr``: the translator)."""
    f = tr.expr(node.func, env)
    obj = f.const
    if f.kind != OBJ:
        raise tr.refuse("calls a number")
    raw = _form(obj, RAW_FORMS)
    if raw is not None:
        return raw(tr, node, env)
    form = _form(obj)
    if form is None:
        raise _refusal(tr, obj)
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise tr.refuse(f"calls {_name_of(obj)} with keyword or * arguments")
    items = node.args
    if obj in (min, max) and len(items) == 1 and isinstance(items[0], (ast.Tuple, ast.List)):
        items = items[0].elts
    if obj is float and len(items) == 1 and isinstance(items[0], ast.Constant) and \
            isinstance(items[0].value, str):
        return tr.fold(lambda: float(items[0].value))
    args = [tr.expr(a, env) for a in items]
    if any(a.kind == ARR for a in args):
        if _form(obj, ARRAY_FORMS) is None:
            raise tr.refuse(f"calls {_name_of(obj)} with an array (line {{line}}): only np.sqrt, "
                            "np.abs, np.floor and np.ceil translate element-wise")
        return ARRAY_FORMS[obj](tr, obj, args)
    if args and all(a.is_const and a.kind in (FLOAT, INT) for a in args):
        return tr.fold(lambda: obj(*[a.const for a in args]))
    return form(tr, obj, args)


def builtin_form(tr: Any, fn: Any, n_args: int, outs: list[str]) -> tuple | None:
    """The C of a block whose ``fn`` is itself a translatable function (``math.tanh``), or
    None."""
    form = _form(fn)
    if form is None:
        return None
    if len(outs) != 1:
        raise Refused(f"fn {_name_of(fn)} returns one value, the block has {len(outs)} "
                      "outputs")
    v = form(tr, fn, [Val(f"a{i}", FLOAT) for i in range(n_args)])
    if v.kind not in (FLOAT, NPF):
        raise Refused(f"fn {_name_of(fn)} returns {kind_name(v.kind)}")
    tr.out.append(f"{outs[0]} = {v.c};")
    return tr.out, ""
