r"""The macro-step loop of a master of FMUs, in C: FMU co-simulation at compiled speed.

When every subsystem of a :class:`~cosim.master.MasterScheduler` is an
:class:`~fmus.subsystem.FMUSubsystem` that this loop can drive, or a native
:class:`~cosim.subsystem.DiagramSubsystem` with a C twin (:mod:`fmus.native_twin`: its
diagram generated as C and stepped like an FMI 2 FMU, the state handed back and forth),
and at least one is an FMU, and the coupling is
explicit (:class:`~cosim.coupling.Jacobi` or :class:`~cosim.coupling.GaussSeidel`)
with polynomial extrapolation, or iterative (:class:`~cosim.coupling.Iterative`: fixed
point, Aitken, Broyden, Newton with the kept Jacobian; :mod:`fmus.compiled_iterative`),
the master hands its macro steps to a C function
that calls the FMUs' own ``fmi2SetReal``, ``fmi2SetRealInputDerivatives``,
``fmi2DoStep`` and ``fmi2GetReal`` (FMI 3: ``fmi3SetFloat64``, ``fmi3DoStep``, ...;
FMI 2 and 3 mixed, each subsystem at its rate) directly (addresses from the loaded binaries)
and writes the newest value of every signal at each communication point into a
NumPy buffer.  Python is re-entered only between chunks of steps (stream writers,
termination).  The C source is :mod:`fmus.compiled_master_c`, compiled once with
``$CC`` (default gcc; arguments allowed) and cached by the hash of source, flags and
compiler (:mod:`cosim.codegen.cache`: a cached library needs no compiler and may sit in a
read-only cache).  A missing or failing compiler is a reason like any other: with
``compiled=None`` the master warns once, names it in ``diagnostics["compiled"]`` and runs
the Python loop; with ``compiled=True`` it is a :class:`~cosim.errors.BuildError` holding
the compiler's message.

The results equal the Python path's to round-off (native twins: to 1e-12, see
:mod:`fmus.native_twin`): the same inputs (the newest
value for held inputs, bit for bit; the same extrapolation polynomials, whose
orders 2-3 are computed by divided differences instead of the cached inverse
Vandermonde weights), the same FMI calls in the same order, the same ordered
settling of feedthrough outputs.  ``MasterScheduler(compiled=None)`` (default)
uses the loop where it applies and says why not in
``results.diagnostics["compiled"]``; ``compiled=True`` makes a reason a
:class:`~cosim.errors.BuildError`; ``compiled=False`` keeps the Python loop.

Data-exchange timing: that of the coupling (:mod:`cosim.coupling`) and of
:class:`~fmus.subsystem.FMUSubsystem` (held inputs get the newest value).

Limitations
-----------
* FMI 2.0 and 3.0 Co-Simulation FMUs in this process only (no ``out_of_process``, no
  ``call_log``), with scalar ports: FMI 2 Real, Integer, Enumeration and Boolean, FMI 3
  Float64, Int32 and Boolean (the non-Real ones held, as in Python); other FMI 3 types,
  String ports and arrays run the Python loop, and so does an Integer or Boolean input fed by
  a Real output or through a unit scale/offset (its rounding stays in Python).
* FMI 3 intermediate update needs the C callback of :mod:`fmus.fmi3_update` (built with the
  same compiler); an FMI 3 step that returned early, needs Event Mode, asked to terminate or
  was discarded is finished in Python (:meth:`FMUSubsystem.finish_step
  <fmus.subsystem.FMUSubsystem.finish_step>`, called from C); after an early return the
  intermediate inputs are set from the polynomial evaluated by Horner's rule (the Python
  loop evaluates it its own way: equal to round-off).
* Subsystems at any integer rate; no step control, power bonds or algebraic loops of
  feedthrough outputs across FMUs (those need the Python loop's rollback, energy residuals
  and loop solver).  Iterative coupling: see :mod:`fmus.compiled_iterative` (its Newton
  Jacobians are computed by the Python loop, in the steps C hands over).
* The high-order start (orders 2-3) runs in Python before the loop takes over.
* Per-macro-step diagnostics: ``wall_s`` is the mean of each chunk of steps and
  the per-subsystem wall times are not measured inside the loop.
* Needs a C compiler (``$CC``) or the library in a cache folder; without either the Python
  loop runs (above).
"""

from __future__ import annotations

import ctypes
import warnings
import weakref
from typing import Any

import numpy as np

from cosim.codegen.cache import loaded_library
from cosim.coupling import GaussSeidel, Iterative, Jacobi
from cosim.errors import BuildError, CosimWarning

from .compiled_iterative import CODES, Iter
from .compiled_master_c import SOURCE
from .driver import c_entry_points
from .errors import FMUDiscardError, FMUError

__all__ = ["CompiledLoop", "compiled_loop"]

_NS = 1e-9
_CFLAGS = ("-shared", "-fPIC", "-O2", "-std=c99", "-ffp-contract=off", "-Wall")
_FUNCS = ("fmi2SetReal", "fmi2GetReal", "fmi2DoStep", "fmi2SetRealInputDerivatives",
          "fmi2SetInteger", "fmi2GetInteger", "fmi2SetBoolean", "fmi2GetBoolean")
_FUNCS3 = ("fmi3SetFloat64", "fmi3GetFloat64", "fmi3DoStep", "fmi3SetInt32", "fmi3GetInt32",
           "fmi3SetBoolean", "fmi3GetBoolean")
_KIND = {"real": 0, "int": 1, "bool": 2}
_FMI3_TYPES = frozenset({"Float64", "Int32", "Boolean"})
_FINISH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                           ctypes.c_int, ctypes.c_int, ctypes.c_double, ctypes.c_double,
                           ctypes.c_double, ctypes.c_double)
ST_PYTHON, ST_TERMINATED, ST_HANDOVER = 8, 9, 10  #: statuses of the C loop beyond FMI's
_METHODS = tuple(CODES)  #: the iterative methods the loop runs


def _setup(lib: Any) -> None:
    fn = lib.cosim_master_run
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.POINTER(_Plan), ctypes.c_int64, ctypes.c_int64,
                   ctypes.c_int64, ctypes.c_int, ctypes.POINTER(ctypes.c_double),
                   ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                   ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
    fn = lib.cosim_master_run_iterative
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.POINTER(_Plan), ctypes.POINTER(Iter), ctypes.c_int64,
                   ctypes.c_int64, ctypes.c_int64, ctypes.c_int,
                   ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int),
                   ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                   ctypes.POINTER(ctypes.c_int)]


def _library() -> Any:
    """The compiled loop, loaded (built on first use and cached, :mod:`cosim.codegen.cache`); a
    :class:`BuildError` if it cannot be built (kept: the compiler runs once per ``$CC``)."""
    return loaded_library("cosim-master", SOURCE, _CFLAGS, "compiled master loop", _setup)


_A = ctypes.c_void_p  # an array's address


class _Plan(ctypes.Structure):
    """The C ``Plan``: four ints, then the arrays (typed in C; addresses here, which costs
    less to set than typed ctypes pointers), then the ``finish`` callback."""
    _fields_ = [("n_subs", ctypes.c_int), ("n_sig", ctypes.c_int),
                ("gauss_seidel", ctypes.c_int), ("n_settle", ctypes.c_int),
                ("comp", _A), ("set_real", _A), ("get_real", _A), ("do_step", _A),
                ("set_der", _A), ("order", _A), ("no_set_prior", _A), ("in_start", _A),
                ("in_vr", _A), ("in_sig", _A), ("in_order", _A), ("in_scale", _A),
                ("in_bias", _A), ("deriv_order", _A), ("out_start", _A), ("out_vr", _A),
                ("out_sig", _A), ("out_ft", _A), ("settle", _A), ("hist_t", _A),
                ("hist_v", _A), ("hist_n", _A), ("in_buf", _A), ("der_buf", _A),
                ("out_buf", _A), ("ord_buf", _A), ("set_int", _A), ("get_int", _A),
                ("set_bool", _A), ("get_bool", _A), ("in_nreal", _A), ("out_nreal", _A),
                ("in_kind", _A), ("out_kind", _A), ("fmi3", _A), ("rate", _A),
                ("sub_t", _A), ("sub_steps", _A), ("pend", _A), ("pend_t", _A),
                ("pend_v", _A), ("env", _A), ("inter_on", _A), ("inter_pos", _A),
                ("finish", ctypes.c_void_p)]


def _arr(values: Any, dtype: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=dtype).reshape(-1)
                                if len(values) else np.zeros(1, dtype=dtype))


class CompiledLoop:
    """Decides whether a master can run in C (:meth:`reason`) and runs it (:meth:`run`)."""

    chunk = 65536  #: at most this many steps per C call (1024 with stream writers)
    #: the wall time a C call aims at (:meth:`run`)
    slice_s = 0.02

    def __init__(self) -> None:
        self._twins: Any = weakref.WeakKeyDictionary()  # native subsystem -> its C twin

    def reason(self, master: Any) -> str:
        """Why ``master`` cannot use the compiled loop ('' when it can)."""
        c = master.coupling
        if isinstance(c, Iterative):
            if c.method not in _METHODS:
                return (f"coupling '{c.name}' (the compiled loop iterates with "
                        f"{', '.join(_METHODS)})")
            if c.method == "newton" and not c.reuse_jacobian:
                return ("coupling 'iterative/newton' with reuse_jacobian=False (a Jacobian "
                        "every step: the Python loop computes them)")
        elif type(c) not in (Jacobi, GaussSeidel):
            return (f"coupling '{c.name}' (the compiled loop runs Jacobi, Gauss-Seidel and "
                    f"iterative coupling ({', '.join(_METHODS)}))")
        if master.step_control is not None:
            return "communication-step control"
        if master.bonds:
            return "power bonds (energy residuals)"
        fmus = [s for s in master.subsystems if getattr(type(s), "compiled_loop", None)]
        if len(fmus) < len(master.subsystems):  # (imported only then: a cold start of FMUs
            from .native_twin import twin_reason  # alone does not pay for the C generator)
        for s in master.subsystems:
            why = _fmu_reason(master, s, c) if s in fmus else twin_reason(s)
            if why:
                return why
        try:
            _library()
        except BuildError as exc:
            return self._unbuilt(master, BuildError(f"the C loop could not be built: {exc}"),
                                 warn=True)
        for s in master.subsystems:  # the native ones' C twins (built, or from the cache)
            if s not in fmus:
                try:
                    self.driven(s, master)
                except BuildError as exc:
                    return self._unbuilt(master, exc)
        return ""

    @staticmethod
    def _unbuilt(master: Any, exc: BuildError, warn: bool = False) -> str:
        """The reason ``exc`` gives; a compiler that is missing or fails (the machine's
        problem, not the model's) is also a warning when the master falls back by itself."""
        from .native_twin import CompilerFailed
        why = str(exc)
        if (warn or isinstance(exc, CompilerFailed)) and master.compiled is None:
            warnings.warn(f"MasterScheduler: {why}\nThe macro steps run in the Python "
                          "loop (pass compiled=False to choose it without this warning)",
                          CosimWarning, stacklevel=5)
        return why

    def driven(self, s: Any, master: Any = None) -> Any:
        """What the loop calls for subsystem ``s``: ``s`` (an FMU) or its C twin's FMU (a
        native diagram, :mod:`fmus.native_twin`; made on first use, or when its parameters
        changed, given ``master``); raises :class:`BuildError` saying why ``s`` has none."""
        if getattr(type(s), "compiled_loop", None) is not None:  # an FMUSubsystem
            return s
        twin = self._twins.get(s)
        if master is not None and (twin is None or twin.stale()):
            from .native_twin import NativeTwin
            opener = next(type(f.fmu) for f in master.subsystems
                          if getattr(type(f), "compiled_loop", None) is self)
            twin = self._twins[s] = NativeTwin(s, opener)
        return twin.fmu

    def twins(self, master: Any) -> list:
        """The C twins of ``master``'s native subsystems."""
        return [self._twins[s] for s in master.subsystems if s in self._twins]

    def run_reason(self, master: Any) -> str:
        """Reasons known only after initialization ('' when the loop can run)."""
        if master.settler.subs and not master.settler.once:
            return "an algebraic loop of feedthrough outputs across FMUs"
        if isinstance(master.coupling, Iterative):
            iface = master.interface
            if len(iface.real_sources) != len(iface.coupled_sources):
                return ("iterative coupling of Integer or Boolean signals (held sweep by "
                        "sweep: the Python loop)")
        for native in master.subsystems:
            try:
                s = self.driven(native, master)
            except BuildError as exc:
                return str(exc)
            if s._pending_params:
                return f"subsystem '{s.name}' has parameter changes pending"
            drv = s.inst.drv
            if s.fmi3 and (s.intermediate or s.early_return) and drv.update is None:
                return (f"subsystem '{s.name}': its FMI 3 intermediate update runs in Python "
                        "(the C callback of fmus.fmi3_update could not be built)")
        return ""

    # ------------------------------------------------------------- plan
    def _plan(self, master: Any) -> tuple:
        for twin in self.twins(master):
            twin.push()
        subs = [self.driven(s) for s in master.subsystems]
        keys = list(master.histories)
        sig = {k: j for j, k in enumerate(keys)}
        comps, fset, fget, fstep, fder = [], [], [], [], []
        fns_int: dict[str, list] = {n: [] for n in _FUNCS[4:]}
        in_start, in_vr, in_sig, in_order, in_scale, in_bias = [0], [], [], [], [], []
        out_start, out_vr, out_sig, out_ft, deriv, nsp = [0], [], [], [], [], []
        out_port: list = []
        in_nreal, out_nreal, in_kind, out_kind = [], [], [], []
        envs, inter_on, inter_pos = [], [], []
        for s in subs:
            if s.fmi3:
                comp, f3 = c_entry_points(s.inst.drv, list(_FUNCS3))
                fns = {"fmi2SetReal": f3["fmi3SetFloat64"], "fmi2GetReal": f3["fmi3GetFloat64"],
                       "fmi2DoStep": f3["fmi3DoStep"], "fmi2SetRealInputDerivatives": 0,
                       "fmi2SetInteger": f3["fmi3SetInt32"],
                       "fmi2GetInteger": f3["fmi3GetInt32"],
                       "fmi2SetBoolean": f3["fmi3SetBoolean"],
                       "fmi2GetBoolean": f3["fmi3GetBoolean"]}
            else:
                comp, fns = c_entry_points(s.inst.drv, list(_FUNCS))
            comps.append(comp)
            fset.append(fns["fmi2SetReal"])
            fget.append(fns["fmi2GetReal"])
            fstep.append(fns["fmi2DoStep"])
            fder.append(fns["fmi2SetRealInputDerivatives"])
            for n in fns_int:
                fns_int[n].append(fns[n])
            # Real ports first (one set/get call), then the held non-Real ones
            feeds = sorted(master._feeds[s.name],
                           key=lambda f: _KIND[s._in_by_port[f[0]].kind] > 0)
            inter = {v.port: n for n, v in enumerate(s._inter_vars)} if s.intermediate \
                else {}
            fed = {f[0] for f in feeds}
            update = s.inst.drv.update if inter else None
            envs.append(update.pointer if update is not None else 0)
            inter_on.append(int(update is not None and set(inter) <= fed))
            for name, hist, order, scale, bias in feeds:
                inter_pos.append(inter.get(name, -1))
                src = master.sources[(s.name, name)][0]
                in_vr.append(s._in_by_port[name].vr)
                in_sig.append(sig[src])
                in_order.append(0 if hist.exact else order)  # a non-Real source: held
                in_scale.append(scale)
                in_bias.append(bias)
                in_kind.append(_KIND[s._in_by_port[name].kind])
            in_nreal.append(sum(1 for f in feeds if s._in_by_port[f[0]].kind == "real"))
            in_start.append(len(in_vr))
            ft = {o for o, _ in master.settler.ft_outs[s.name]}
            outs = sorted(s.out_vars, key=lambda v: _KIND[v.kind] > 0)
            for v in outs:
                out_port.append(v.port)
                out_vr.append(v.vr)
                out_sig.append(sig[(s.name, v.port)])
                out_ft.append(1 if v.port in ft else 0)
                out_kind.append(_KIND[v.kind])
            out_nreal.append(sum(1 for v in outs if v.kind == "real"))
            out_start.append(len(out_vr))
            # derivatives up to the highest order a Real input follows (held inputs: none,
            # as the Python loop sends none)
            top = max((0 if h.exact else o for p_, h, o, _, _ in feeds
                       if s._in_by_port[p_].kind == "real"), default=0)
            deriv.append(min(s.deriv_order, top) if feeds else 0)
            nsp.append(0 if s.can_save_state else 1)
        if isinstance(master.coupling, GaussSeidel) and master.coupling.order:
            rank = {n: i for i, n in enumerate(master.coupling.order)}
            order = sorted(range(len(subs)), key=lambda i: rank[subs[i].name])
        else:
            order = list(range(len(subs)))
        settle = [master.subsystems.index(s) for s in master.settler.subs
                  if s.input_names and s.rate == 1]
        n_sig = len(keys)
        hist_t = np.zeros(n_sig * 4, dtype=np.int64)
        hist_v = np.zeros(n_sig * 4)
        hist_n = np.zeros(n_sig, dtype=np.int32)
        for j, k in enumerate(keys):
            h = master.histories[k]
            ts, vs = list(h.t)[-4:], list(h.v)[-4:]
            hist_t[4 * j:4 * j + len(ts)] = ts
            hist_v[4 * j:4 * j + len(vs)] = [float(v) for v in vs]
            hist_n[j] = len(ts)
        nin = max(1, max(b - a for a, b in zip(in_start, in_start[1:])))
        nout = max(1, max(b - a for a, b in zip(out_start, out_start[1:])))
        keep = {
            "comp": _arr(comps, np.uintp), "set_real": _arr(fset, np.uintp),
            "get_real": _arr(fget, np.uintp), "do_step": _arr(fstep, np.uintp),
            "set_der": _arr(fder, np.uintp), "order": _arr(order, np.int32),
            "no_set_prior": _arr(nsp, np.int32), "in_start": _arr(in_start, np.int32),
            "in_vr": _arr(in_vr, np.uint32), "in_sig": _arr(in_sig, np.int32),
            "in_order": _arr(in_order, np.int32), "in_scale": _arr(in_scale, np.float64),
            "in_bias": _arr(in_bias, np.float64), "deriv_order": _arr(deriv, np.int32),
            "out_start": _arr(out_start, np.int32), "out_vr": _arr(out_vr, np.uint32),
            "out_sig": _arr(out_sig, np.int32), "out_ft": _arr(out_ft, np.int32),
            "settle": _arr(settle, np.int32), "hist_t": hist_t, "hist_v": hist_v,
            "hist_n": hist_n, "in_buf": np.zeros(nin), "der_buf": np.zeros(3 * nin),
            "out_buf": np.zeros(nout), "ord_buf": np.zeros(nin, dtype=np.int32),
            "set_int": _arr(fns_int["fmi2SetInteger"], np.uintp),
            "get_int": _arr(fns_int["fmi2GetInteger"], np.uintp),
            "set_bool": _arr(fns_int["fmi2SetBoolean"], np.uintp),
            "get_bool": _arr(fns_int["fmi2GetBoolean"], np.uintp),
            "in_nreal": _arr(in_nreal, np.int32), "out_nreal": _arr(out_nreal, np.int32),
            "in_kind": _arr(in_kind, np.int32), "out_kind": _arr(out_kind, np.int32),
            "fmi3": _arr([int(s.fmi3) for s in subs], np.int32),
            "rate": _arr([s.rate for s in subs], np.int64),
            "sub_t": _arr([s._t for s in subs], np.int64),
            "sub_steps": np.zeros(len(subs), dtype=np.int64),
            "pend": np.zeros(len(subs), dtype=np.int32),
            "pend_t": np.zeros(len(subs), dtype=np.int64),
            "pend_v": np.zeros(max(1, len(out_vr))), "env": _arr(envs, np.uintp),
            "inter_on": _arr(inter_on, np.int32), "inter_pos": _arr(inter_pos, np.int32)}
        for name, (t_end, outs) in master.pending.items():  # outputs waiting (rate > 1)
            i = [s.name for s in subs].index(name)
            keep["pend"][i], keep["pend_t"][i] = 1, t_end
            for j in range(out_start[i], out_start[i + 1]):
                keep["pend_v"][j] = float(outs[out_port[j]])
        plan = _Plan(n_subs=len(subs), n_sig=n_sig,
                     gauss_seidel=int(isinstance(master.coupling, GaussSeidel)),
                     n_settle=len(settle))
        for name, a in keep.items():
            setattr(plan, name, a.ctypes.data)  # every array field is a void * here
        return plan, keep, keys

    def _finisher(self, master: Any, failed: list) -> Any:
        """The C loop's ``finish`` callback: the Python loop's
        :meth:`~fmus.subsystem.FMUSubsystem.finish_step` for an FMI 3 step that needs it (an
        event, an early return, termination, a discard).  Returns 1 when the subsystem
        terminated, 0 to go on, -1 with the exception kept in ``failed``."""
        subs = [self.driven(s) for s in master.subsystems]

        def finish(i: int, st: int, event: int, term: int, early: int, last: float,
                   t: float, h: float, t_end: float) -> int:
            s = subs[i]
            drv = s.inst.drv
            try:
                res = ("discard" if st == 2 else "ok", bool(event), bool(term), bool(early),
                       last)

                def resume(t1: float) -> tuple:  # on from an early return at t1
                    up = drv.update
                    if up is not None and up.env.active and s.intermediate:
                        # the inputs there, as the Python loop sets them (to round-off)
                        drv.set(s._inter_key, up.values_at(t1, len(s._inter_vars)))
                    return drv.do_step(t1, t_end - t1, not s.can_save_state), None
                s.finish_step(res, t, h, t_end, None, resume)
                return 1 if s.terminated else 0
            except BaseException as exc:  # noqa: BLE001 - never raise through C
                if isinstance(exc, FMUError):
                    s.inst.broken = True
                failed.append(exc)
                return -1
        return _FINISH(finish)

    def session(self, master: Any, k: int) -> Any:
        """The loop stepped by its caller from ``master.t`` (macro step ``k``):
        :class:`~fmus.compiled_stepper.CompiledSession` (``master.stepper()``)."""
        from .compiled_stepper import CompiledSession
        return CompiledSession(self, master, k, _library())

    # -------------------------------------------------------------- run
    def run(self, master: Any, k: int, end: int, times: list, rows: Any) -> tuple:
        """Run the macro steps from ``master.t`` to ``end`` in a :meth:`session`; returns
        ``(k, array rows)`` (:func:`cosim.session_run.run`: calls of about :attr:`slice_s`
        of wall time, Ctrl-C keeps every completed step)."""
        from cosim.session_run import run
        return run(self.session(master, k), master, k, end, times, rows, self.chunk,
                   self.slice_s)

    def _write_back(self, master: Any, keep: dict, keys: list) -> None:
        """Histories and FMU subsystem bookkeeping as the Python loop would leave them (the
        step counts are kept as the steps go: :class:`~fmus.compiled_stepper.CompiledSession`)."""
        ht, hv, hn = keep["hist_t"], keep["hist_v"], keep["hist_n"]
        for j, key in enumerate(keys):
            h = master.histories[key]
            n = int(hn[j])
            back = float
            if h.exact:  # an Integer/Boolean signal, exact in the double buffer
                back = bool if isinstance(h.last_value, bool) else int
            h.restore(([int(x) for x in ht[4 * j:4 * j + n]],
                       [back(x) for x in hv[4 * j:4 * j + n]]))
        for i, native in enumerate(master.subsystems):
            s = self.driven(native)
            s._t = int(keep["sub_t"][i])
            s.inst.drv.time = s._t * _NS
            s._pushed.clear()  # the C loop set the inputs: push all again next time
            s._sent_orders = int(keep["deriv_order"][i])
            try:
                s._outs = [s.inst.drv.get(key) for key in s._out_keys]
            except Exception:  # noqa: BLE001 - a terminated FMU: the last row stands
                pass
            s._out_dict = None
            master.pending.pop(s.name, None)
            if keep["pend"][i]:  # a slower subsystem's outputs wait for their time
                master.pending[s.name] = (int(keep["pend_t"][i]), dict(s.get_outputs()))
        for twin in self.twins(master):
            twin.pull()

    def _failure(self, master: Any, status: int, i: int, where: int) -> None:
        if status == ST_TERMINATED:  # finish_step has recorded it: the run ends here
            return
        s = self.driven(master.subsystems[i])
        drv = s.inst.drv
        t = master.t * _NS
        if status == 2:  # a doStep discarded: terminateSimulation, or a real discard
            f = drv.fmu
            last, terminated = t, False
            try:
                last = f.getRealStatus(2)
                terminated = bool(f.getBooleanStatus(3))
            except Exception:  # noqa: BLE001
                pass
            if terminated:
                s._terminate(last)
                return
            s.inst.broken = True
            raise FMUDiscardError(
                f"subsystem '{s.name}': FMU '{s.fmu.path.name}' discarded the step to t = "
                f"{t:.9g} s (h = {master.H * _NS:g} s), reaching t = {last:.9g} s; reduce the "
                "macro step", "doStep", "discard", t, drv.log_lines())
        s.inst.broken = True
        fn = ("SetReal", "DoStep", "GetReal", "SetReal/GetReal")[where]
        if s.fmi3:
            fn = fn.replace("Real", "Float64")
        drv.time = t
        err = drv._status(f"fmi{3 if s.fmi3 else 2}{fn}", status)  # the Python loop's text
        err.args = (f"subsystem '{s.name}': {err.args[0]}\n  (in the compiled master loop, "
                    f"in the macro step from t = {t:.9g} s; MasterScheduler(compiled=False) "
                    "makes the same calls in Python)",) + err.args[1:]
        raise err


def _fmu_reason(master: Any, s: Any, coupling: Any) -> str:
    """Why the compiled loop cannot call the FMU subsystem ``s`` ('' when it can)."""
    if s.inst.out_of_process or s.inst.call_log is not None:
        return f"subsystem '{s.name}' runs out of process or with a call log"
    bad = [v.port for v in s.in_vars + s.out_vars if v.kind not in _KIND or v.shape]
    if bad:
        return f"subsystem '{s.name}' has array or String ports ({', '.join(bad)})"
    if s.fmi3 and isinstance(coupling, Iterative):
        return (f"subsystem '{s.name}' is an FMI 3 FMU under iterative coupling (the "
                "compiled loop iterates FMI 2 FMUs and native twins)")
    if s.fmi3:
        bad = [f"{v.port} ({v.type})" for v in s.in_vars + s.out_vars
               if v.type not in _FMI3_TYPES]
        if bad:
            return (f"subsystem '{s.name}' has FMI 3 ports of a type the loop does not "
                    f"call ({', '.join(bad)}; it calls Float64, Int32 and Boolean)")
    for v in s.in_vars:
        if v.kind == "real" or (s.name, v.port) not in master.sources:
            continue
        (src, out), scale, bias = master.sources[(s.name, v.port)]
        kind = np.dtype(master.by_name[src].dtypes.get(out, float)).kind
        if kind not in "iub" or scale != 1.0 or bias != 0.0:
            return (f"input '{s.name}.{v.port}' ({v.type}) is fed by a Real output or "
                    "through a unit scale/offset (its rounding runs in Python)")
    return ""


#: the loop every FMUSubsystem offers the master (``FMUSubsystem.compiled_loop``)
compiled_loop = CompiledLoop()
