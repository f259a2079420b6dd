"""A co-simulation master for an SSP: :func:`load_ssp` and :class:`SSPMaster`."""

from __future__ import annotations

import os
from typing import Any

from cosim.block import did_you_mean
from cosim.errors import BuildError
from cosim.master import MasterScheduler
from cosim.subsystem import Subsystem
from cosim.units import conversion

from ..archive import ArchiveLimits
from ..instance import check_value
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

    ``ssp`` is the :class:`SSPSystem`; ``aliases`` maps ``"<system>.<output connector>"``
    to the ``"component.port"`` it shows; :meth:`run` defaults to the SSP's
    ``DefaultExperiment`` and adds the aliases to the results.
    """

    def __init__(self, system: SSPSystem, subsystems: list, connections: list, step_s: float,
                 aliases: dict, **kw: Any) -> None:
        super().__init__(subsystems, connections, step_s, **kw)
        self.ssp = system
        self.aliases = dict(aliases)

    def run(self, t_end_s: float | None = None, t0_s: float | None = None) -> Any:
        """Co-simulate from ``t0_s`` to ``t_end_s`` (default: the DefaultExperiment)."""
        t0 = t0_s if t0_s is not None else (self.ssp.start or 0.0)
        t_end = t_end_s if t_end_s is not None else self.ssp.stop
        if t_end is None:
            raise BuildError(f"SSP system '{self.ssp.name}' has no DefaultExperiment stopTime; "
                             "give run(t_end_s)")
        res = super().run(t_end, t0)
        for alias, src in self.aliases.items():
            res.signals[alias] = res.signals[src]
            res.units[alias] = res.units[src]
        return res


def load_ssp(path: str | os.PathLike | SSPSystem, step_s: float | None = None, *,
             inputs: dict | None = None, options: dict | None = None,
             limits: ArchiveLimits | None = None, **master_kw: Any) -> SSPMaster:
    """A co-simulation master for the SSP at ``path`` (or an :class:`SSPSystem`).

    Parameters
    ----------
    path : path-like or SSPSystem
    step_s : float, optional
        Macro step (default: the cosim annotation, else the smallest FMU
        ``DefaultExperiment/@stepSize``).
    inputs : dict, optional
        ``{system input connector: constant value}`` overriding the bound values (an
        unbound system input gives each FMU input it feeds that input's start value).
    options : dict, optional
        ``{component: {FMUSubsystem option: value}}`` (``feedthrough``, ``out_of_process``...).
    **master_kw
        Passed to :class:`~cosim.master.MasterScheduler` (``coupling``, ``extrapolation``...).
    """
    system = path if isinstance(path, SSPSystem) else read_ssp(path, limits=limits)
    from ..subsystem import FMUSubsystem
    label = system.source.name if system.source else system.name
    unknown = set(options or {}) - set(system.components)
    if unknown:
        raise SSPError(f"load_ssp('{label}'): options name unknown component(s) "
                       f"{', '.join(sorted(unknown))}; "
                       + did_you_mean(sorted(unknown)[0], system.components))
    bad = set(inputs or {}) - {c.name for c in system.connectors if c.kind == "input"}
    if bad:
        raise SSPError(f"load_ssp('{label}'): inputs names {', '.join(sorted(bad))}, not an "
                       "input connector of the system; "
                       + did_you_mean(sorted(bad)[0], [c.name for c in system.connectors
                                                       if c.kind == "input"]))
    subs, by_name = [], {}
    for comp in system.components.values():
        if comp.fmu is None:
            raise SSPError(f"load_ssp('{label}'): component '{comp.name}' has no loaded FMU; "
                           "read the SSP with load_fmus=True")
        info = comp.fmu.info
        params = {k: v for k, v in comp.parameters.items()
                  if info.by_name[k].causality in ("parameter", "structuralParameter")}
        sub = FMUSubsystem(comp.fmu, comp.name, parameters=params,
                           **(options or {}).get(comp.name, {}))
        for k, v in comp.parameters.items():  # start values of inputs, states, ...
            if k not in params:
                sub.params[info.by_name[k]] = v
        subs.append(sub)
        by_name[comp.name] = sub
    src_name = system.name or "system"
    while src_name in by_name:
        src_name += "_system"
    consts, units, conns, aliases = {}, {}, [], {}
    fed = set()
    for c in system.connections:
        if c.end[0] is None:  # component output -> system output: an alias in the results
            sub = by_name[c.start[0]]
            aliases[f"{src_name}.{c.end[1]}"] = f"{c.start[0]}.{sub.info.by_name[c.start[1]].port}"
            continue
        dsub = by_name[c.end[0]]
        dvar = dsub.info.by_name[c.end[1]]
        dst = f"{c.end[0]}.{dvar.port}"
        fed.add(dst)
        if c.start[0] is None:  # system input -> component input: a constant
            given = inputs or {}
            value = given.get(c.start[1], system.inputs.get(c.start[1], dvar.start))
            out = c.start[1] if c.start[1] not in consts else f"{c.start[1]}.{dst}"
            consts[out] = check_value(dvar, value, f"system input '{c.start[1]}'")
            units[out] = dvar.unit
            conns.append((f"{src_name}.{out}", dst) + ((c.transform,) if c.transform else ()))
            continue
        ssub = by_name[c.start[0]]
        svar = ssub.info.by_name[c.start[1]]
        src = f"{c.start[0]}.{svar.port}"
        tr = c.transform
        if c.suppress_unit_conversion:  # undo the master's unit conversion
            scale, bias = conversion(svar.unit, dvar.unit)
            f, o = tr or (1.0, 0.0)
            tr = (f / scale, (o - bias) / scale) if (scale, bias) != (1.0, 0.0) else tr
        conns.append((src, dst, tr) if tr is not None else (src, dst))
    for sub in subs:  # unconnected inputs keep their start (or bound) value
        for v in sub.in_vars:
            dst = f"{sub.name}.{v.port}"
            if dst not in fed:
                consts[dst] = sub.params.get(v, v.start)
                units[dst] = v.unit
                conns.append((f"{src_name}.{dst}", dst))
    if consts:
        subs.append(_Sources(src_name, consts, units))
    if step_s is None:
        step_s = system.step_s
    if step_s is None:
        steps = [c.fmu.info.default_experiment.get("stepSize")
                 for c in system.components.values()]
        steps = [s for s in steps if s]
        step_s = min(steps) if steps else None
    if step_s is None:
        raise SSPError(f"load_ssp('{label}'): no macro step: the SSP has no cosim annotation "
                       "and no FMU gives a DefaultExperiment stepSize; give step_s=")
    return SSPMaster(system, subs, conns, step_s, aliases, **master_kw)

