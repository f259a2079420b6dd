r"""Iterative coupling in the compiled master loop: the plan of its iteration and the hand-over.

:class:`cosim.coupling.Iterative` redoes each macro step until the coupled outputs at its
end are consistent.  The C function ``cosim_master_run_iterative``
(:mod:`fmus.compiled_master_c`) runs the same steps as the Python loop: it saves every FMU's
state at the step's start (``fmi2GetFMUstate`` into the one state it keeps per FMU), predicts
``z`` from the histories, and sweeps (roll back, inputs through the history and ``z``, every
FMU stepped, outputs published and feedthrough settled at the step's end) until
``|y(z) - z| <= tol (1 + |y|)``, updating ``z`` by fixed point, Aitken, Broyden or Newton
with the inverse Jacobian kept across steps and improved by Broyden updates.

The Python loop keeps what C does not do: a step whose Newton iteration needs a new Jacobian
(the first one, or convergence slower than ``slow``) or that does not converge in
``max_iter`` sweeps is handed over: C puts the FMUs and histories back at the step's start
and the kept inverse as it was, the session writes its state back, the master's own
``_macro`` takes that step (computing the Jacobian, or raising the convergence error with its
message), and C goes on from the next step with the new inverse
(:class:`~fmus.compiled_stepper.CompiledSession`).  With a Jacobian kept over the run that is
one Python step per run.

Equality: the sweeps make the Python loop's calls in its order; the iteration's small
matrix products are sums in C's order (NumPy's may differ in the last bit), so Newton and
Broyden agree with the Python loop to round-off, and so do the orders 2-3 polynomials
(divided differences, as the explicit loop).

Limitations: FMI 2 FMUs and native twins (no FMI 3 FMU: its events inside a sweep), Real
coupled signals only, ``method`` one of ``fixed_point``, ``aitken``, ``broyden``, ``newton``
(with ``reuse_jacobian``; ``anderson`` runs in Python), all rates 1 (as the coupling
requires).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .driver import c_entry_points

__all__ = ["CODES", "Iter", "count", "free_states", "iteration_plan", "write_back"]

#: the methods the C loop iterates with, and their codes there
CODES = {"fixed_point": 0, "broyden": 1, "newton": 2, "aitken": 3}
_STEPS = 65536  #: the most macro steps of one call into C (CompiledLoop.chunk)
_STATE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
_FREE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))


_P = ctypes.POINTER
_VP, _I, _D, _L = (_P(ctypes.c_void_p), _P(ctypes.c_int), _P(ctypes.c_double),
                   _P(ctypes.c_int64))


class Iter(ctypes.Structure):
    """The C loop's ``Iter`` (:mod:`fmus.compiled_master_c`)."""

    _fields_ = [("method", ctypes.c_int), ("n", ctypes.c_int), ("z_sig", _I),
                ("z_order", _I), ("tol", ctypes.c_double), ("slow", ctypes.c_double),
                ("max_iter", ctypes.c_int), ("has_M", ctypes.c_int), ("M", _D), ("M0", _D),
                ("z", _D), ("y", _D), ("g", _D), ("zn", _D), ("yn", _D), ("gn", _D),
                ("w", _D), ("r", _D), ("get_state", _VP), ("set_state", _VP),
                ("state", _VP), ("free_state", _VP), ("iters", _I), ("res", _D),
                ("rollbacks", _L)]


def iteration_plan(master: Any, subs: list, keys: list) -> tuple:
    """``(the C Iter structure, the arrays it points into)`` for ``master``'s iterative
    coupling; ``subs``: what the loop calls per subsystem, ``keys``: the signals in row
    order."""
    c = master.coupling
    iface = master.interface
    sig = {k: j for j, k in enumerate(keys)}
    zkeys = list(iface.real_sources)
    n = len(zkeys)
    orders = [max(o for dst, o in iface.orders.items() if iface.sources[dst][0] == k)
              for k in zkeys]
    fns = [c_entry_points(s.inst.drv, ["fmi2GetFMUstate", "fmi2SetFMUstate",
                                       "fmi2FreeFMUstate"])[1] for s in subs]
    M = np.zeros(max(1, n * n))
    has_M = c.method == "newton" and c._M is not None
    if has_M:
        M[:n * n] = np.asarray(c._M, float).reshape(-1)
    keep = {"z_sig": np.array([sig[k] for k in zkeys] or [0], dtype=np.int32),
            "z_order": np.array(orders or [0], dtype=np.int32), "M": M,
            "M0": np.zeros_like(M),
            **{name: np.zeros(max(1, n)) for name in ("z", "y", "g", "zn", "yn", "gn", "w",
                                                      "r")},
            "get_state": np.array([f["fmi2GetFMUstate"] for f in fns], dtype=np.uintp),
            "set_state": np.array([f["fmi2SetFMUstate"] for f in fns], dtype=np.uintp),
            "state": np.zeros(len(subs), dtype=np.uintp),
            "free_state": np.array([f["fmi2FreeFMUstate"] for f in fns], dtype=np.uintp),
            "iters": np.zeros(_STEPS, dtype=np.int32), "res": np.zeros(_STEPS),
            "rollbacks": np.zeros(1, dtype=np.int64)}
    it = Iter(method=CODES[c.method], n=n, tol=c.tol, slow=c.slow, max_iter=c.max_iter,
                   has_M=int(has_M))
    types = dict(Iter._fields_)
    for name, a in keep.items():
        setattr(it, name, a.ctypes.data_as(types[name]))
    keep["free"] = [(s, f["fmi2FreeFMUstate"]) for s, f in zip(subs, fns)]
    keep["n"] = n
    return it, keep


def count(master: Any, keep: dict, first: int, got: int) -> None:
    """The iterations of macro steps ``first`` to ``first + got`` of a call into C, and its
    rollbacks, into the master's counters."""
    if not got:
        return
    c = master.counters
    iters = keep["iters"][first:first + got].tolist()
    c.iterations.extend(iters)
    c.iteration_total += sum(iters)
    c.last_residual = float(keep["res"][first + got - 1])
    c.rollbacks += int(keep["rollbacks"][0])
    keep["rollbacks"][0] = 0


def write_back(master: Any, it: Any, keep: dict) -> None:
    """The kept inverse Jacobian (Newton) back into the coupling."""
    c = master.coupling
    n = keep["n"]
    if c.method == "newton" and it.has_M:
        c._M = keep["M"][:n * n].reshape(n, n).copy()


def free_states(keep: dict) -> None:
    """Free the FMU states the C loop saved (each FMU's own ``fmi2FreeFMUstate``)."""
    states = keep["state"]
    for i, (s, addr) in enumerate(keep["free"]):
        if states[i]:
            ptr = ctypes.c_void_p(int(states[i]))
            try:
                comp, _ = c_entry_points(s.inst.drv, [])
                _FREE(addr)(comp, ctypes.byref(ptr))
            except Exception:  # noqa: BLE001 - an instance already gone frees its own
                pass
            states[i] = 0
