"""One FMU instance through fmpy's low-level classes, FMI 2 and 3, ME, CS and SE.

:class:`Driver` hides the differences between ``FMU2Model``/``FMU2Slave`` and
``FMU3Model``/``FMU3Slave`` (and ``FMU3ScheduledExecution``, :meth:`Driver.se_activate`)
behind one small API used by :class:`~fmus.fmu_block.FMUBlock`,
:class:`~fmus.subsystem.FMUSubsystem` and :class:`~fmus.scheduled.FMUScheduledBlock`:
lifecycle, values by *registered* value-reference sets (the ctypes buffers
are allocated once, so a call costs one C call), combined calls for the hot
paths (:meth:`Driver.me_eval`, :meth:`Driver.cs_step`: one call per
evaluation or per step, which is also one round trip in the out-of-process
mode of :mod:`fmus.remote`), FMU state, directional derivatives.

Every FMI status above ``Warning`` becomes an :class:`~fmus.errors.FMUCallError`
that names the FMU, the instance, the function, the status, the simulation
time and the FMU's last log messages.  A ``call_log`` (a callable taking one
line, e.g. ``list.append`` or a file's ``write``) receives every FMI call with
its arguments and status (fmpy's call logger).

Everything crossing the API is plain Python (lists, floats, ints, bytes), so
the same methods can run in a child process.
"""

from __future__ import annotations

import ctypes
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .driver_se import ScheduledExecution
from .errors import FMUBinaryError, FMUCallError, FMUDiscardError

__all__ = ["Driver", "DriverSpec"]

STATUS = ("ok", "warning", "discard", "error", "fatal", "pending")


@dataclass
class DriverSpec:
    """What a :class:`Driver` needs to load and instantiate an FMU (picklable)."""

    root: str                  # extracted FMU directory
    fmi_major: int
    interface: str             # "ME", "CS" or "SE" (FMI 3 Scheduled Execution)
    model_identifier: str
    token: str
    instance_name: str
    label: str                 # FMU file name for messages
    library: str = ""          # shared library path (FMI 2; FMI 3 uses the standard path)
    logging_on: bool = False
    early_return: bool = False
    event_mode: bool = False
    intermediate_vrs: list = field(default_factory=list)
    n_states: int = 0
    n_indicators: int = 0


def _types(major: int) -> dict:
    ct = ctypes
    if major == 2:
        return {"Real": ("Real", ct.c_double), "Integer": ("Integer", ct.c_int),
                "Enumeration": ("Integer", ct.c_int), "Boolean": ("Boolean", ct.c_int),
                "String": ("String", ct.c_char_p)}
    return {"Float64": ("Float64", ct.c_double), "Float32": ("Float32", ct.c_float),
            "Int8": ("Int8", ct.c_int8), "UInt8": ("UInt8", ct.c_uint8),
            "Int16": ("Int16", ct.c_int16), "UInt16": ("UInt16", ct.c_uint16),
            "Int32": ("Int32", ct.c_int32), "UInt32": ("UInt32", ct.c_uint32),
            "Int64": ("Int64", ct.c_int64), "UInt64": ("UInt64", ct.c_uint64),
            "Enumeration": ("Int64", ct.c_int64), "Boolean": ("Boolean", ct.c_bool),
            "String": ("String", ct.c_char_p), "Binary": ("Binary", ct.POINTER(ct.c_uint8))}


class _IO:
    """Registered value references of one type with preallocated buffers."""

    __slots__ = ("getter", "setter", "vr", "n", "buf", "nvals", "string", "boolean", "type",
                 "binary", "sizes", "keep")

    def __init__(self, getter, setter, vrs, ctype, nvals, string, boolean, typ):
        self.getter, self.setter = getter, setter
        self.type = typ
        self.vr = (ctypes.c_uint * len(vrs))(*vrs)
        self.n = len(vrs)
        self.nvals = nvals
        self.buf = (ctype * nvals)()
        self.string = string
        self.boolean = boolean
        self.binary = typ == "Binary"
        self.sizes = (ctypes.c_size_t * nvals)() if self.binary else None
        self.keep: list = []  # the bytes a Binary buffer points into, kept alive


_LEAKED: list = []              # instances left after a fatal status (never freed)
_LOGGERS: dict[int, Any] = {}   # componentEnvironment id -> weakref to its Driver
_LOGGER_IDS = iter(range(1, 1 << 62))
_FMI2_LOGGER: Any = None


def _fmi2_log(env: Any, name: Any, status: int, category: Any, message: Any) -> None:
    ref = _LOGGERS.get(env or 0)
    drv = ref() if ref is not None else None
    if drv is not None:
        drv._log(status, category, message)
    else:  # an FMU instantiated by fmpy itself: print as fmpy does
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
        print(f"[{STATUS[status] if 0 <= status < 6 else status}] {text}")


def _fmi2_callbacks(drv: Driver) -> Any:
    """FMI 2 callbacks whose logger reaches ``drv`` (by componentEnvironment).

    fmpy's logger proxy (which formats the variadic message) keeps *one* global
    Python logger: a logger per instance would leave the proxy calling a freed callback
    once that instance is gone.  So one permanent logger dispatches on the
    componentEnvironment pointer.
    """
    global _FMI2_LOGGER
    import weakref

    from fmpy import calloc, free
    from fmpy.fmi2 import (
        fmi2CallbackAllocateMemoryTYPE,
        fmi2CallbackFreeMemoryTYPE,
        fmi2CallbackFunctions,
        fmi2CallbackLoggerTYPE,
    )
    if _FMI2_LOGGER is None:
        _FMI2_LOGGER = fmi2CallbackLoggerTYPE(_fmi2_log)
    ident = next(_LOGGER_IDS)
    _LOGGERS[ident] = weakref.ref(drv)
    weakref.finalize(drv, _LOGGERS.pop, ident, None)
    cb = fmi2CallbackFunctions()
    cb.logger = _FMI2_LOGGER
    cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
    cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
    cb.componentEnvironment = ident
    try:
        from fmpy.logging import addLoggerProxy
        addLoggerProxy(ctypes.byref(cb))
    except Exception:  # noqa: BLE001 - unformatted messages then
        pass
    return cb


class Driver(ScheduledExecution):
    """One instance of an FMU, in this process (see the module docstring)."""

    def __init__(self, spec: DriverSpec, call_log: Callable[[str], Any] | None = None) -> None:
        self.spec = spec
        self.label = f"FMU '{spec.label}' instance '{spec.instance_name}'"
        self.messages: deque = deque(maxlen=30)
        self.time: float | None = None
        self.major = spec.fmi_major
        self.me = spec.interface == "ME"
        self.se = spec.interface == "SE"
        self._se_query: tuple | None = None  # what the clockUpdate callback asks for
        self._se_seen: tuple = ([], {})       # what it got: (ticked vrs, {vr: interval})
        self._se_error: Exception | None = None
        self._ios: list[_IO] = []
        self._types = _types(self.major)
        self._instantiated = False
        self.fatal = False
        self._intermediate: tuple | None = None
        self._early_request: float | None = None
        from fmpy import fmi2, fmi3
        cls = {(2, True): fmi2.FMU2Model, (2, False): fmi2.FMU2Slave,
               (3, True): fmi3.FMU3Model, (3, False): fmi3.FMU3Slave}[(self.major, self.me)]
        if self.se:
            cls = fmi3.FMU3ScheduledExecution
        kw = dict(guid=spec.token, unzipDirectory=spec.root,
                  modelIdentifier=spec.model_identifier, instanceName=spec.instance_name,
                  fmiCallLogger=call_log)
        if self.major == 2 and spec.library:
            kw["libraryPath"] = spec.library
        cwd = os.getcwd()
        try:
            self.fmu = cls(**kw)
        except AttributeError as exc:
            raise FMUBinaryError(
                f"FMU '{spec.label}': its binary lacks an FMI {self.major} function ({exc}); "
                "every FMI function must be exported, even unsupported ones: ask the FMU's "
                "supplier for a complete build") from None
        except Exception as exc:  # noqa: BLE001 - fmpy raises bare Exceptions
            text = str(exc)
            hint = "check that the binary matches this platform and its libraries are present"
            if "_Py" in text or "libpython" in text:
                hint = ("this FMU embeds Python (pythonfmu): it needs a compatible CPython in "
                        "the process, e.g. LD_PRELOAD=libpython3.x.so")
            raise FMUBinaryError(f"FMU '{spec.label}': cannot load its binary ({text}); "
                                 f"{hint}") from None
        finally:
            os.chdir(cwd)  # fmpy changes into the binary's folder and not back on failure
        f = self.fmu
        p = "fmi2" if self.major == 2 else "fmi3"
        self._p = p
        # hot-path functions: the C functions themselves (status checked here), or fmpy's
        # logging wrappers when a call log is wanted
        raw = getattr(f, "_functions", None) if call_log is None else None

        def fn(name: str) -> Any:
            if raw is not None and name in raw:
                return raw[name]
            return getattr(f, name)
        self._fn = fn
        self._get = {k: fn(f"{p}Get{v[0]}") for k, v in self._types.items()}
        self._set = {k: fn(f"{p}Set{v[0]}") for k, v in self._types.items()}
        if self.me:
            nx, nz = spec.n_states, spec.n_indicators
            self._x = (ctypes.c_double * max(nx, 1))()
            self._dx = (ctypes.c_double * max(nx, 1))()
            self._z = (ctypes.c_double * max(nz, 1))()
            self._nx, self._nz = nx, nz
        self._fmi3_bool = ctypes.c_bool
        if self.major == 2 and not self.me:
            self._do_step2 = fn("fmi2DoStep")
        if self.me:
            n = "fmi2" if self.major == 2 else "fmi3"
            self._me = (fn(f"{n}SetTime"), fn(f"{n}SetContinuousStates"),
                        fn(f"{n}GetDerivatives" if self.major == 2
                           else "fmi3GetContinuousStateDerivatives"),
                        fn(f"{n}GetEventIndicators"))

    # ----------------------------------------------------------- errors
    def _fail(self, exc: Exception, function: str | None = None) -> FMUCallError:
        status = getattr(exc, "status", None)
        fname = function or getattr(exc, "function", "") or "an FMI function"
        label = STATUS[status] if isinstance(status, int) and 0 <= status < 6 else "error"
        when = f" at t = {self.time:.9g} s" if self.time is not None else ""
        log = list(self.messages)
        text = f"{self.label}: {fname} returned {label}{when}"
        if log:
            text += "; the FMU logged:\n    " + "\n    ".join(log[-8:])
        elif status is None:
            text += f" ({type(exc).__name__}: {exc})"
        else:
            text += " (no log message; instantiate with logging_on=True for more)"
        if label == "fatal":
            self.fatal = True
            text += ("\n  status fatal: by FMI the FMU's computations are corrupted (its "
                     "instance is not freed, as FMI allows no further call); run it with "
                     "out_of_process=True to contain it; the next run starts a new instance")
        else:
            text += ("\n  the instance cannot be used further in this run; fix the input or "
                     "parameter that caused it and start a new run (the instance is reset)")
        err_cls = FMUDiscardError if label == "discard" else FMUCallError
        return err_cls(text, fname, label, self.time, log)

    def _status(self, name: str, status: int) -> FMUCallError:
        from fmpy.fmi1 import FMICallException
        return self._fail(FMICallException(function=name, status=status), name)

    def _log(self, status: int, category: Any, message: Any) -> None:
        def s(x: Any) -> str:
            return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
        lab = STATUS[status] if 0 <= status < 6 else str(status)
        self.messages.append(f"[{lab}] {s(category)}: {s(message)}")

    # -------------------------------------------------------- lifecycle
    def instantiate(self) -> None:
        f = self.fmu
        sp = self.spec
        try:
            if self.major == 2:
                cb = _fmi2_callbacks(self)
                self._cb_keep = cb
                f.instantiate(callbacks=cb, loggingOn=sp.logging_on)
            else:
                def log3(env, status, category, message):
                    self._log(status, category, message)
                if self.me:
                    f.instantiate(loggingOn=sp.logging_on, logMessage=log3)
                elif self.se:
                    self._instantiate_se(log3)
                else:
                    cb = self._intermediate_callback if sp.early_return or \
                        sp.intermediate_vrs else None
                    f.instantiate(loggingOn=sp.logging_on, eventModeUsed=sp.event_mode,
                                  earlyReturnAllowed=sp.early_return, logMessage=log3,
                                  intermediateUpdate=cb,
                                  requiredIntermediateVariables=sp.intermediate_vrs or None)
        except Exception as exc:  # noqa: BLE001
            if "FMICallException" in type(exc).__name__:
                raise self._fail(exc, "instantiate") from None
            if self.messages:  # the FMU's own reason
                why = "; the FMU logged: " + " | ".join(self.messages)
            else:
                why = ("; the FMU logged no reason" + ("" if sp.logging_on else
                                                       " (logging was off)")
                       + ": check the instantiation token (guid), that the FMU supports "
                       "this interface and that what it needs where it runs is there")
            raise FMUBinaryError(f"{self.label}: instantiation failed ({exc}){why}") from None
        self._instantiated = True

    def enter_initialization(self, t0: float, tolerance: float | None = None,
                             stop: float | None = None) -> None:
        self.time = t0
        try:
            if self.major == 2:
                self.fmu.setupExperiment(tolerance=tolerance, startTime=t0, stopTime=stop)
                self.fmu.enterInitializationMode()
            else:
                self.fmu.enterInitializationMode(tolerance=tolerance, startTime=t0,
                                                 stopTime=stop)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None

    def exit_initialization(self) -> None:
        self._call("exitInitializationMode")

    def enter_configuration_mode(self) -> None:
        """FMI 3: structural parameters may be set until :meth:`exit_configuration_mode`."""
        self._call("enterConfigurationMode")

    def exit_configuration_mode(self) -> None:
        self._call("exitConfigurationMode")

    def terminate(self) -> None:
        self._call("terminate")

    def reset(self) -> None:
        self._call("reset")
        self.time = None

    def free(self) -> None:
        """Free the instance.  The shared library stays loaded: unloading it (fmpy's
        ``freeInstance`` does) can leave objects whose code lives in it, e.g. the
        Python objects of pythonfmu FMUs, pointing into unmapped memory."""
        if self._instantiated and self.fatal:
            # no FMI call is allowed after fmi2Fatal (freeing a pythonfmu instance then
            # corrupts the host's heap): keep it, and the callbacks it may use, alive
            self._instantiated = False
            _LEAKED.append(self)
            return
        if self._instantiated:
            self._instantiated = False
            try:
                getattr(self.fmu, f"{self._p}FreeInstance")(self.fmu.component)
            except Exception:  # noqa: BLE001 - best effort at teardown
                pass

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self.fmu, method)(*args)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, f"{self._p}{method[0].upper()}{method[1:]}") from None

    # ----------------------------------------------------------- values
    def register(self, typ: str, vrs: list, nvals: int | None = None) -> int:
        """Preallocate buffers for ``vrs`` of FMI type ``typ``; returns a key."""
        if typ not in self._types:
            raise FMUCallError(f"{self.label}: variables of type {typ} are not supported")
        ctype = self._types[typ][1]
        io = _IO(self._get[typ], self._set[typ], list(vrs), ctype,
                 nvals if nvals is not None else len(vrs), typ == "String",
                 typ == "Boolean", self._types[typ][0])
        self._ios.append(io)
        return len(self._ios) - 1

    def set(self, key: int, values: list) -> None:
        io = self._ios[key]
        buf = io.buf
        if io.string:
            buf[:] = [str(v).encode("utf-8") for v in values]
        elif io.binary:
            io.keep = [ctypes.create_string_buffer(bytes(v), max(len(v), 1)) for v in values]
            buf[:] = [ctypes.cast(b, ctypes.POINTER(ctypes.c_uint8)) for b in io.keep]
            io.sizes[:] = [len(v) for v in values]
        else:
            buf[:] = values
        try:
            if io.binary:
                st = io.setter(self.fmu.component, io.vr, io.n, io.sizes, buf, io.nvals)
            elif self.major == 2:
                st = io.setter(self.fmu.component, io.vr, io.n, buf)
            else:
                st = io.setter(self.fmu.component, io.vr, io.n, buf, io.nvals)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        if st > 1:
            raise self._status(f"{self._p}Set{io.type}", st)

    def get(self, key: int) -> list:
        io = self._ios[key]
        buf = io.buf
        try:
            if io.binary:
                st = io.getter(self.fmu.component, io.vr, io.n, io.sizes, buf, io.nvals)
            elif self.major == 2:
                st = io.getter(self.fmu.component, io.vr, io.n, buf)
            else:
                st = io.getter(self.fmu.component, io.vr, io.n, buf, io.nvals)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        if st > 1:
            raise self._status(f"{self._p}Get{io.type}", st)
        if io.string:
            return [b.decode("utf-8") if b is not None else "" for b in buf]
        if io.binary:
            return [ctypes.string_at(p, n) if p else b"" for p, n in zip(buf, io.sizes)]
        if io.boolean and self.major == 2:
            return [bool(b) for b in buf]
        return buf[:]

    # --------------------------------------------------- co-simulation
    def set_input_derivatives(self, key: int, order: int, values: list) -> None:
        """FMI 2 ``fmi2SetRealInputDerivatives`` of one order for a registered set."""
        io = self._ios[key]
        orders = (ctypes.c_int * io.n)(*([order] * io.n))
        vals = (ctypes.c_double * io.n)(*values)
        try:
            self.fmu.fmi2SetRealInputDerivatives(self.fmu.component, io.vr, io.n, orders, vals)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None

    def set_intermediate(self, key: int | None, t0: float = 0.0,
                         coeffs: list | None = None) -> None:
        """Inputs for FMI 3 intermediate update: ``value(t) = sum c_k (t - t0)^k`` per
        variable of the registered set ``key`` (``coeffs``: per variable, lowest first)."""
        self._intermediate = None if key is None else (key, t0, coeffs)

    def request_early_return(self, t: float | None) -> None:
        """Ask the FMU (FMI 3, intermediate update) to return early at ``t``."""
        self._early_request = t

    def _intermediate_callback(self, env, t, set_requested, get_allowed, step_finished,
                               can_return_early, early_requested, early_time) -> None:
        try:
            if set_requested and self._intermediate is not None:
                key, t0, coeffs = self._intermediate
                tau = t - t0
                vals = []
                for c in coeffs:
                    acc = 0.0
                    for ck in reversed(c):
                        acc = acc * tau + ck
                    vals.append(acc)
                self.set(key, vals)
            if can_return_early and self._early_request is not None \
                    and t >= self._early_request:
                early_requested[0] = True
                early_time[0] = self._early_request
        except Exception as exc:  # noqa: BLE001 - never raise through C
            self.messages.append(f"[importer] intermediate update failed: {exc!r}")

    def do_step(self, t: float, h: float, no_set_prior: bool = True) -> tuple:
        """``(status, event_needed, terminate, early_return, last_time)``; status is
        ``"ok"`` or ``"discard"`` (other statuses raise)."""
        f = self.fmu
        self.time = t
        if self.major == 2:
            try:
                st = self._do_step2(f.component, t, h, 1 if no_set_prior else 0)
                if st > 1:
                    from fmpy.fmi1 import FMICallException
                    raise FMICallException(function="fmi2DoStep", status=st)
            except Exception as exc:  # noqa: BLE001
                if getattr(exc, "status", None) == 2:
                    last = t
                    terminated = False
                    try:
                        last = f.getRealStatus(2)  # fmi2LastSuccessfulTime
                    except Exception:  # noqa: BLE001
                        pass
                    try:  # fmi2Terminated: the discard is the FMU asking to stop
                        terminated = bool(f.getBooleanStatus(3))
                    except Exception:  # noqa: BLE001
                        pass
                    return ("discard", False, terminated, False, last)
                raise self._fail(exc, "fmi2DoStep") from None
            self.time = t + h
            return ("ok", False, False, False, t + h)
        ev = self._fmi3_bool()
        term = self._fmi3_bool()
        early = self._fmi3_bool()
        last = ctypes.c_double()
        try:
            f.fmi3DoStep(f.component, t, h, self._fmi3_bool(no_set_prior), ctypes.byref(ev),
                         ctypes.byref(term), ctypes.byref(early), ctypes.byref(last))
        except Exception as exc:  # noqa: BLE001
            if getattr(exc, "status", None) == 2:
                return ("discard", ev.value, term.value, early.value, last.value)
            raise self._fail(exc, "fmi3DoStep") from None
        self.time = last.value if early.value else t + h
        return ("ok", ev.value, term.value, early.value,
                last.value if early.value else t + h)

    def cs_step(self, t: float, h: float, no_set_prior: bool, sets: list,
                derivs: list, out_keys: list, intermediate: tuple | None = None) -> tuple:
        """Set inputs (``sets``: ``(key, values)``; ``derivs``: ``(key, order, values)``),
        step, read ``out_keys``: ``(step result, [values per key])`` in one call."""
        for key, vals in sets:
            self.set(key, vals)
        for key, order, vals in derivs:
            self.set_input_derivatives(key, order, vals)
        if intermediate is not None:
            self._intermediate = intermediate
        res = self.do_step(t, h, no_set_prior)
        get = self.get
        return res, [get(k) for k in out_keys]

    def enter_step_mode(self) -> None:
        self._call("enterStepMode")

    def _call_fmi(self, name: str, *args: Any) -> Any:
        f = self.fmu
        try:
            return getattr(f, name)(f.component, *args)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, name) from None

    # -------------------------------------------------- model exchange
    def set_time(self, t: float) -> None:
        self.time = t
        f = self.fmu
        try:
            if self.major == 2:
                f.fmi2SetTime(f.component, t)
            else:
                f.fmi3SetTime(f.component, t)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None

    def set_states(self, x: list) -> None:
        self._x[:self._nx] = x
        f = self.fmu
        try:
            if self.major == 2:
                f.fmi2SetContinuousStates(f.component, self._x, self._nx)
            else:
                f.fmi3SetContinuousStates(f.component, self._x, self._nx)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None

    def get_states(self) -> list:
        f = self.fmu
        try:
            if self.major == 2:
                f.fmi2GetContinuousStates(f.component, self._x, self._nx)
            else:
                f.fmi3GetContinuousStates(f.component, self._x, self._nx)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        return self._x[:self._nx]

    def get_nominals(self) -> list:
        buf = (ctypes.c_double * max(self._nx, 1))()
        self._call("getNominalsOfContinuousStates", buf, self._nx)
        return buf[:self._nx]

    def me_eval(self, t: float | None, x: list | None, sets: list, derivatives: bool,
                indicators: bool, out_keys: list) -> tuple:
        """Push what changed (time, states, ``(key, values)`` sets), then read the
        derivatives, the event indicators and ``out_keys``: one call per point."""
        c = self.fmu.component
        set_time, set_states, get_der, get_ind = self._me
        try:
            if t is not None:
                self.time = t
                st = set_time(c, t)
                if st > 1:
                    raise self._status(f"{self._p}SetTime", st)
            if x is not None:
                self._x[:self._nx] = x
                st = set_states(c, self._x, self._nx)
                if st > 1:
                    raise self._status(f"{self._p}SetContinuousStates", st)
            for key, vals in sets:
                self.set(key, vals)
            dx = z = None
            if derivatives and self._nx:
                st = get_der(c, self._dx, self._nx)
                if st > 1:
                    raise self._status(f"{self._p}GetDerivatives", st)
                dx = self._dx[:self._nx]
            if indicators and self._nz:
                st = get_ind(c, self._z, self._nz)
                if st > 1:
                    raise self._status(f"{self._p}GetEventIndicators", st)
                z = self._z[:self._nz]
        except FMUCallError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        get = self.get
        return dx, z, [get(k) for k in out_keys]

    def completed_step(self, no_set_prior: bool = True) -> tuple:
        """``(enter_event_mode, terminate)`` after an accepted integrator step."""
        try:
            return self.fmu.completedIntegratorStep(no_set_prior)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, f"{self._p}CompletedIntegratorStep") from None

    def enter_event_mode(self) -> None:
        self._call("enterEventMode")

    def update_discrete(self) -> tuple:
        """One event iteration: ``(again, terminate, nominals_changed, values_changed,
        next_event_defined, next_event_time)``."""
        if self.major == 2:
            return tuple(self._call("newDiscreteStates"))
        return tuple(self._call("updateDiscreteStates"))

    def enter_continuous_mode(self) -> None:
        self._call("enterContinuousTimeMode")

    def event_iteration(self, max_iter: int = 1000) -> tuple:
        """Iterate discrete updates to a fixed point (already in event mode); returns
        ``(terminate, values_changed, next_event_time or None)``."""
        changed = False
        for _ in range(max_iter):
            again, term, _nom, vals, defined, t_next = self.update_discrete()
            changed = changed or bool(vals)
            if term:
                return True, changed, None
            if not again:
                return False, changed, (float(t_next) if defined else None)
        raise FMUCallError(f"{self.label}: the event iteration at t = {self.time} s did not "
                           f"converge in {max_iter} rounds (newDiscreteStatesNeeded stays "
                           "true)", "newDiscreteStates", "error", self.time,
                           list(self.messages))

    # ------------------------------------------------------- FMU state
    def get_state(self) -> Any:
        return self._call("getFMUState")

    def set_state(self, state: Any) -> None:
        self._call("setFMUState", state)

    def free_state(self, state: Any) -> None:
        if self._instantiated:
            try:
                self.fmu.freeFMUState(state)
            except Exception:  # noqa: BLE001 - best effort in finalizers
                pass

    def serialize_state(self, state: Any) -> bytes:
        return self._call("serializeFMUState", state)

    def deserialize_state(self, blob: bytes) -> Any:
        return self._call("deserializeFMUState", blob)

    # ---------------------------------------------- partial derivatives
    def directional(self, unknowns: list, knowns: list, seed: list) -> list:
        """``d unknowns = J d knowns`` (``fmi2GetDirectionalDerivative`` / FMI 3)."""
        f = self.fmu
        nu, nk = len(unknowns), len(knowns)
        u = (ctypes.c_uint * nu)(*unknowns)
        k = (ctypes.c_uint * nk)(*knowns)
        dv = (ctypes.c_double * nk)(*seed)
        out = (ctypes.c_double * nu)()
        try:
            if self.major == 2:
                f.fmi2GetDirectionalDerivative(f.component, u, nu, k, nk, dv, out)
            else:
                f.fmi3GetDirectionalDerivative(f.component, u, nu, k, nk, dv, nk, out, nu)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, f"{self._p}GetDirectionalDerivative") from None
        return out[:]

    # ------------------------------------------------------------ misc
    def ping(self) -> bool:
        return True

    def log_lines(self) -> list:
        return list(self.messages)


def c_entry_points(drv: Any, names: list[str]) -> tuple[int, dict[str, int]]:
    """``(instance pointer, {function: address})`` of an in-process driver's FMU.

    For a compiled caller (:mod:`fmus.compiled_master`) that calls the FMU's C
    functions directly; raises :class:`FMUCallError` for an out-of-process driver
    (nothing to call in this process).
    """
    fmu = getattr(drv, "fmu", None)
    dll = getattr(fmu, "dll", None)
    if dll is None or getattr(fmu, "component", None) is None:
        raise FMUCallError(f"{getattr(drv, 'label', 'FMU')}: no in-process instance to call "
                           "from compiled code (out of process, or not instantiated)")
    comp = ctypes.cast(fmu.component, ctypes.c_void_p).value
    return comp, {n: ctypes.cast(getattr(dll, n), ctypes.c_void_p).value for n in names}
