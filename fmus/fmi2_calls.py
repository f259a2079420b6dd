"""The calls of FMI 2 (:class:`Fmi2Calls`), Model Exchange and Co-Simulation.

What FMI 2 does its own way: the callbacks structure with one logger for every instance
(:func:`_callbacks`), ``fmi2SetupExperiment`` before Initialization Mode, Booleans as C
ints, a discarded ``fmi2DoStep`` asked for its last successful time, input derivatives.

The binary is loaded without fmpy (:mod:`fmus.fmi2_binary`, fmpy's import costs ~20 ms of
a process's first run), and through fmpy's ``FMU2Model``/``FMU2Slave`` with a call log
(fmpy formats it) or where the log proxy of :mod:`fmus.fmi2_binary` cannot be had.
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Callable
from functools import cached_property
from typing import Any, ClassVar

from .errors import FMUConfigError
from .fmi_calls import FmiCalls

__all__ = ["Fmi2Calls"]

_LOGGERS: dict[int, Callable] = {}  # componentEnvironment id -> its instance's log
_LOGGER_IDS = iter(range(1, 1 << 62))
_FMI2_LOGGER: Any = None
_NATIVE_LOGGER: Any = None
_STATUS = ("ok", "warning", "discard", "error", "fatal", "pending")


def _fmi2_log(env: Any, name: Any, status: int, category: Any, message: Any) -> None:
    log = _LOGGERS.get(env or 0)
    if log is not None:
        log(status, category, message)
    else:  # an FMU instantiated by fmpy itself: print as fmpy does
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
        print(f"[{_STATUS[status] if 0 <= status < 6 else status}] {text}")


def _callbacks(owner: Any, log: Callable, native: bool) -> Any:
    """FMI 2 callbacks whose logger reaches ``log`` (by componentEnvironment) while
    ``owner`` lives; ``native``: for a binary of :mod:`fmus.fmi2_binary`, else fmpy's.

    The logger proxies (which format the variadic message, fmpy's and
    :mod:`fmus.fmi2_binary`'s) keep *one* global Python logger each: a logger per instance
    would leave the proxy calling a freed callback once that instance is gone.  So one
    permanent logger dispatches on the componentEnvironment pointer.
    """
    global _FMI2_LOGGER, _NATIVE_LOGGER
    if native:
        from . import fmi2_binary
        if _NATIVE_LOGGER is None:
            _NATIVE_LOGGER = fmi2_binary.LOGGER_TYPE(_fmi2_log)
        ident = next(_LOGGER_IDS)
        _LOGGERS[ident] = log
        weakref.finalize(owner, _LOGGERS.pop, ident, None)
        return fmi2_binary.callbacks(_NATIVE_LOGGER, ident)
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
    _LOGGERS[ident] = log
    weakref.finalize(owner, _LOGGERS.pop, ident, None)
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


class Fmi2Calls(FmiCalls, major=2):
    """FMI 2 calls of one loaded binary (:mod:`fmus.fmi_calls`)."""

    types: ClassVar[dict] = {
        "Real": ("Real", ctypes.c_double), "Integer": ("Integer", ctypes.c_int),
        "Enumeration": ("Integer", ctypes.c_int), "Boolean": ("Boolean", ctypes.c_int),
        "String": ("String", ctypes.c_char_p)}
    int_booleans = True
    #: the C function of the state derivatives, fmpy's method of an event iteration
    DERIVATIVES = "fmi2GetDerivatives"
    UPDATE_DISCRETE = "newDiscreteStates"
    GET_STATE = "GetFMUstate"
    SET_STATE = "SetFMUstate"

    def __init__(self, spec: Any, call_log: Callable[[str], Any] | None = None) -> None:
        self._logged = call_log is not None
        super().__init__(spec, call_log)

    def _fmpy_class(self, interface: str) -> type:
        if interface == "SE":
            raise FMUConfigError(f"FMU '{self.spec.label}': FMI 2 has no Scheduled "
                                 "Execution (an FMI 3 interface)")
        from . import fmi2_binary
        if not self._logged and not fmi2_binary.unavailable():
            return fmi2_binary.Fmi2Model if interface == "ME" else fmi2_binary.Fmi2Slave
        from fmpy import fmi2
        return fmi2.FMU2Model if interface == "ME" else fmi2.FMU2Slave

    def _load_options(self, spec: Any) -> dict:
        return {"libraryPath": spec.library} if spec.library else {}

    # --------------------------------------------------------- lifecycle
    def instantiate(self, log: Callable, intermediate: Callable | None = None,
                    update: Any = None) -> None:
        """``fmi2Instantiate`` of the interface loaded (``intermediate``, ``update``: FMI 3
        only)."""
        from .fmi2_binary import Fmi2Model, Fmi2Slave
        native = isinstance(self.fmu, (Fmi2Model, Fmi2Slave))
        self._callbacks = _callbacks(self, log, native)  # kept: the FMU calls them until freed
        self.fmu.instantiate(callbacks=self._callbacks, loggingOn=self.spec.logging_on)

    def enter_initialization(self, tolerance: float | None, start: float,
                             stop: float | None) -> None:
        self.fmu.setupExperiment(tolerance=tolerance, startTime=start, stopTime=stop)
        self.fmu.enterInitializationMode()

    # ------------------------------------------------------ co-simulation
    @cached_property
    def _c_do_step(self) -> Any:
        return self.fn("fmi2DoStep")

    def do_step(self, component: Any, t: float, h: float, no_set_prior: bool) -> tuple:
        """``fmi2DoStep``: ``(status, event_needed, terminate, early_return, last_time)``;
        a discarded step is asked for its last successful time and whether the FMU wants
        to stop."""
        try:
            st = self._c_do_step(component, t, h, 1 if no_set_prior else 0)
        except Exception as exc:  # fmpy's logging wrapper raises on an error status
            st = getattr(exc, "status", None)
            if st is None:
                raise
        if st != 2:
            return st, False, False, False, t + h
        last, terminated = t, False
        try:
            last = self.fmu.getRealStatus(2)  # fmi2LastSuccessfulTime
        except Exception:  # noqa: BLE001
            pass
        try:  # fmi2Terminated: the discard is the FMU asking to stop
            terminated = bool(self.fmu.getBooleanStatus(3))
        except Exception:  # noqa: BLE001
            pass
        return st, False, terminated, False, last

    def set_input_derivatives(self, component: Any, vr: Any, n: int, order: int,
                              values: list) -> int:
        """``fmi2SetRealInputDerivatives`` of one order."""
        orders = (ctypes.c_int * n)(*([order] * n))
        vals = (ctypes.c_double * n)(*values)
        return self.fn("fmi2SetRealInputDerivatives")(component, vr, n, orders, vals)

    # --------------------------------------------------------- Jacobians
    def directional(self, component: Any, u: Any, nu: int, k: Any, nk: int, seed: Any,
                    out: Any) -> int:
        return self.fn("fmi2GetDirectionalDerivative")(component, u, nu, k, nk, seed, out)
