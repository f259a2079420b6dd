"""The Co-Simulation slave inside FMUs exported by :func:`fmus.pyexport.export_python_fmu`.

An FMU made this way runs *our* simulator in the importing tool's process, through
pythonfmu's C wrapper: the target machine needs a CPython compatible with the one the
tool embeds, with ``cosim`` (this package) installed.  The slave rebuilds the diagram from
the model's modules bundled in the FMU (:mod:`fmus.pybundle`; an FMU exported before
bundling imports its ``"package.module:function"``), holds each input constant over a
communication step (FMI 2 Co-Simulation without input derivatives), and steps a
:class:`~cosim.Simulator` to the end of the step.  A model that cannot be built there (a
missing module) fails the instantiation with the reason, on stderr and in the FMU's log.

FMU variables: every exported scalar input (causality ``input``) and output (``output``)
of the diagram, with its unit; the scalar float parameters of the leaf blocks as tunable
parameters named ``<block path>.<parameter>`` (``/`` in paths becomes ``.``).  FMU state
(``canGetAndSetFMUstate``, ``canSerializeFMUstate``): a snapshot of the context and the
held inputs; serialized with :mod:`pickle` (only for FMUs you trust, like the model itself).

Limitations: scalar ports only (an array port is refused at export); inputs are held
over the step (no interpolation, no input derivatives); the internal solver is fixed at
export; no Model Exchange (pythonfmu has none for FMI 2).  Inherited from pythonfmu 0.7's
C wrapper (measured with fmpy and our importer): **one instance per process** - a second
instance in the same process, alive or after the first was freed, fails to instantiate
(the wrapper's class lookup: ``findClass ... module has no attribute``; a private copy of
the library does not help) or segfaults in the Python code it runs once numpy is
involved, and the FMU cannot be loaded again in a process after its library was
unloaded.  The export declares ``canBeInstantiatedOnlyOncePerProcess="true"``, so that
importers (ours: :meth:`fmus.fmu_file.FMUFile.check_instance`) do not spend that one
instance on a trial.  Run each instance in its own process, or use
the generated-C export (:mod:`fmus.cgen`), which has no such limits, or the FMI 3 export
(:mod:`fmus.pyslave3`), which runs several instances per process.

:class:`DiagramModel` is the part that does not depend on the FMI version (building the
diagram, holding inputs, stepping, FMU state); the FMI 3.0 slave
(:class:`fmus.pyslave3.CosimSlave3`, pythonfmu3) shares it, so this module imports
without pythonfmu.
"""

from __future__ import annotations

import importlib
import math
import pickle
from typing import Any
from xml.etree.ElementTree import Element, SubElement

import numpy as np

from cosim.errors import MissingExtraError
from cosim.time import to_ticks
from cosim.units import parse_unit

from .pybundle import CONFIG_FILE, load_diagram

try:
    from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real
except ImportError:  # the FMI 3 slave (fmus.pyslave3) uses DiagramModel without pythonfmu
    class Fmi2Slave:  # type: ignore[no-redef]
        """Stands in for pythonfmu's base class when pythonfmu is not installed."""

        def __init__(self, **kwargs: Any) -> None:
            raise MissingExtraError("fmus.pyslave.CosimSlave (FMI 2) needs pythonfmu: "
                                    "pip install 'cosim[fmi-export]'")


#: a model that cannot be built is also said on stderr (not while exporting: the export
#: reports it as its own error)
REPORT_TO_STDERR = True


def load_factory(target: str) -> Any:
    """The diagram built by ``"package.module:function"``."""
    mod_name, _, fn_name = target.partition(":")
    if not mod_name or not fn_name:
        raise ValueError(f"target must be 'package.module:function', got {target!r}")
    return getattr(importlib.import_module(mod_name), fn_name)()


def fmi_name(path: str) -> str:
    """A structured FMI variable name from a block path or port path."""
    return path.replace("/", ".")


def tunable_parameters(diagram: Any) -> list[tuple[str, Any]]:
    """``[(fmi name, parameter handle)]`` of the leaf blocks' scalar float parameters."""
    out = []
    for b in diagram.leaf_blocks():
        for h in b.parameters.values():
            if isinstance(h.default, float) and not isinstance(h.default, bool):
                out.append((fmi_name(f"{b.path}.{h.name}"), h))
    return out


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return bool(np.all(np.isfinite(value)))


class DiagramModel:
    """The FMI-version-independent core of the exported slaves (a mixin).

    :meth:`_build_model` rebuilds the diagram and its :class:`~cosim.Simulator`; the
    inputs are held in ``_inputs`` (set by the FMU setters) and fixed on the context
    at the start of every step (:meth:`_advance`); the FMU state is a context
    snapshot plus the held inputs.  The FMI 2 (:class:`CosimSlave`) and FMI 3
    (:class:`fmus.pyslave3.CosimSlave3`) slaves register the variables.
    """

    target: str = ""
    solver: str = "rk4"
    solver_dt: float | None = None

    model_config: dict | None = None

    def _build_model(self, resources: str | None) -> None:
        from cosim import Simulator
        self._configure(resources)
        import warnings

        from cosim.errors import CosimWarning
        try:
            with warnings.catch_warnings():  # the model's build notes were shown at export
                warnings.simplefilter("ignore", CosimWarning)
                if self.model_config and resources:  # the model's modules are in the FMU
                    d = load_diagram(resources, self.model_config)
                else:  # an FMU exported before bundling: the module must be importable
                    d = load_factory(self.target)
        except Exception as exc:
            # said on stderr too: a host without debug logging shows only "failed to
            # instantiate" (fmpy), and pythonfmu logs the exception only with logging on
            if REPORT_TO_STDERR:
                import sys
                print(f"cosim FMU: cannot build the model: {exc}", file=sys.stderr)
            raise
        self.diagram = d
        self.sim = Simulator(d, solver=self.solver,
                             dt=self.solver_dt if self.solver_dt else "advance", record=False)
        self.ctx = self.sim.ctx
        self._inputs: dict[str, Any] = {}
        self._outputs: dict[str, Any] = {}
        self._units: dict[str, str] = {}
        self._started = False
        self._inputs_changed = False

    def _set_input(self, name: str, value: Any) -> None:
        self._inputs[name] = value
        self._inputs_changed = True

    def _output(self, port: Any) -> Any:
        """An output's value for the inputs set last: after inputs changed since the
        step, the outputs are evaluated again (direct feedthrough, no state change)."""
        if self._inputs_changed and self._started:
            for name, v in self._inputs.items():
                self.ctx.fix_input(name, v)
            self.sim.evaluate_outputs()
            self._inputs_changed = False
        return self.ctx.output(port)

    def _configure(self, resources: str | None) -> None:
        """Read ``target``, ``solver``, ``solver_dt`` and where the bundled model is
        (``model``, :mod:`fmus.pybundle`) from the FMU's resources (``cosim_model.json``,
        written by the export) when there: the wrapper may instantiate this base class
        rather than the script's subclass."""
        import json
        import os
        if not resources:
            return
        path = os.path.join(resources, CONFIG_FILE)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                cfg = json.load(f)
            self.target, self.solver = cfg["target"], cfg["solver"]
            self.solver_dt = cfg["solver_dt"]
            self.model_config = cfg.get("model")

    def _start(self, t0: float) -> None:
        for name, v in self._inputs.items():
            self.ctx.fix_input(name, v)
        self.ctx.ticks = to_ticks(t0, "start time")
        self.ctx.time = self.ctx.mode_time = self.ctx.ticks * 1e-9
        self.sim.initialize()
        self._started = True

    def _advance(self, current_time: float, step_size: float) -> bool:
        """One communication step with the held inputs; False if an output is not finite."""
        if not self._started:
            self._start(current_time)
        for name, v in self._inputs.items():
            self.ctx.fix_input(name, v)
        self._inputs_changed = False
        end = to_ticks(current_time + step_size, "communication point")
        if end > self.ctx.ticks:
            self.sim.advance_to_ticks(end)
        return all(_finite(self.ctx.output(p)) for p in self._outputs.values())

    # ------------------------------------------------------------ state
    def _get_fmu_state(self) -> dict:
        return {"ctx": self.ctx.snapshot(), "inputs": dict(self._inputs),
                "started": self._started}

    def _set_fmu_state(self, state: dict) -> None:
        snap = state["ctx"]
        if isinstance(snap, dict):  # deserialized: the plain fields on a copy of ours
            data, snap = snap, self.ctx.snapshot()
            for f, v in data.items():
                setattr(snap, f, v)
        self.ctx.restore(snap)
        self._inputs = dict(state["inputs"])
        self._started = state["started"]
        self._inputs_changed = True

    #: the context fields a serialized state carries (no opaque states: refused)
    _FIELDS = ("ticks", "time", "mode_time", "xc", "xd", "params", "signals")

    @staticmethod
    def _fmu_state_to_bytes(state: dict) -> bytes:
        snap = state["ctx"]
        if snap._opaque:
            raise ValueError("cannot serialize: the diagram keeps opaque state (an FMU or a "
                             "device) outside the context")
        data = {f: getattr(snap, f) for f in DiagramModel._FIELDS}
        return pickle.dumps({**state, "ctx": data})

    @staticmethod
    def _fmu_state_from_bytes(state: bytes) -> dict:
        return pickle.loads(state)  # noqa: S301 - the FMU's own state


class CosimSlave(DiagramModel, Fmi2Slave):
    """pythonfmu slave running a cosim diagram (see the module docstring).

    The generated FMU script subclasses it and sets ``target``, ``solver_dt`` (the
    internal solver step, or None for one step per communication step), ``solver``.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._build_model(kwargs.get("resources"))
        d = self.diagram
        for name, port in d.inputs.items():
            if port.shape != ():
                raise ValueError(f"input '{name}' has shape {port.shape}: only scalar ports "
                                 "can be exported through pythonfmu")
            self._inputs[name] = 0.0
            self._units[name] = port.unit_text or ""
            self.register_variable(Real(
                name, causality=Fmi2Causality.input, variability=Fmi2Variability.continuous,
                getter=lambda n=name: self._inputs[n],
                setter=lambda v, n=name: self._set_input(n, float(v))))
        for name, port in d.outputs.items():
            if port.shape != ():
                raise ValueError(f"output '{name}' has shape {port.shape}: only scalar ports "
                                 "can be exported through pythonfmu")
            self._outputs[name] = port
            self._units[name] = port.unit_text or ""
            self.register_variable(Real(
                name, causality=Fmi2Causality.output, variability=Fmi2Variability.continuous,
                getter=lambda p=port: float(self._output(p))))
        for pname, h in tunable_parameters(d):
            self._units[pname] = getattr(h, "unit", None) or ""
            self.register_variable(Real(
                pname, causality=Fmi2Causality.parameter, variability=Fmi2Variability.tunable,
                getter=lambda h=h: float(self.ctx.param(h)),
                setter=lambda v, h=h: self.ctx.set_param(h, float(v))), nested=False)

    # ------------------------------------------------------------------ FMI
    def setup_experiment(self, start_time: float, stop_time: float | None,
                         tolerance: float | None) -> None:
        self._t0 = float(start_time or 0.0)

    def exit_initialization_mode(self) -> None:
        self._start(getattr(self, "_t0", 0.0))
        self._inputs_changed = False

    def do_step(self, current_time: float, step_size: float) -> bool:
        return self._advance(current_time, step_size)

    # ------------------------------------------------------- description
    def to_xml(self, model_options: dict | None = None) -> Element:
        """pythonfmu's description plus unit definitions, units on the variables and the
        ``InitialUnknowns`` of the outputs (fmpy's validation asks for them)."""
        root = super().to_xml(model_options or {})
        units = sorted({u for u in self._units.values() if u})
        if units:
            defs = Element("UnitDefinitions")
            for u in units:
                unit = SubElement(defs, "Unit", {"name": u})
                attrs = {k: (f"{v:.17g}" if isinstance(v, float) else str(v))
                         for k, v in parse_unit(u).to_fmi().items()
                         if v not in (0, 0.0) and not (k == "factor" and v == 1.0)}
                SubElement(unit, "BaseUnit", attrs)
            # schema order: CoSimulation, UnitDefinitions, ..., LogCategories, ...
            root.insert([c.tag for c in root].index("CoSimulation") + 1, defs)
        for sv in root.iter("ScalarVariable"):
            u = self._units.get(sv.get("name"))
            real = sv.find("Real")
            if u and real is not None:
                real.set("unit", u)
        structure = root.find("ModelStructure")
        outs = structure.find("Outputs")
        if outs is not None:
            init = SubElement(structure, "InitialUnknowns")
            for unk in outs:
                SubElement(init, "Unknown", {"index": unk.get("index")})
        return root
