"""Model Exchange units: ME components integrated together as one master subsystem.

The components of one unit (see :func:`~fmus.ssp.flatten.assign_units`) become
:class:`~fmus.fmu_block.FMUBlock` s in one block diagram; the connections between them
are wired inside it (no co-simulation delay: the solver sees one ODE), a transformation
as an affine :class:`~cosim.function_block.FunctionBlock`.  Every other input of the
blocks is exported (the master feeds it, or a constant holds its start value), every
output is exported too.  The diagram runs as a :class:`~cosim.subsystem.DiagramSubsystem`
with the unit's solver.

Port names of the subsystem are ``<block>__<port>`` (``<block>`` the component's name
with ``/`` and other characters that names cannot hold replaced by ``_``); the results
also show each output as ``"<component>.<port>"``, as for a Co-Simulation component.

Start values: parameters go to the block's ``parameters``, every other bound value (a
state's, an input's, a local's with ``initial="exact"``) to its ``start`` (set before the
FMU's initialization).
"""

from __future__ import annotations

import re
from typing import Any

from .model import SSPError, SSPSystem


def ident(name: str, taken: set) -> str:
    """``name`` as a block/diagram name (letters, digits, ``_``), unique in ``taken``."""
    out = re.sub(r"\W", "_", name.replace("/", "__"))
    if not out or not (out[0].isalpha() or out[0] == "_"):
        out = "c_" + out
    base, k = out, 1
    while out in taken:
        k += 1
        out = f"{base}_{k}"
    taken.add(out)
    return out


def build_unit(label: str, unit: str, comps: list, system: SSPSystem, block_options: dict,
               solver_options: dict) -> tuple[Any, dict]:
    """The :class:`~cosim.subsystem.DiagramSubsystem` of one unit and its port map.

    Returns ``(subsystem, {(component, FMU variable name): subsystem port})`` for the
    inputs the master must feed and for every output.
    """
    from cosim.diagram import DiagramBuilder
    from cosim.function_block import FunctionBlock
    from cosim.subsystem import DiagramSubsystem

    from ..fmu_block import FMUBlock
    taken: set = set()
    b = DiagramBuilder(ident(unit, set()))
    blocks: dict = {}
    for comp in comps:
        info = comp.fmu.info
        params = {k: v for k, v in comp.parameters.items()
                  if info.by_name[k].causality in ("parameter", "structuralParameter")}
        opts = dict(block_options.get(comp.name, {}))
        starts = {k: v for k, v in comp.parameters.items() if k not in params}
        if starts:
            opts["start"] = {**starts, **opts.get("start", {})}
        blk = FMUBlock(comp.fmu, ident(comp.name, taken), parameters=params, **opts)
        b.add(blk)
        blocks[comp.name] = blk
    fed = set()
    for k, c in enumerate(system.connections):
        if c.start[0] not in blocks or c.end[0] not in blocks:
            continue
        sblk, dblk = blocks[c.start[0]], blocks[c.end[0]]
        svar = sblk.info.by_name[c.start[1]]
        dvar = dblk.info.by_name[c.end[1]]
        tr = system.master_transform(c)
        src = sblk.output(svar.port)
        if tr is not None:  # the master's convention: (factor, offset) in the source unit
            spec = [("u", svar.unit)] if svar.unit else ["u"]
            out = [("y", svar.unit)] if svar.unit else ["y"]
            fb = b.add(FunctionBlock(ident(f"map_{k}_{sblk.name}_{dblk.name}", taken),
                                     lambda x, f=tr[0], o=tr[1]: f * x + o, spec, out))
            b.connect(src, fb.input("u"))
            src = fb.output("y")
        b.connect(src, dblk.input(dvar.port))
        fed.add((c.end[0], c.end[1]))
    ports: dict = {}
    for comp in comps:
        blk = blocks[comp.name]
        for v in blk.in_vars:
            if (comp.name, v.name) not in fed:
                ports[(comp.name, v.name)] = b.export_input(blk.input(v.port),
                                                            f"{blk.name}__{v.port}")
        for v in blk.out_vars:
            ports[(comp.name, v.name)] = b.export_output(blk.output(v.port),
                                                         f"{blk.name}__{v.port}")
    if not any(blocks[c.name].out_vars for c in comps):
        raise SSPError(f"load_ssp('{label}'): Model Exchange unit '{unit}' "
                       f"({', '.join(c.name for c in comps)}) has no outputs to exchange")
    diagram = b.build()
    sub = DiagramSubsystem(diagram, name=diagram.name, **solver_options)
    sub.name = unit  # the SSP's name (DiagramSubsystem builds with an identifier)
    return sub, ports
