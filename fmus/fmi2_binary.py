"""FMI 2.0 binaries loaded with ctypes alone: what fmpy's ``FMU2Model`` and ``FMU2Slave``
give the drivers, without importing fmpy.

Importing fmpy costs ~20 ms (its package imports its model-description reader, attrs and
its simulator), more than loading and running a compiled co-simulation of two small FMUs;
:class:`Fmi2Model` and :class:`Fmi2Slave` load the binary and bind every FMI 2 function of
the interface with fmpy's C types (:data:`SIGNATURES`, the same names, argument and result
types), and offer fmpy's methods with fmpy's arguments, results and errors (a status above
warning raises :class:`~fmus.errors.FMICallException` naming the function).  The C
functions themselves are in ``_functions``, as in fmpy (the drivers' hot paths call them).

The FMU's log messages are ``printf`` formats with variable arguments, which a ctypes
callback cannot read; a small C proxy formats them (``vsnprintf``) and passes the text to
Python.  fmpy ships one, holding one process-wide logger that fmpy's own import resets;
this module's (:data:`LOG_SOURCE`) is compiled once and cached (:mod:`cosim.codegen.cache`) and
has its own.  :func:`unavailable` says why it cannot be had (no compiler and nothing
cached): :class:`~fmus.fmi2_calls.Fmi2Calls` then loads the FMU through fmpy as before.
A call log (``call_log``: fmpy's ``fmiCallLogger``, which formats every call) is fmpy's
too.
"""

from __future__ import annotations

import ctypes
import functools
import os
import pathlib
from ctypes import POINTER, c_char, c_char_p, c_double, c_int, c_size_t, c_uint, c_void_p
from typing import Any

from .errors import FMICallException

__all__ = ["FUNCTIONS", "LOGGER_TYPE", "SIGNATURES", "CallbackFunctions", "Fmi2Model",
           "Fmi2Slave", "callbacks", "unavailable"]


class CallbackFunctions(ctypes.Structure):
    """``fmi2CallbackFunctions`` (filled by the C proxy, :func:`callbacks`)."""

    _fields_ = [("logger", c_void_p), ("allocateMemory", c_void_p), ("freeMemory", c_void_p),
                ("stepFinished", c_void_p), ("componentEnvironment", c_void_p)]


class EventInfo(ctypes.Structure):
    """``fmi2EventInfo``."""

    _fields_ = [("newDiscreteStatesNeeded", c_int), ("terminateSimulation", c_int),
                ("nominalsOfContinuousStatesChanged", c_int),
                ("valuesOfContinuousStatesChanged", c_int), ("nextEventTimeDefined", c_int),
                ("nextEventTime", c_double)]


_C, _VR, _N = c_void_p, POINTER(c_uint), c_size_t
_ARRAY = {"Real": POINTER(c_double), "Integer": POINTER(c_int), "Boolean": POINTER(c_int),
          "String": POINTER(c_char_p)}

#: every FMI 2 function: name -> (result type, argument types), as fmpy binds them
SIGNATURES: dict[str, tuple[Any, list]] = {
    "fmi2GetTypesPlatform": (c_char_p, []), "fmi2GetVersion": (c_char_p, []),
    "fmi2SetDebugLogging": (c_int, [_C, c_int, _N, POINTER(c_char_p)]),
    "fmi2Instantiate": (c_void_p, [c_char_p, c_int, c_char_p, c_char_p,
                                   POINTER(CallbackFunctions), c_int, c_int]),
    "fmi2FreeInstance": (None, [_C]),
    "fmi2SetupExperiment": (c_int, [_C, c_int, c_double, c_double, c_int, c_double]),
    "fmi2EnterInitializationMode": (c_int, [_C]), "fmi2ExitInitializationMode": (c_int, [_C]),
    "fmi2Terminate": (c_int, [_C]), "fmi2Reset": (c_int, [_C]),
    **{f"fmi2{op}{t}": (c_int, [_C, _VR, _N, a]) for t, a in _ARRAY.items()
       for op in ("Get", "Set")},
    "fmi2GetFMUstate": (c_int, [_C, POINTER(c_void_p)]),
    "fmi2SetFMUstate": (c_int, [_C, c_void_p]),
    "fmi2FreeFMUstate": (c_int, [_C, POINTER(c_void_p)]),
    "fmi2SerializedFMUstateSize": (c_int, [_C, c_void_p, POINTER(c_size_t)]),
    "fmi2SerializeFMUstate": (c_int, [_C, c_void_p, POINTER(c_char), c_size_t]),
    "fmi2DeSerializeFMUstate": (c_int, [_C, POINTER(c_char), c_size_t, POINTER(c_void_p)]),
    "fmi2GetDirectionalDerivative": (c_int, [_C, _VR, _N, _VR, _N, POINTER(c_double),
                                             POINTER(c_double)]),
    # Model Exchange
    "fmi2EnterEventMode": (c_int, [_C]),
    "fmi2NewDiscreteStates": (c_int, [_C, POINTER(EventInfo)]),
    "fmi2EnterContinuousTimeMode": (c_int, [_C]),
    "fmi2CompletedIntegratorStep": (c_int, [_C, c_int, POINTER(c_int), POINTER(c_int)]),
    "fmi2SetTime": (c_int, [_C, c_double]),
    **{f"fmi2{n}": (c_int, [_C, POINTER(c_double), _N]) for n in (
        "SetContinuousStates", "GetDerivatives", "GetEventIndicators", "GetContinuousStates",
        "GetNominalsOfContinuousStates")},
    # Co-Simulation
    "fmi2SetRealInputDerivatives": (c_int, [_C, _VR, _N, POINTER(c_int), POINTER(c_double)]),
    "fmi2GetRealOutputDerivatives": (c_int, [_C, _VR, _N, POINTER(c_int), POINTER(c_double)]),
    "fmi2DoStep": (c_int, [_C, c_double, c_double, c_int]),
    "fmi2CancelStep": (c_int, [_C]),
    **{f"fmi2Get{t}Status": (c_int, [_C, c_int, POINTER(c)]) for t, c in (
        ("", c_int), ("Real", c_double), ("Integer", c_int), ("Boolean", c_int),
        ("String", c_char_p))},
}

_ME = ("fmi2EnterEventMode", "fmi2NewDiscreteStates", "fmi2EnterContinuousTimeMode",
       "fmi2CompletedIntegratorStep", "fmi2SetTime", "fmi2SetContinuousStates",
       "fmi2GetDerivatives", "fmi2GetEventIndicators", "fmi2GetContinuousStates",
       "fmi2GetNominalsOfContinuousStates")
_CS = ("fmi2SetRealInputDerivatives", "fmi2GetRealOutputDerivatives", "fmi2DoStep",
       "fmi2CancelStep", "fmi2GetStatus", "fmi2GetRealStatus", "fmi2GetIntegerStatus",
       "fmi2GetBooleanStatus", "fmi2GetStringStatus")
_COMMON = tuple(n for n in SIGNATURES if n not in _ME + _CS)

#: the functions of each interface (every one must be exported), sorted
FUNCTIONS: dict[str, tuple[str, ...]] = {"ModelExchange": tuple(sorted(_COMMON + _ME)),
                                         "CoSimulation": tuple(sorted(_COMMON + _CS))}


# ------------------------------------------------------------------ the log proxy
#: the C proxy of the FMUs' logger: formats the message, passes it to one Python logger
LOG_SOURCE = r"""
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*py_logger_t)(void *, const char *, int, const char *, const char *);
typedef struct {
    void (*logger)(void *, const char *, int, const char *, const char *, ...);
    void *(*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void *);
    void (*stepFinished)(void *, int);
    void *componentEnvironment;
} callbacks_t;

static py_logger_t s_logger;

static void log_message(void *env, const char *name, int status, const char *category,
                        const char *message, ...) {
    char small[1024], *text = small;
    va_list args;
    int n;
    if (!message || !s_logger) {
        if (s_logger) s_logger(env, name, status, category, "");
        return;
    }
    va_start(args, message);
    n = vsnprintf(small, sizeof small, message, args);
    va_end(args);
    if (n < 0) {
        text = (char *)message;  /* a format vsnprintf refuses: the format itself */
    } else if ((size_t)n >= sizeof small) {
        char *big = malloc((size_t)n + 1);
        if (big) {
            va_start(args, message);
            vsnprintf(big, (size_t)n + 1, message, args);
            va_end(args);
            text = big;
        }  /* else: the first 1023 characters */
    }
    s_logger(env, name, status, category, text);
    if (text != small && text != message) free(text);
}

void cosim_fmi2_callbacks(callbacks_t *cb, py_logger_t logger, void *env) {
    s_logger = logger;
    cb->logger = log_message;
    cb->allocateMemory = calloc;
    cb->freeMemory = free;
    cb->stepFinished = NULL;
    cb->componentEnvironment = env;
}
"""

#: the Python logger the proxy calls: (componentEnvironment, instance name, status, category,
#: message)
LOGGER_TYPE = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_int, c_char_p, c_char_p)
_PROXY: dict = {}  #: ``$CC`` -> the loaded proxy, or the BuildError of building it


def _proxy() -> Any:
    key = os.environ.get("CC")
    if key not in _PROXY:
        from cosim.codegen.cache import shared_library
        from cosim.errors import BuildError
        try:
            path = shared_library("cosim-fmi2-log", LOG_SOURCE,
                                  ("-shared", "-fPIC", "-O2", "-std=c99", "-Wall"),
                                  "FMI 2 log proxy")
            lib = ctypes.CDLL(str(path))
            fn = lib.cosim_fmi2_callbacks
            fn.restype = None
            fn.argtypes = [POINTER(CallbackFunctions), LOGGER_TYPE, c_void_p]
            _PROXY[key] = lib
        except (BuildError, OSError, AttributeError) as exc:
            _PROXY[key] = BuildError(f"FMI 2 log proxy: {exc}")
    return _PROXY[key]


def unavailable() -> str:
    """Why FMI 2 binaries cannot be loaded by this module ('' when they can)."""
    got = _proxy()
    return "" if isinstance(got, ctypes.CDLL) else str(got)


def callbacks(logger: Any, env: int) -> CallbackFunctions:
    """``fmi2CallbackFunctions`` of an instance: the FMU's messages, formatted, go to
    ``logger(env, instance name, status, category, message)``, a :data:`LOGGER_TYPE` the
    caller keeps alive (the proxy holds one for the process: the last one given).  Keep
    the result alive while the FMU runs."""
    cb = CallbackFunctions()
    _proxy().cosim_fmi2_callbacks(ctypes.byref(cb), logger, env)
    return cb


# ------------------------------------------------------------------ the binary
class _Binary:
    """An FMI 2 binary of one interface (fmpy's ``_FMU2`` surface, see the module
    docstring)."""

    interface = ""
    fmu_type = 0  # fmi2ModelExchange / fmi2CoSimulation

    def __init__(self, guid: str, modelIdentifier: str, unzipDirectory: str,
                 instanceName: str | None = None, libraryPath: str | None = None,
                 fmiCallLogger: Any = None) -> None:
        if fmiCallLogger is not None:
            raise ValueError("a call log needs fmpy's FMU classes (fmus.fmi2_calls)")
        self.guid, self.modelIdentifier = guid, modelIdentifier
        self.unzipDirectory = unzipDirectory
        self.instanceName = instanceName if instanceName is not None else modelIdentifier
        if libraryPath is None:  # the import always knows it (FMUFile.spec)
            raise ValueError("give the binary's path (libraryPath)")
        if not os.path.isfile(libraryPath):
            raise FileNotFoundError(f"Cannot find shared library {libraryPath}.")
        cwd = os.getcwd()
        os.chdir(os.path.dirname(os.path.abspath(libraryPath)))  # as fmpy: dependencies
        try:
            self.dll = ctypes.CDLL(libraryPath)
        except OSError as exc:
            raise OSError(f"Failed to load shared library {libraryPath}. {exc}") from None
        finally:
            os.chdir(cwd)
        self._functions: dict[str, Any] = {}
        for name in FUNCTIONS[self.interface]:
            fn = getattr(self.dll, name)  # AttributeError: not exported
            fn.restype, fn.argtypes = SIGNATURES[name]
            self._functions[name] = fn
        self.component: Any = None
        self.callbacks: Any = None

    def __getattr__(self, name: str) -> Any:
        """``fmu.fmi2DoStep(...)``: the C function, its status checked."""
        functions = self.__dict__.get("_functions", {})
        if name in functions:
            return functools.partial(self._call, name)
        raise AttributeError(name)

    def _call(self, name: str, *args: Any) -> Any:
        fn = self._functions[name]
        res = fn(*args)
        if fn.restype is c_int and res > 1:
            raise FMICallException(name, res)
        return res

    # ---------------------------------------------------------- lifecycle
    def instantiate(self, visible: bool = False, callbacks: Any = None,
                    loggingOn: bool = False) -> None:
        if callbacks is None:
            raise ValueError("give the callbacks (fmus.fmi2_binary.callbacks)")
        self.callbacks = callbacks
        uri = pathlib.Path(self.unzipDirectory, "resources").absolute().as_uri()
        self.component = self._call("fmi2Instantiate", self.instanceName.encode("utf-8"),
                                    self.fmu_type, self.guid.encode("utf-8"),
                                    uri.encode("utf-8"), ctypes.byref(callbacks),
                                    int(visible), int(loggingOn))
        if self.component is None:
            raise Exception("Failed to instantiate model")  # noqa: TRY002 - fmpy's

    def freeInstance(self) -> None:
        self._call("fmi2FreeInstance", self.component)

    def setupExperiment(self, tolerance: float | None = None, startTime: float = 0.0,
                        stopTime: float | None = None) -> int:
        return self._call("fmi2SetupExperiment", self.component, tolerance is not None,
                          tolerance or 0.0, startTime, stopTime is not None, stopTime or 0.0)

    def enterInitializationMode(self) -> int:
        return self._call("fmi2EnterInitializationMode", self.component)

    def exitInitializationMode(self) -> int:
        return self._call("fmi2ExitInitializationMode", self.component)

    def terminate(self) -> int:
        return self._call("fmi2Terminate", self.component)

    def reset(self) -> int:
        return self._call("fmi2Reset", self.component)

    def getTypesPlatform(self) -> str:
        return self._call("fmi2GetTypesPlatform").decode("utf-8")

    def getVersion(self) -> str:
        return self._call("fmi2GetVersion").decode("utf-8")

    def setDebugLogging(self, loggingOn: bool, categories: list) -> None:
        cats = (c_char_p * len(categories))(*[c.encode("utf-8") for c in categories])
        self._call("fmi2SetDebugLogging", self.component, int(bool(loggingOn)),
                   len(categories), cats)

    # ------------------------------------------------------------- values
    def _get(self, typ: str, vr: list) -> list:
        refs = (c_uint * len(vr))(*vr)
        values = (_ARRAY[typ]._type_ * len(vr))()
        self._call(f"fmi2Get{typ}", self.component, refs, len(vr), values)
        return list(values)

    def _set(self, typ: str, vr: list, values: Any) -> None:
        refs = (c_uint * len(vr))(*vr)
        self._call(f"fmi2Set{typ}", self.component, refs, len(vr),
                   (_ARRAY[typ]._type_ * len(vr))(*values))

    def getReal(self, vr: list) -> list:
        return self._get("Real", vr)

    def getInteger(self, vr: list) -> list:
        return self._get("Integer", vr)

    def getBoolean(self, vr: list) -> list:
        return self._get("Boolean", vr)

    def getString(self, vr: list) -> list:
        return self._get("String", vr)

    def setReal(self, vr: list, value: list) -> None:
        self._set("Real", vr, value)

    def setInteger(self, vr: list, value: list) -> None:
        self._set("Integer", vr, value)

    def setBoolean(self, vr: list, value: list) -> None:
        self._set("Boolean", vr, value)

    def setString(self, vr: list, value: list) -> None:
        self._set("String", vr, [s.encode("utf-8") if s is not None else s for s in value])

    # -------------------------------------------------------- FMU state
    def getFMUstate(self) -> Any:
        state = c_void_p()
        self._call("fmi2GetFMUstate", self.component, ctypes.byref(state))
        return state

    def setFMUstate(self, state: Any) -> None:
        self._call("fmi2SetFMUstate", self.component, state)

    def freeFMUstate(self, state: Any) -> None:
        self._call("fmi2FreeFMUstate", self.component, ctypes.byref(state))

    def serializeFMUstate(self, state: Any) -> bytes:
        size = c_size_t()
        self._call("fmi2SerializedFMUstateSize", self.component, state, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        self._call("fmi2SerializeFMUstate", self.component, state, buf, size)
        return buf.raw

    def deSerializeFMUstate(self, serializedState: bytes, state: Any = None) -> Any:
        state = c_void_p() if state is None else state
        buf = ctypes.create_string_buffer(serializedState, size=len(serializedState))
        self._call("fmi2DeSerializeFMUstate", self.component, buf, len(buf),
                   ctypes.byref(state))
        return state

    # the FMI 3 spellings, as fmpy has them
    getFMUState, setFMUState, freeFMUState = getFMUstate, setFMUstate, freeFMUstate
    serializeFMUState, deserializeFMUState = serializeFMUstate, deSerializeFMUstate

    def getDirectionalDerivative(self, vUnknown_ref: list, vKnown_ref: list,
                                 dvKnown: list) -> list:
        u = (c_uint * len(vUnknown_ref))(*vUnknown_ref)
        k = (c_uint * len(vKnown_ref))(*vKnown_ref)
        dv = (c_double * len(dvKnown))(*dvKnown)
        out = (c_double * len(u))()
        self._call("fmi2GetDirectionalDerivative", self.component, u, len(u), k, len(k), dv,
                   out)
        return list(out)


class Fmi2Model(_Binary):
    """An FMI 2 Model Exchange binary (fmpy's ``FMU2Model``)."""

    interface, fmu_type = "ModelExchange", 0

    def enterEventMode(self) -> int:
        return self._call("fmi2EnterEventMode", self.component)

    def newDiscreteStates(self) -> tuple:
        info = EventInfo()
        self._call("fmi2NewDiscreteStates", self.component, ctypes.byref(info))
        return (info.newDiscreteStatesNeeded != 0, info.terminateSimulation != 0,
                info.nominalsOfContinuousStatesChanged != 0,
                info.valuesOfContinuousStatesChanged != 0, info.nextEventTimeDefined != 0,
                info.nextEventTime)

    def enterContinuousTimeMode(self) -> int:
        return self._call("fmi2EnterContinuousTimeMode", self.component)

    def completedIntegratorStep(self, noSetFMUStatePriorToCurrentPoint: int = 1) -> tuple:
        enter, stop = c_int(), c_int()
        self._call("fmi2CompletedIntegratorStep", self.component,
                   noSetFMUStatePriorToCurrentPoint, ctypes.byref(enter), ctypes.byref(stop))
        return enter.value != 0, stop.value != 0

    def setTime(self, time: float) -> int:
        return self._call("fmi2SetTime", self.component, time)

    def setContinuousStates(self, x: Any, nx: int) -> int:
        return self._call("fmi2SetContinuousStates", self.component, x, nx)

    def getDerivatives(self, dx: Any, nx: int) -> int:
        return self._call("fmi2GetDerivatives", self.component, dx, nx)

    def getEventIndicators(self, z: Any, nz: int) -> int:
        return self._call("fmi2GetEventIndicators", self.component, z, nz)

    def getContinuousStates(self, x: Any, nx: int) -> int:
        return self._call("fmi2GetContinuousStates", self.component, x, nx)

    def getNominalsOfContinuousStates(self, x_nominal: Any, nx: int) -> int:
        return self._call("fmi2GetNominalsOfContinuousStates", self.component, x_nominal, nx)


class Fmi2Slave(_Binary):
    """An FMI 2 Co-Simulation binary (fmpy's ``FMU2Slave``)."""

    interface, fmu_type = "CoSimulation", 1

    def setRealInputDerivatives(self, vr: list, order: list, value: list) -> None:
        n = len(vr)
        self._call("fmi2SetRealInputDerivatives", self.component, (c_uint * n)(*vr), n,
                   (c_int * n)(*order), (c_double * n)(*value))

    def getRealOutputDerivatives(self, vr: list, order: list) -> list:
        n = len(vr)
        out = (c_double * n)()
        self._call("fmi2GetRealOutputDerivatives", self.component, (c_uint * n)(*vr), n,
                   (c_int * n)(*order), out)
        return list(out)

    def doStep(self, currentCommunicationPoint: float, communicationStepSize: float,
               noSetFMUStatePriorToCurrentPoint: int = 1) -> None:
        self._call("fmi2DoStep", self.component, currentCommunicationPoint,
                   communicationStepSize, noSetFMUStatePriorToCurrentPoint)

    def cancelStep(self) -> None:
        self._call("fmi2CancelStep", self.component)

    def _status(self, typ: str, ctype: Any, kind: int) -> Any:
        value = ctype()
        self._call(f"fmi2Get{typ}Status", self.component, kind, ctypes.byref(value))
        return value.value

    def getStatus(self, kind: int) -> int:
        return self._status("", c_int, kind)

    def getRealStatus(self, kind: int) -> float:
        return self._status("Real", c_double, kind)

    def getIntegerStatus(self, kind: int) -> int:
        return self._status("Integer", c_int, kind)

    def getBooleanStatus(self, kind: int) -> bool:
        return bool(self._status("Boolean", c_int, kind))

    def getStringStatus(self, kind: int) -> str:
        return (self._status("String", c_char_p, kind) or b"").decode("utf-8")
