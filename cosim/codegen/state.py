"""The generated C's live state (``ModelState`` of ``templates/core.c``) seen from Python, and
where each piece of it lives in a context: what hands a run over between the Python loop and
the C (the compiled Simulator, :mod:`cosim.compiled_run`; the compiled master's native twins,
:mod:`fmus.native_twin`).

:data:`LAYOUT_C` is appended to a translation unit that holds the model core; it reports the
struct's size and field offsets, and :func:`state_type` builds the ctypes mirror and checks it
against them (a mismatch is an error, never a silent misread).  :class:`StateMap` copies time,
continuous states, discrete states and every signal from a context into the C state
(:meth:`StateMap.push`) and back (:meth:`StateMap.pull`), as index arrays over NumPy views of
the C arrays (no Python loop over the continuous states).
"""

from __future__ import annotations

import ctypes
from operator import itemgetter
from typing import Any

import numpy as np

from ..errors import BuildError

_C = ctypes.c_double

#: appended to a translation unit with the model core: the layout of ``ModelState``
LAYOUT_C = r"""
#include <stddef.h>
void cosim_state_layout(size_t out[8]) {
    out[0] = sizeof(ModelState); out[1] = offsetof(ModelState, x);
    out[2] = offsetof(ModelState, xd); out[3] = offsetof(ModelState, p);
    out[4] = offsetof(ModelState, s); out[5] = offsetof(ModelState, u_start);
    out[6] = offsetof(ModelState, dirty); out[7] = offsetof(ModelState, initialized);
}
"""


def bind_externs(prog: Any, lib: Any) -> None:
    """Fill the external-function table of the loaded ``lib`` (``CContext.extern_fn``: the
    addresses of this process, not in the source)."""
    if not prog.externs:
        return
    lib.cosim_set_extern.argtypes = [ctypes.c_int, ctypes.c_void_p]
    lib.cosim_set_extern.restype = None
    for k, _ret, _args, address in prog.externs.values():
        lib.cosim_set_extern(k, address)


def state_type(prog: Any, lib: Any) -> Any:
    """A ctypes mirror of the ``ModelState`` of ``prog`` (a built
    :class:`~cosim.codegen.program.Program`), checked against the layout the compiled ``lib``
    reports (:data:`LAYOUT_C`)."""
    nx = max(1, prog.plan.n_continuous)
    nin = max(1, sum(v.size for v in prog.variables if v.kind == "input"))

    class ModelState(ctypes.Structure):
        _fields_ = [("ticks", ctypes.c_int64), ("time", _C), ("mode_time", _C),
                    ("x", _C * nx), ("xd", _C * max(1, len(prog.xd0))),
                    ("p", _C * max(1, len(prog.p0))), ("s", _C * max(1, prog.n_signals)),
                    ("event_tick", ctypes.c_int64), ("u_start", _C * nin),
                    ("du", (_C * 3) * nin), ("du_t0", _C), ("has_du", ctypes.c_int),
                    ("zc_pre", ctypes.c_ubyte * max(1, len(prog.zero_crossings))),
                    ("dirty", ctypes.c_int), ("initialized", ctypes.c_int),
                    ("tc_ok", ctypes.c_int * 2), ("tc_t", _C * 2), ("tc_mt", _C * 2)]
    got = (ctypes.c_size_t * 8)()
    lib.cosim_state_layout(got)
    want = [ctypes.sizeof(ModelState)] + [getattr(ModelState, f).offset for f in
                                          ("x", "xd", "p", "s", "u_start", "dirty",
                                           "initialized")]
    if list(got) != want:
        raise BuildError(f"generated C: the state layout of the C ({list(got)}) is not the "
                         f"one read from Python ({want}); please report this")
    return ModelState


def like(old: Any, values: Any) -> Any:
    """``values`` (doubles) in the type and shape of ``old``; an array is a copy, never a
    view of ``values`` (which may be the C state's memory: the next C run overwrites it)."""
    t = type(old)
    if t is float:  # the common cases first, without isinstance's ABC checks
        return float(values[0])
    if t is bool:
        return bool(values[0])
    if t is int:
        return int(values[0])
    if isinstance(old, np.ndarray):
        return np.array(values, dtype=old.dtype).reshape(old.shape)
    v = values[0]
    if isinstance(old, (bool, np.bool_)):
        return bool(v)
    if isinstance(old, (int, np.integer)):
        return int(v)
    return float(v)


class StateMap:
    """Where each piece of the C state of ``prog`` lives in a context.

    ``xs``: ``((a, b), (wa, wb))`` continuous-state ranges (C, context); ``xds``:
    ``((offset, size), handle)`` discrete states; ``ss``: ``((offset, size), slot)``
    signals.  :meth:`of_plan` maps a context of the diagram the program was generated from.
    """

    def __init__(self, xs: list, xds: list, ss: list, arrays: frozenset = frozenset(),
                 codecs: dict | None = None) -> None:
        self.xs, self.xds, self.ss = xs, xds, ss
        #: context index -> the discrete state's ``c_codec`` (``DiscreteState.c_codec``)
        self.codecs = codecs or {}
        self._cx = np.concatenate([np.arange(a, b) for (a, b), _ in xs]) if xs else \
            np.zeros(0, dtype=int)
        self._wx = np.concatenate([np.arange(a, b) for _, (a, b) in xs]) if xs else \
            np.zeros(0, dtype=int)
        # scalars in one indexed copy; arrays (``arrays``: the slots of array ports, one
        # element ones included) element-wise
        scalar = [(off, w) for (off, n), w in ss if n == 1 and w not in arrays]
        self._s_off = np.array([off for off, _ in scalar], dtype=int)
        self._s_slot = [w for _, w in scalar]
        self._s_wide = [(off, n, w) for (off, n), w in ss if n != 1 or w in arrays]
        slots = self._s_slot
        self._s_get = (lambda sig: ()) if not slots else (
            lambda sig, w=slots[0]: (sig[w],)) if len(slots) == 1 else itemgetter(*slots)
        # fast paths (the same values, fewer NumPy calls): the continuous states as one
        # slice when the C keeps them in the context's order from 0 (``_x_whole``: their
        # number); one-element discrete states without a codec, set and read as floats
        # when their value is a float
        n_x = len(self._cx)
        self._x_whole = n_x if (n_x and np.array_equal(self._cx, np.arange(n_x))
                                and np.array_equal(self._wx, np.arange(n_x))) else None
        self._xd_one = [(a, h) for (a, n), h in xds if n == 1 and h not in self.codecs]
        self._xd_other = [((a, n), h) for (a, n), h in xds
                          if n != 1 or h in self.codecs]

    @classmethod
    def of_plan(cls, plan: Any, prog: Any) -> StateMap:
        """The map for a context of ``plan`` (the compiled diagram ``prog`` was made from)."""
        xs = [((a, b), (a, b)) for a, b, _ in (plan.cstate_index[h]
                                              for h in plan.continuous_states)]
        xds = [(prog.dstate_layout[h], plan.dstate_index[h]) for h in plan.discrete_states
               if h in prog.dstate_layout]  # (not: a block called back keeps its own)
        ss = [((prog.slot_offset[k], port.size), k) for k, port in enumerate(plan.slot_ports)]
        arrays = frozenset(k for k, port in enumerate(plan.slot_ports) if port.shape != ())
        codecs = {plan.dstate_index[h]: h.c_codec for h in plan.discrete_states
                  if h.c_codec is not None}
        return cls(xs, xds, ss, arrays, codecs)

    @staticmethod
    def views(st: Any) -> tuple:
        """NumPy views of the C state's ``x``, ``xd`` and ``s`` arrays."""
        return (np.ctypeslib.as_array(st.x), np.ctypeslib.as_array(st.xd),
                np.ctypeslib.as_array(st.s))

    def push(self, ctx: Any, st: Any, views: tuple | None = None) -> None:
        """The context's time, states and signals into the C state ``st``."""
        x, xd, s = views or self.views(st)
        st.ticks, st.time, st.mode_time = ctx.ticks, ctx.time, ctx.mode_time
        xc = ctx.xc
        if self._x_whole is not None and type(xc) is np.ndarray and xc.dtype == float \
                and xc.shape == (self._x_whole,):
            x[:self._x_whole] = xc
        elif len(self._cx):
            x[self._cx] = np.asarray(xc, dtype=float)[self._wx]
        codecs = self.codecs
        dxs = ctx.xd
        for a, h in self._xd_one:
            v = dxs[h]
            if type(v) is float:
                xd[a] = v
            else:
                xd[a:a + 1] = np.asarray(v, dtype=float).reshape(-1)
        for (a, n), h in self._xd_other:
            v = dxs[h]
            if h in codecs:  # a list of n floats
                xd[a:a + n] = codecs[h][1](v)
            else:
                xd[a:a + n] = np.asarray(v, dtype=float).reshape(-1)
        sig = ctx.signals
        if len(self._s_off):
            got = self._s_get(sig)
            if not all(type(v) is float for v in got):  # (None: 0.0, as before)
                got = [float(v) if v is not None else 0.0 for v in got]
            s[self._s_off] = got
        for off, n, w in self._s_wide:
            if sig[w] is not None:
                s[off:off + n] = np.asarray(sig[w], dtype=float).reshape(-1)
        st.dirty = 0
        st.tc_ok[0] = st.tc_ok[1] = 0  # (the signals were written: cosim.codegen.time_cache)

    def pull(self, st: Any, ctx: Any, views: tuple | None = None) -> None:
        """The C state ``st`` back into the context (as its own steps would leave it)."""
        x, xd, s = views or self.views(st)
        ctx.ticks, ctx.time, ctx.mode_time = int(st.ticks), st.time, st.mode_time
        old_xc = ctx.xc
        if self._x_whole is not None and np.shape(old_xc) == (self._x_whole,):
            ctx.xc = x[:self._x_whole].copy()  # (np.array(old, float) with every element set)
        elif len(self._cx):
            xc = np.array(old_xc, dtype=float)
            xc[self._wx] = x[self._cx]
            ctx.xc = xc
        codecs = self.codecs
        dxs = ctx.xd
        for a, h in self._xd_one:
            old = dxs[h]
            dxs[h] = float(xd[a]) if type(old) is float else like(old, xd[a:a + 1])
        for (a, n), h in self._xd_other:
            dxs[h] = like(dxs[h], xd[a:a + n]) if h not in codecs else \
                codecs[h][2](xd[a:a + n].tolist(), dxs[h])
        sig = ctx.signals
        values = s[self._s_off].tolist()
        for w, v in zip(self._s_slot, values):
            old = sig[w]
            sig[w] = v if type(old) is float else like(old, (v,)) if old is not None else v
        for off, n, w in self._s_wide:
            sig[w] = like(sig[w], s[off:off + n]) if sig[w] is not None else \
                np.array(s[off:off + n])
