"""Lazy registry of HIL backends, extended through entry points.

A backend kind is a name (``"serial"``, ``"serial-emulator"``, later
``"can"``, ``"daq-sim"``, ...) bound to an import path ``"module:Class"``; the
module is imported only when a backend of that kind is created, so importing
:mod:`hil` never imports pyserial or python-can.  Other packages add kinds
through the entry-point group ``cosim.hil_backends``::

    [project.entry-points."cosim.hil_backends"]
    my-daq = "my_package.daq:MyDaqBackend"

or at run time with :func:`register_backend`.  Names are matched exactly;
an unknown name lists the known ones (and a close match) and is never
replaced by a default.

Limitations
-----------
Entry points are scanned once, on the first lookup that needs them; call
:func:`refresh_entry_points` after installing a plugin into a running process.
A built-in or registered name takes precedence over an entry point of the same
name (the clash is logged).
"""

from __future__ import annotations

import difflib
import importlib
import logging
import threading
from typing import Any

from .backend import Backend
from .errors import BackendError, BackendNotFound, DriverMissing

__all__ = ["ENTRY_POINT_GROUP", "available_backends", "backend_class", "create_backend",
           "register_backend", "refresh_entry_points"]

log = logging.getLogger("hil")

#: Entry-point group through which other packages add backend kinds.
ENTRY_POINT_GROUP = "cosim.hil_backends"

_BUILTIN: dict[str, str] = {
    "serial": "hil.serial.backend:SerialBackend",
    "serial-emulator": "hil.serial.emulator:EmulatedSerialBackend",
    "daq-sim": "hil.daq.backend:SimulatedDaqBackend",
    "can": "hil.can.backend:CanBackend",
    "modbus": "hil.daq.modbus:ModbusDaqBackend",
    "opcua": "hil.daq.opcua:OpcUaDaqBackend",
    "nidaqmx": "hil.daq.nidaqmx:NiDaqmxBackend",
}

_lock = threading.Lock()
_registered: dict[str, str | type[Backend]] = dict(_BUILTIN)
_entry_points: dict[str, Any] | None = None  # name -> EntryPoint, scanned lazily


def _scan_entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _eps() -> dict[str, Any]:
    global _entry_points
    with _lock:
        if _entry_points is None:
            try:
                _entry_points = _scan_entry_points()
            except Exception as exc:  # noqa: BLE001 - a broken distribution must not stop us
                log.warning("hil: scanning entry points %r failed: %s", ENTRY_POINT_GROUP, exc)
                _entry_points = {}
            for name in set(_entry_points) & set(_registered):
                log.warning("hil: entry point %r (%s) ignored: the name is taken by %r", name,
                            _entry_points[name].value, _registered[name])
        return _entry_points


def refresh_entry_points() -> None:
    """Forget the scanned entry points (they are scanned again when needed)."""
    global _entry_points
    with _lock:
        _entry_points = None


def register_backend(kind: str, target: str | type[Backend], *, replace: bool = False) -> None:
    """Bind ``kind`` to a Backend subclass or to its import path ``"module:Class"``
    (imported only when used).  Refuses to rebind a name unless ``replace``."""
    if not kind or not isinstance(kind, str):
        raise ValueError(f"register_backend: kind must be a non-empty str, got {kind!r}")
    if isinstance(target, str) and ":" not in target:
        raise ValueError(f"register_backend({kind!r}): target {target!r} must be "
                         f"'module:Class' or a Backend subclass")
    if isinstance(target, type) and not issubclass(target, Backend):
        raise TypeError(f"register_backend({kind!r}): {target.__name__} is not a subclass of "
                        f"hil.Backend")
    with _lock:
        if kind in _registered and not replace and _registered[kind] != target:
            raise ValueError(f"register_backend: {kind!r} is already bound to "
                             f"{_registered[kind]!r}; pass replace=True to rebind it")
        _registered[kind] = target


def available_backends() -> list[str]:
    """Names of every known backend kind (built in, registered, entry points), sorted.
    Imports no backend module."""
    return sorted(set(_registered) | set(_eps()))


def _load(kind: str, target: Any) -> type[Backend]:
    if isinstance(target, type):
        return target
    try:
        if isinstance(target, str):
            mod, _, attr = target.partition(":")
            cls = getattr(importlib.import_module(mod), attr)
            origin = target
        else:  # an EntryPoint
            cls = target.load()
            origin = f"entry point {target.name} = {target.value}"
    except ImportError as exc:
        raise DriverMissing(f"HIL backend {kind!r} cannot be imported ({exc}); install its "
                            f"driver, e.g. pip install 'cosim[hil]'") from exc
    except AttributeError as exc:
        raise BackendError(f"HIL backend {kind!r}: {target!r} names no class ({exc}); fix the "
                           f"registration or the entry point") from exc
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise BackendError(f"HIL backend {kind!r}: {origin} is {cls!r}, not a subclass of "
                           f"hil.Backend; fix the registration or the entry point")
    return cls


def backend_class(kind: str) -> type[Backend]:
    """The Backend subclass registered as ``kind`` (imports its module now)."""
    with _lock:
        target = _registered.get(kind)
    if target is None:
        target = _eps().get(kind)
    if target is None:
        names = available_backends()
        close = difflib.get_close_matches(str(kind), names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise BackendNotFound(f"unknown HIL backend {kind!r}; available: {', '.join(names)}"
                              f"{hint} (packages add more through the entry-point group "
                              f"{ENTRY_POINT_GROUP!r})")
    return _load(kind, target)


def create_backend(kind: str, **config: Any) -> Backend:
    """A new, not yet opened, backend of the given kind: ``create_backend("serial",
    port="/dev/ttyUSB0", baudrate=115200, framing="cobs", crc="crc16-ccitt-false")``."""
    cls = backend_class(kind)
    try:
        return cls(**config)
    except TypeError as exc:
        raise BackendError(f"create_backend({kind!r}): bad configuration for "
                           f"{cls.__name__}: {exc}; see help({cls.__module__}."
                           f"{cls.__name__})") from exc
