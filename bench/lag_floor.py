"""The lag chain in a plain C program: ``bench core``'s model B, our exact step and nothing else.

Model B (:func:`bench.ours_core.lag_chain`): a unit step at t = 0 through ``n`` first-order
lags, RK4 at 1 ms for 1 s from rest.  Our Python loop and our compiled loop both step it by
RK4's exact one-step map ``x <- M [x, v(t), v(t + h/2), v(t + h)]``
(:mod:`cosim.propagator`, :mod:`cosim.codegen.propagate_c`).  This program does that
product over the same matrix (CSR tables taken from our propagator: the same entries, so the
same values along the chain), each row summed in order from 0.0 with the step's value 1 at the
three stage times, gcc -O2: no recording, no Python, no written-out rows (our C writes the
rows out with their constants; this one loops over the tables).

What it is for: the cost per block-step of N = 1000 over N = 100 of the arithmetic itself.
From rest, a band of states along the long chain holds subnormal values (below 2.2e-308)
through the whole second; their products take microcode assists, so the same product costs
more per row at N = 1000 than at N = 100 (N = 100's band leaves the chain in its first
50 ms).  ``bench core``'s lag-chain scaling target divides our ratio by this program's,
measured in the same run: what is left is what our loop adds.  With ``--ftz`` the program
runs with the CPU flushing subnormals to zero (other results: for comparison only).

Run: ``python -m bench.lag_floor [--ftz] [N ...]`` (needs gcc).
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import models as md
from bench.harness import PeerNotInstalled

C_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef FTZ
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif
#include "matrix.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    static double x[N], z[NZ];
    long steps = atol(argv[1]), k;
    int i, j;
#ifdef FTZ
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
    double t0 = now();
    for (k = 0; k < steps; k++) {
        memcpy(z, x, sizeof x);
        for (j = N; j < NZ; j++) z[j] = 1.0;  /* the unit step at each stage time */
        for (i = 0; i < N; i++) {
            double acc = 0.0;
            for (j = P[i]; j < P[i + 1]; j++) acc += D[j] * z[I[j]];
            x[i] = acc;
        }
    }
    printf("%.9g %.17g\n", now() - t0, x[N - 1]);
    return 0; }
"""

_BUILT: dict[tuple[int, bool], Path] = {}
_TMP: list[tempfile.TemporaryDirectory] = []


def _matrix_header(n: int) -> str:
    """``matrix.h``: our propagator's ``M`` for model B at ``n`` (CSR tables)."""
    import scipy.sparse as sp

    from bench import ours_core as oc
    sim, _ = oc._lag_chain_sim(n, oc._solver("RK4"), False)
    prop = sim.program.propagator
    if prop is None or prop.nv != 1:
        raise AssertionError("model B must be stepped by the exact map of one input")
    m = sp.csr_matrix(prop.M)

    def table(name: str, ctype: str, vals) -> str:
        return f"static const {ctype} {name}[] = {{{', '.join(vals)}}};\n"
    return (f"#define N {n}\n#define NZ {m.shape[1]}\n"
            + table("D", "double", [repr(float(v)) for v in m.data])
            + table("I", "int", [str(int(v)) for v in m.indices])
            + table("P", "int", [str(int(v)) for v in m.indptr]))


def program(n: int, ftz: bool = False) -> Path:
    """The compiled program for ``n`` (built once a process)."""
    key = (n, ftz)
    if key not in _BUILT:
        if shutil.which("gcc") is None:
            raise PeerNotInstalled("plain C needs gcc")
        if not _TMP:
            _TMP.append(tempfile.TemporaryDirectory(prefix="bench-lag-floor-"))
            atexit.register(_TMP[0].cleanup)
        d = Path(_TMP[0].name) / f"n{n}{'f' if ftz else ''}"
        d.mkdir()
        (d / "matrix.h").write_text(_matrix_header(n))
        (d / "lag.c").write_text(C_SOURCE)
        exe = d / "lag"
        subprocess.run(["gcc", "-O2", *(["-DFTZ"] if ftz else []), "-o", str(exe),
                        str(d / "lag.c")], check=True, cwd=d)
        _BUILT[key] = exe
    return _BUILT[key]


def plain_c_lag_chain(n: int, t_end: float = md.T_END_B, ftz: bool = False):
    """A case function (``(build_s, run_s, extra)``, :mod:`bench.peers`): the run time the
    program measures around its steps, the last lag's end value checked as the peers'."""
    t0 = time.perf_counter()
    exe = program(n, ftz)
    build = time.perf_counter() - t0
    out = subprocess.run([str(exe), str(md.steps(t_end))], check=True, capture_output=True,
                         text=True).stdout.split()
    return build, float(out[0]), md.accuracy_lag_chain(n, float(out[1]), t_end)


def main(argv: list[str]) -> int:
    ftz = "--ftz" in argv
    sizes = [int(a) for a in argv if a != "--ftz"] or [100, 1000]
    per = {}
    for n in sizes:
        best = min(plain_c_lag_chain(n, ftz=ftz)[1] for _ in range(7))
        per[n] = best / md.STEPS_B / md.blocks_lag_chain(n) * 1e6
        print(f"lag chain N = {n}{' (subnormals flushed)' if ftz else ''}: "
              f"{per[n]:.5f} us per block-step (best of 7)")
    if 100 in per and 1000 in per:
        print(f"N = 1000 / N = 100: {per[1000] / per[100]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
