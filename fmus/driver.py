"""One FMU instance through fmpy's low-level classes, FMI 2 and 3, ME, CS and SE.

:func:`open_driver` gives the driver of a :class:`DriverSpec`: the calls of its FMI
version, resolved once when the binary loads (:class:`~fmus.fmi2_calls.Fmi2Calls`,
:class:`~fmus.fmi3_calls.Fmi3Calls`, as FMPy's ``fmi2.py`` and ``fmi3.py``), held by the
layer class of its interface (:class:`~fmus.driver_me.ModelExchangeDriver`,
:class:`~fmus.driver_cs.CoSimulationDriver`, both with the Event Mode of
:class:`~fmus.driver_events.EventModeDriver`, and the FMI 3 only
:class:`~fmus.driver_se.ScheduledExecutionDriver`), each a :class:`Driver` (the part
every interface shares: :mod:`fmus.driver_base`).  No call branches on the version.

The drivers serve :class:`~fmus.fmu_block.FMUBlock`, :class:`~fmus.subsystem.FMUSubsystem`
and :class:`~fmus.scheduled.FMUScheduledBlock` through one protocol,
:data:`DRIVER_API`: lifecycle, values by *registered* value-reference sets (the ctypes
buffers and call arguments are built once, so a call costs one C call), combined calls
for the hot paths (``me_eval``, ``cs_step``, ``se_activate``: one call per evaluation,
step or partition, which is also one round trip in the out-of-process mode of
:mod:`fmus.remote`, whose proxy forwards exactly the protocol), FMU state, directional
derivatives.

Every FMI status above ``Warning`` becomes an :class:`~fmus.errors.FMUCallError`
that names the FMU, the instance, the function, the status, the simulation
time and the FMU's last log messages.  A ``call_log`` (a callable taking one
line, e.g. ``list.append`` or a file's ``write``) receives every FMI call with
its arguments and status (fmpy's call logger).

Everything crossing the API is plain Python (lists, floats, ints, bytes), so
the same methods can run in a child process.

Adding an FMI feature: implementers' checklist
----------------------------------------------
1. Put each C call where it differs, nowhere else:

   * what FMI 2 and FMI 3 call differently (names, arguments, output arguments) is a
     method of each version class, :class:`~fmus.fmi2_calls.Fmi2Calls` and
     :class:`~fmus.fmi3_calls.Fmi3Calls`, returning the FMI status and raw results (it
     never builds an FMU error); a version that lacks the feature gets the method of
     :class:`~fmus.fmi_calls.FmiCalls` that raises ``NotImplementedError`` naming the
     version (as ``set_input_derivatives``);
   * what one interface adds is a method of its layer (``fmus/driver_me.py``,
     ``fmus/driver_cs.py``, ``fmus/driver_se.py``), what Model Exchange and
     Co-Simulation share in Event Mode a method of
     :class:`~fmus.driver_events.EventModeDriver`, what every interface shares a method
     of :class:`Driver` (``fmus/driver_base.py``); a driver method turns a status above
     ``Warning`` into an error with ``self._status(name, status)`` or ``self._fail(exc,
     name)`` and takes and returns plain Python values;
   * a hot path resolves its C functions once, in the layer's ``__init__``, with
     ``calls.fn(name)`` (the C function itself, or fmpy's logging wrapper under a call
     log: handle both, a returned status and a raised one), and never tests the version.

2. Add the method's name to :data:`DRIVER_CALLS` under the class that implements it:
   :class:`~fmus.remote.RemoteDriver` forwards it out of process with no edit
   (``fmus/remote.py`` derives its forwarding from the protocol).  Only a call that
   returns an FMU-side handle (as ``get_state``) needs a case in ``remote._serve``.
3. A new FMI version is a ``class FmiNCalls(FmiCalls, major=N)``, a new interface a
   ``class ...(Driver, interface="XX")``; import its module here so it registers.
4. Test: ``tests/unit/fmus/test_driver_protocol.py`` checks that the protocol is what the
   classes implement and what the proxy forwards; test the feature itself on the test
   FMUs of ``tests/fmu_sources`` (FMI 2 and 3), in and out of process, and against the
   Reference FMUs (``tests/conformance``) and FMPy as the oracle (``tests/corpus``).

Limitations: only FMI 2 and 3 (FMI 1 FMUs are refused at load); Scheduled Execution
partitions run one after another, never preempted.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from . import fmi2_calls, fmi3_calls  # noqa: F401 - the version classes register
from .driver_base import STATUS, Driver, DriverSpec
from .driver_cs import CoSimulationDriver
from .driver_events import EventModeDriver
from .driver_me import ModelExchangeDriver
from .driver_se import ScheduledExecutionDriver
from .errors import FMUCallError, FMUConfigError
from .fmi_calls import FmiCalls

__all__ = ["DRIVER_API", "DRIVER_CALLS", "STATUS", "Driver", "DriverSpec", "c_entry_points",
           "open_driver"]

#: The driver protocol, by the class that implements each call: every call a wrapper
#: may make on a driver, in this process or out of it (:class:`~fmus.remote.RemoteDriver`
#: forwards exactly these; ``tests/unit/fmus/test_driver_protocol.py`` checks both).
DRIVER_CALLS: dict[str, tuple[str, ...]] = {
    Driver.__name__: (  # every interface
        "instantiate", "enter_initialization", "exit_initialization",
        "enter_configuration_mode", "exit_configuration_mode", "terminate", "reset", "free",
        "register", "set", "get", "get_state", "set_state", "free_state", "serialize_state",
        "deserialize_state", "directional", "ping", "log_lines"),
    EventModeDriver.__name__: (  # ME, and CS with Event Mode (FMI 3)
        "enter_event_mode", "update_discrete", "event_iteration"),
    ModelExchangeDriver.__name__: (
        "set_time", "set_states", "get_states", "get_nominals", "me_eval",
        "completed_step", "enter_continuous_mode"),
    CoSimulationDriver.__name__: (
        "do_step", "cs_step", "enter_step_mode", "set_input_derivatives",
        "set_intermediate", "request_early_return"),
    ScheduledExecutionDriver.__name__: (
        "se_activate", "get_clocks", "get_intervals", "get_shifts", "set_intervals"),
}

#: The driver protocol as one tuple of names.
DRIVER_API: tuple[str, ...] = tuple(n for names in DRIVER_CALLS.values() for n in names)


def open_driver(spec: DriverSpec, *, call_log: Callable[[str], Any] | None = None) -> Driver:
    """The driver of ``spec`` in this process: its FMI version's calls on the loaded
    binary, under its interface's layer (not yet instantiated).

    Parameters
    ----------
    spec : DriverSpec
    call_log : callable, optional
        Receives every FMI call with its arguments and status, one line each.

    Raises
    ------
    FMUConfigError
        An FMI version or an interface that no class implements.
    FMUBinaryError
        The binary cannot be loaded or lacks an FMI function.
    """
    layer = Driver.layers.get(spec.interface)
    if layer is None:
        raise FMUConfigError(f"FMU '{spec.label}': no driver for interface "
                             f"{spec.interface!r} (drivers: {', '.join(Driver.layers)})")
    return layer(spec, FmiCalls.for_version(spec.fmi_major)(spec, call_log))


_ADDRESSES: dict = {}  #: id(binary) -> (the binary, {function: address}) (c_entry_points)


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
    known = _ADDRESSES.get(id(dll))
    if known is None or known[0] is not dll:  # addresses looked up once per loaded binary
        known = _ADDRESSES[id(dll)] = (dll, {})
    found = known[1]
    for n in names:
        if n not in found:
            found[n] = ctypes.cast(getattr(dll, n), ctypes.c_void_p).value
    return comp, {n: found[n] for n in names}
