"""The native master loop's plan (:mod:`cosim.native_loop`): the C library, the ``NPlan``
structure and how a master's state becomes one (:func:`build_plan`)."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .codegen.cache import loaded_library
from .codegen.native_loop_c import SOURCE
from .coupling import GaussSeidel

__all__ = ["DEPTH", "NPlan", "TERMS", "build_plan", "held_of", "library"]

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


def held_of(s: Any) -> Any:
    """``s``'s :class:`~cosim.held_step.HeldStep` when its state is held in C and its run
    can step in the loop (``CompiledRun.lean``: no recorder, AB3 history, zero crossings or
    blocks called back, so a failed step can be redone; a monitor acting hands its step
    back), else None."""
    held = s._held
    if held is None or not held.run.held or not held.run.lean:
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
        "model": arr([r.model if r else 0 for r in runs], np.uintp),
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
