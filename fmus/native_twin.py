r"""A native subsystem in the compiled master loop: its diagram's C twin.

The compiled macro-step loop (:mod:`fmus.compiled_master`) calls FMUs' C functions.  A
:class:`~cosim.subsystem.DiagramSubsystem` (a native diagram with its own fixed-step solver,
say a controller beside FMUs) takes part through its **twin**: the same diagram generated as
C by the FMU export (:func:`fmus.export.generate`: the same plan, evaluation order, fused
linear groups, sample hits and Runge-Kutta stepping as the Simulator), compiled as an FMI 2
Co-Simulation binary that follows the input polynomial (``canInterpolateInputs``, orders
1-3), loaded in this process and stepped by the loop like any FMU.

The Python subsystem stays the master's: the twin holds its state only while the compiled
loop runs.  :meth:`NativeTwin.push` copies the subsystem's state into the twin's C state
(time, continuous and discrete states, every signal: held outputs of sampled blocks are
state too; the parameters are the twin's own, generated from the subsystem's) before the
loop takes over; :meth:`NativeTwin.pull` copies it back when the loop hands over (end of a
run, a stepper's ``sync``), so a later Python step, a rollback or a second run goes on from
where the C loop stopped.

Cache: the generated source is made from the diagram's default states and the subsystem's
current parameters; the binary is kept in the cache folder of :mod:`cosim.codegen.cache` (trusted
folders only) under the hash of the source, the flags and the compiler, so a second master of
the same diagram loads it without compiling.  Changed parameters make a new twin.

Equality: the twin's arithmetic is the Simulator's in C, but not always in the same order
(NumPy's matrix products against straight-line sums; the input polynomial as a Taylor series
of derivatives against the Simulator's coefficients), so results agree with the Python loop
to round-off (tested to 1e-12 relative to each signal's range), not bit for bit.

Limitations
-----------
* Fixed-step explicit Runge-Kutta solvers (rk4, heun, midpoint, euler) with a fixed ``dt``;
  no ``dt="advance"``, observers or manipulators on the subsystem's Simulator.
* What :mod:`fmus.cgen` can generate: no Python blocks (a ``FunctionBlock`` whose function
  does not translate, ...), no zero crossings, no time-event handlers, no opaque states (an
  FMU block inside the diagram); the reason names the block, and the master runs the Python
  loop.
* Scalar ports of float dtype (an array or integer port keeps the Python loop).
* Needs a C compiler on the first use of a diagram (then the cache).
"""

from __future__ import annotations

import copy
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from cosim.codegen.cache import cache_folders, compiler_command, trusted
from cosim.codegen.model import CodegenError
from cosim.codegen.state import LAYOUT_C, StateMap, state_type
from cosim.compiled_run import same_params
from cosim.errors import BuildError

from .cgen.build import CFLAGS, INCLUDE

__all__ = ["CompilerFailed", "NativeTwin", "twin_reason"]


class CompilerFailed(BuildError):
    """The twin's C could not be compiled (no compiler, a failing one, no cache folder): a
    problem of the machine, not of the diagram (the master warns about it once)."""

_SOLVERS = ("rk4", "heun", "midpoint", "euler")
_C = ctypes.c_double
#: appended to the twin's one translation unit: where the live C state is (its layout:
#: :data:`cosim.codegen.state.LAYOUT_C`)
_ACCESS = r"""
ModelState *cosim_twin_state(fmi2Component c) { return &((Instance *)c)->m.st; }
""" + LAYOUT_C


def twin_reason(sub: Any) -> str:
    """Why ``sub`` (not an FMU) cannot have a C twin ('' when it may: the generation can still
    name a block without a C form)."""
    from cosim.subsystem import DiagramSubsystem
    if not isinstance(sub, DiagramSubsystem):
        return f"subsystem '{sub.name}' ({type(sub).__name__}) is neither an FMU nor a diagram"
    sim = sub.sim
    if sim.solver_name not in _SOLVERS or not sim.fixed or not sim.grid.ticks:
        how = "" if sim.grid.ticks else (" with dt='advance'" if sim.grid.argument == "advance"
                                          else " without a fixed dt")
        return (f"subsystem '{sub.name}' runs solver '{sim.solver_name}'{how} (its C twin "
                f"integrates with {', '.join(_SOLVERS)} at a fixed dt)")
    if [o for o in sim.observers if o is not sim.recorder] or sim.manipulators:
        return f"subsystem '{sub.name}' has observers or manipulators (Python callbacks)"
    bad = [n for n, p in sub.shapes.items() if p != ()] + \
        [n for n, d in sub.dtypes.items() if np.dtype(d).kind != "f"]
    if bad:
        return (f"subsystem '{sub.name}' has array or non-float ports ({', '.join(bad)}); its "
                "C twin has scalar Real ports")
    return ""


class NativeTwin:
    """The C twin of the :class:`~cosim.subsystem.DiagramSubsystem` ``sub`` (module
    docstring), opened as an FMU by ``opener`` (:class:`fmus.importer.FMU`, passed in: the
    importer's modules import the compiled loop that makes twins); raises
    :class:`BuildError` saying why there is none.

    ``fmu`` is the twin as an :class:`~fmus.subsystem.FMUSubsystem` (same name, ports and
    rate) for the compiled loop; :meth:`push` and :meth:`pull` hand the state over."""

    def __init__(self, sub: Any, opener: Any) -> None:
        why = twin_reason(sub)
        if why:
            raise BuildError(why)
        from .export import generate
        self._sub = weakref.ref(sub)  # the loop keeps twins by weak reference to sub
        self.params = copy.deepcopy(list(sub.ctx.params))  # what the C was generated with
        ctx = sub.diagram.create_context()  # default states: a stable source
        dplan = sub.diagram.compile()
        wplan = sub.wrapper.compile()
        for h in dplan.parameters:
            ctx.params[dplan.param_index[h]] = copy.deepcopy(
                sub.ctx.params[wplan.param_index[h]])
        try:
            gen = generate(sub.diagram, "2.0", "cs", model_name=f"twin_{sub.name}",
                           context=ctx, integrator=sub.solver_name,
                           step=sub.dt_ticks * 1e-9, fuse_linear=sub.sim.fuse_linear,
                           interpolate_inputs=sub.max_input_order != 0)
        except CodegenError as exc:
            raise BuildError(f"subsystem '{sub.name}' has no C twin: {exc}") from None
        self.program = gen.program
        root = _built(gen)
        self.fmu = opener(root).subsystem(sub.name, rate=sub.rate)
        self.fmu.inst.start()  # instantiated now, as a loaded FMU is: a run resets it
        self._lib = ctypes.CDLL(str(root / "binaries" / "linux64" / f"{gen.ident}.so"))
        self._lib.cosim_twin_state.restype = ctypes.c_void_p
        self._lib.cosim_twin_state.argtypes = [ctypes.c_void_p]
        self._slots = _slot_map(sub, dplan, wplan, self.program)
        self._state_type = state_type(self.program, self._lib)
        self._initialized = False

    @property
    def sub(self) -> Any:
        """The native subsystem."""
        return self._sub()

    def stale(self) -> bool:
        """The subsystem's parameters changed since the twin was generated."""
        return not same_params(self.params, self.sub.ctx.params)

    # ------------------------------------------------------------ handing over
    def _state(self) -> Any:
        from .driver import c_entry_points
        comp, _ = c_entry_points(self.fmu.inst.drv, [])
        return self._state_type.from_address(self._lib.cosim_twin_state(comp))

    def push(self) -> None:
        """The subsystem's state (time, states, signals) into the twin."""
        sub, f = self.sub, self.fmu
        ctx = sub.ctx
        if not self._initialized:
            f.initialize(ctx.ticks)
            f.finish_initialization()
            self._initialized = True
        self._slots.push(ctx, self._state())
        f._t = ctx.ticks
        f.inst.drv.time = ctx.ticks * 1e-9

    def pull(self) -> None:
        """The twin's state back into the subsystem (as its own steps would leave it)."""
        sub, st = self.sub, self._state()
        ctx = sub.ctx
        self._slots.pull(st, ctx)
        sig = ctx.signals
        # the coupling inputs hold their last values (the next step sets new polynomials)
        out_slot = sub.wrapper.compile().output_slot
        sub.set_inputs(ctx.time, {name: (float(sig[out_slot[drv.y]]),)
                                  for name, drv in sub._drivers.items()})
        sub.sim.reset_solver_history()


# ------------------------------------------------------------------ helpers
def _slot_map(sub: Any, dplan: Any, wplan: Any, prog: Any) -> StateMap:
    """Where each piece of the twin's C state lives in the subsystem's context."""
    xs = []
    for h in dplan.continuous_states:
        a, b, _ = dplan.cstate_index[h]
        wa, wb, _ = wplan.cstate_index[h]
        xs.append(((a, b), (wa, wb)))
    xds = [(prog.dstate_layout[h], wplan.dstate_index[h]) for h in dplan.discrete_states]
    roots = {p: sub._drivers[p.name].y for p in sub.diagram.inputs.values()}
    ss = []
    for k, port in enumerate(dplan.slot_ports):
        if port in roots:
            w = wplan.output_slot[roots[port]]
        elif port in wplan.output_slot:
            w = wplan.output_slot[port]
        else:
            w = wplan.input_slot[port]
        ss.append(((prog.slot_offset[k], port.size), w))
    return StateMap(xs, xds, ss)


def _built(gen: Any) -> Path:
    """The twin's folder (an extracted FMU with its binary): from a trusted cache folder, or
    compiled into the first writable one."""
    argv = compiler_command()
    flags = (*CFLAGS, f"-I{INCLUDE}")
    source = gen.model_c.replace('#include "model.h"', gen.model_h, 1) + _ACCESS
    key = "\0".join([source, gen.model_description, " ".join(flags), " ".join(argv)])
    name = f"cosim-twin-{hashlib.sha256(key.encode()).hexdigest()[:20]}"
    rel = Path("binaries") / "linux64" / f"{gen.ident}.so"
    for folder in cache_folders():
        root = folder / name
        if (root / rel).is_file() and trusted(root) and trusted(root / rel) and \
                trusted(folder):
            return root
    exe = shutil.which(argv[0])
    if exe is None:
        raise CompilerFailed(f"C twin: C compiler {argv[0]!r} not found (CC={' '.join(argv)!r}); "
                         "install gcc or set CC")
    from cosim.codegen.cache import _writable_folder
    try:
        folder = _writable_folder("C twin")
    except BuildError as exc:
        raise CompilerFailed(str(exc)) from None
    tmp = Path(tempfile.mkdtemp(prefix=f"{name}.", dir=folder))
    try:
        (tmp / "modelDescription.xml").write_text(gen.model_description)
        (tmp / rel).parent.mkdir(parents=True)
        src = tmp / "twin.c"
        src.write_text(source)
        cmd = [exe, *argv[1:], *flags, str(src), "-o", str(tmp / rel), "-lm"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as exc:
            raise CompilerFailed(f"C twin: the C compiler could not run: {exc}") from None
        if proc.returncode != 0:
            said = (proc.stderr or proc.stdout).strip()[:2000] or "(no message)"
            raise CompilerFailed(f"C twin: the C compiler failed ({' '.join(argv)}, exit status "
                             f"{proc.returncode}):\n{said}")
        os.chmod(tmp, 0o755)
        try:
            tmp.rename(folder / name)
        except OSError:  # another process built it first: use theirs
            pass
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    root = folder / name
    if not (trusted(root) and trusted(root / rel)):  # one that was there, planted or not
        raise CompilerFailed(f"C twin: {root} is writable by other users, so it is not loaded; "
                             "remove it (it is rebuilt)")
    return root
