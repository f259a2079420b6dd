"""Generated Python functions for the FunctionBlock translation's tests
(:mod:`cosim.codegen.pyfunc`): random expression trees over the inputs, the time and
constants of many scales (literals, module globals, closure cells, entries of a module
dict ``P["k0"]``, ``P[3]``; ints and floats), with
every operator, ``math`` and NumPy function the translation takes, conditional expressions,
``if`` statements with returns and without (names assigned in branches), comparisons,
``and``/``or``/``not``, local assignments and several outputs.  Arguments of functions with
a restricted domain are mostly kept inside it (``math.log(abs(e) + 0.1)``), so most
functions run; some are not, so errors happen too.

:func:`corpus_module` writes the functions as the source of one module (the translation
reads source files) and imports it: ``[(function, n_inputs, n_outputs, needs_time)]``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

SCALES = (1e-9, 1e-3, 0.1, 0.5, 1.0, 3.0, 10.0, 1e3, 1e6, 1e12)
NP1 = ("np.abs", "np.absolute", "np.fabs")


class _Gen:
    def __init__(self, rng: np.random.Generator, names: list[str], consts: list[str]) -> None:
        self.rng, self.names, self.consts = rng, names, consts

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def const(self) -> str:
        r = self.rng.random()
        if r < 0.25 and self.consts:
            return self.pick(self.consts)
        if r < 0.33:
            return str(int(self.rng.integers(-5, 9)))
        v = float(self.rng.uniform(-1, 1)) * self.pick(SCALES)
        return repr(v) if v >= 0 else f"({v!r})"

    def leaf(self) -> str:
        return self.pick(self.names) if self.rng.random() < 0.7 else self.const()

    def pos(self, d: int) -> str:
        """A positive expression (a domain guard)."""
        return f"(abs({self.expr(d)}) + {self.pick(['0.1', '0.5', '1e-3', '2'])})"

    def unit(self, d: int) -> str:
        """An expression in (-1, 1)."""
        return f"math.tanh({self.expr(d)})"

    def expr(self, d: int) -> str:  # noqa: C901 - one branch per construct
        if d <= 0 or self.rng.random() < 0.2:
            return self.leaf()
        e = lambda: self.expr(d - 1)  # noqa: E731
        k = int(self.rng.integers(30))
        if k < 6:
            return f"({e()} {self.pick(['+', '-', '*'])} {e()})"
        if k == 6:
            return f"({e()} / {self.pos(d - 1)})"
        if k == 7:
            return f"({e()} / ({e()} + 0.123))"
        if k == 8:
            expo = self.pick(["2", "0.5", "3", "-1", "1.5", "-0.5", "2.0", self.unit(d - 1)])
            return f"({self.pos(d - 1)} ** {expo})"
        if k == 9:
            return f"({e()} ** {self.pick(['2', '3', '2.0', '-2', '0'])})"
        if k == 10:
            div = self.pick(["0.7", "(-1.3)", "3", "1e-3", "2.5"])
            return f"({e()} {self.pick(['%', '//'])} {div})"
        if k == 11:
            return f"({e()} {self.pick(['%', '//'])} {self.pos(d - 1)})"
        if k == 12:
            return f"(-{e()})"
        if k == 13:
            return f"abs({e()})"
        if k == 14:
            fn = self.pick(["min", "max"])
            args = ", ".join(e() for _ in range(int(self.rng.integers(2, 4))))
            return f"{fn}({args})" if self.rng.random() < 0.8 else f"{fn}(({args},))"
        if k == 15:
            return f"math.{self.pick(['sin', 'cos', 'atan', 'tanh', 'asinh'])}({e()})"
        if k == 16:
            return f"math.{self.pick(['exp', 'sinh', 'cosh', 'expm1'])}({self.unit(d - 1)} * 3.0)"
        if k == 17:
            return self.pick([f"math.log({self.pos(d - 1)})", f"math.log({self.pos(d - 1)}, 2.5)",
                              f"math.log10({self.pos(d - 1)})", f"math.log2({self.pos(d - 1)})",
                              f"math.log1p({self.pos(d - 1)})", f"math.sqrt({self.pos(d - 1)})",
                              f"math.acosh({self.pos(d - 1)} + 1.0)"])
        if k == 18:
            u = self.unit(d - 1)
            return self.pick([f"math.asin({u})", f"math.acos({u})", f"math.atanh({u} * 0.9)",
                              f"math.tan({u})"])
        if k == 19:
            return f"math.{self.pick(['atan2', 'hypot', 'copysign'])}({e()}, {e()})"
        if k == 20:
            return f"math.fmod({e()}, {self.pick(['0.7', '(-2.0)', self.pos(d - 1)])})"
        if k == 21:
            k = self.pick(["0.5", "1.0", "(-0.25)"])
            return f"(math.{self.pick(['floor', 'ceil'])}({e()}) * {k})"
        if k == 22:
            arg = f"abs({e()})" if self.rng.random() < 0.5 else e()
            return f"{self.pick(['np.sqrt', 'np.floor', 'np.ceil'])}({arg})"
        if k == 23:
            return f"{self.pick(NP1)}({e()})"
        if k == 24:
            return f"np.{self.pick(['minimum', 'maximum', 'copysign'])}({e()}, {e()})"
        if k in (25, 26):
            return f"({e()} if {self.cond(d - 1)} else {e()})"
        if k == 27:
            return f"(float({e()} {self.pick(['<', '>=', '=='])} {e()}) * {e()})"
        if k == 28:
            return f"{self.pick(['math.pi', 'math.e', 'np.pi', 'math.tau'])}"
        return f"float({e()})"

    def cond(self, d: int) -> str:
        k = int(self.rng.integers(8))
        ops = ["<", "<=", ">", ">=", "==", "!="]
        if k < 3:
            return f"{self.expr(d)} {self.pick(ops)} {self.expr(d)}"
        if k == 3:
            a, b, c = self.expr(d), self.expr(d), self.expr(d)
            return f"{a} {self.pick(['<', '<='])} {b} {self.pick(['<', '<='])} {c}"
        if k in (4, 5):
            return f"({self.cond(d - 1)}) {self.pick(['and', 'or'])} ({self.cond(d - 1)})"
        if k == 6:
            return f"not ({self.cond(d - 1)})"
        return f"{self.expr(d)}"  # a number as a condition


def function_source(rng: np.random.Generator, i: int) -> tuple[str, int, int, bool]:
    """One function's source (named ``f{i}``), its inputs, outputs and needs_time."""
    n_in = int(rng.integers(1, 4))
    n_out = int(rng.choice([1, 1, 1, 2, 3]))
    needs_time = bool(rng.random() < 0.3)
    args = (["t"] if needs_time else []) + [f"x{j}" for j in range(n_in)]
    style = int(rng.integers(4))
    closure = style == 3
    consts = [f"K{j}" for j in range(4)] + (["c0", "c1"] if closure else []) + \
        ['P["k0"]', 'P["k1"]', 'P["kn"]', "P[3]"]
    g = _Gen(rng, args, consts)
    depth = int(rng.integers(1, 5))

    def ret() -> str:
        vals = [g.expr(depth) for _ in range(n_out)]
        return ", ".join(vals) if n_out > 1 else vals[0]

    if style == 0 and n_out == 1:
        return f"f{i} = lambda {', '.join(args)}: {ret()}\n", n_in, n_out, needs_time
    body = []
    for j in range(int(rng.integers(0, 3))):
        body.append(f"    z{j} = {g.expr(depth)}")
        g.names = [*g.names, f"z{j}"]
        if rng.random() < 0.3:
            body.append(f"    z{j} {g.pick(['+=', '-=', '*='])} {g.expr(1)}")
    if style != 2 and rng.random() < 0.6:  # an if without returns: names merged after it
        new = f"w{i}"
        old = [n for n in g.names if n.startswith("z")]
        one = g.pick(old) if old and rng.random() < 0.5 else None
        body.append(f"    if {g.cond(depth - 1)}:\n        {new} = {g.expr(depth)}"
                    + (f"\n        {one} = {g.expr(depth - 1)}" if one else "")
                    + f"\n    else:\n        {new} = {g.expr(depth)}")
        g.names = [*g.names, new]
    if style == 2:
        body.append(f"    if {g.cond(depth - 1)}:\n        return {ret()}")
        if rng.random() < 0.5:
            body.append(f"    elif {g.cond(depth - 1)}:\n        return {ret()}")
    body.append(f"    return {ret()}")
    text = f"def f{i}({', '.join(args)}):\n" + "\n".join(body) + "\n"
    if closure:
        c0, c1 = g.const(), g.const()
        text = (f"def _make_f{i}():\n    c0 = {c0 if not c0.startswith(('K', 'c', 'P')) else 1.5}\n"
                f"    c1 = {c1 if not c1.startswith(('K', 'c', 'P')) else 7}\n"
                + "".join("    " + ln + "\n" for ln in text.splitlines())
                + f"    return f{i}\n\n\nf{i} = _make_f{i}()\n")
    return text, n_in, n_out, needs_time


def corpus_module(seed: int, n: int, folder: Path) -> list[tuple]:
    """Write ``n`` generated functions as a module in ``folder`` and import it:
    ``[(fn, n_inputs, n_outputs, needs_time)]``."""
    rng = np.random.default_rng(seed)
    head = ("import math\n\nimport numpy as np\n\n"
            f"K0 = {float(rng.uniform(0.1, 3))!r}\nK1 = {int(rng.integers(2, 6))}\n"
            f"K2 = {-float(rng.uniform(0.1, 1e3))!r}\nK3 = {float(rng.uniform(1e-6, 1e-3))!r}\n"
            'P = {"k0": K0, "k1": K1, "kn": K2, 3: K3, "unused": "text"}\n\n')
    parts, meta = [head], []
    for i in range(n):
        text, n_in, n_out, nt = function_source(rng, i)
        parts.append(text + "\n\n")
        meta.append((n_in, n_out, nt))
    name = f"pyfunc_corpus_{seed}"
    path = folder / f"{name}.py"
    path.write_text("".join(parts))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return [(getattr(mod, f"f{i}"), *meta[i]) for i in range(n)]
