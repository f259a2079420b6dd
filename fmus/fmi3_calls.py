"""The calls of FMI 3 (:class:`Fmi3Calls`): Model Exchange, Co-Simulation and Scheduled
Execution.

What FMI 3 does its own way: one instantiation function per interface (Co-Simulation with
early return and intermediate update, Scheduled Execution with a clockUpdate callback),
the tolerance and times given to ``fmi3EnterInitializationMode``, the number of values
in every get and set, ``fmi3DoStep``'s four results.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from functools import cached_property
from typing import Any, ClassVar

from .fmi3_update import callback_address
from .fmi_calls import FmiCalls

__all__ = ["Fmi3Calls"]

_ct = ctypes


class Fmi3Calls(FmiCalls, major=3):
    """FMI 3 calls of one loaded binary (:mod:`fmus.fmi_calls`)."""

    types: ClassVar[dict] = {
        "Float64": ("Float64", _ct.c_double), "Float32": ("Float32", _ct.c_float),
        "Int8": ("Int8", _ct.c_int8), "UInt8": ("UInt8", _ct.c_uint8),
        "Int16": ("Int16", _ct.c_int16), "UInt16": ("UInt16", _ct.c_uint16),
        "Int32": ("Int32", _ct.c_int32), "UInt32": ("UInt32", _ct.c_uint32),
        "Int64": ("Int64", _ct.c_int64), "UInt64": ("UInt64", _ct.c_uint64),
        "Enumeration": ("Int64", _ct.c_int64), "Boolean": ("Boolean", _ct.c_bool),
        "String": ("String", _ct.c_char_p), "Binary": ("Binary", _ct.POINTER(_ct.c_uint8))}
    counts_values = True
    #: the C function of the state derivatives, fmpy's method of an event iteration
    DERIVATIVES = "fmi3GetContinuousStateDerivatives"
    UPDATE_DISCRETE = "updateDiscreteStates"

    def _fmpy_class(self, interface: str) -> type:
        from fmpy import fmi3
        return {"ME": fmi3.FMU3Model, "CS": fmi3.FMU3Slave,
                "SE": fmi3.FMU3ScheduledExecution}[interface]

    # --------------------------------------------------------- lifecycle
    def instantiate(self, log: Callable, intermediate: Callable | None = None,
                    update: Any = None) -> Any:
        """``fmi3InstantiateModelExchange`` or ``fmi3InstantiateCoSimulation`` (with
        ``intermediate`` as the intermediate update callback when the spec asks for early
        return or intermediate variables).

        ``update`` (:class:`~fmus.fmi3_update.IntermediateInputs`): the intermediate update
        in C, with ``update`` as the instance environment, where its library can be built
        (returned, bound to the instance); else ``intermediate`` in Python (``None``
        returned)."""
        sp = self.spec

        def log3(env: Any, status: int, category: Any, message: Any) -> None:
            log(status, category, message)
        if sp.interface == "ME":
            self.fmu.instantiate(loggingOn=sp.logging_on, logMessage=log3)
            return None
        cb = intermediate if sp.early_return or sp.intermediate_vrs else None
        address = callback_address() if cb is not None and update is not None else None
        if address is None:
            self.fmu.instantiate(loggingOn=sp.logging_on, eventModeUsed=sp.event_mode,
                                 earlyReturnAllowed=sp.early_return, logMessage=log3,
                                 intermediateUpdate=cb,
                                 requiredIntermediateVariables=sp.intermediate_vrs or None)
            return None
        self._instantiate_cs(log3, address, update)
        update.bind(self.fmu.component,
                    ctypes.cast(self.fmu.dll.fmi3SetFloat64, ctypes.c_void_p).value)
        return update

    def _instantiate_cs(self, log3: Callable, address: int, update: Any) -> None:
        """fmpy's ``FMU3Slave.instantiate`` with our environment and C callback."""
        from fmpy.fmi3 import (
            fmi3Boolean,
            fmi3IntermediateUpdateCallback,
            fmi3LogMessageCallback,
            fmi3ValueReference,
        )
        f, sp = self.fmu, self.spec
        f.logMessage = fmi3LogMessageCallback(log3)  # kept from the garbage collector
        f.intermediateUpdate = fmi3IntermediateUpdateCallback(address)
        vrs = list(sp.intermediate_vrs or [])
        required = (fmi3ValueReference * len(vrs))(*vrs)
        resources = os.path.join(f.unzipDirectory, "resources") + os.path.sep
        f.component = f.fmi3InstantiateCoSimulation(
            f.instanceName.encode("utf-8"), f.guid.encode("utf-8"), resources.encode("utf-8"),
            fmi3Boolean(False), fmi3Boolean(sp.logging_on), fmi3Boolean(sp.event_mode),
            fmi3Boolean(sp.early_return), required, len(vrs),
            ctypes.c_void_p(update.pointer), f.logMessage, f.intermediateUpdate)
        if not f.component:
            raise Exception("Failed to instantiate FMU")

    def instantiate_scheduled(self, log: Callable, clock_update: Callable) -> None:
        """``fmi3InstantiateScheduledExecution`` with ``clock_update`` as the clockUpdate
        callback (fmpy's ``FMU3ScheduledExecution.instantiate`` passes one that does
        nothing) and empty preemption locks (partitions run one after another, never
        preempted)."""
        from fmpy.fmi3 import (
            fmi3Boolean,
            fmi3ClockUpdateCallback,
            fmi3InstanceEnvironment,
            fmi3LockPreemptionCallback,
            fmi3LogMessageCallback,
            fmi3UnlockPreemptionCallback,
        )
        f = self.fmu
        sp = self.spec
        resources = os.path.join(f.unzipDirectory, "resources") + os.path.sep

        def log3(env: Any, status: int, category: Any, message: Any) -> None:
            log(status, category, message)

        def noop() -> None:
            pass
        # kept on self: ctypes callbacks must outlive the instance
        self._se_callbacks = (fmi3LogMessageCallback(log3),
                              fmi3ClockUpdateCallback(clock_update),
                              fmi3LockPreemptionCallback(noop),
                              fmi3UnlockPreemptionCallback(noop))
        f.component = f.fmi3InstantiateScheduledExecution(
            sp.instance_name.encode("utf-8"), sp.token.encode("utf-8"),
            resources.encode("utf-8"), fmi3Boolean(False), fmi3Boolean(sp.logging_on),
            fmi3InstanceEnvironment(), *self._se_callbacks)
        if not f.component:
            raise RuntimeError("fmi3InstantiateScheduledExecution returned NULL")

    def enter_initialization(self, tolerance: float | None, start: float,
                             stop: float | None) -> None:
        self.fmu.enterInitializationMode(tolerance=tolerance, startTime=start, stopTime=stop)

    # ------------------------------------------------------ co-simulation
    @cached_property
    def _c_do_step(self) -> Any:
        return self.fn("fmi3DoStep")

    @cached_property
    def _step_results(self) -> tuple:
        """``fmi3DoStep``'s output arguments, allocated once: the values and their
        references."""
        out = (_ct.c_bool(), _ct.c_bool(), _ct.c_bool(), _ct.c_double())
        return out, tuple(_ct.byref(x) for x in out)

    def do_step(self, component: Any, t: float, h: float, no_set_prior: bool) -> tuple:
        """``fmi3DoStep``: ``(status, event_needed, terminate, early_return, last_time)``
        (``last_time`` is ``t + h`` unless the step returned early or was discarded)."""
        (ev, term, early, last), (r_ev, r_term, r_early, r_last) = self._step_results
        ev.value = term.value = early.value = False
        last.value = 0.0
        try:
            st = self._c_do_step(component, t, h, no_set_prior, r_ev, r_term, r_early, r_last)
        except Exception as exc:  # fmpy's logging wrapper raises on an error status
            st = getattr(exc, "status", None)
            if st is None:
                raise
        if st == 2 or early.value:
            return st, ev.value, term.value, early.value, last.value
        return st, ev.value, term.value, False, t + h

    # --------------------------------------------------------- Jacobians
    def directional(self, component: Any, u: Any, nu: int, k: Any, nk: int, seed: Any,
                    out: Any) -> int:
        return self.fn("fmi3GetDirectionalDerivative")(component, u, nu, k, nk, seed, nk,
                                                        out, nu)
