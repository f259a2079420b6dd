"""The FMI 3.0 Co-Simulation slave inside FMUs made by ``export_python_fmu(..., fmi_version=3)``.

The same model as the FMI 2 slave (:mod:`fmus.pyslave`, whose :class:`DiagramModel`
this one shares): the FMU runs *our* simulator in the importing tool's process through
pythonfmu3's C wrapper, rebuilds the diagram from the model's modules bundled in the FMU
(:mod:`fmus.pybundle`), holds each input constant over a communication step and steps a
:class:`~cosim.Simulator` to its end.  The target machine needs a CPython the tool can
embed, with ``cosim`` installed (pythonfmu3 itself is shipped inside the FMU).

FMU variables
-------------
===============  ============  ==========================================================
``time``         independent   FMI 3 asks for exactly one independent variable [s]
each input       input         ``Float64`` (float port, with its unit), ``Int64``
                               (integer), ``Boolean`` (bool); an array port is an FMI 3
                               array (one ``Dimension`` per axis)
each output      output        as the inputs; ``ModelStructure`` lists the inputs each
                               output reads directly (the diagram's feedthrough), so an
                               importer needs no ``feedthrough`` override
``<block>.<p>``  parameter     the leaf blocks' scalar float parameters, ``tunable``
===============  ============  ==========================================================

Outputs read after inputs were set (an importer's refresh for direct feedthrough, e.g.
:meth:`fmus.FMUSubsystem.refresh_outputs`) are evaluated again for those inputs, without
changing the state.  FMU state (``canGetAndSetFMUState``, ``canSerializeFMUState``): as
for FMI 2, a context snapshot plus the held inputs, serialized with :mod:`pickle` (only
for FMUs you trust, like the model itself).

Start time: pythonfmu3 0.3.4's wrapper drops the ``startTime`` of
``fmi3EnterInitializationMode``.  The slave initializes at t = 0 when it leaves
initialization mode (the outputs read before the first step are those at t = 0) and,
when the first ``doStep`` starts at another time, starts again from the initial context
at that time (parameters set meanwhile are kept).  A diagram with opaque states (FMUs,
devices) that cannot be saved can only start at t = 0.

Limitations: inputs are held over the step (no intermediate update, no early return, no
event mode, no clocks); the internal solver is fixed at export; no Model Exchange (the
slave is a simulator with its own solver); integer and bool parameters are not exported;
ports of other dtypes (complex, object) are refused at export.

Instances per process, measured with pythonfmu3 0.3.4 (the FMU says
``canBeInstantiatedOnlyOncePerProcess="false"``): unlike pythonfmu 0.7 (FMI 2, one
instance per process), several instances run side by side in one process, with numpy:
in a Python host (fmpy, our importer; the wrapper then runs the model in the host's
interpreter) and in a C host with libpython loaded (the wrapper starts the interpreter
on a thread of its own), interleaved and bit-identical to the native run
(tests/system/test_fmu_python_export3.py).  Caveats, all of the wrapper:

* in a Python host, once the library was unloaded (fmpy's ``freeInstance`` does it,
  so does ``simulate_fmu``), the interpreter's exit may abort with glibc's "corrupted
  double-linked list": 5 of 60 processes that loaded and unloaded it twice, 2 of 60
  that did it once, 0 of 56 that never unloaded it, 0 of 30 that unloaded it twice and
  left with ``os._exit`` (measured before the slave pinned its library, see below; 0 of
  16 either way when measured again since).  Our importer never unloads an FMU's library;
* in a Python host the wrapper puts the FMU's resources folder first on ``sys.path`` and
  imports pythonfmu3 and the slave script from there, so the process later imports the
  FMU's copy of pythonfmu3 (without binaries: :func:`~fmus.pyexport.export_python_fmu`
  refuses to build with it);
* the Linux binary does not link libpython: a host that is not a Python process must
  load it globally (``LD_PRELOAD``), else ``dlopen`` fails on ``_Py_NoneStruct``.

Freeing in a C host (worked around here, :func:`finalize_before_extensions`): in a host
that is not a Python process the wrapper starts the interpreter itself and finalizes it
(``Py_Finalize`` on its own thread) from the C++ destructor of a static
``std::shared_ptr`` and from the library's ``__attribute__((destructor))``, i.e. from the
process's exit handlers.  These run in reverse order of registration, so the C++ static
destructors of every extension module the model imported later (scipy's ``_uarray``,
imported by ``cosim`` through ``scipy.fft``) have run before it: ``Py_Finalize`` then frees
their module state a second time and corrupts the heap (valgrind: ``globals_free`` reads
a block the static destructor freed), and the host segfaults after ``fmi3FreeInstance``
and correct results (rc 139; a trivial slave that imports no such module exits
cleanly).  The library destructor also reads the ``shared_ptr`` after its own destructor
ran.  The slave therefore registers the wrapper's exported
``finalizePythonInterpreter`` as an exit handler of its own, after the model's modules
are loaded, so the interpreter is finalized before their static destructors, as in a
Python process; the library is pinned (``RTLD_NODELETE``) so the handler's code stays
mapped.  Linux only (Windows unloads through ``DllMain``; untested there).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

import numpy as np
from pythonfmu3 import (
    Boolean,
    Dimension,
    Float64,
    Fmi3Causality,
    Fmi3Slave,
    Fmi3Variability,
    Int64,
    Unit,
)

from cosim.errors import ContextError
from cosim.time import to_ticks
from cosim.units import parse_unit

from .pyslave import DiagramModel, tunable_parameters

#: FMI 3 variable class and Python conversion per numpy dtype kind
_TYPES = {"f": (Float64, float), "i": (Int64, int), "u": (Int64, int), "b": (Boolean, bool)}


def port_type(port: Any) -> tuple[type, type]:
    """``(pythonfmu3 variable class, Python type)`` of a port, or ValueError."""
    try:
        return _TYPES[port.dtype.kind]
    except KeyError:
        raise ValueError(f"port '{port.name}' has dtype {port.dtype}: only float, integer "
                         "and bool ports can be exported to FMI 3") from None


def direct_feedthrough(diagram: Any) -> dict[str, set[str]]:
    """``{output: {inputs it reads without delay}}`` of a diagram's exported ports."""
    plan = diagram.compile()
    in_slot = {plan.root_input_slot[p]: n for n, p in diagram.inputs.items()}
    out = {}
    for name, port in diagram.outputs.items():
        stack, seen, found = [plan.output_slot[port]], set(), set()
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            if s in in_slot:
                found.add(in_slot[s])
            elif s in plan.producer:
                stack.extend(plan.producer[s].reads)
        out[name] = found
    return out


#: library path -> number of modules loaded when its exit handler was last registered
_EXIT_HANDLERS: dict[str, int] = {}


def finalize_before_extensions(resources: str | None) -> list[str]:
    """Register pythonfmu3's ``finalizePythonInterpreter`` of the FMU whose resources
    folder is ``resources`` as a C exit handler (see the module docstring); again when
    modules were imported since, so that it runs before their static destructors.

    Returns the libraries registered now (none off Linux, outside an FMU, or when
    nothing was imported since the last registration).
    """
    if not resources or not sys.platform.startswith("linux"):
        return []
    import ctypes
    done = []
    for lib in sorted((Path(resources).parent / "binaries").glob("*/*.so")):
        key = str(lib)
        if _EXIT_HANDLERS.get(key) == len(sys.modules):
            continue
        try:  # the FMU's own library, already loaded: pin it, never load another
            handle = ctypes.CDLL(key, mode=os.RTLD_NOLOAD | os.RTLD_NODELETE)
            fin = handle.finalizePythonInterpreter
        except (OSError, AttributeError):
            continue
        libc = ctypes.CDLL(None)
        if libc.__cxa_atexit(ctypes.cast(fin, ctypes.c_void_p), None, None) == 0:
            _EXIT_HANDLERS[key] = len(sys.modules)
            done.append(key)
    return done


class CosimSlave3(DiagramModel, Fmi3Slave):
    """pythonfmu3 slave running a cosim diagram (see the module docstring).

    The generated FMU script subclasses it (and names ``Fmi3Slave`` among its bases,
    which pythonfmu3 looks for) and sets ``target``, ``solver``, ``solver_dt`` and
    ``model_description``.
    """

    model_description: str = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._build_model(kwargs.get("resources"))
        finalize_before_extensions(kwargs.get("resources"))
        d = self.diagram
        self.description = self.model_description or f"cosim diagram {d.name}"
        # the model file's SIMULATION as the DefaultExperiment (pythonfmu3 sets the
        # attribute to None per instance, so the class's is copied here)
        self.default_experiment = getattr(type(self), "cosim_experiment", None)
        self._fresh: Any = None
        self._stepped = False
        names = set(d.inputs) | set(d.outputs)
        self.time_name = next(n for n in ("time", "time_", "cosim_time") if n not in names)
        self._add_unit("s")
        self.register_variable(Float64(
            self.time_name, causality=Fmi3Causality.independent,
            variability=Fmi3Variability.continuous, unit="s",
            getter=lambda: self.ctx.ticks * 1e-9), nested=False)
        for name, port in d.inputs.items():
            self._inputs[name] = port.zero()
            self._register_port(name, port, Fmi3Causality.input)
        for name, port in d.outputs.items():
            self._outputs[name] = port
            self._register_port(name, port, Fmi3Causality.output)
        for pname, h in tunable_parameters(d):
            unit = getattr(h, "unit", None) or None
            if unit:
                self._add_unit(unit)
            self.register_variable(Float64(
                pname, causality=Fmi3Causality.parameter, variability=Fmi3Variability.tunable,
                unit=unit, getter=lambda h=h: float(self.ctx.param(h)),
                setter=lambda v, h=h: self.ctx.set_param(h, float(v))), nested=False)

    def _add_unit(self, unit: str) -> None:
        if unit not in self.units:
            self.register_units([Unit(unit, **parse_unit(unit).to_fmi())])

    def _register_port(self, name: str, port: Any, causality: Fmi3Causality) -> None:
        cls, _ = port_type(port)
        getter, setter = self._accessors(name, port, causality)
        kw: dict[str, Any] = {}
        if port.shape:
            kw["dimensions"] = [Dimension(start=str(n)) for n in port.shape]
        if cls is Float64:
            variability = Fmi3Variability.continuous
            if port.unit_text:
                self._add_unit(port.unit_text)
                kw["unit"] = port.unit_text
        else:  # FMI 3: only floats are continuous
            variability = Fmi3Variability.discrete
        self.register_variable(cls(name, causality=causality, variability=variability,
                                   getter=getter, setter=setter, **kw), nested=False)

    def _accessors(self, name: str, port: Any, causality: Fmi3Causality) -> tuple:
        """``(getter, setter)`` of a port's variable (arrays travel as flat lists)."""
        _, conv = port_type(port)
        shape, dtype = port.shape, port.dtype
        if causality is Fmi3Causality.output:
            if shape:
                return (lambda: np.asarray(self._output(port), dtype).ravel().tolist()), None
            return (lambda: conv(self._output(port))), None
        if shape:
            return (lambda: self._inputs[name].ravel().tolist(),
                    lambda v: self._set_input(name, np.asarray(v, dtype).reshape(shape)))
        return (lambda: self._inputs[name]), (lambda v: self._set_input(name, conv(v)))

    # ------------------------------------------------------------------ FMI
    def terminate(self) -> None:
        # modules imported during the run: finalize before their static destructors too
        finalize_before_extensions(self.resources)

    def exit_initialization_mode(self) -> None:
        try:
            self._fresh = self.ctx.snapshot()
        except ContextError:  # opaque state without save hooks: start at t = 0 only
            self._fresh = None
        self._start(0.0)
        self._inputs_changed = False

    def do_step(self, current_time: float, step_size: float) -> bool:
        if not self._stepped and self._started:
            t = to_ticks(current_time, "communication point")
            if t != self.ctx.ticks:
                self._restart(current_time)
        self._stepped = True
        return self._advance(current_time, step_size)

    def _restart(self, t0: float) -> None:
        """Start again at ``t0`` (the wrapper did not pass the start time)."""
        if self._fresh is None:
            raise ValueError(f"the first step starts at t = {t0:g} s, but this diagram can "
                             "start only at t = 0 (pythonfmu3 does not pass the start time "
                             "and the diagram's opaque states cannot be reset)")
        params = list(self.ctx.params)
        self.ctx.restore(self._fresh)
        self.ctx.params = params
        self._start(t0)

    def _get_fmu_state(self) -> dict:
        state = super()._get_fmu_state()
        state["stepped"] = self._stepped
        return state

    def _set_fmu_state(self, state: dict) -> None:
        super()._set_fmu_state(state)
        self._stepped = state.get("stepped", True)

    # ------------------------------------------------------- description
    def to_xml(self, model_options: dict | None = None) -> Element:
        """pythonfmu3's description, with each output's dependencies (the inputs it
        reads directly) in ``ModelStructure``."""
        root = super().to_xml(model_options or {})
        feedthrough = direct_feedthrough(self.diagram)
        vrs = {v.name: v.value_reference for v in self.vars.values()}
        for out in root.find("ModelStructure").iter("Output"):
            name = self.vars[int(out.get("valueReference"))].name
            out.set("dependencies", " ".join(str(vrs[i]) for i in sorted(
                feedthrough[name], key=vrs.__getitem__)))
        return root
