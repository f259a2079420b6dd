"""The FMUs' own work, timed without any master: a bare C loop that calls only ``doStep``.

Peer ``fmu-floor-c`` of ``bench master``'s FMU cases.  The loop loads each FMU's binary with
``dlopen``, instantiates it, enters and leaves initialization, then calls ``fmi2DoStep`` /
``fmi3DoStep`` of every FMU at its own rate for the whole run: no ``get``/``set``, no
exchange, no recording, no Python.  Every co-simulation master has to make at least these
calls on the same binaries, so ``floor / ecos`` is the lowest ``ours / ecos`` ratio any master
could reach in that run, and ``(ours - floor) / (ecos - floor)`` compares what the two masters
add on top of the FMUs' work.

Timed in C (``CLOCK_MONOTONIC``) from ``EnterInitializationMode`` to the last ``doStep``, as
ours times ``master.run()`` and Ecos ``init()`` + ``step(n)``.  The driver is compiled once per
process with the system's C compiler (bench only; not part of the package).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

_C = r"""
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    void (*logger)(void *, const char *, int, const char *, const char *, ...);
    void *(*alloc)(size_t, size_t);
    void (*free)(void *);
    void (*step_finished)(void *, int);
    void *env;
} Callbacks2;

static void log2(void *e, const char *n, int s, const char *c, const char *m, ...) {
    (void)e; (void)n; (void)s; (void)c; (void)m;
}

typedef void *(*Inst2)(const char *, int, const char *, const char *, const Callbacks2 *, int, int);
typedef int (*Setup2)(void *, int, double, double, int, double);
typedef int (*Init)(void *);
typedef int (*Step2)(void *, double, double, int);
typedef void (*Free)(void *);
typedef void *(*Inst3)(const char *, const char *, const char *, int, int, int, int,
                       const unsigned *, size_t, void *, void *, void *);
typedef int (*Enter3)(void *, int, double, double, int, double);
typedef int (*Step3)(void *, double, double, int, int *, int *, int *, double *);
typedef int (*Real2)(void *, const unsigned *, size_t, double *);
typedef int (*Real3)(void *, const unsigned *, size_t, double *, size_t);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Returns the seconds of the run, or a negative number: -(1 + index of the failing FMU). */
double floor_run(int n, const char **libs, const char **names, const char **tokens,
                 const char **resources, const int *rates, int fmi3, long steps, double H,
                 const int *in_start, const unsigned *in_vr, const int *in_val,
                 const int *out_start, const unsigned *out_vr, const int *out_val,
                 double *val) {
    void *dll[64], *c[64], *set[64], *get[64], *step[64];
    Callbacks2 cb = {log2, calloc, free, NULL, NULL};
    double t0, t1;
    long k;
    int i;
    if (n > 64) return -1000.0;
    for (i = 0; i < n; i++) {
        dll[i] = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        if (!dll[i]) return -(1.0 + i);
        if (fmi3)
            c[i] = ((Inst3)dlsym(dll[i], "fmi3InstantiateCoSimulation"))(
                names[i], tokens[i], resources[i], 0, 0, 0, 0, NULL, 0, NULL, NULL, NULL);
        else
            c[i] = ((Inst2)dlsym(dll[i], "fmi2Instantiate"))(names[i], 1, tokens[i],
                                                               resources[i], &cb, 0, 0);
        if (!c[i]) return -(1.0 + i);
        set[i] = dlsym(dll[i], fmi3 ? "fmi3SetFloat64" : "fmi2SetReal");
        get[i] = dlsym(dll[i], fmi3 ? "fmi3GetFloat64" : "fmi2GetReal");
    }
    t0 = now();
    for (i = 0; i < n; i++) {
        int st;
        if (fmi3) {
            st = ((Enter3)dlsym(dll[i], "fmi3EnterInitializationMode"))(c[i], 0, 0.0, 0.0, 0, 0.0);
            st |= ((Init)dlsym(dll[i], "fmi3ExitInitializationMode"))(c[i]);
        } else {
            st = ((Setup2)dlsym(dll[i], "fmi2SetupExperiment"))(c[i], 0, 0.0, 0.0, 0, 0.0);
            st |= ((Init)dlsym(dll[i], "fmi2EnterInitializationMode"))(c[i]);
            st |= ((Init)dlsym(dll[i], "fmi2ExitInitializationMode"))(c[i]);
        }
        if (st) return -(1.0 + i);
    }
    for (i = 0; i < n; i++) step[i] = dlsym(dll[i], fmi3 ? "fmi3DoStep" : "fmi2DoStep");
    for (k = 0; k < steps; k++) {
        for (i = 0; i < n; i++) {  /* Jacobi: every due FMU's inputs, as last read */
            int a = in_start[i], m = in_start[i + 1] - a, j;
            double buf[64];
            if (k % rates[i] || m == 0) continue;
            for (j = 0; j < m; j++) buf[j] = val[in_val[a + j]];
            if (fmi3 ? ((Real3)set[i])(c[i], in_vr + a, m, buf, m)
                     : ((Real2)set[i])(c[i], in_vr + a, m, buf))
                return -(1.0 + i);
        }
        for (i = 0; i < n; i++) {
            int st;
            if (k % rates[i]) continue;
            if (fmi3) {
                int ev, term, early;
                double last;
                st = ((Step3)step[i])(c[i], (double)k * H, rates[i] * H, 1, &ev, &term, &early,
                                      &last);
            } else {
                st = ((Step2)step[i])(c[i], (double)k * H, rates[i] * H, 1);
            }
            if (st) return -(1.0 + i);
        }
        for (i = 0; i < n; i++) {  /* the connected outputs, one call per FMU */
            int a = out_start[i], m = out_start[i + 1] - a, j;
            double buf[64];
            if (k % rates[i] || m == 0) continue;
            if (fmi3 ? ((Real3)get[i])(c[i], out_vr + a, m, buf, m)
                     : ((Real2)get[i])(c[i], out_vr + a, m, buf))
                return -(1.0 + i);
            for (j = 0; j < m; j++) val[out_val[a + j]] = buf[j];
        }
    }
    t1 = now();
    for (i = 0; i < n; i++) {
        ((Init)dlsym(dll[i], fmi3 ? "fmi3Terminate" : "fmi2Terminate"))(c[i]);
        ((Free)dlsym(dll[i], fmi3 ? "fmi3FreeInstance" : "fmi2FreeInstance"))(c[i]);
    }
    return t1 - t0;
}
"""

_LIB: list = []
_UNPACKED: dict = {}


def _driver():
    if not _LIB:
        d = Path(tempfile.mkdtemp(prefix="cosim-bench-floor-"))
        (d / "floor.c").write_text(_C)
        cc = os.environ.get("CC", "gcc").split() or ["gcc"]
        if not shutil.which(cc[0]):
            raise RuntimeError(f"fmu-floor-c needs a C compiler ({cc[0]} not found)")
        subprocess.run([*cc, "-shared", "-fPIC", "-O2", "-std=gnu99", str(d / "floor.c"),
                        "-o", str(d / "floor.so"), "-ldl"], check=True, capture_output=True)
        lib = ctypes.CDLL(str(d / "floor.so"))
        lib.floor_run.restype = ctypes.c_double
        ints, uints = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_uint)
        lib.floor_run.argtypes = [ctypes.c_int] + [ctypes.POINTER(ctypes.c_char_p)] * 4 + [
            ints, ctypes.c_int, ctypes.c_long, ctypes.c_double, ints, uints, ints, ints, uints,
            ints, ctypes.POINTER(ctypes.c_double)]
        _LIB.append(lib)
    return _LIB[0]


def _unpack(path: Path) -> dict:
    """Binary, model identifier, token, resource location, FMI 3 or not and the value
    references by name of an FMU archive, unpacked once per process."""
    key = os.fspath(path)
    if key not in _UNPACKED:
        d = Path(tempfile.mkdtemp(prefix="cosim-bench-floor-fmu-"))
        with zipfile.ZipFile(path) as z:
            z.extractall(d)
        root = ET.parse(d / "modelDescription.xml").getroot()
        fmi3 = root.get("fmiVersion", "").startswith("3")
        ident = root.find("CoSimulation").get("modelIdentifier")
        plat = "x86_64-linux" if fmi3 else "linux64"
        res = d / "resources"
        variables = root.find("ModelVariables")
        _UNPACKED[key] = {
            "lib": os.fspath(d / "binaries" / plat / f"{ident}.so"), "ident": ident,
            "token": root.get("instantiationToken" if fmi3 else "guid"),
            "resources": (os.fspath(res) + "/") if fmi3 else res.as_uri(), "fmi3": fmi3,
            "vr": {v.get("name"): int(v.get("valueReference")) for v in variables}}
    return _UNPACKED[key]


def floor_time(models: list, connections: list, H: float, t_end: float,
               last: dict | None = None) -> float:
    """Seconds the bare C loop takes over ``t_end`` at macro step ``H`` on ``models``
    (``(name, FMU path, rate)``, all FMI 2 or all FMI 3): ``doStep`` of each FMU at its rate
    and, for each of ``connections`` (``("a.y", "b.u")``), Jacobi's one ``set`` of the value
    last read and one ``get`` after the step (batched per FMU); ``[]``: ``doStep`` alone.
    ``last`` (a dict) gets each connection source's value as last read."""
    info = [_unpack(Path(p)) for _, p, _ in models]
    if len({i["fmi3"] for i in info}) != 1:
        raise ValueError("fmu-floor-c: mix of FMI 2 and FMI 3 FMUs")
    index = {name: k for k, (name, _, _) in enumerate(models)}
    sources = sorted({src for src, _ in connections})
    slot = {src: k for k, src in enumerate(sources)}

    def vr(port):
        name, var = port.split(".", 1)
        return index[name], info[index[name]]["vr"][var]
    ins = [[] for _ in models]
    outs = [[] for _ in models]
    for src, dst in connections:
        i, v = vr(dst)
        ins[i].append((v, slot[src]))
    for src in sources:
        i, v = vr(src)
        outs[i].append((v, slot[src]))

    def flat(groups):
        start = [0]
        for g in groups:
            start.append(start[-1] + len(g))
        pairs = [p for g in groups for p in g] or [(0, 0)]
        return ((ctypes.c_int * len(start))(*start),
                (ctypes.c_uint * len(pairs))(*[v for v, _ in pairs]),
                (ctypes.c_int * len(pairs))(*[k for _, k in pairs]))

    def strings(key):
        return (ctypes.c_char_p * len(info))(*[str(i[key]).encode() for i in info])
    rates = (ctypes.c_int * len(models))(*[int(r) for _, _, r in models])
    values = (ctypes.c_double * max(1, len(sources)))()
    steps = int(round(t_end / H))
    s = _driver().floor_run(len(info), strings("lib"), strings("ident"), strings("token"),
                            strings("resources"), rates, int(info[0]["fmi3"]), steps, H,
                            *flat(ins), *flat(outs), values)
    if s < 0:
        raise RuntimeError(f"fmu-floor-c: FMU {models[int(-s) - 1][0]} failed in the bare loop")
    if last is not None:
        last.update({src: values[k] for src, k in slot.items()})
    return s
