r"""The macro-step loop of a master of native subsystems, in C.

A :class:`~cosim.master.MasterScheduler` whose subsystems are all
:class:`~cosim.subsystem.DiagramSubsystem`\ s pays, at every macro step, Python for the
coupling: the input polynomials, each subsystem's step and outputs, the histories.  When
those subsystems hold their state in C between steps (:mod:`cosim.held_step`: fixed-step
runs in C), that Python is most of the step's cost (the flagship's plant: about 65 of its
140 us, beside 19 us of C).  :class:`NativeLoop` runs the macro steps in one C function
(:mod:`cosim.codegen.native_loop_c`) that computes the polynomials from the histories, writes
them into each held C state, calls each subsystem's own ``cosim_sim_held_step`` and pushes
the outputs onto the histories; a subsystem that is not held in C (Python blocks such as
bridges, a Python route) is called back in Python for its step (its ``set_inputs``,
``do_step``, ``get_outputs``), so one Python subsystem does not turn the others back into
Python.  :class:`~cosim.native_session.NativeSession` is the loop stepped by its caller
(``master.stepper()``, the real-time master, ``master.run``).

Which subsystems run in C is decided each time the session plans (at its start, and again
whenever a subsystem's state was held or handed back since): held ones in C, the others
called back.  Until one is held (a subsystem's first step goes the whole way, its route
deciding), the session hands its steps to the Python loop.

Results: the same as the Python loop's bit for bit (the same polynomials, closed form of
:meth:`SignalHistory.polynomial <cosim.extrapolation.SignalHistory.polynomial>` for orders 0
and 1; the same C steps as :mod:`cosim.held_step`'s; the same pushes), tested on generated
masters against ``compiled=False`` (``tests/system/test_native_loop.py``).

A C step that does not complete (an error, a terminal event, a monitor acting) undoes the C
states of its macro step and hands the whole macro step to the Python loop, which runs it as
it always does (and raises its own error, or ends the run).  A Python subsystem's exception
(Ctrl-C included) stops the loop where it was raised, as in the Python loop.

Limitations
-----------
* Jacobi and Gauss-Seidel coupling, extrapolation orders 0 and 1, scalar float ports; no step
  control, power bonds, or algebraic loops of feedthrough outputs (feedthrough outputs
  settled by one sweep in dependency order are: :class:`~cosim.master_settle.Settler`'s
  sweep in C); the Python loop runs the others and says why in ``diagnostics["compiled"]``.
* Jacobi steps the subsystems held in C before the ones called back in Python (the results
  are the same: inputs are fixed before the steps and outputs published after them); the
  thread pool of ``Jacobi(parallel=True)`` is not used.  Gauss-Seidel keeps its order and
  calls back every subsystem after the first Python one.
* The per-subsystem wall times (``diagnostics``) are measured in C around each step and
  refresh (``CLOCK_MONOTONIC``), a Python subsystem's including the call back.
* Needs a C compiler on first use (then the cache, :mod:`cosim.codegen.cache`).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .codegen.cache import loaded_library
from .codegen.native_loop_c import SOURCE
from .coupling import GaussSeidel, Jacobi
from .errors import BuildError

__all__ = ["NativeLoop", "NPlan", "library"]

_CFLAGS = ("-shared", "-fPIC", "-O2", "-std=c99", "-ffp-contract=off", "-Wall")
DEPTH = 5  #: the histories' depth (the master's SignalHistory)
TERMS = 4  #: CouplingInput's coefficients at most

_POINTERS = ("order", "py", "model", "step", "outputs", "keep", "model_size", "xd", "sig", "dt",
             "rate", "in_start", "in_sig", "in_order", "in_off", "in_scale", "in_bias",
             "out_start", "out_sig", "out_off", "hist_t", "hist_v", "hist_n", "py_in", "py_out",
             "cnt", "acc", "tbuf", "pend", "pend_t", "pend_v", "sub_steps", "pystep", "save_t",
             "save_v", "save_n", "save_pend", "settle", "has_in", "out_ft", "wall_ns")


class NPlan(ctypes.Structure):
    """The C loop's ``NPlan`` (:mod:`cosim.codegen.native_loop_c`)."""

    _fields_ = [("n_subs", ctypes.c_int), ("n_sig", ctypes.c_int),
                ("gauss_seidel", ctypes.c_int), ("n_settle", ctypes.c_int)] + \
        [(n, ctypes.c_void_p) for n in _POINTERS]


def _setup(lib: Any) -> None:
    fn = lib.cosim_native_run
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                   ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


def library() -> Any:
    """The compiled loop, loaded (built on first use, cached); a :class:`BuildError` if it
    cannot be built (kept: the compiler runs once per ``$CC``)."""
    return loaded_library("cosim-native-master", SOURCE, _CFLAGS, "native master loop", _setup)


class NativeLoop:
    """Decides whether a master of native subsystems can run in C (:meth:`reason`,
    :meth:`run_reason`) and runs it (:meth:`session`, :meth:`run`)."""

    chunk = 65536  #: at most this many steps per C call (1024 with stream writers)
    slice_s = 0.02  #: the wall time a C call aims at (Ctrl-C is seen that often)

    def reason(self, master: Any) -> str:
        """Why ``master`` cannot use the loop ('' when it can)."""
        from .subsystem import DiagramSubsystem
        c = master.coupling
        if type(c) not in (Jacobi, GaussSeidel):
            return (f"coupling '{c.name}' (the native loop runs Jacobi and Gauss-Seidel "
                    "coupling)")
        if master.step_control is not None:
            return "communication-step control"
        if master.bonds:
            return "power bonds (energy residuals)"
        for s in master.subsystems:
            if not isinstance(s, DiagramSubsystem):
                return f"subsystem '{s.name}' is not a native diagram ({type(s).__name__})"
            bad = [n for n in s.input_names + s.output_names
                   if s.shapes[n] != () or np.dtype(s.dtypes[n] or float).kind != "f"]
            if bad:
                return (f"subsystem '{s.name}': port {bad[0]!r} is not a scalar float (the "
                        "native loop couples scalar float signals)")
        high = sorted(f"{s}.{i}" for (s, i), o in master.input_orders.items() if o > 1)
        if high:
            return (f"extrapolation order above 1 ({', '.join(high)}; the native loop "
                    "extrapolates with orders 0 and 1)")
        try:
            library()
        except BuildError as exc:
            return f"the native loop could not be built: {exc}"
        return ""

    def run_reason(self, master: Any) -> str:
        """Reasons known only after initialization ('' when the loop can run)."""
        if master.settler.subs and not master.settler.once:
            return "an algebraic loop of feedthrough outputs (the loop solver)"
        return ""

    def session(self, master: Any, k: int) -> Any:
        """The loop stepped by its caller from ``master.t`` (macro step ``k``)."""
        from .native_session import NativeSession
        return NativeSession(self, master, k, library())

    def run(self, master: Any, k: int, end: int, times: list, rows: Any) -> tuple:
        """Run the macro steps from ``master.t`` to ``end`` (:func:`cosim.session_run.run`)."""
        from .session_run import run
        return run(self.session(master, k), master, k, end, times, rows, self.chunk,
                   self.slice_s)


def held_of(s: Any) -> Any:
    """``s``'s :class:`~cosim.held_step.HeldStep` when its state is held in C and its run
    can step in the loop (no recorder, monitor or block called back in it), else None."""
    held = s._held
    if held is None or not held.run.held or not held.run._lean:
        return None
    if any(terms != TERMS for _, _, terms, _ in held._inputs.values()):
        return None
    return held


def build_plan(master: Any, helds: list, pystep: Any) -> tuple:
    """The ``NPlan`` of ``master`` now, ``helds[i]`` the HeldStep of subsystem ``i`` or None
    (called back in Python through ``pystep``); returns ``(plan, keep, keys, py_ports)``:
    ``keep`` the arrays the plan points into, ``py_ports[i]`` a Python subsystem's
    ``(inputs [(name, index)], outputs [(name, index)])``."""
    subs = master.subsystems
    gs = isinstance(master.coupling, GaussSeidel)
    if gs and master.coupling.order:
        rank = {n: r for r, n in enumerate(master.coupling.order)}
        order = sorted(range(len(subs)), key=lambda i: rank[subs[i].name])
    else:
        order = list(range(len(subs)))
    helds = list(helds)
    if gs:  # no Python subsystem before one in C: a C step handed back must be redoable
        seen = False
        for i in order:
            seen = seen or helds[i] is None
            if seen:
                helds[i] = None
    else:  # Jacobi: C first (inputs fixed before, outputs published after the steps)
        order = [i for i in order if helds[i] is not None] + \
            [i for i in order if helds[i] is None]
    keys = list(master.histories)
    sig = {key: j for j, key in enumerate(keys)}
    in_start, in_sig, in_order, in_off, in_scale, in_bias = [0], [], [], [], [], []
    out_start, out_sig, out_off = [0], [], []
    py_ports: list = []
    for i, s in enumerate(subs):
        held = helds[i]
        ins, outs = [], []
        for name, _hist, o, scale, bias in master._feeds[s.name]:
            ins.append((name, len(in_sig)))
            in_sig.append(sig[master.sources[(s.name, name)][0]])
            in_order.append(o)
            in_off.append(held._inputs[name][0] if held is not None else 0)
            in_scale.append(scale)
            in_bias.append(bias)
        in_start.append(len(in_sig))
        where = dict(held._out) if held is not None else {}
        for o, _hist in master._outs[s.name]:
            outs.append((o, len(out_sig)))
            out_sig.append(sig[(s.name, o)])
            out_off.append(where.get(o, 0))
        out_start.append(len(out_sig))
        py_ports.append((ins, outs))
    n_sig, n = len(keys), len(subs)
    hist_t = np.zeros(n_sig * DEPTH, dtype=np.int64)
    hist_v = np.zeros(n_sig * DEPTH)
    hist_n = np.zeros(max(1, n_sig), dtype=np.intc)
    for j, key in enumerate(keys):
        h = master.histories[key]
        ts, vs = list(h.t)[-DEPTH:], list(h.v)[-DEPTH:]
        hist_t[DEPTH * j:DEPTH * j + len(ts)] = ts
        hist_v[DEPTH * j:DEPTH * j + len(vs)] = vs
        hist_n[j] = len(ts)
    pend, pend_t = np.zeros(n, dtype=np.intc), np.zeros(n, dtype=np.int64)
    pend_v = np.zeros(max(1, len(out_sig)))
    for name, (t_end, outs) in master.pending.items():
        i = [s.name for s in subs].index(name)
        pend[i], pend_t[i] = 1, t_end
        for o, j in py_ports[i][1]:
            pend_v[j] = float(outs[o])
    runs = [h.run if h is not None else None for h in helds]

    def arr(values: list, dtype: Any) -> np.ndarray:
        return np.array(values or [0], dtype=dtype)
    keep = {
        "order": arr(order, np.intc), "py": arr([int(h is None) for h in helds], np.intc),
        "model": arr([r._model if r else 0 for r in runs], np.uintp),
        "step": arr([r.entry("cosim_sim_held_step") if r else 0 for r in runs], np.uintp),
        "outputs": arr([r.entry("cosim_sim_outputs") if r else 0 for r in runs], np.uintp),
        "keep": arr([ctypes.addressof(r._snapshot) if r else 0 for r in runs], np.uintp),
        "model_size": arr([len(r._snapshot) if r else 0 for r in runs], np.int64),
        "xd": arr([ctypes.addressof(r.c_xd) if r else 0 for r in runs], np.uintp),
        "sig": arr([r.views[2].ctypes.data if r else 0 for r in runs], np.uintp),
        "dt": arr([int(r.sim.grid.ticks or 0) if r else 0 for r in runs], np.int64),
        "rate": arr([s.rate for s in subs], np.int64),
        "in_start": arr(in_start, np.intc), "in_sig": arr(in_sig, np.intc),
        "in_order": arr(in_order, np.intc), "in_off": arr(in_off, np.intc),
        "in_scale": arr(in_scale, np.float64), "in_bias": arr(in_bias, np.float64),
        "out_start": arr(out_start, np.intc), "out_sig": arr(out_sig, np.intc),
        "out_off": arr(out_off, np.intc), "hist_t": hist_t, "hist_v": hist_v,
        "hist_n": hist_n, "py_in": np.zeros(max(1, len(in_sig)) * (TERMS + 1)),
        "py_out": np.zeros(max(1, len(out_sig))), "cnt": np.zeros(8 * n, dtype=np.int64),
        "acc": np.zeros(8 * n, dtype=np.int64), "tbuf": np.zeros(512), "pend": pend,
        "pend_t": pend_t, "pend_v": pend_v, "sub_steps": np.zeros(n, dtype=np.int64),
        "save_t": np.zeros(max(1, n_sig) * DEPTH, dtype=np.int64),
        "save_v": np.zeros(max(1, n_sig) * DEPTH), "save_n": np.zeros(max(1, n_sig),
                                                                      dtype=np.intc),
        "save_pend": np.zeros(n, dtype=np.intc)}
    settled = [subs.index(s) for s in master.settler.subs if s.rate == 1]
    ft = {(s.name, o) for s in master.settler.subs for o, _ in master.settler.ft_outs[s.name]}
    keep["settle"] = arr(settled, np.intc)
    keep["has_in"] = arr([int(bool(s.input_names)) for s in subs], np.intc)
    keep["wall_ns"] = np.zeros(n, dtype=np.int64)
    keep["out_ft"] = arr([int((subs[i].name, o) in ft) for i in range(n)
                          for o, _ in master._outs[subs[i].name]], np.intc)
    plan = NPlan(n_subs=n, n_sig=n_sig, gauss_seidel=int(gs), n_settle=len(settled))
    for name, a in keep.items():
        setattr(plan, name, a.ctypes.data)
    plan.pystep = ctypes.cast(pystep, ctypes.c_void_p)
    return plan, keep, keys, py_ports
