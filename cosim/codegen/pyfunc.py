"""The C form of a :class:`~cosim.function_block.FunctionBlock`: its Python function ``fn``
translated into C statements, where every operation has an exact C equivalent.

``fn`` (a ``def`` or a ``lambda``) is found in its source file (``linecache`` and
:mod:`ast`; a function without source, made by ``exec`` or typed at a prompt, has no C form)
and translated for float inputs (small 1-D float64 arrays too, unrolled per element:
:mod:`cosim.codegen.pyfunc_arrays`):

* ``+ - * /``, unary ``-``, ``**`` (CPython's ``float_pow``: its special cases, then the C
  library's ``pow``), ``%`` and ``//`` (CPython's ``float_rem`` / ``_float_div_mod``),
  comparisons, ``and``/``or``/``not`` in conditions, ``a if c else b``;
* ``abs``, ``min``/``max`` (Python's order: the first item is kept, a later one replaces it
  when greater / smaller, so NaN behaves as in Python), ``float(...)``;
* ``math``: sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp expm1
  log (1 and 2 arguments: ``log(x) / log(base)`` as CPython) log2 log10 log1p sqrt fabs
  copysign fmod hypot (CPython's own, :func:`cosim.codegen.pymath.py_hypot`) floor ceil,
  and the constants pi, e, tau, inf; ``floor``/``ceil`` return ints in Python: the C keeps
  them as doubles, exact, and refuses the integer arithmetic that could differ (an int
  result plus another int, an int output);
* NumPy, only where its scalar result is exactly the C's: ``np.sqrt``, ``np.abs``
  (``np.absolute``, ``np.fabs``), ``np.floor``, ``np.ceil``, ``np.minimum``,
  ``np.maximum`` (NaN-propagating as NumPy's), ``np.copysign`` and the constants; not
  ``np.tanh``, ``np.exp``, ``np.sin``...: NumPy may use its own SIMD implementations;
* names: the arguments (the inputs, and the time first with ``needs_time``), local
  assignments, closure cells and globals holding int or float constants (their value at
  build time is frozen into the C, as parameters are), their entries ``P["key"]`` of a
  dict, module attributes; a body of
  assignments ending in ``return e`` or ``return e1, e2, ...`` (one per output), ``if``
  statements whose branches both return, and ``if`` statements without returns (the names
  the branches assign merged).

Where Python raises (a zero divisor, a math domain or range error, ``0.0 ** -1``, a negative
number to a fractional power), the C fails (``cg.fail``): the compiled run goes back to the
start of its slice and the Python loop takes over and raises its own error.  C-library calls
take an opaque copy of their arguments (``pymath.opaque``), so the C compiler cannot fold them
at compile time with other rounding than the C library's.

A translation is one C function (``static int cosim_pyfn_<hash>(a0, ..., &y0, ...)``,
returning the 1-based number of the first failure) shared by every block of that function,
not inlined (a chain of 1000 blocks compiles in about 0.4 s); it is kept per function while
the globals and closure cells it read hold the same values.

Anything else has no C form, with the reason naming the block, the construct and its line
(:func:`function_block_refusal`, surfaced by ``diagnostics["compiled"]``).  A Numba
``cfunc`` is called through its address instead (:mod:`cosim.codegen.numba_form`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import types
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import pyfunc_arrays as arrays
from .model import CModel, CodegenError, register_c_model
from .pyfunc_calls import (
    ARR,
    BOOL,
    FLOAT,
    INT,
    MAYBE,
    NPF,
    OBJ,
    Refused,
    Val,
    builtin_form,
    call,
    const_val,
    join_kinds,
    kind_name,
)
from .pymath import opaque, py_divmod, py_pow
from .pysource import MISSING, NOT_PLAIN, find_node, lookup, what_node

#: the kind of a name an ``if`` binds on one path only (reading it is refused)
UNBOUND = "unbound"

__all__ = ["Refused", "Translation", "c_lines", "function_block_c_model",
           "function_block_refusal", "shared_function", "translate"]

# ------------------------------------------------------------------ translation
class _Translator:
    """Python AST -> C statements; ``sink`` gives ``fail(message)`` and ``helper(key, c)``
    (the block's ``cg``, or a stand-in for the check)."""

    def __init__(self, fn: Any, sink: Any) -> None:
        self.fn, self.sink = fn, sink
        self.reads: list[tuple[str, Any]] = []  # the globals and closure cells read
        #: the C may fail where Python does not (a value that is a Python float or a
        #: NumPy float64: join_kinds; the sign of a NaN: copysign)
        self.conservative = False
        self.out: list[str] = []
        self.n = 0
        self.line = 0
        self.out_sizes: list = []  # the outputs' sizes (None: a scalar)

    # ----------------------------------------------------------- plumbing
    def refuse(self, what: str) -> Refused:
        """Why not, with the line (where ``{line}`` stands, else at the end)."""
        if "{line}" in what:
            return Refused(what.replace("{line}", str(self.line)))
        return Refused(f"{what} (line {self.line})" if self.line else what)

    def tmp(self, c: str, ctype: str = "double") -> str:
        self.n += 1
        name = f"v{self.n}"
        self.out.append(f"{ctype} {name} = {c};")
        return name

    def fail(self, cond: str, what: str) -> None:
        msg = f"line {self.line}: {what}"
        self.out.append(f"if ({cond}) {{ {self.sink.fail(msg)} }}")

    @contextmanager
    def block(self):
        saved, self.out = self.out, []
        try:
            yield self.out
        finally:
            self.out = saved

    def at(self, node: ast.AST) -> None:
        self.line = getattr(node, "lineno", self.line)

    # ----------------------------------------------------------- names
    def resolve(self, name: str, env: dict) -> Val:
        if name in env:
            if env[name].kind == UNBOUND:
                raise self.refuse(f"reads '{name}', which an if statement binds on one path "
                                  "only")
            return env[name]
        v = lookup(self.fn, name)
        if v is MISSING:
            raise self.refuse(f"reads '{name}', which is not defined (or a closure cell not "
                              "yet set)")
        self.reads.append((name, v.copy() if isinstance(v, np.ndarray) else v))
        return self.value(v, repr(name))

    def value(self, v: Any, what: str) -> Val:
        if isinstance(v, (bool, int, float)) or isinstance(v, (types.ModuleType,
                                                                types.BuiltinFunctionType,
                                                                np.ufunc, type)):
            return const_val(v)
        if callable(v):
            return const_val(v)  # a call of it is refused by name
        if isinstance(v, np.ndarray):
            return arrays.const_array(self, v, what)
        raise self.refuse(f"reads {what}, a {type(v).__name__}, not an int or float "
                          "constant")

    # ----------------------------------------------------------- statements
    def body(self, stmts: list, env: dict, outs: list[str]) -> None:
        """Translate statements; every path must end in a return."""
        for i, st in enumerate(stmts):
            self.at(st)
            if isinstance(st, ast.Return):
                return self.ret(st, env, outs)
            if isinstance(st, ast.If) and not _any_return([st]):
                self.merge_if(st, env)
                continue
            if isinstance(st, ast.If):
                rest = stmts[i + 1:]  # where a branch goes on, it goes on with the rest
                then = st.body if _returns(st.body) else st.body + rest
                other = st.orelse if _returns(st.orelse) else st.orelse + rest
                c = self.cond(st.test, env)
                with self.block() as a:
                    self.body(then, dict(env), outs)
                with self.block() as b:
                    self.body(other, dict(env), outs)
                self.out.append(f"if ({c}) {{\n" + _indent(a) + "\n} else {\n"
                                + _indent(b) + "\n}")
                return None
            self.simple(st, env)
        raise self.refuse("a path through the function ends without a return")

    def merge_if(self, st: ast.If, env: dict) -> None:
        """An ``if`` without returns: both branches assign C variables for the names either
        assigns (a name only one branch binds is unbound on the other path)."""
        c = self.cond(st.test, env)
        branches = []
        for stmts in (st.body, st.orelse):
            e = dict(env)
            with self.block() as code:
                for s2 in stmts:
                    self.at(s2)
                    if isinstance(s2, ast.If):
                        self.merge_if(s2, e)
                    else:
                        self.simple(s2, e)
            branches.append((code, e))
        (ca, ea), (cb, eb) = branches
        for name in sorted(set(ea) | set(eb)):
            va, vb = ea.get(name), eb.get(name)
            if va is not None and va is vb:
                env[name] = va
            elif va is None or vb is None or UNBOUND in (va.kind, vb.kind):
                env[name] = Val("", UNBOUND)
            else:
                self.n += 1
                var = f"v{self.n}"
                self.out.append(f"double {var};")
                ca.append(f"{var} = {self.number(va)};")
                cb.append(f"{var} = {self.number(vb)};")
                env[name] = Val(var, join_kinds([va.kind, vb.kind], self))
        self.out.append(f"if ({c}) {{\n" + _indent(ca or ["/* nothing */"]) + "\n} else {\n"
                        + _indent(cb or ["/* nothing */"]) + "\n}")

    def simple(self, st: ast.stmt, env: dict) -> None:
        if isinstance(st, ast.Pass) or (isinstance(st, ast.Expr) and isinstance(
                st.value, ast.Constant) and isinstance(st.value.value, str)):
            return
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            self.assign(st.targets[0], st.value, env)
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            self.assign(st.target, st.value, env)
        elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            load = ast.Name(st.target.id, ast.Load(), lineno=st.lineno)
            op = ast.BinOp(load, st.op, st.value, lineno=st.lineno)
            op.augmented = True  # an array's x += y changes it in place: refused
            self.assign(st.target, op, env)
        else:
            raise self.refuse(f"a statement the translation does not take: {what_node(st)}")

    def assign(self, target: ast.AST, value: ast.AST, env: dict) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = self.keep(self.expr(value, env))
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (
                ast.Tuple, ast.List)) and len(target.elts) == len(value.elts) and all(
                    isinstance(t, ast.Name) for t in target.elts):
            vals = [self.keep(self.expr(v, env)) for v in value.elts]
            for t, v in zip(target.elts, vals, strict=True):
                env[t.id] = v
        else:
            raise self.refuse("an assignment to something other than local names")

    def keep(self, v: Val) -> Val:
        """A value bound to a name: a C variable, unless a constant or a plain name."""
        if v.kind == ARR:
            return arrays.keep(self, v)
        if v.is_const or v.kind == BOOL or v.c.isidentifier():
            return v
        return Val(self.tmp(v.c), v.kind)

    def ret(self, st: ast.Return, env: dict, outs: list[str]) -> None:
        if st.value is None:
            raise self.refuse("'return' without a value")
        if len(outs) == 1:
            vals = [self.expr(st.value, env)]
        elif isinstance(st.value, (ast.Tuple, ast.List)) and len(st.value.elts) == len(outs):
            vals = [self.keep(self.expr(e, env)) for e in st.value.elts]
        else:
            raise self.refuse(f"a return that is not a tuple of {len(outs)} values (one per "
                              "output)")
        for o, v, size in zip(outs, vals, self.out_sizes or [None] * len(outs), strict=True):
            if size is not None or v.kind == ARR:
                arrays.store(self, o, v, size)
                continue
            if v.kind not in (FLOAT, NPF):
                raise self.refuse(f"returns {kind_name(v.kind)} (Python's value would be "
                                  f"{'a bool' if v.kind == BOOL else 'an int'} in the "
                                  "output; return a float, e.g. 0.0 or float(...))")
            self.out.append(f"{o} = {self.number(v)};")

    # ----------------------------------------------------------- expressions
    def number(self, v: Val) -> str:
        if v.kind not in (FLOAT, NPF, INT, MAYBE):
            raise self.refuse(f"uses {kind_name(v.kind)} as a number")
        if v.is_const and not v.c:
            raise self.refuse(f"uses the int {v.const}, beyond 2**53 (not exact as a float)")
        return v.c

    def expr(self, node: ast.AST, env: dict) -> Val:
        self.at(node)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float)):
                return const_val(node.value)
            raise self.refuse(f"a constant {node.value!r} that is not a number")
        if isinstance(node, ast.Name):
            return self.resolve(node.id, env)
        if isinstance(node, ast.Attribute):
            base = self.expr(node.value, env)
            if base.kind != OBJ or not isinstance(base.const, types.ModuleType):
                raise self.refuse(f"reads the attribute '.{node.attr}' of something other "
                                  "than a module")
            try:
                v = getattr(base.const, node.attr)
            except AttributeError:
                raise self.refuse(f"reads '{base.const.__name__}.{node.attr}', which does "
                                  "not exist") from None
            return self.value(v, f"'{base.const.__name__}.{node.attr}'")
        if isinstance(node, ast.BinOp):
            return self.binop(node, env)
        if isinstance(node, ast.Subscript):
            return arrays.subscript(self, node, env)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node, env)
        if isinstance(node, ast.IfExp):
            return self.ifexp(node, env)
        if isinstance(node, ast.Compare):
            return Val(self.compare(node, env), BOOL)
        if isinstance(node, ast.Call):
            return call(self, node, env)
        if isinstance(node, ast.BoolOp):
            raise self.refuse("'and'/'or' outside a condition (Python returns one of the "
                              "operands)")
        raise self.refuse(what_node(node))

    def binop(self, node: ast.BinOp, env: dict) -> Val:
        a, b = self.expr(node.left, env), self.expr(node.right, env)
        op = type(node.op)
        if ARR in (a.kind, b.kind):
            return arrays.array_binop(self, node, a, b)
        sym = _BINOPS.get(op)
        if sym is None:
            raise self.refuse(f"the operator {type(node.op).__name__}")
        if a.is_const and b.is_const and a.kind != OBJ and b.kind != OBJ:
            return self.fold(lambda: _PYOPS[op](a.const, b.const))
        for v in (a, b):
            self.number(v)
        if NPF in (a.kind, b.kind):
            return self.np_binop(op, sym, a, b)
        if op is ast.Div:
            d = self.tmp(b.c)
            self.fail(f"{d} == 0.0", "float division by zero (Python raises "
                                     "ZeroDivisionError)")
            return Val(f"({a.c} / {d})", FLOAT)
        if FLOAT not in (a.kind, b.kind):
            raise self.refuse(f"integer arithmetic ({sym} of {kind_name(a.kind)} and "
                              f"{kind_name(b.kind)}: exact in Python, rounded in C); make one "
                              "operand a float")
        if op in (ast.Add, ast.Sub, ast.Mult):
            return Val(f"({a.c} {sym} {b.c})", FLOAT)
        if op is ast.Pow:
            x, y = self.tmp(a.c), self.tmp(b.c)
            self.n += 1
            e = f"e{self.n}"
            self.out.append(f"int {e};")
            r = self.tmp(f"{py_pow(self.sink)}({x}, {y}, &{e})")
            self.fail(f"{e} == 1", "0.0 cannot be raised to a negative power (Python raises "
                                   "ZeroDivisionError)")
            self.fail(f"{e} == 2", "a negative number raised to a fractional power (Python "
                                   "returns a complex number)")
            self.fail(f"{e} == 3", "** overflows (Python raises OverflowError)")
            return Val(r, FLOAT)
        mod, floordiv = py_divmod(self.sink)
        x, d = self.tmp(a.c), self.tmp(b.c)
        self.fail(f"{d} == 0.0", f"float {'modulo' if op is ast.Mod else 'floor division'}"
                                 " by zero (Python raises ZeroDivisionError)")
        return Val(f"{mod if op is ast.Mod else floordiv}({x}, {d})", FLOAT)

    def np_binop(self, op: type, sym: str, a: Val, b: Val) -> Val:
        """Arithmetic with a NumPy float64 (NumPy's scalar arithmetic: no errors; ``**``
        the C library's ``pow``; ``%`` and ``//`` as CPython's but for a zero divisor)."""
        if any(v.kind in (INT, MAYBE) and not v.is_const for v in (a, b)):
            raise self.refuse(f"NumPy arithmetic ({sym}) with a Python int that is not a "
                              "constant; make it a float")
        if op in (ast.Add, ast.Sub, ast.Mult, ast.Div):
            return Val(f"({a.c} {sym} {b.c})", NPF)
        if op is ast.Pow:  # (opaque: GCC makes pow(x, -2.0) 1/(x*x), another NaN sign)
            op_ = opaque(self.sink)
            return Val(f"pow({op_}({a.c}), {op_}({b.c}))", NPF)
        mod, floordiv = py_divmod(self.sink)
        x, d = self.tmp(a.c), self.tmp(b.c)
        if op is ast.Mod:
            return Val(f"({d} == 0.0 ? fmod({x}, {d}) : {mod}({x}, {d}))", NPF)
        return Val(f"({d} == 0.0 ? {x} / {d} : {floordiv}({x}, {d}))", NPF)

    def unary(self, node: ast.UnaryOp, env: dict) -> Val:
        if isinstance(node.op, ast.Not):
            return Val(f"(!{self.cond(node.operand, env)})", BOOL)
        a = self.expr(node.operand, env)
        if a.kind == ARR:
            return arrays.array_unary(self, node.op, a)
        if a.is_const and a.kind != OBJ:
            return self.fold(lambda: -a.const if isinstance(node.op, ast.USub) else
                             +a.const if isinstance(node.op, ast.UAdd) else ~a.const)
        self.number(a)
        if isinstance(node.op, ast.UAdd):
            return a
        if not isinstance(node.op, ast.USub):
            raise self.refuse(f"the operator {type(node.op).__name__}")
        if a.kind in (FLOAT, NPF):
            return Val(f"(-{a.c})", a.kind)
        if a.kind == INT:  # an int has no -0: C's value of it is canonical (+0.0)
            return Val(f"(0.0 - {a.c})", INT)
        raise self.refuse("negates a value that is an int or a float (the sign of its zero "
                          "differs); make both alternatives floats")

    def ifexp(self, node: ast.IfExp, env: dict) -> Val:
        c = self.cond(node.test, env)
        with self.block() as sa:
            a = self.expr(node.body, env)
        with self.block() as sb:
            b = self.expr(node.orelse, env)
        kind = join_kinds([a.kind, b.kind], self)
        for v in (a, b):
            self.number(v)
        self.n += 1
        r = f"v{self.n}"
        self.out.append(f"double {r};\nif ({c}) {{\n" + _indent(sa + [f"{r} = {a.c};"])
                        + "\n} else {\n" + _indent(sb + [f"{r} = {b.c};"]) + "\n}")
        return Val(r, kind)

    def compare(self, node: ast.Compare, env: dict) -> str:
        left = self.number(self.expr(node.left, env))
        parts: list[str] = []
        flag = None
        for i, (op, right) in enumerate(zip(node.ops, node.comparators, strict=True)):
            sym = _CMPS.get(type(op))
            if sym is None:
                raise self.refuse(f"the comparison {type(op).__name__}")
            with self.block() as pre:
                r = self.expr(right, env)
                rc = self.number(r)
            if len(node.ops) > 1 and not r.is_const:
                self.n += 1  # an operand of two comparisons: evaluated once, seen by both
                self.out.append(f"double v{self.n};")
                pre.append(f"v{self.n} = {rc};")
                rc = f"v{self.n}"
            term = f"({left} {sym} {rc})"
            if i == 0:  # the first comparison always runs
                self.out.extend(pre)
                parts.append(term)
            elif not pre and flag is None:
                parts.append(term)
            else:  # a later operand is evaluated only if the earlier comparisons held
                if flag is None:
                    flag = self.tmp(" && ".join(parts), "int")
                self.out.append(f"if ({flag}) {{\n" + _indent(pre + [f"{flag} = {term};"])
                                + "\n}")
            left = rc
        return flag if flag is not None else "(" + " && ".join(parts) + ")"

    def cond(self, node: ast.AST, env: dict) -> str:
        """A C condition (int) of a Python test, short-circuit as Python's."""
        self.at(node)
        if isinstance(node, ast.BoolOp):
            conds: list[str] = []
            c = None
            for i, v in enumerate(node.values):
                with self.block() as pre:
                    cv = self.cond(v, env)
                if i == 0 or (not pre and c is None):
                    self.out.extend(pre)  # the first operand always runs
                    conds.append(cv)
                    continue
                if c is None:
                    c = self.tmp(_join(conds, node.op), "int")
                test = c if isinstance(node.op, ast.And) else f"!{c}"
                self.out.append(f"if ({test}) {{\n" + _indent(pre + [f"{c} = {cv};"]) + "\n}")
            return c if c is not None else _join(conds, node.op)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"(!{self.cond(node.operand, env)})"
        v = self.expr(node, env)
        if v.kind == BOOL:
            return v.c
        return f"({self.number(v)} != 0.0)"

    def fold(self, compute: Any) -> Val:
        try:
            with np.errstate(all="ignore"):
                return const_val(compute())
        except (ArithmeticError, ValueError) as exc:  # Python raises where it gets here
            self.fail("1", f"{type(exc).__name__}: {exc} (an expression of constants)")
            return Val("NAN", FLOAT)
        except Exception as exc:  # noqa: BLE001 - a TypeError...: no C form
            raise self.refuse(f"an expression of constants that raises "
                              f"{type(exc).__name__}: {exc}") from None


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
           ast.Mod: "%", ast.FloorDiv: "//"}
_PYOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
          ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
          ast.Pow: lambda a, b: a ** b, ast.Mod: lambda a, b: a % b,
          ast.FloorDiv: lambda a, b: a // b}
_CMPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
         ast.NotEq: "!="}


def _join(conds: list[str], op: ast.AST) -> str:
    return "(" + (" && " if isinstance(op, ast.And) else " || ").join(conds) + ")"


def _any_return(stmts: list) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def _returns(stmts: list) -> bool:
    if any(isinstance(s, ast.Return) for s in stmts):
        return True
    return bool(stmts) and isinstance(stmts[-1], ast.If) and _returns(stmts[-1].body) and \
        _returns(stmts[-1].orelse)


def _indent(lines: list[str]) -> str:
    return "\n".join("    " + ln.replace("\n", "\n    ") for ln in lines)


# ------------------------------------------------------------------ the block
class _Record:
    """The ``cg`` of a translation that is kept: the helpers it needs and its failures'
    messages (placeholders in the C, replaced for each block)."""

    def __init__(self) -> None:
        self.helpers: list[tuple[str, str]] = []
        self.fails: list[str] = []

    def fail(self, message: str) -> str:
        self.fails.append(message)
        return f"@@FAIL{len(self.fails) - 1}@@"

    def helper(self, key: str, code: str) -> None:
        self.helpers.append((key, code))


@dataclass
class Translation:
    """A function's C (or why it has none), and what it read: valid while the globals and
    closure cells it read hold the same values."""

    lines: list[str]
    record: _Record
    reads: list[tuple[str, Any]]
    refused: str = ""
    #: the C may fail where Python does not (a value that may be a Python float or a NumPy
    #: float64; copysign of a NaN): safe, the Python loop takes over, only slower
    conservative: bool = False

    def valid_for(self, fn: Any) -> bool:
        return all(_same(lookup(fn, name), v) for name, v in self.reads)


def _same(a: Any, b: Any) -> bool:
    if type(b) is arrays.Entry:  # a dict's entry: the dict still holds the same there
        return type(a) is dict and b.key in a and _same(a[b.key], b.value)
    if a is b:
        return True
    if isinstance(a, np.ndarray) and type(b) is np.ndarray:  # a frozen array: same bits
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return type(a) is type(b) and isinstance(a, (int, float)) and repr(a) == repr(b)


#: translations by (function, arguments, outputs): the blocks of a chain share one
_CACHE: dict = {}


def _label(block: Any) -> str:
    return f"{type(block).__name__} '{block.path}'"


def translate(block: Any) -> Translation:
    """The translation of ``block.fn`` (``lines``: C writing ``o0, o1, ...`` from ``a0, a1,
    ...``, the time first with ``needs_time``; failures as ``@@FAIL<k>@@``), or why not
    (``refused``)."""
    try:
        ins, outs = arrays.port_sizes(block)
    except Refused as exc:
        return Translation([], _Record(), [], str(exc))
    fn = block.fn
    sizes = [None] * int(bool(block.needs_time)) + ins
    try:
        key = (fn, tuple(sizes), tuple(outs))
        got = _CACHE.get(key)
    except TypeError:  # an unhashable callable
        key, got = None, None
    if got is not None and got.valid_for(fn):
        return got
    tr = _Translator(fn, _Record())
    tr.out_sizes = outs
    try:
        _translate(tr, fn, sizes, [f"o{i}" for i in range(len(outs))])
        got = Translation(tr.out, tr.sink, tr.reads, conservative=tr.conservative)
    except Refused as exc:
        got = Translation([], tr.sink, tr.reads, str(exc))
    if key is not None:
        if len(_CACHE) > 1000:
            _CACHE.clear()
        _CACHE[key] = got
    return got


def _translate(tr: _Translator, fn: Any, sizes: list, outs: list[str]) -> None:
    n_args = len(sizes)  # (a builtin such as math.tanh takes scalars only)
    if all(s is None for s in sizes + tr.out_sizes) and builtin_form(tr, fn, n_args, outs):
        return
    if isinstance(fn, (types.MethodType, functools.partial)) or not isinstance(
            fn, types.FunctionType):
        raise Refused(f"fn is {kind_name(OBJ)} of type {type(fn).__name__}, not a plain "
                      "function or lambda")
    code = fn.__code__
    if code.co_flags & NOT_PLAIN:
        raise Refused("fn takes *args or **kwargs, or is a generator or coroutine")
    if code.co_argcount != n_args or code.co_kwonlyargcount:
        raise Refused(f"fn takes {code.co_argcount} positional arguments, the block passes "
                      f"{n_args}")
    node = find_node(code)
    env = {a.arg: Val(f"a{i}", FLOAT) if sizes[i] is None else arrays.input_array(i, sizes[i])
           for i, a in enumerate(node.args.args)}
    tr.line = node.lineno
    if isinstance(node, ast.Lambda):
        tr.body([ast.Return(node.body, lineno=node.lineno)], env, outs)
    else:
        tr.body(node.body, env, outs)


def c_lines(block: Any, cg: Any) -> list[str]:
    """The block's translated C for ``cg`` (its helpers registered, its failures
    ``cg.fail``); raises :class:`Refused`."""
    got = translate(block)
    if got.refused:
        raise Refused(got.refused)
    for key, code in got.record.helpers:
        cg.helper(key, code)
    text = "\n".join(got.lines)
    for k, msg in enumerate(got.record.fails):
        text = text.replace(f"@@FAIL{k}@@", cg.fail(f"{_label(block)} {msg}"))
    return text.split("\n") if text else []


#: not inlined when many blocks call it: one copy (GCC inlined it into every call: a chain of
#: 1000 blocks compiled in 1.0 s instead of 0.5 s); :func:`cosim.codegen.csource.helpers_text`
#: drops the attribute for a function of few blocks
_NOINLINE_C = """#if defined(__GNUC__)
#define COSIM_NOINLINE __attribute__((noinline))
#else
#define COSIM_NOINLINE
#endif"""


def shared_function(block: Any, cg: Any) -> tuple[str, list[str]]:
    """The translation as a C function shared by the blocks of one function (one copy
    in the source, so a chain of many such blocks compiles fast): its name, and the
    failures' messages by the 1-based code it returns (0: none)."""
    got = translate(block)
    if got.refused:
        raise Refused(got.refused)
    for key, code in got.record.helpers:
        cg.helper(key, code)
    ins, outs = arrays.port_sizes(block)
    ins = [None] * int(bool(block.needs_time)) + ins
    text = "\n".join(got.lines)
    for k in range(len(got.record.fails)):
        text = text.replace(f"@@FAIL{k}@@", f"if (!err_) err_ = {k + 1};")
    params = ([f"{'double' if n is None else 'const double *'} a{i}" for i, n in enumerate(ins)]
              + [f"double *y{i}" for i in range(len(outs))])
    name = "cosim_pyfn_" + hashlib.sha1(f"{params}\n{text}".encode()).hexdigest()[:16]
    body = (arrays.out_decls(outs) + ["int err_ = 0;"]
            + [f"(void)a{i};" for i in range(len(ins))] + (text.split("\n") if text else [])
            + arrays.out_copies(outs) + ["return err_;"])
    cg.helper("cosim_noinline", _NOINLINE_C)
    cg.helper(name, f"/* {_label(block)} and the blocks of the same function */\n"
                    f"static COSIM_NOINLINE int {name}({', '.join(params) or 'void'}) {{\n"
                    + _indent(body) + "\n}")
    return name, [f"{_label(block)} {msg}" for msg in got.record.fails]


def function_block_refusal(block: Any) -> str:
    """'' when ``block.fn`` translates (or is a Numba cfunc), else why not."""
    from .numba_form import cfunc_refusal, is_cfunc
    if is_cfunc(getattr(block, "cfunc", None)):
        return cfunc_refusal(block)
    return translate(block).refused


def function_block_c_model(block: Any, cg: Any) -> CModel:
    """The C form of a FunctionBlock (registered for ``cosim.function_block.FunctionBlock``)."""
    from .numba_form import cfunc_c_model, is_cfunc
    if is_cfunc(getattr(block, "cfunc", None)):
        return cfunc_c_model(block, cg)
    try:
        name, fails = shared_function(block, cg)
    except Refused as exc:
        raise CodegenError(f"{_label(block)}: {exc}") from None
    args = ([cg.t] if block.needs_time else []) + [
        cg.u(p) if p.shape == () else f"&{cg.u(p, 0)}" for p in block.in_ports]
    outs = [f"&{cg.y(p, None if p.shape == () else 0)}" for p in block.out_ports]
    call = f"{name}({', '.join(args + outs)})"
    if fails:
        code = f"{{\n    int e_ = {call};\n" + "".join(
            f"    {'if' if k == 0 else 'else if'} (e_ == {k + 1}) {cg.fail(msg)}\n"
            for k, msg in enumerate(fails)) + "}"
    else:
        code = f"(void){call};"
    outputs = {p.name: (code if i == 0 else f"/* computed with '{block.out_ports[0].name}' */")
               for i, p in enumerate(block.out_ports)}
    return CModel(outputs=outputs, time_dependent=bool(block.needs_time))


register_c_model("cosim.function_block.FunctionBlock", function_block_c_model,
                 refusal=function_block_refusal)
register_c_model("blocks.sources.ClosedFormSource", function_block_c_model,  # f(t)
                 refusal=function_block_refusal)
