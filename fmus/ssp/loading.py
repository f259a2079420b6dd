"""A co-simulation master for an SSP: :func:`load_ssp` and :class:`SSPMaster`."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from cosim.block import did_you_mean
from cosim.errors import BuildError
from cosim.master import MasterScheduler
from cosim.subsystem import Subsystem
from cosim.units import conversion

from ..archive import ArchiveLimits
from ..instance import check_value
from .me_units import build_unit
from .model import SSPError, SSPSystem
from .reading import read_ssp


class _Sources(Subsystem):
    """Constant outputs: the system's input connectors and the unconnected FMU inputs."""

    can_save_state = True

    def __init__(self, name: str, values: dict, units: dict) -> None:
        self.name = name
        self.input_names = []
        self.output_names = list(values)
        self.values = dict(values)
        self.shapes = {k: () for k in values}
        self.units = dict(units)

    def initialize(self, t0_ticks: int) -> None:
        pass

    def set_inputs(self, t0: float, polys: dict) -> None:
        pass

    def do_step(self, t0_ticks: int, h_ticks: int) -> None:
        pass

    def get_outputs(self) -> dict:
        return dict(self.values)

    def refresh_outputs(self) -> None:
        pass

    def feedthrough(self) -> dict:
        return {o: set() for o in self.output_names}

    def save_state(self) -> Any:
        return None

    def restore_state(self, token: Any) -> None:
        pass


class SSPMaster(MasterScheduler):
    """A :class:`~cosim.master.MasterScheduler` made by :func:`load_ssp`.

    ``ssp`` is the :class:`SSPSystem`; ``aliases`` maps names shown in the results to
    ``("subsystem.port", scale, bias)``: the system outputs ``"<system>.<connector>"``
    (``scale * value + bias``: the connection's transformation and unit conversion) and
    each output of a Model Exchange component as ``"<component>.<port>"``;
    ``ports`` maps ``(component, FMU variable)`` to the master's ``"subsystem.port"``.
    :meth:`run` defaults to the SSP's ``DefaultExperiment`` and adds the aliases to the
    results.
    """

    def __init__(self, system: SSPSystem, subsystems: list, connections: list, step_s: float,
                 aliases: dict, ports: dict, **kw: Any) -> None:
        super().__init__(subsystems, connections, step_s, **kw)
        self.ssp = system
        self.aliases = dict(aliases)
        self.ports = dict(ports)

    def run(self, t_end_s: float | None = None, t0_s: float | None = None) -> Any:
        """Co-simulate from ``t0_s`` to ``t_end_s`` (default: the DefaultExperiment)."""
        t0 = t0_s if t0_s is not None else (self.ssp.start or 0.0)
        t_end = t_end_s if t_end_s is not None else self.ssp.stop
        if t_end is None:
            raise BuildError(f"SSP system '{self.ssp.name}' has no DefaultExperiment stopTime; "
                             "give run(t_end_s)")
        res = super().run(t_end, t0)
        for alias, (src, scale, bias, unit) in self.aliases.items():
            x = res.signals[src]
            res.signals[alias] = x if (scale, bias) == (1.0, 0.0) else \
                scale * np.asarray(x, dtype=float) + bias
            res.units[alias] = res.units[src] if unit is None else unit
        return res


def _check_names(label: str, system: SSPSystem, options: dict | None, solvers: dict | None,
                 inputs: dict | None) -> None:
    unknown = set(options or {}) - set(system.components)
    if unknown:
        raise SSPError(f"load_ssp('{label}'): options name unknown component(s) "
                       f"{', '.join(sorted(unknown))}; "
                       + did_you_mean(sorted(unknown)[0], system.components))
    unknown = set(solvers or {}) - set(system.solvers)
    if unknown:
        raise SSPError(f"load_ssp('{label}'): solvers name unknown Model Exchange unit(s) "
                       f"{', '.join(sorted(unknown))}; "
                       + did_you_mean(sorted(unknown)[0], system.solvers))
    bad = set(inputs or {}) - {c.name for c in system.connectors if c.kind == "input"}
    if bad:
        raise SSPError(f"load_ssp('{label}'): inputs names {', '.join(sorted(bad))}, not an "
                       "input connector of the system; "
                       + did_you_mean(sorted(bad)[0], [c.name for c in system.connectors
                                                       if c.kind == "input"]))


def load_ssp(path: str | os.PathLike | SSPSystem, step_s: float | None = None, *,
             inputs: dict | None = None, options: dict | None = None,
             solvers: dict | None = None, limits: ArchiveLimits | None = None,
             **master_kw: Any) -> SSPMaster:
    """A co-simulation master for the SSP at ``path`` (or an :class:`SSPSystem`).

    Parameters
    ----------
    path : path-like or SSPSystem
    step_s : float, optional
        Macro step (default: the annotation's, cosim's or OMSimulator's, else the
        smallest ``DefaultExperiment/@stepSize`` of the Co-Simulation FMUs, else, when all
        components run through Model Exchange, the smallest step of their solvers).
    inputs : dict, optional
        ``{system input connector: constant value}`` overriding the bound values (an
        unbound system input gives each FMU input it feeds that input's start value).
    options : dict, optional
        ``{component: {option: value}}``: :class:`~fmus.subsystem.FMUSubsystem` options
        (``feedthrough``, ``out_of_process``...) of a Co-Simulation component,
        :class:`~fmus.fmu_block.FMUBlock` options of a Model Exchange one.
    solvers : dict, optional
        ``{Model Exchange unit: {DiagramSubsystem option: value}}`` (``solver``, ``dt``,
        ``rtol``...) overriding the unit's solver settings.
    **master_kw
        Passed to :class:`~cosim.master.MasterScheduler` (``coupling``, ``extrapolation``,
        ``step_control``...).
    """
    system = path if isinstance(path, SSPSystem) else read_ssp(path, limits=limits)
    from ..subsystem import FMUSubsystem
    label = system.source.name if system.source else system.name
    _check_names(label, system, options, solvers, inputs)
    subs, by_name, ports, aliases = [], {}, {}, {}
    for comp in system.components.values():
        if comp.fmu is None:
            raise SSPError(f"load_ssp('{label}'): component '{comp.name}' has no loaded FMU; "
                           "read the SSP with load_fmus=True")
        if comp.unit is not None:
            continue
        info = comp.fmu.info
        params = {k: v for k, v in comp.parameters.items()
                  if info.by_name[k].causality in ("parameter", "structuralParameter")}
        opts = dict((options or {}).get(comp.name, {}))
        if system.tolerance is not None:
            opts.setdefault("tolerance", system.tolerance)
        starts = {k: v for k, v in comp.parameters.items() if k not in params}
        if starts:  # start values of inputs, states, ... set before initialization
            opts["start"] = {**starts, **opts.get("start", {})}
        sub = FMUSubsystem(comp.fmu, comp.name, parameters=params, **opts)
        subs.append(sub)
        by_name[comp.name] = sub
        for v in sub.in_vars + sub.out_vars:
            ports[(comp.name, v.name)] = f"{comp.name}.{v.port}"
    for unit, solver in system.solvers.items():
        comps = [c for c in system.components.values() if c.unit == unit]
        opts = {**solver.options(), **(solvers or {}).get(unit, {})}
        try:
            sub, uports = build_unit(label, unit, comps, system, options or {}, opts)
        except BuildError as exc:
            exc.add_note(f"(Model Exchange unit '{unit}' of SSP '{label}': "
                         f"{', '.join(c.name for c in comps)}; solver {opts} from "
                         f"{solver.origin})")
            raise
        if unit in by_name:
            raise SSPError(f"load_ssp('{label}'): Model Exchange unit '{unit}' has the name of "
                           "a component")
        subs.append(sub)
        by_name[unit] = sub
        for key, port in uports.items():
            ports[key] = f"{unit}.{port}"
            var = system.components[key[0]].fmu.info.by_name[key[1]]
            if var.causality == "output":
                aliases[f"{key[0]}.{var.port}"] = (f"{unit}.{port}", 1.0, 0.0, None)
    src_name = system.name or "system"
    while src_name in by_name:
        src_name += "_system"
    consts, units, conns = {}, {}, []
    fed = set()
    given = inputs or {}
    internal = {(c.start, c.end) for c in system.connections
                if c.start[0] and c.end[0] and system.components[c.start[0]].unit is not None
                and system.components[c.start[0]].unit == system.components[c.end[0]].unit}
    for c in system.connections:
        if (c.start, c.end) in internal:
            fed.add((c.end[0], c.end[1]))
            continue
        if c.end[0] is None:  # component output -> system output: an alias in the results
            src = ports[(c.start[0], c.start[1])]
            total = _total(system, c)
            decl = system.connector(c.end[1])
            aliases[f"{src_name}.{c.end[1]}"] = (src, total[0], total[1],
                                                  None if total == (1.0, 0.0) or decl is None
                                                  else decl.unit)
            continue
        dst = ports[(c.end[0], c.end[1])]
        dvar = system.components[c.end[0]].fmu.info.by_name[c.end[1]]
        if c.start[0] is None:  # system input -> component input: a constant
            name = c.start[1]
            if name not in given and name not in system.inputs:
                continue  # unbound: the FMU input keeps its start value (below)
            fed.add((c.end[0], c.end[1]))
            if name not in consts:
                value = given.get(name, system.inputs.get(name))
                decl = system.connector(name)
                consts[name] = float(value) if decl is not None and decl.unit else check_value(
                    dvar, value, f"system input '{name}'")
                units[name] = system.end_unit(c.start)
            tr = system.master_transform(c)
            conns.append((f"{src_name}.{name}", dst) + ((tr,) if tr else ()))
            continue
        fed.add((c.end[0], c.end[1]))
        src = ports[(c.start[0], c.start[1])]
        tr = system.master_transform(c)
        conns.append((src, dst, tr) if tr is not None else (src, dst))
    for comp in system.components.values():  # unconnected inputs keep start (or bound) values
        for v in comp.fmu.info.inputs:
            key = (comp.name, v.name)
            if key in fed or key not in ports:
                continue
            out = f"{comp.name}.{v.port}"
            consts[out] = check_value(v, comp.parameters.get(v.name, v.start)
                                      if v.start is not None or v.name in comp.parameters
                                      else 0, f"component '{comp.name}'")
            units[out] = v.unit
            conns.append((f"{src_name}.{out}", ports[key]))
    if consts:
        subs.append(_Sources(src_name, consts, units))
    step_s = _macro_step(label, system, step_s, master_kw)
    return SSPMaster(system, subs, conns, step_s, aliases, ports, **master_kw)


def _total(system: SSPSystem, c: Any) -> tuple:
    """``(a, b)``: the end gets ``a * source + b`` (unit conversion included)."""
    f, o = c.transform or (1.0, 0.0)
    if c.suppress_unit_conversion:
        return (f, o)
    s0, b0 = conversion(system.end_unit(c.start), system.end_unit(c.end))
    return (f * s0, f * b0 + o)


def _macro_step(label: str, system: SSPSystem, step_s: float | None, master_kw: dict) -> float:
    if system.step_control is not None and step_s is None and "step_control" not in master_kw:
        from cosim.step_control import StepController
        sc = system.step_control
        kw = {k: v for k, v in (("rtol", sc.get("rtol")), ("h_min_s", sc.get("h_min")),
                                ("h_max_s", sc.get("h_max"))) if v}
        master_kw["step_control"] = StepController("extrapolation", **kw)
        step_s = sc.get("h0") or sc.get("h_max")
    if step_s is None:
        step_s = system.step_s
    if step_s is None:
        steps = [c.fmu.info.default_experiment.get("stepSize")
                 for c in system.components.values() if c.unit is None]
        steps = [s for s in steps if s]
        step_s = min(steps) if steps else None
    if step_s is None and all(c.unit is not None for c in system.components.values()):
        # only Model Exchange units (e.g. OMSimulator's strongly coupled top-level system):
        # communicate at their smallest solver step
        steps = [s.dt or s.max_step for s in system.solvers.values() if s.dt or s.max_step]
        step_s = min(steps) if steps else None
    if step_s is None:
        raise SSPError(f"load_ssp('{label}'): no macro step: the SSP has no step annotation "
                       "(cosim's or OMSimulator's), no Co-Simulation FMU gives a "
                       "DefaultExperiment stepSize and no Model Exchange solver a step; give "
                       "step_s=")
    return step_s
