"""The C of FunctionBlocks' translated functions (:mod:`cosim.codegen.pyfunc`) compiled into
one shared library and called over arrays of inputs, so a test compares many functions with
Python on many values (special ones included) for one compilation."""

from __future__ import annotations

import ctypes

import numpy as np

from cosim.codegen.cache import CFLAGS, shared_library
from cosim.codegen.pyfunc import c_lines


class Sink:
    """``cg`` for the harness: helpers collected, a failure sets ``*err``."""

    def __init__(self) -> None:
        self.helpers: dict[str, str] = {}

    def helper(self, key: str, code: str) -> None:
        self.helpers.setdefault(key, code)

    def fail(self, message: str) -> str:
        return "*err = 1;"


def compile_blocks(blocks: list) -> list:
    """For each FunctionBlock, ``run(rows) -> (outputs, failed)``: its C over the rows of
    arguments (the time first with ``needs_time``)."""
    sink = Sink()
    funcs = []
    for k, b in enumerate(blocks):
        lines = c_lines(b, sink)
        n_args = len(b.in_ports) + int(bool(b.needs_time))
        n_out = len(b.out_ports)
        body = "\n".join("        " + ln.replace("\n", "\n        ") for ln in lines)
        funcs.append(
            f"void cosim_h{k}(int n, const double *A, double *O, int *E) {{\n"
            f"    for (int r = 0; r < n; r++) {{\n"
            + "".join(f"        const double a{i} = A[r * {n_args} + {i}];\n"
                      for i in range(n_args))
            + "".join(f"        double o{i} = 0.0;\n" for i in range(n_out))
            + "        int *err = &E[r];\n        *err = 0;\n"
            + body + "\n"
            + "".join(f"        O[r * {n_out} + {i}] = o{i};\n" for i in range(n_out))
            + "".join(f"        (void)a{i};\n" for i in range(n_args))
            + "    }\n}\n")
    src = ("#include <math.h>\n#include <stdint.h>\n\n" + "\n\n".join(sink.helpers.values())
           + "\n\n" + "\n".join(funcs))
    lib = ctypes.CDLL(str(shared_library("cosim-pyfunc-harness", src, (*CFLAGS, "-lm"),
                                         "pyfunc harness")))
    out = []
    for k, b in enumerate(blocks):
        f = getattr(lib, f"cosim_h{k}")
        n_out = len(b.out_ports)

        def run(rows, f=f, n_out=n_out):
            rows = np.ascontiguousarray(rows, dtype=float)
            n = rows.shape[0]
            o = np.zeros((n, n_out))
            e = np.zeros(n, dtype=np.intc)
            f(ctypes.c_int(n), rows.ctypes.data_as(ctypes.c_void_p),
              o.ctypes.data_as(ctypes.c_void_p), e.ctypes.data_as(ctypes.c_void_p))
            return o, e.astype(bool)
        out.append(run)
    return out
