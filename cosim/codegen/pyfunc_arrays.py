"""Small fixed-shape float64 arrays in a translated FunctionBlock function
(:mod:`cosim.codegen.pyfunc`), unrolled per element in the C, as NumPy computes them.

An array is a list of element values known at build time (its shape is the port's, or the
number of items of ``np.array([...])``); every operation on it is done per element:

* array ports: 1-D float64, 1 to :data:`MAX_SIZE` elements (the C function takes a pointer
  to the elements, writes an output's elements);
* ``x[k]`` with a constant integer ``k`` (``p[0]``, ``p[-1]``): a NumPy float64 (NumPy's
  scalar arithmetic, :mod:`cosim.codegen.pyfunc_calls`); an index out of range fails the C
  (Python raises IndexError);
* ``np.array([e0, e1, ...])`` of numbers, at least one of them a float (a float64 array),
  ``np.array(x)`` of an array (a copy);
* ``+ - * /`` of an array with a number or with an array of the same shape (or of one
  element: NumPy's broadcasting), unary ``-`` and ``+``: NumPy's float64 loops give the
  IEEE result of the same operation per element (no errors: a zero divisor gives inf or
  NaN); ``np.sqrt``, ``np.abs`` (``np.absolute``, ``np.fabs``), ``np.floor``, ``np.ceil``
  per element (correctly rounded or exact, so NumPy's SIMD loops give the same bits);
* float64 arrays in globals and closure cells (1-D, at most :data:`MAX_CONST` elements):
  their elements frozen into the C as constants, as scalar constants are;
* ``P["key"]`` (or ``P[3]``) of a plain dict in a global or closure cell with a constant key:
  the entry (a number or such an array) frozen as a constant of that name would be, the
  translation kept while the entry holds the same value (:class:`Entry`);
* returning an array of an array output's shape, or a tuple of such (one per output).

Refused, with the construct and line: reductions (``np.sum``, ``np.dot``, ``@``,
``np.linalg``: NumPy's order of summation is its own), slicing, a non-constant index,
``**``, ``%`` and ``//`` of arrays, ``x += y`` of an array (in place in NumPy), item
assignment, comparisons and conditions of arrays, arrays in
``if`` branches or conditional expressions, 2-D arrays, arrays of ints, other shapes.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from .pyfunc_calls import (
    ARR,
    ARRAY_FORMS,
    FLOAT,
    INT,
    MAYBE,
    NPF,
    RAW_FORMS,
    Refused,
    Val,
    const_val,
    kind_name,
)
from .pysource import lookup

__all__ = ["MAX_CONST", "MAX_SIZE", "array_binop", "array_unary", "const_array", "keep",
           "out_copies", "out_decls", "port_sizes", "store", "subscript"]

#: the largest array port (elements)
MAX_SIZE = 16
#: the largest frozen global or closure array (elements)
MAX_CONST = 4096

_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_PYOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
          ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b}


def arr(elems: list[Val]) -> Val:
    """An array value: its elements (``const``)."""
    return Val("", ARR, list(elems))


def port_sizes(block: Any) -> tuple[list, list]:
    """The inputs' and outputs' sizes (None: a scalar port); raises :class:`Refused` for
    ports that do not translate."""
    sizes: dict[str, list] = {"input": [], "output": []}
    for kind, ports in (("input", block.in_ports), ("output", block.out_ports)):
        for p in ports:
            dt = np.dtype(p.dtype)
            if p.shape == () and p.size == 1:
                if dt.kind != "f":
                    raise Refused(f"its {kind} {p.name!r} has dtype {dt}: only float ports "
                                  "translate")
                sizes[kind].append(None)
                continue
            if len(p.shape) != 1 or not 1 <= p.size <= MAX_SIZE:
                raise Refused(f"its {kind} {p.name!r} is an array of shape {p.shape}: only "
                              f"scalar ports and 1-D arrays of 1 to {MAX_SIZE} elements "
                              "translate")
            if dt != np.float64:
                raise Refused(f"its {kind} {p.name!r} is an array of {dt}: only float64 "
                              "arrays translate")
            sizes[kind].append(p.size)
    return sizes["input"], sizes["output"]


def input_array(i: int, size: int) -> Val:
    return arr([Val(f"a{i}[{j}]", NPF) for j in range(size)])


def const_array(tr: Any, v: np.ndarray, what: str) -> Val:
    """A global's or closure cell's array, its elements frozen."""
    if v.ndim != 1 or v.dtype != np.float64 or v.size > MAX_CONST:
        raise tr.refuse(f"reads {what}, an array of shape {v.shape} and dtype {v.dtype}: only "
                        f"1-D float64 arrays of at most {MAX_CONST} elements are frozen")
    return arr([const_val(x) for x in v])  # NumPy float64 elements


def keep(tr: Any, v: Val) -> Val:
    """An array bound to a name: its elements C variables (or constants)."""
    return arr([e if e.is_const or e.c.isidentifier() else Val(tr.tmp(e.c), e.kind)
                for e in v.const])


class Entry:
    """A read of ``name[key]`` of a dict in a global or closure cell (``Translation.reads``):
    the translation stands while ``name`` holds a dict whose entry ``key`` is the same."""

    __slots__ = ("key", "value")

    def __init__(self, key: Any, value: Any) -> None:
        self.key, self.value = key, value


def mapping_item(tr: Any, name: str, mapping: dict, node: ast.Subscript) -> Val:
    """``P["key"]`` (or ``P[3]``) of a plain dict in a global or closure cell: the entry, a
    number or a float64 array, frozen into the C as a constant of that name would be."""
    key = node.slice
    if not (isinstance(key, ast.Constant) and isinstance(key.value, (str, int))
            and not isinstance(key.value, bool)):
        raise tr.refuse(f"reads '{name}[...]' with a key that is not a constant string or "
                        "integer")
    k = key.value
    if k not in mapping:
        raise tr.refuse(f"reads {name}[{k!r}], which is not in the dict (Python raises "
                        "KeyError)")
    v = mapping[k]
    tr.reads.append((name, Entry(k, v.copy() if isinstance(v, np.ndarray) else v)))
    return tr.value(v, f"'{name}[{k!r}]'")


def subscript(tr: Any, node: ast.Subscript, env: dict) -> Val:
    """``x[k]`` with a constant integer ``k``; ``P["key"]`` of a dict of constants."""
    if isinstance(node.value, ast.Name) and node.value.id not in env:
        got = lookup(tr.fn, node.value.id)
        if type(got) is dict:  # (a plain dict: a subclass may compute its items)
            return mapping_item(tr, node.value.id, got, node)
    base = tr.expr(node.value, env)
    if base.kind != ARR:
        raise tr.refuse(f"indexes {_kind(base)} (only array ports and arrays index)")
    if isinstance(node.slice, ast.Slice):
        raise tr.refuse("a slice (x[a:b]): only constant integer indices translate")
    k = tr.expr(node.slice, env)
    if not (k.is_const and k.kind == INT):
        raise tr.refuse("an index that is not a constant integer (x[0], x[-1])")
    tr.at(node)
    n = len(base.const)
    i = int(k.const)
    if not -n <= i < n:
        tr.fail("1", f"index {i} is out of bounds for an array of size {n} (Python raises "
                     "IndexError)")
        return Val("NAN", NPF)
    return base.const[i]


def _kind(v: Val) -> str:
    return kind_name(v.kind)


def _scalar(tr: Any, v: Val) -> Val:
    """A number taking part in an element-wise operation (evaluated once)."""
    c = tr.number(v)
    if v.is_const or c.isidentifier():
        return v
    return Val(tr.tmp(c), v.kind)


def _broadcast(tr: Any, a: Val, b: Val, what: str) -> tuple[list, list]:
    ea = a.const if a.kind == ARR else None
    eb = b.const if b.kind == ARR else None
    if ea is None:
        ea = [_scalar(tr, a)] * len(eb)
    if eb is None:
        eb = [_scalar(tr, b)] * len(ea)
    if len(ea) != len(eb):
        if len(ea) == 1:
            ea = ea * len(eb)
        elif len(eb) == 1:
            eb = eb * len(ea)
        else:
            raise tr.refuse(f"{what} of arrays of shapes ({len(ea)},) and ({len(eb)},), "
                            "which do not broadcast (Python raises ValueError)")
    return ea, eb


def _npf(v: Val) -> Val:
    """An element as NumPy holds it: a float64."""
    if v.is_const:
        return const_val(np.float64(v.const)) if v.c else v
    return v if v.kind == NPF else Val(v.c, NPF)


def array_binop(tr: Any, node: ast.BinOp, a: Val, b: Val) -> Val:
    """An element-wise ``+ - * /`` with an array (NumPy's float64 loops: the IEEE result
    per element, no errors)."""
    op = type(node.op)
    if getattr(node, "augmented", False):
        raise tr.refuse("an augmented assignment (+=, ...) of an array: NumPy changes the "
                        "array in place (an input's, a global's too); write x = x + y")
    sym = _OPS.get(op)
    if sym is None:
        name = {ast.MatMult: "@ (a reduction: NumPy's order of summation is its own)"}.get(
            op, f"the operator {op.__name__}")
        raise tr.refuse(f"{name} with an array: only + - * / translate element-wise")
    for v in (a, b):
        if v.kind in (INT, MAYBE) and not v.is_const:
            raise tr.refuse(f"array arithmetic ({sym}) with a Python int that is not a "
                            "constant; make it a float")
        if v.kind not in (ARR, FLOAT, NPF, INT, MAYBE):
            tr.number(v)
    ea, eb = _broadcast(tr, a, b, sym)
    out = []
    for x, y in zip(ea, eb, strict=True):
        x, y = _npf(x), _npf(y)
        if x.is_const and y.is_const:
            out.append(tr.fold(lambda x=x, y=y: _PYOPS[op](x.const, y.const)))
        else:
            out.append(Val(f"({tr.number(x)} {sym} {tr.number(y)})", NPF))
    return arr(out)


def array_unary(tr: Any, op: ast.unaryop, a: Val) -> Val:
    if isinstance(op, ast.UAdd):
        return a
    if not isinstance(op, ast.USub):
        raise tr.refuse(f"the operator {type(op).__name__} of an array")
    return arr([tr.fold(lambda e=e: -e.const) if e.is_const else Val(f"(-{e.c})", NPF)
                for e in map(_npf, a.const)])


def store(tr: Any, o: str, v: Val, size: int | None) -> None:
    """The C writing output ``o`` (``o_<j>`` for an array output of ``size`` elements)."""
    if size is None:
        if v.kind == ARR:
            raise tr.refuse("returns an array for a scalar output")
        return
    if v.kind != ARR:
        raise tr.refuse(f"returns {_kind(v)} for an array output of shape ({size},); return "
                        "an array (np.array([...]))")
    if len(v.const) != size:
        raise tr.refuse(f"returns an array of shape ({len(v.const)},) for an output of shape "
                        f"({size},)")
    for j, e in enumerate(v.const):
        tr.out.append(f"{o}_{j} = {tr.number(e)};")


def out_decls(sizes: list) -> list[str]:
    """The C function's output variables (``o<i>``, ``o<i>_<j>`` for an array)."""
    return [f"double o{i} = 0.0;" if n is None else
            "double " + ", ".join(f"o{i}_{j} = 0.0" for j in range(n)) + ";"
            for i, n in enumerate(sizes)]


def out_copies(sizes: list) -> list[str]:
    """The outputs written through the C function's pointers ``y<i>``."""
    return [f"*y{i} = o{i};" if n is None else
            " ".join(f"y{i}[{j}] = o{i}_{j};" for j in range(n)) for i, n in enumerate(sizes)]


# ------------------------------------------------------------------ calls
def _np_array(tr: Any, node: ast.Call, env: dict) -> Val:
    if node.keywords or len(node.args) != 1:
        raise tr.refuse("np.array(...) with keywords or several arguments: only "
                        "np.array([e0, e1, ...]) translates")
    item = node.args[0]
    if not isinstance(item, (ast.List, ast.Tuple)):
        v = tr.expr(item, env)
        if v.kind != ARR:
            raise tr.refuse(f"np.array of {_kind(v)}: only np.array([e0, e1, ...]) of "
                            "numbers translates")
        return arr(v.const)
    if not 1 <= len(item.elts) <= MAX_CONST:
        raise tr.refuse(f"np.array of {len(item.elts)} items")
    vals = [tr.expr(e, env) for e in item.elts]
    for v in vals:
        if v.kind == ARR:
            raise tr.refuse("np.array of arrays (a 2-D array): only 1-D arrays translate")
        tr.number(v)
    if not any(v.kind in (FLOAT, NPF) for v in vals):
        raise tr.refuse("np.array of ints (an int array): make an item a float (1.0)")
    return arr([_npf(v) for v in vals])


def _elementwise(c_fn: str) -> Any:
    def form(tr: Any, obj: Any, args: list) -> Val:
        if len(args) != 1:
            raise tr.refuse(f"calls np.{c_fn} of an array with {len(args)} arguments")
        return arr([tr.fold(lambda e=e: obj(e.const)) if e.is_const else
                    Val(f"{c_fn}({e.c})", NPF) for e in map(_npf, args[0].const)])
    return form


#: NumPy functions of one array, per element
ARRAY_FORMS.update({np.sqrt: _elementwise("sqrt"), np.floor: _elementwise("floor"),
                    np.ceil: _elementwise("ceil"), np.absolute: _elementwise("fabs"),
                    np.fabs: _elementwise("fabs")})
RAW_FORMS[np.array] = _np_array
