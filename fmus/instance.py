"""The part of an FMU instance shared by the ME block and the CS subsystem.

:class:`FMUInstance` owns one :class:`~fmus.driver.Driver` (or its
out-of-process twin :class:`~fmus.remote.RemoteDriver`): it instantiates on
first use and *reuses the instance with reset* on every later run; after an
error (an FMU call that failed, a watchdog kill) it frees the instance and
starts a fresh one, so a failed run never poisons the next.  It replays the
registered value-reference sets on a fresh driver (keys stay valid), keeps
the FMU state tokens (freed when they die), and checks and applies
parameters.

An FMU that declares ``canBeInstantiatedOnlyOncePerProcess`` gets a private
copy of its extracted files for every further in-process instance (a separate
copy of the shared library), or can run out of process.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np

from cosim.block import did_you_mean
from cosim.errors import ParameterError, StepError
from cosim.ports import BINARY, STRING

from .errors import FMUBinaryError, FMUConfigError, FMUWarning

_LIVE: dict[tuple, int] = {}  # (FMU root, interface) -> in-process instances alive


class StateToken:
    """A saved FMU state (``handle``) plus the owner's bookkeeping (``extra``).

    The FMU-side memory is freed when the token is garbage collected, if the
    instance that made it still exists.  :meth:`FMUInstance.save` with ``into`` saves
    into an existing token (the FMU overwrites its state): only for a token its holder
    alone uses (a master's per-step rollback slot), never one handed to a user.
    """

    __slots__ = ("handle", "extra", "generation", "owner", "_fin", "__weakref__")

    def __init__(self, inst: FMUInstance, handle: Any, extra: Any) -> None:
        self.handle = handle
        self.extra = extra
        self.generation = inst.generation
        self.owner = weakref.ref(inst)
        self._fin = weakref.finalize(self, _free_state, self.owner, handle, inst.generation)


def _free_state(inst_ref: Any, handle: Any, generation: int) -> None:
    inst = inst_ref()
    if inst is not None and inst.drv is not None and inst.generation == generation:
        inst.drv.free_state(handle)


def _free_driver(drv: Any, key: tuple | None) -> None:
    try:
        drv.free()
    finally:
        if key is not None:
            _LIVE[key] = max(0, _LIVE.get(key, 1) - 1)


class FMUInstance:
    """One FMU instance of a block or subsystem (see the module docstring)."""

    def __init__(self, fmu: Any, interface: str, instance_name: str, *,
                 out_of_process: bool = False, timeout_s: float | None = None,
                 call_log: Any = None, logging_on: bool = False, early_return: bool = False,
                 event_mode: bool = False, intermediate_vrs: list | None = None) -> None:
        self.fmu = fmu
        self.interface = interface
        self.instance_name = instance_name
        self.out_of_process = out_of_process
        self.timeout_s = timeout_s
        self.call_log = call_log
        self.opts = dict(logging_on=logging_on, early_return=early_return,
                         event_mode=event_mode, intermediate_vrs=intermediate_vrs)
        self.drv: Any = None
        self.generation = 0
        self.initialized = False
        self.broken = False
        self._regs: list[tuple] = []
        self._fin = None
        self._live_key = (str(fmu.root), interface)

    # ------------------------------------------------------------ driver
    def start(self) -> Any:
        """A driver ready for initialization: fresh, or the old one after ``reset``."""
        if self.drv is not None and not self.broken:
            if self.initialized:
                try:
                    self.drv.terminate()
                except Exception:  # noqa: BLE001 - reset below puts it right
                    pass
            try:
                self.drv.reset()
                self.initialized = False
                return self.drv
            except Exception:  # noqa: BLE001 - start a fresh instance instead
                self.broken = True
        self.free()
        caps = self.fmu.info.interfaces[self.interface]
        once = bool(caps.get("canBeInstantiatedOnlyOncePerProcess"))
        private = once and not self.out_of_process and _LIVE.get(self._live_key, 0) > 0
        spec = self.fmu.spec(self.interface, self.instance_name, private_copy=private,
                             **self.opts)
        if self.out_of_process:
            from .remote import RemoteDriver
            drv = RemoteDriver(spec, timeout_s=self.timeout_s, call_log=self.call_log)
            key = None
        else:
            from .driver import open_driver
            drv = open_driver(spec, call_log=self.call_log)
            key = self._live_key
            _LIVE[key] = _LIVE.get(key, 0) + 1
        self._fin = weakref.finalize(self, _free_driver, drv, key)
        try:
            try:
                drv.instantiate()
            except FMUBinaryError:
                if not (self.opts.get("event_mode") and self.interface == "CoSimulation"):
                    raise
                # some FMUs declare hasEventMode and refuse it at instantiation (upstream's
                # Roberts): run without event mode, as FMPy does unless asked for it
                self._fin()
                self.opts["event_mode"] = False
                warnings.warn(f"FMU '{self.fmu.path.name}' declares hasEventMode but refused "
                              "event mode at instantiation; it runs without event mode "
                              "(events are handled inside its doStep)", FMUWarning,
                              stacklevel=4)
                return self.start()
            for typ, vrs, nvals in self._regs:
                drv.register(typ, vrs, nvals)
        except BaseException:
            self._fin()
            raise
        self.drv = drv
        self.generation += 1
        self.broken = False
        self.initialized = False
        return drv

    def free(self) -> None:
        """Free the FMU instance now (a later :meth:`start` makes a new one)."""
        if self._fin is not None:
            self._fin()
            self._fin = None
        self.drv = None
        self.initialized = False

    def register(self, typ: str, vrs: list, nvals: int | None = None) -> int:
        """A key for a value-reference set, valid on every driver of this instance."""
        nvals = len(vrs) if nvals is None else nvals
        self._regs.append((typ, list(vrs), nvals))
        if self.drv is not None:
            self.drv.register(typ, vrs, nvals)
        return len(self._regs) - 1

    # ------------------------------------------------------------- state
    def save(self, extra: Any, into: StateToken | None = None) -> StateToken:
        """The FMU state now, with the owner's ``extra``, as a new token; or, with
        ``into`` (a token of this instance's current driver that its holder alone uses),
        into that token: the FMU overwrites the state it holds (no allocation), and
        ``into`` is returned, unless the FMU handed back a new state (then a new token)."""
        drv = self.drv
        if into is not None and into.generation == self.generation and drv is not None \
                and into.owner() is self and into._fin.alive:
            handle = drv.get_state(into.handle)
            if handle == into.handle:
                into.extra = extra
                return into
            return StateToken(self, handle, extra)
        return StateToken(self, drv.get_state(), extra)

    def restore(self, token: StateToken) -> None:
        if token.generation != self.generation or self.drv is None:
            from .errors import FMUCallError
            raise FMUCallError(f"FMU '{self.fmu.path.name}' instance '{self.instance_name}': "
                               "the saved state belongs to an instance that was freed or "
                               "restarted (after an error or a new run); it cannot be "
                               "restored", "setFMUState", "error")
        self.drv.set_state(token.handle)


# ------------------------------------------------------------------ values
#: the NumPy type of each FMI integer type: values pass between the FMU and the diagram
#: as Python ints (exact), arrays and recorded columns keep this type (never float64)
INT_DTYPES = {"Integer": np.int32, "Int8": np.int8, "UInt8": np.uint8, "Int16": np.int16,
              "UInt16": np.uint16, "Int32": np.int32, "UInt32": np.uint32,
              "Int64": np.int64, "UInt64": np.uint64}


def port_dtype(var: Any) -> Any:
    """The port dtype of an FMU variable: float for Real/Float32/Float64 (Float32 widens
    exactly), the exact integer type for integers (``Enumeration`` int64), bool, and object
    for String/Binary (:data:`cosim.ports.STRING` / :data:`~cosim.ports.BINARY`, which say
    which to the results files)."""
    kind = var.kind
    if kind == "real":
        return np.float64
    if kind == "int":
        return INT_DTYPES.get(var.type, np.int64)  # Enumeration: int64 holds both
    if kind == "bool":
        return np.bool_
    return BINARY if kind == "binary" else STRING


def is_port_var(v: Any) -> bool:
    """Whether an FMU input/output becomes a port (String and Binary: scalars only)."""
    return v.kind in ("real", "int", "bool") or (v.kind in ("string", "binary")
                                                 and not v.shape)


def as_text(x: Any, v: Any) -> str:
    """A String input's value: a str (``numpy.str_`` included), else a clear error."""
    x = x.item() if isinstance(x, np.generic) else x
    if isinstance(x, str):
        return x
    raise StepError(f"String input '{v.name}' got {x!r} ({type(x).__name__}); connect a "
                    "String output (or give a str start value)")


def as_bytes(x: Any, v: Any) -> bytes:
    """A Binary input's value: bytes (``bytearray``, ``numpy.bytes_`` included)."""
    x = x.item() if isinstance(x, np.generic) else x
    if isinstance(x, (bytes, bytearray)):
        return bytes(x)
    raise StepError(f"Binary input '{v.name}' got {x!r} ({type(x).__name__}); connect a "
                    "Binary output (or give a bytes start value)")


def settable_before_init(var: Any) -> bool:
    """Whether FMI lets the importer set ``var`` before or during initialization:
    parameters, inputs, and variables with ``initial="exact"`` or ``"approx"`` (not
    constants; FMI 2.0 section 3.2.3 and 4.2.4, FMI 3.0 section 2.3.2)."""
    own = getattr(var, "settable_before_init", None)
    if own is not None and not callable(own):
        return bool(own)
    if var.variability == "constant":
        return False
    if var.causality in ("parameter", "structuralParameter", "input"):
        return True
    return var.initial in ("exact", "approx") and var.causality != "independent"


def check_start(fmu: Any, values: dict | None, owner: str) -> dict:
    """``{Variable: value}`` for ``start=`` values (any variable settable before
    initialization), converted to each variable's type and checked against its range."""
    out = {}
    info = fmu.info
    settable = [v.name for v in info.variables if settable_before_init(v)]
    for name, value in (values or {}).items():
        var = next((v for v in info.variables if v.name == name or v.port == name), None)
        if var is None:
            raise FMUConfigError(f"{owner}: FMU '{fmu.path.name}' has no variable {name!r} "
                                 "to give a start value; " + did_you_mean(name, settable))
        if not settable_before_init(var):
            why = ("a constant" if var.variability == "constant" else
                   f"a{'n' if var.causality[0] in 'aeiou' else ''} {var.causality} with "
                   f"initial={var.initial or 'calculated'!r}")
            raise FMUConfigError(f"{owner}: FMU variable {var.name!r} is {why}: FMI lets an "
                                 "importer set only parameters, inputs and variables with "
                                 "initial='exact' or 'approx' before initialization")
        out[var] = check_value(var, value, owner)
    return out


# --------------------------------------------------------------- parameters
def check_parameters(fmu: Any, values: dict | None, owner: str) -> dict:
    """``{Variable: value}`` for user parameter values, checked (names, types, bounds)."""
    out = {}
    info = fmu.info
    choices = [v.name for v in info.parameters]
    for name, value in (values or {}).items():
        var = None
        for v in info.variables:
            if v.name == name or v.port == name:
                var = v
                break
        if var is None or var.causality not in ("parameter", "structuralParameter"):
            what = "no variable" if var is None else f"variable {var.name!r} is a {var.causality}"
            raise FMUConfigError(f"{owner}: FMU '{fmu.path.name}' has {what} {name!r} to set "
                                 "as a parameter; " + did_you_mean(name, choices))
        out[var] = check_value(var, value, owner)
    return out


def check_value(var: Any, value: Any, owner: str) -> Any:
    """``value`` converted to ``var``'s type and checked against its min/max."""
    try:
        if var.kind == "real":
            val = float(value) if not var.shape else np.asarray(value, float).reshape(var.shape)
        elif var.kind == "int":
            if isinstance(value, float) and not value.is_integer():
                raise ValueError("not an integer")
            if isinstance(value, str):
                value = int(value.strip())
            val = int(value) if not var.shape else np.asarray(value, port_dtype(var))
        elif var.kind == "bool":
            if isinstance(value, str):
                if value.strip().lower() not in ("true", "false", "1", "0"):
                    raise ValueError("not a Boolean (true/false)")
                value = value.strip().lower() in ("true", "1")
            val = bool(value)
        elif var.kind == "string":
            val = str(value)
        elif var.type == "Binary":
            val = bytes.fromhex(value) if isinstance(value, str) else bytes(value)
        else:
            raise ValueError(f"type {var.type} is not supported")
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{owner}: value {value!r} for FMU variable '{var.name}' "
                             f"({var.type}): {exc}") from None
    if var.kind in ("real", "int"):
        arr = np.asarray(val, dtype=float)
        if var.min is not None and np.any(arr < var.min) or \
                var.max is not None and np.any(arr > var.max):
            raise ParameterError(f"{owner}: value {value!r} for FMU variable '{var.name}' is "
                                 f"outside its range [{var.min}, {var.max}] (model "
                                 "description min/max)")
    return val


def flat(var: Any, value: Any) -> list:
    """The values of ``var`` as a flat list for the driver."""
    if var.shape:
        return np.asarray(value).ravel().tolist()
    return [value]


def set_variables(inst: FMUInstance, cache: dict, values: dict) -> None:
    """Set ``{Variable: value}`` through registered per-variable keys (``cache``)."""
    for var, value in values.items():
        key = cache.get(var)
        if key is None:
            key = cache[var] = inst.register(var.type, [var.vr], var.size)
        inst.drv.set(key, flat(var, value))


def differs(a: Any, b: Any) -> bool:
    """Whether two variable values differ (arrays element by element)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or isinstance(b, list):
        try:
            return not np.array_equal(np.asarray(a), np.asarray(b))
        except (TypeError, ValueError):
            return True
    return a != b


def set_before_init(inst: FMUInstance, cache: dict, params: dict, starts: dict) -> None:
    """Parameters and ``start=`` values before initialization: FMI 3 structural
    parameters in Configuration Mode, the rest in Instantiated mode.  Parameters are set
    only where they differ from the model description's start value (a fresh or reset
    instance holds those, as FMPy does); ``starts`` (given by the user) always."""
    params = {v: x for v, x in params.items() if v.start is None or differs(x, v.start)}
    structural = {v: x for v, x in params.items() if v.causality == "structuralParameter"}
    if structural and inst.fmu.info.fmi_major == 3:
        inst.drv.enter_configuration_mode()
        set_variables(inst, cache, structural)
        inst.drv.exit_configuration_mode()
    set_variables(inst, cache, {v: x for v, x in params.items() if v not in structural})
    set_variables(inst, cache, starts)

