"""What every FMU driver does, whatever its interface: :class:`Driver`.

A driver holds the calls of its FMI version (:class:`~fmus.fmi_calls.FmiCalls`, resolved
once at load) and implements, for every interface, the lifecycle, values by registered
value-reference sets, the FMU state, directional derivatives and the translation of an
FMI status into an error that names the FMU.  The interfaces are thin layers on top
(``class ...(Driver, interface="CS")``: :mod:`fmus.driver_me`, :mod:`fmus.driver_cs`,
:mod:`fmus.driver_se`); :mod:`fmus.driver` (its docstring holds the contract) chooses
the version and the layer.
"""

from __future__ import annotations

import ctypes
from collections import deque
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .errors import FMICallException, FMUBinaryError, FMUCallError, FMUDiscardError
from .fmi_calls import FmiCalls, ValueSet

__all__ = ["Driver", "DriverSpec", "STATUS"]

STATUS = ("ok", "warning", "discard", "error", "fatal", "pending")

_LEAKED: list = []  # instances left after a fatal status (never freed)


@dataclass
class DriverSpec:
    """What a driver needs to load and instantiate an FMU (picklable)."""

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


class FmuLog(deque):
    """The FMU's newest log messages (30), quoted by the errors of its driver."""

    def __init__(self) -> None:
        super().__init__(maxlen=30)

    def record(self, status: int, category: Any, message: Any) -> None:
        """The FMU's logger callback (FMI 2 and 3)."""
        def s(x: Any) -> str:
            return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)
        lab = STATUS[status] if 0 <= status < 6 else str(status)
        self.append(f"[{lab}] {s(category)}: {s(message)}")


class Driver:
    """One instance of an FMU, in this process: the part every interface shares.

    Parameters
    ----------
    spec : DriverSpec
    calls : FmiCalls
        The calls of the FMU's FMI version on its loaded binary.
    """

    #: the layer class of each interface ("ME", "CS", "SE"), filled by subclassing
    #: with ``class ...(Driver, interface=...)``
    layers: ClassVar[dict[str, type[Driver]]] = {}
    interface: ClassVar[str] = ""

    def __init_subclass__(cls, interface: str = "", **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if interface:
            cls.interface = interface
            Driver.layers[interface] = cls

    def __init__(self, spec: DriverSpec, calls: FmiCalls) -> None:
        self.spec = spec
        self.calls = calls
        self.fmu = calls.fmu  # fmpy's object (its camel-case methods, its dll)
        self.label = f"FMU '{spec.label}' instance '{spec.instance_name}'"
        self.messages = FmuLog()
        self.time: float | None = None
        self.fatal = False
        self.component: Any = None  # the instance, once instantiated
        self._sets: list[ValueSet] = []
        self._instantiated = False
        #: whether ``get_state(into)`` overwrites ``into`` (FMI asks it; cleared the first
        #: time the FMU hands back a different state instead)
        self.states_in_place = True
        self._get_state_fn: Any = None  # the C calls of get_state(into) and set_state
        self._set_state_fn: Any = None

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
        return self._fail(FMICallException(name, status), name)

    def _call(self, method: str, *args: Any) -> Any:
        """fmpy's method ``method`` (camel case, the same in FMI 2 and 3)."""
        try:
            return getattr(self.fmu, method)(*args)
        except Exception as exc:  # noqa: BLE001
            name = f"{self.calls.prefix}{method[0].upper()}{method[1:]}"
            raise self._fail(exc, name) from None

    # -------------------------------------------------------- lifecycle
    def _instantiate(self) -> None:
        """The interface's instantiation call (a layer implements it)."""
        raise NotImplementedError

    def instantiate(self) -> None:
        sp = self.spec
        try:
            self._instantiate()
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
        self.component = self.fmu.component
        for vs in self._sets:
            vs.bind(self.component)
        self._instantiated = True

    def enter_initialization(self, t0: float, tolerance: float | None = None,
                             stop: float | None = None) -> None:
        self.time = t0
        try:
            self.calls.enter_initialization(tolerance, t0, stop)
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
            # no FMI call is allowed after a fatal status (freeing a pythonfmu instance
            # then corrupts the host's heap): keep it, and the callbacks it may use, alive
            self._instantiated = False
            _LEAKED.append(self)
            return
        if self._instantiated:
            self._instantiated = False
            try:
                self.calls.free_instance(self.component)
            except Exception:  # noqa: BLE001 - best effort at teardown
                pass

    # ----------------------------------------------------------- values
    def register(self, typ: str, vrs: list, nvals: int | None = None) -> int:
        """Preallocate buffers for ``vrs`` of FMI type ``typ``; returns a key."""
        if typ not in self.calls.types:
            raise FMUCallError(f"{self.label}: variables of type {typ} are not supported")
        vs = self.calls.value_set(typ, vrs, nvals if nvals is not None else len(vrs))
        if self._instantiated:
            vs.bind(self.component)
        self._sets.append(vs)
        return len(self._sets) - 1

    def set(self, key: int, values: list) -> None:
        vs = self._sets[key]
        if vs.encode is None:
            vs.buf[:] = values
        else:
            vs.encode(values)
        try:
            st = vs.setter(*vs.args)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        if st > 1:
            raise self._status(f"{self.calls.prefix}Set{vs.type}", st)

    def get(self, key: int) -> list:
        vs = self._sets[key]
        try:
            st = vs.getter(*vs.args)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        if st > 1:
            raise self._status(f"{self.calls.prefix}Get{vs.type}", st)
        return vs.buf[:] if vs.decode is None else vs.decode()

    # ------------------------------------------------------- FMU state
    def get_state(self, into: Any = None) -> Any:
        """The FMU state now: a new handle, or ``into`` (a handle of this driver that
        nobody else uses) overwritten.

        FMI 2 and 3 (``fmi2GetFMUstate``, ``fmi3GetFMUState``) overwrite the state a
        non-null handle points to instead of allocating one.  An FMU that puts a new
        state there instead (pythonfmu does) may lose the old one's memory (it is not
        freed here: the FMU may have freed it); from then on this driver asks that FMU
        for new states only (:attr:`states_in_place` False), so at most one is lost.
        Returns the handle that holds the state (``into`` itself when given and
        :attr:`states_in_place`).
        """
        if into is None or not self.states_in_place:
            return self._call("getFMUState")
        calls = self.calls
        fn = self._get_state_fn
        if fn is None:
            fn = self._get_state_fn = calls.fn(f"{calls.prefix}{calls.GET_STATE}")
        before = into.value
        try:
            st = fn(self.component, ctypes.byref(into))
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, f"{calls.prefix}{calls.GET_STATE}") from None
        if st > 1:
            raise self._status(f"{calls.prefix}{calls.GET_STATE}", st)
        if before is not None and into.value != before:  # a new state, not `into`
            self.states_in_place = False
        return into

    def set_state(self, state: Any) -> None:
        calls = self.calls
        fn = self._set_state_fn
        if fn is None:
            fn = self._set_state_fn = calls.fn(f"{calls.prefix}{calls.SET_STATE}")
        try:
            st = fn(self.component, state)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, f"{calls.prefix}{calls.SET_STATE}") from None
        if st > 1:
            raise self._status(f"{calls.prefix}{calls.SET_STATE}", st)

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
        import ctypes
        nu, nk = len(unknowns), len(knowns)
        u = (ctypes.c_uint * nu)(*unknowns)
        k = (ctypes.c_uint * nk)(*knowns)
        dv = (ctypes.c_double * nk)(*seed)
        out = (ctypes.c_double * nu)()
        name = f"{self.calls.prefix}GetDirectionalDerivative"
        try:
            st = self.calls.directional(self.component, u, nu, k, nk, dv, out)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, name) from None
        if st > 1:
            raise self._status(name, st)
        return out[:]

    # ------------------------------------------------------------ misc
    def ping(self) -> bool:
        return True

    def log_lines(self) -> list:
        return list(self.messages)
