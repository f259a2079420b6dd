"""What every FMU wrapper does first: :func:`open_instance`.

The three wrappers (:class:`~fmus.fmu_block.FMUBlock` for Model Exchange,
:class:`~fmus.scheduled.FMUScheduledBlock` for Scheduled Execution and
:class:`~fmus.subsystem.FMUSubsystem` for Co-Simulation) open their FMU the same way:
load it, check that it offers the interface (and, for ME and CS, that it declares no
input or output clock), check its instantiation token, name the wrapper, make its
:class:`~fmus.instance.FMUInstance` (a call log given as a path appends to that file),
and check the ``parameters=`` and ``start=`` values against the model description (a
parameter given different values in both is refused).  :func:`open_instance` does this
once and hands back an :class:`Opened`; each wrapper then declares what is its own.

The two blocks also declare their parameters and their data input ports the same way:
:func:`declare_parameters` and :func:`declare_inputs`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import FMUConfigError
from .fmu_file import FMUFile, as_fmu, default_name
from .instance import (
    FMUInstance,
    check_parameters,
    check_start,
    check_value,
    differs,
    port_dtype,
)
from .se_clocks import check_no_clocks

__all__ = ["Opened", "declare_inputs", "declare_parameters", "open_instance"]

_PARAMETER = ("parameter", "structuralParameter")


@dataclass
class Opened:
    """An FMU opened for one wrapper (:func:`open_instance`)."""

    #: the FMU and its model description (``fmu.info``)
    fmu: FMUFile
    info: Any
    #: the capability flags of the interface (``info.interfaces[interface]``)
    caps: dict
    #: the wrapper's name, and how messages name it (``"block 'x'"``)
    name: str
    owner: str
    #: the FMU instance (instantiated at its first ``start()``)
    inst: FMUInstance
    #: the parameter values given (``parameters=``, and ``start=`` values of parameters)
    params: dict
    #: every checked ``start=`` value, by variable
    starts: dict

    def other_starts(self, inputs: bool = False) -> dict:
        """The ``start=`` values of variables that are not parameters (set before
        initialization), those of inputs included only when ``inputs``."""
        skip = _PARAMETER if inputs else _PARAMETER + ("input",)
        return {v: x for v, x in self.starts.items() if v.causality not in skip}


def open_instance(fmu: FMUFile | str | os.PathLike, interface: str, name: str | None, *,
                  kind: str, check: bool = True, parameters: dict | None = None,
                  start: dict | None = None, out_of_process: bool = False,
                  timeout_s: float | None = 10.0, call_log: Any = None,
                  logging_on: bool = False,
                  driver_options: Callable[[Any, dict], dict] | None = None) -> Opened:
    """Open ``fmu`` for ``interface`` (``"ModelExchange"``, ``"CoSimulation"`` or
    ``"ScheduledExecution"``) as the wrapper ``name`` of ``kind`` (``"block"``,
    ``"subsystem"``: how messages name it).

    ``check``: check the instantiation token now (:meth:`FMUFile.check_instance`), so a
    wrong token is a build error, not a failure at the first step.
    ``driver_options(info, caps)``: further keyword arguments of the
    :class:`~fmus.instance.FMUInstance` (Co-Simulation's early return, event mode,
    intermediate update).  The other arguments are the wrappers' own.
    """
    fmu = as_fmu(fmu)
    fmu.interface(interface)
    if check:  # the instantiation token now, not at the first step
        fmu.check_instance(interface, out_of_process=out_of_process, timeout_s=timeout_s)
    if interface != "ScheduledExecution":
        check_no_clocks(fmu, interface)  # FMI 3 clocks: Scheduled Execution only
    info = fmu.info
    caps = info.interfaces[interface]
    name = name or default_name(fmu)
    owner = f"{kind} '{name}'"
    options = driver_options(info, caps) if driver_options is not None else {}
    inst = FMUInstance(fmu, interface, name, out_of_process=out_of_process,
                       timeout_s=timeout_s, call_log=_call_log(call_log),
                       logging_on=logging_on, **options)
    params = check_parameters(fmu, parameters, owner)
    starts = check_start(fmu, start, owner)
    twice = [v.name for v in params if v in starts and differs(params[v], starts[v])]
    if twice:
        raise FMUConfigError(f"{owner}: {', '.join(map(repr, twice))} given different "
                             "values in parameters= and start=; give each once")
    params.update({v: x for v, x in starts.items() if v.causality in _PARAMETER})
    return Opened(fmu, info, caps, name, owner, inst, params, starts)


def _call_log(call_log: Any) -> Any:
    """The call log as a callable (a path: append each line to that file)."""
    if not isinstance(call_log, (str, os.PathLike)):
        return call_log
    path = os.fspath(call_log)

    def append(line: str, path: str = path) -> None:
        with open(path, "a") as fh:
            fh.write(line + "\n")
    return append


def declare_parameters(block: Any, op: Opened) -> list:
    """A block parameter per FMU parameter of a settable type that has a value (its start
    value, or the one given); returns ``[(variable, handle)]``."""
    out = []
    for v in op.info.parameters:
        if v.kind not in ("real", "int", "bool", "string") and v.type != "Binary":
            continue
        default = op.params.get(v, v.start)
        if default is None:
            continue
        h = block.declare_parameter(v.port, default, unit=v.unit,
                                    validate=lambda val, v=v: check_value(v, val, op.owner))
        out.append((v, h))
    return out


def declare_inputs(block: Any, op: Opened, variables: list,
                   fill: Callable[[Any], Any] | None = None) -> dict:
    """An input port per FMU input of ``variables``, whose value when unconnected is its
    start value (the ``start=`` one, or the model description's; without either
    ``fill(variable)``, or none); returns ``{variable: port}``."""
    ports = {}
    for v in variables:
        default = op.starts.get(v, v.start)
        if default is not None:
            default = check_value(v, default, op.owner)
        elif fill is not None:
            default = fill(v)
        ports[v] = block.declare_input(v.port, shape=v.shape, dtype=port_dtype(v),
                                       unit=v.unit, description=v.description,
                                       default=default)
    return ports
