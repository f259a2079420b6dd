"""Generated Python functions over small float64 arrays for the FunctionBlock translation's
tests (:mod:`cosim.codegen.pyfunc_arrays`): inputs that are scalars or arrays of 1 to 6
elements, outputs likewise; random expression trees of array elements with constant
indices (negative ones too), ``np.array([...])``, element-wise ``+ - * /`` of arrays with
scalars and with arrays (of the same shape, or of one element: broadcast), unary ``-``,
``np.sqrt``/``np.abs``/``np.floor``/``np.ceil`` of arrays, global and closure arrays
indexed with constants, scalar math of elements (``math.hypot``...), local names.  Some
functions divide by a scalar input or take ``math.sqrt`` of an element, so Python raises
on some rows (the C must fail there); one in 40 indexes out of range (Python always raises).

:func:`array_corpus_module` writes the functions as one module and imports it;
:func:`compile_array_blocks` compiles their C (:func:`cosim.codegen.pyfunc.c_lines`) into
one library run over rows of flattened arguments.
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from pathlib import Path

import numpy as np

from cosim.codegen.cache import CFLAGS, shared_library
from cosim.codegen.pyfunc import c_lines
from cosim.codegen.pyfunc_arrays import out_decls
from tests.corpus.pyfunc_harness import Sink

SCALES = (1e-3, 0.1, 1.0, 3.0, 1e3, 1e6)


class _Gen:
    def __init__(self, rng, sizes: list, consts: dict) -> None:
        self.rng, self.sizes, self.consts = rng, sizes, consts  # name -> size (None: scalar)

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def names(self, size):
        return [n for n, s in self.sizes.items() if s == size]

    def arrays(self):
        return [(n, s) for n, s in list(self.sizes.items()) + list(self.consts.items())
                if s is not None]

    def const(self) -> str:
        v = float(self.rng.uniform(-1, 1)) * self.pick(SCALES)
        return self.pick([repr(v) if v >= 0 else f"({v!r})", str(int(self.rng.integers(-3, 5)))])

    def scalar(self, d: int) -> str:
        if d <= 0 or self.rng.random() < 0.25:
            r = self.rng.random()
            arrs = self.arrays()
            if arrs and r < 0.55:
                n, s = self.pick(arrs)
                k = int(self.rng.integers(-s, s))
                return f"{n}[{k}]"
            sc = self.names(None)
            if sc and r < 0.85:
                return self.pick(sc)
            return self.const()
        e = lambda: self.scalar(d - 1)  # noqa: E731
        k = int(self.rng.integers(12))
        if k < 5:
            return f"({e()} {self.pick(['+', '-', '*'])} {e()})"
        if k == 5:
            return f"({e()} / (abs({e()}) + 0.5))"
        if k == 6:
            sc = self.names(None)
            return f"({e()} / {self.pick(sc)})" if sc else f"(-{e()})"
        if k == 7:
            return f"math.hypot({e()}, {e()})"
        if k == 8:
            return f"{self.pick(['abs', 'math.tanh', 'np.sqrt', 'math.atan'])}({e()})"
        if k == 9:
            return f"math.sqrt({e()})"  # a negative argument: ValueError
        if k == 10:
            return f"({e()} if {e()} < {e()} else {e()})"
        return f"(-{e()})"

    def array(self, size: int, d: int) -> str:
        if d <= 0 or self.rng.random() < 0.2:
            own = [n for n, s in list(self.sizes.items()) + list(self.consts.items())
                   if s == size]
            if own and self.rng.random() < 0.6:
                return self.pick(own)
            return "np.array([" + ", ".join(self.scalar(d - 1) for _ in range(size)) + "])"
        a = lambda: self.array(size, d - 1)  # noqa: E731
        s = lambda: self.scalar(d - 1)  # noqa: E731
        k = int(self.rng.integers(10))
        op = self.pick(["+", "-", "*", "/"])
        if k < 3:
            return f"({a()} {op} {a()})"
        if k < 5:
            return f"({a()} {op} {s()})"
        if k < 7:
            return f"({s()} {op} {a()})"
        if k == 7:
            return f"(-{a()})"
        if k == 8 and size > 1:  # broadcast of one element
            return f"({a()} {op} {self.array(1, d - 1)})"
        return f"{self.pick(['np.sqrt', 'np.abs', 'np.floor', 'np.ceil', 'np.fabs'])}({a()})"

    def value(self, size, d):
        return self.scalar(d) if size is None else self.array(size, d)


def _size(rng):
    return None if rng.random() < 0.35 else int(rng.integers(1, 7))


def function_source(rng, i: int) -> tuple[str, list, list]:
    """One function's source (``f{i}``), its inputs' and outputs' sizes."""
    ins = [_size(rng) for _ in range(int(rng.integers(1, 4)))]
    outs = [_size(rng) for _ in range(int(rng.choice([1, 1, 2, 3])))]
    args = [f"x{j}" for j in range(len(ins))]
    closure = rng.random() < 0.3
    consts = {"KA": 3, "KB": 5} | ({"CA": 4} if closure else {})
    g = _Gen(rng, dict(zip(args, ins, strict=True)), consts)
    depth = int(rng.integers(1, 4))
    body = []
    for j in range(int(rng.integers(0, 3))):
        size = _size(rng)
        body.append(f"    z{j} = {g.value(size, depth)}")
        g.sizes[f"z{j}"] = size
    if rng.random() < 1 / 40:
        n, s = g.pick(g.arrays())
        body.append(f"    bad = {n}[{s}]  # out of range: IndexError")
    vals = [g.value(s, depth) for s in outs]
    body.append(f"    return {', '.join(vals)}")
    text = f"def f{i}({', '.join(args)}):\n" + "\n".join(body) + "\n"
    if closure:
        ca = [float(v) for v in rng.uniform(-2, 2, 4)]
        text = (f"def _make_f{i}():\n    CA = np.array({ca!r})\n"
                + "".join("    " + ln + "\n" for ln in text.splitlines())
                + f"    return f{i}\n\n\nf{i} = _make_f{i}()\n")
    return text, ins, outs


def array_corpus_module(seed: int, n: int, folder: Path) -> list[tuple]:
    """Write ``n`` generated functions as a module in ``folder`` and import it:
    ``[(fn, input sizes, output sizes)]`` (None: a scalar)."""
    rng = np.random.default_rng(seed)
    ka = [float(v) for v in rng.uniform(-3, 3, 3)]
    kb = [float(v) * 10.0 ** int(rng.integers(-3, 4)) for v in rng.uniform(-1, 1, 5)]
    parts = [f"import math\n\nimport numpy as np\n\nKA = np.array({ka!r})\nKB = np.array({kb!r})"
             "\n\n\n"]
    meta = []
    for i in range(n):
        text, ins, outs = function_source(rng, i)
        parts.append(text + "\n\n")
        meta.append((ins, outs))
    name = f"pyfunc_array_corpus_{seed}"
    path = folder / f"{name}.py"
    path.write_text("".join(parts))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return [(getattr(mod, f"f{i}"), *meta[i]) for i in range(n)]


def _width(sizes: list) -> int:
    return sum(1 if s is None else s for s in sizes)


def compile_array_blocks(blocks: list, ins: list, outs: list) -> list:
    """For each block, ``run(rows) -> (outputs, failed)``: its C over rows of flattened
    arguments (``ins[k]``/``outs[k]``: the block's input and output sizes)."""
    sink = Sink()
    funcs = []
    for k, b in enumerate(blocks):
        body = "\n".join("        " + ln.replace("\n", "\n        ") for ln in c_lines(b, sink))
        w_in, w_out = _width(ins[k]), _width(outs[k])
        args, off = [], 0
        for i, s in enumerate(ins[k]):
            args.append(f"        const double a{i} = A[r * {w_in} + {off}];\n" if s is None
                        else f"        const double *a{i} = &A[r * {w_in} + {off}];\n")
            off += 1 if s is None else s
        stores, off = [], 0
        for i, s in enumerate(outs[k]):
            for j in range(1 if s is None else s):
                var = f"o{i}" if s is None else f"o{i}_{j}"
                stores.append(f"        O[r * {w_out} + {off}] = {var};\n")
                off += 1
        funcs.append(
            f"void cosim_ha{k}(int n, const double *A, double *O, int *E) {{\n"
            "    for (int r = 0; r < n; r++) {\n" + "".join(args)
            + "".join(f"        {d}\n" for d in out_decls(outs[k]))
            + "        int *err = &E[r];\n        *err = 0;\n" + body + "\n" + "".join(stores)
            + "".join(f"        (void)a{i};\n" for i in range(len(ins[k]))) + "    }\n}\n")
    src = ("#include <math.h>\n#include <stdint.h>\n\n" + "\n\n".join(sink.helpers.values())
           + "\n\n" + "\n".join(funcs))
    lib = ctypes.CDLL(str(shared_library("cosim-pyfunc-array-harness", src,
                                         (*CFLAGS, "-lm"), "pyfunc array harness")))
    runs = []
    for k in range(len(blocks)):
        f, w = getattr(lib, f"cosim_ha{k}"), _width(outs[k])

        def run(rows, f=f, w_out=w):
            rows = np.ascontiguousarray(rows, dtype=float)
            o = np.zeros((rows.shape[0], w_out))
            e = np.zeros(rows.shape[0], dtype=np.intc)
            f(ctypes.c_int(rows.shape[0]), rows.ctypes.data_as(ctypes.c_void_p),
              o.ctypes.data_as(ctypes.c_void_p), e.ctypes.data_as(ctypes.c_void_p))
            return o, e.astype(bool)
        runs.append(run)
    return runs
