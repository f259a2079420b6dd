r"""FMI 3 intermediate update in C: the inputs between communication points, given to the
FMU at each of its intermediate updates without calling back into Python.

An FMI 3 Co-Simulation FMU with ``providesIntermediateUpdate`` calls the importer's
``fmi3IntermediateUpdateCallback`` during ``fmi3DoStep`` (before each Runge-Kutta stage of
the project's exported FMUs).  The importer answers with the inputs flagged
``intermediateUpdate`` at that time, each a polynomial of the step

    u_j(t) = sum_k c_jk (t - t0)^k,   k = 0..3  (Horner, highest power first),

and may ask for an early return at a requested time.  A Python callback costs a few
microseconds per call, several calls per internal step.  Here the callback is a C function
(:data:`SOURCE`, compiled once and cached by :mod:`cosim.codegen.cache`) reading a
:class:`UpdateEnv` structure given to the FMU as its ``instanceEnvironment`` (so each
instance has its own); both the Python macro-step loop (:class:`IntermediateInputs`) and the
compiled loop (:mod:`fmus.compiled_master`, the same :data:`HEADER`) write the polynomials
into it.  Without a C compiler (and no cached library) the driver keeps the Python callback:
the same values, slower.

An error status of ``fmi3SetFloat64`` inside the callback cannot be raised through the FMU;
it is counted in ``UpdateEnv.errors`` and reported in the driver's log after the step.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

from cosim.codegen.cache import shared_library
from cosim.errors import BuildError

__all__ = ["HEADER", "IntermediateInputs", "UpdateEnv", "callback_address"]

#: the structure shared with the compiled master loop (:mod:`fmus.compiled_master_c`)
HEADER = r"""
typedef struct {
    void *comp;              /* the FMU instance */
    void *set_float64;       /* its fmi3SetFloat64 */
    const unsigned int *vr;  /* the variables flagged intermediateUpdate */
    int n;
    int active;              /* moving inputs given (else the callback sets nothing: the
                                values set at the step's start stand) */
    double t0;               /* the polynomials' origin (s) */
    double *coef;            /* n x 4, lowest power first, unused powers 0 */
    double *values;          /* n: scratch */
    int early_on;            /* an early return requested at early_t */
    double early_t;
    int errors;              /* fmi3SetFloat64 errors inside the callback */
    int last_error;
} UpdateEnv;
"""

SOURCE = r"""
#include <stddef.h>
#include <stdbool.h>
""" + HEADER + r"""
typedef int (*set3_real_t)(void *, const unsigned int *, size_t, const double *, size_t);

void cosim_intermediate_update(void *instance_environment, double t, bool set_requested,
                               bool get_allowed, bool step_finished, bool can_return_early,
                               bool *early_requested, double *early_time) {
    UpdateEnv *e = (UpdateEnv *)instance_environment;
    (void)get_allowed; (void)step_finished;
    if (e == NULL) return;
    if (set_requested && e->active && e->n > 0) {
        double tau = t - e->t0;
        for (int j = 0; j < e->n; j++) {
            const double *c = e->coef + (size_t)j * 4;
            double acc = 0.0;
            for (int k = 3; k >= 0; k--) acc = acc * tau + c[k];
            e->values[j] = acc;
        }
        int st = ((set3_real_t)e->set_float64)(e->comp, e->vr, (size_t)e->n, e->values,
                                               (size_t)e->n);
        if (st > 1) { e->errors++; e->last_error = st; }
    }
    if (can_return_early && e->early_on && t >= e->early_t) {
        *early_requested = true;
        *early_time = e->early_t;
    }
}
"""


class UpdateEnv(ctypes.Structure):
    """:data:`HEADER`'s structure."""

    _fields_ = [("comp", ctypes.c_void_p), ("set_float64", ctypes.c_void_p),
                ("vr", ctypes.POINTER(ctypes.c_uint)), ("n", ctypes.c_int),
                ("active", ctypes.c_int), ("t0", ctypes.c_double),
                ("coef", ctypes.POINTER(ctypes.c_double)),
                ("values", ctypes.POINTER(ctypes.c_double)), ("early_on", ctypes.c_int),
                ("early_t", ctypes.c_double), ("errors", ctypes.c_int),
                ("last_error", ctypes.c_int)]


_FLAGS = ("-shared", "-fPIC", "-O2", "-std=c99", "-ffp-contract=off", "-Wall")
_lib: dict = {}  #: ``$CC`` -> the loaded library, or the reason it is not there


def callback_address() -> int | None:
    """The address of ``cosim_intermediate_update`` (built once and cached), or ``None``
    when it cannot be built or loaded (the driver keeps its Python callback)."""
    key = os.environ.get("CC")
    if key not in _lib:
        try:
            path = shared_library("cosim-fmi3-update", SOURCE, _FLAGS,
                                  "FMI 3 intermediate update")
            _lib[key] = ctypes.CDLL(str(path))
        except (BuildError, OSError) as exc:
            _lib[key] = str(exc)
    lib = _lib[key]
    if isinstance(lib, str):
        return None
    return ctypes.cast(lib.cosim_intermediate_update, ctypes.c_void_p).value


class IntermediateInputs:
    """One instance's :class:`UpdateEnv` and the arrays it points to.

    :meth:`set` gives the polynomials of a step (the Python loop), :meth:`request_early`
    an early-return time; the compiled loop writes the same fields from C.
    """

    def __init__(self, vrs: list[int]) -> None:
        n = len(vrs)
        self.vr = np.ascontiguousarray(vrs, dtype=np.uint32)
        self.coef = np.zeros(max(1, 4 * n))
        self.values = np.zeros(max(1, n))
        self.env = UpdateEnv(n=n, active=0, early_on=0)
        self.env.vr = self.vr.ctypes.data_as(ctypes.POINTER(ctypes.c_uint))
        self.env.coef = self.coef.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        self.env.values = self.values.ctypes.data_as(ctypes.POINTER(ctypes.c_double))

    @property
    def pointer(self) -> int:
        """The address given to the FMU as its instance environment."""
        return ctypes.addressof(self.env)

    def bind(self, component: Any, set_float64: int) -> None:
        """The instance and its ``fmi3SetFloat64``, once instantiated."""
        self.env.comp = ctypes.cast(component, ctypes.c_void_p).value
        self.env.set_float64 = set_float64

    def set(self, t0: float, coeffs: list) -> None:
        """The polynomials of a step: per variable, coefficients lowest power first."""
        c = self.coef
        c[:] = 0.0
        moving = 0
        for j, cs in enumerate(coeffs):
            c[4 * j:4 * j + len(cs)] = cs
            moving = moving or any(x != 0.0 for x in cs[1:])
        self.env.t0 = t0
        # held inputs (every power above 0 is 0): the values set at the step's start stand
        self.env.active = int(moving)

    def values_at(self, t: float, n: int) -> list:
        """The first ``n`` variables' values at ``t`` (the callback's Horner evaluation)."""
        tau = t - self.env.t0
        return [float(((c[3] * tau + c[2]) * tau + c[1]) * tau + c[0])
                for c in self.coef.reshape(-1, 4)[:n]]

    def clear(self) -> None:
        self.env.active = 0

    def request_early(self, t: float | None) -> None:
        self.env.early_on = 0 if t is None else 1
        self.env.early_t = 0.0 if t is None else t

    def take_errors(self) -> int:
        """The ``fmi3SetFloat64`` errors since the last call (and resets the count)."""
        n = self.env.errors
        self.env.errors = 0
        return n
