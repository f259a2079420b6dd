"""The nonlinear chain's floor: what a plain C program takes for ``bench core``'s model C.

Model C (:func:`bench.models.nl_map`): a sine source, ``n`` function blocks
``y = tanh(1.05 y) + 0.01 y**2`` one after the other, an integrator; RK4 at 1 ms for 1 s.
The Python loop evaluates the chain five times a step (the major point and RK4's four
stages); our compiled loop evaluates it once per distinct time (:mod:`cosim.codegen.time_cache`:
2.02 times a step, stage 4's time ``t + h`` meeting the next major point's ``(k + 1) h`` in
978 steps of 1000).  This program does the five evaluations in C (gcc -O2, glibc's
``tanh``), once more with only the two distinct evaluations a step (the chain has no
state: stage 3 equals stage 2 and stage 4 the next step's major point), one after the
other, and once more with the two evaluated together, block by block (two independent
chains of ``tanh`` calls the CPU overlaps, as our RK4 look-ahead does), the least a loop
that keeps glibc's ``tanh`` and evaluates each time once can do.  All are printed in
microseconds per block-step (``n + 3`` blocks, as ``bench core`` counts them), beside ours;
the three end values are the same bits.

Run: ``python -m bench.nl_floor [N]`` (needs gcc).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from bench import models as md

C_SOURCE = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
static double chain(int n, double g, double q, double y) {
    for (int i = 0; i < n; i++) y = tanh(g * y) + q * y * y;
    return y; }
static void chain2(int n, double g, double q, double *a, double *b) {
    double y = *a, x = *b;
    for (int i = 0; i < n; i++) { y = tanh(g * y) + q * y * y; x = tanh(g * x) + q * x * x; }
    *a = y; *b = x; }
int main(int argc, char **argv) {
    int n = atoi(argv[1]); double dt = atof(argv[2]), T = atof(argv[3]);
    double g = atof(argv[4]), q = atof(argv[5]), f = atof(argv[6]);
    long steps = (long)(T / dt + 0.5); volatile double sink = 0; double z = 0, w;
    double t0 = now();                      /* five evaluations a step */
    for (long k = 0; k < steps; k++) {
        double t = k * dt, ts[4] = {t, t + dt / 2, t + dt / 2, t + dt}, ks[4];
        sink += chain(n, g, q, sin(2 * M_PI * f * t));
        for (int s = 0; s < 4; s++) ks[s] = chain(n, g, q, sin(2 * M_PI * f * ts[s]));
        z += dt / 6 * (ks[0] + 2 * ks[1] + 2 * ks[2] + ks[3]); }
    w = now() - t0;
    printf("%.6g %.17g\n", w / steps / (n + 3) * 1e6, z);
    double k1 = chain(n, g, q, 0.0); z = 0; t0 = now();   /* two distinct ones */
    for (long k = 0; k < steps; k++) {
        double t = k * dt;
        double k2 = chain(n, g, q, sin(2 * M_PI * f * (t + dt / 2)));
        double k4 = chain(n, g, q, sin(2 * M_PI * f * (t + dt)));
        z += dt / 6 * (k1 + 4 * k2 + k4); k1 = k4; }
    w = now() - t0;
    printf("%.6g %.17g\n", w / steps / (n + 3) * 1e6, z);
    k1 = chain(n, g, q, 0.0); z = 0; t0 = now();   /* the two together */
    for (long k = 0; k < steps; k++) {
        double t = k * dt;
        double k2 = sin(2 * M_PI * f * (t + dt / 2)), k4 = sin(2 * M_PI * f * (t + dt));
        chain2(n, g, q, &k2, &k4);
        z += dt / 6 * (k1 + 4 * k2 + k4); k1 = k4; }
    w = now() - t0;
    printf("%.6g %.17g\n", w / steps / (n + 3) * 1e6, z);
    return 0; }
"""


def floor(n: int = 100, repeats: int = 5) -> dict:
    """Best of ``repeats`` runs: us per block-step with five evaluations a step, with two
    one after the other and with two together, and the integrator's end value of each (the
    same model: equal to ours to rounding)."""
    with tempfile.TemporaryDirectory(prefix="bench-nl-floor-") as tmp:
        src, exe = Path(tmp) / "nl.c", Path(tmp) / "nl"
        src.write_text(C_SOURCE)
        subprocess.run(["gcc", "-O2", "-o", str(exe), str(src), "-lm"], check=True)
        args = [str(exe), str(n), repr(md.DT), repr(md.T_END_C), repr(md.NL_GAIN),
                repr(md.NL_QUAD), repr(md.NL_FREQ)]
        five, two, both = [], [], []
        for _ in range(repeats):
            out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
            a, b, c = (line.split() for line in out.strip().splitlines())
            five.append(float(a[0]))
            two.append(float(b[0]))
            both.append(float(c[0]))
    return {"five_us": min(five), "two_us": min(two), "together_us": min(both),
            "z_five": float(a[1]), "z_two": float(b[1]), "z_together": float(c[1])}


def main(argv: list[str]) -> int:
    from bench import ours_core
    n = int(argv[0]) if argv else 100
    f = floor(n)
    ours = min(ours_core.nl_chain(n, "RK4", True)[1] for _ in range(5)) / md.STEPS_C / (n + 3)
    print(f"nonlinear chain N = {n}, us per block-step (best of 5): plain C, five evaluations "
          f"a step {f['five_us']:.4f}; plain C, two {f['two_us']:.4f}; plain C, two "
          f"together {f['together_us']:.4f}; ours compiled {ours * 1e6:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
