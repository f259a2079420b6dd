"""Export a block or a diagram as an FMU of generated C: :func:`export_fmu`.

The FMU carries its C sources (``sources/model.h``: the model core generated
from the diagram, ``sources/model.c``: the FMI wrapper; for FMI 3 also
``sources/buildDescription.xml``) and, by default, a binary compiled with gcc
for this platform.  It needs no Python at run time.  See :mod:`fmus.cgen` for
what can be exported and how a block describes itself in C.

Semantics are those of :class:`cosim.simulator.Simulator` with a fixed-step
solver, so an FMU and a Simulator run of the same diagram agree to rounding:

* Co-Simulation: inputs are held over a communication step.  Inside
  ``doStep`` the FMU integrates with a fixed internal ``step`` on the grid
  ``k * step`` (explicit Runge-Kutta: ``integrator="rk4"`` (default),
  ``"heun"``, ``"midpoint"``, ``"euler"``), shortened to land on sample hits,
  time events and the communication point.  ``integrator="zoh"`` instead takes
  the exact step ``x(t+h) = e^{Ah} x + \\int_0^h e^{As} ds (B v + e)`` of a
  continuous part that is one linear system driven by inputs held between
  events (exact for any step; the matrix exponential is computed in C, Padé 13
  with scaling and squaring, and cached per step length).  At every stop the
  outputs are evaluated and the discrete updates of the due sample groups run,
  with the inputs of the step that ends there (so a sampled block hit at a
  communication point sees the inputs of the step that just ended: the
  Simulator's semantics; set the inputs before the step to change that).
* Model Exchange: the importer integrates; sample hits and time events are
  reported as ``nextEventTime`` and handled in event mode, with the inputs the
  importer has set at that time (no event indicators: the generated blocks
  have no state events).

Parameters of the blocks' C descriptions are FMI ``tunable`` parameters (set
them between steps).  Blocks fused into a linear group (``fuse_linear=True``,
the Simulator's default) have their matrices baked into the C code, so their
parameters are not FMI parameters: export with ``fuse_linear=False`` to keep
them tunable (possible when no linear algebraic loop needs the fusion).

Time is kept in integer nanoseconds as in the Simulator: communication points
are rounded to the 1 ns grid.

Limitations (all listed in :mod:`fmus.cgen`): no zero crossings / state events, no algebraic
loops through nonlinear blocks, no Python callbacks (a ``FunctionBlock`` whose function does
not translate, ``ClosedFormSource``, time-event handlers), numeric signals only (stored as
``double``), arithmetic errors that raise in Python (a division by zero) give inf/NaN in the
core blocks' C (a translated FunctionBlock fails the call),
no directional derivatives, FMI 3 without event mode, clocks or Scheduled Execution;
binaries for Linux x86_64 (FMI 2 and 3) and aarch64 (FMI 3), source FMUs elsewhere.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosim.block import Block
from cosim.codegen import blocks as _builtin  # noqa: F401  (registers the built-in descriptions)
from cosim.codegen import csource
from cosim.codegen.model import CodegenError
from cosim.codegen.program import Program
from cosim.diagram import Diagram, DiagramBuilder
from cosim.time import to_ticks

from .cgen import build, fmi2, fmi3
from .cgen.model import FMUExportError, c_string

__all__ = ["Generated", "export_fmu", "generate"]

_KINDS = {"cs": ("cs",), "me": ("me",), "both": ("me", "cs")}
_TOKEN = "{00000000-0000-0000-0000-000000000000}"


def export_fmu(model: Any, path: str | Path, fmi_version: str = "2.0", kind: str = "cs", *,
               model_name: str | None = None, context: Any = None, integrator: str = "rk4",
               step: float | None = None, fuse_linear: bool = True,
               expose_locals: bool = False, compile: bool = True, cc: str | None = None,
               cflags: tuple[str, ...] = (), start_time: float = 0.0,
               stop_time: float | None = None, description: str | None = None,
               interpolate_inputs: bool | None = None) -> Path:
    """Export ``model`` (a leaf block or a built diagram) as an FMU of generated C.

    Parameters
    ----------
    model : Block or Diagram
        A diagram's exported inputs and outputs become the FMU's inputs and
        outputs; a leaf block (not yet in a diagram) is wrapped with all its
        ports exported under their own names.
    path : str or Path
        The ``.fmu`` file to write.
    fmi_version : {"2.0", "3.0"}
    kind : {"cs", "me", "both"}
        Co-Simulation, Model Exchange, or both interfaces in one FMU.
    model_name : str, optional
        Model name and (made a C identifier) ``modelIdentifier``; default the
        diagram's (block's) name.
    context : Context, optional
        Parameter values, initial states and discrete states to export (default
        ``diagram.create_context()``).
    integrator : {"rk4", "heun", "midpoint", "euler", "zoh"}
        Co-Simulation integrator (see the module docstring).
    step : float, optional
        Fixed internal step [s] of the Runge-Kutta integrators (required for
        Co-Simulation of a model with continuous states, unless ``"zoh"``).
    fuse_linear : bool
        Fuse connected linear blocks into one state-space system (as the
        Simulator does).
    expose_locals : bool
        Also expose every leaf block output as an FMI local variable.
    compile : bool
        Compile a binary for this platform (needs a C compiler: ``cc``, ``$CC``
        or ``gcc``); ``False`` gives a source-only FMU.
    cflags : tuple of str
        Extra compiler flags.
    start_time, stop_time : float
        The ``DefaultExperiment``.
    description : str, optional
    interpolate_inputs : bool, optional
        Co-Simulation: follow the importer's input polynomial within a step (FMI 2
        ``canInterpolateInputs`` with ``fmi2SetRealInputDerivatives`` up to order 3; FMI 3
        intermediate update at each Runge-Kutta stage), so a master with extrapolation
        order p couples the FMU at global order p + 1.  Default: with every integrator
        but ``"zoh"`` (whose exact step holds the inputs); ``False`` holds the inputs
        over each step (order 1 whatever p).

    Returns
    -------
    Path
        The FMU written.

    Raises
    ------
    FMUExportError
        A block without C description (all of them are named), an unsupported
        feature, a bad option, or a compiler error.
    """
    gen = generate(model, fmi_version, kind, model_name=model_name, context=context,
                   integrator=integrator, step=step, fuse_linear=fuse_linear,
                   expose_locals=expose_locals, start_time=start_time, stop_time=stop_time,
                   description=description, interpolate_inputs=interpolate_inputs)
    ident = gen.ident
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="cosim-fmu-") as td:
        root = Path(td) / "fmu"
        (root / "sources").mkdir(parents=True)
        gen.write(root)
        if compile:
            build.compile_binary(root, ident, fmi_version, cc=cc, extra_flags=tuple(cflags))
        return build.pack(root, path)


@dataclass(frozen=True)
class Generated:
    """The text of an exported FMU before it is compiled and packed (:func:`generate`)."""

    ident: str  #: ``modelIdentifier``
    model_description: str
    model_h: str  #: ``sources/model.h``: the model core
    model_c: str  #: ``sources/model.c``: the FMI wrapper
    build_description: str | None  #: FMI 3 ``sources/buildDescription.xml``
    program: Program  #: what the C was made from (storage layout, variables)

    def write(self, root: Path) -> None:
        """The FMU's files into the folder ``root`` (no binary)."""
        (root / "sources").mkdir(parents=True, exist_ok=True)
        (root / "modelDescription.xml").write_text(self.model_description)
        (root / "sources" / "model.h").write_text(self.model_h)
        (root / "sources" / "model.c").write_text(self.model_c)
        if self.build_description is not None:
            (root / "sources" / "buildDescription.xml").write_text(self.build_description)


def generate(model: Any, fmi_version: str = "2.0", kind: str = "cs", *,
             model_name: str | None = None, context: Any = None, integrator: str = "rk4",
             step: float | None = None, fuse_linear: bool = True, expose_locals: bool = False,
             start_time: float = 0.0, stop_time: float | None = None,
             description: str | None = None,
             interpolate_inputs: bool | None = None) -> Generated:
    """The C and the model description :func:`export_fmu` would write (its options,
    without the compiler's); raises :class:`FMUExportError` as it does."""
    try:
        return _generate(model, fmi_version, kind, model_name=model_name, context=context,
                         integrator=integrator, step=step, fuse_linear=fuse_linear,
                         expose_locals=expose_locals, start_time=start_time,
                         stop_time=stop_time, description=description,
                         interpolate_inputs=interpolate_inputs)
    except CodegenError as exc:
        if isinstance(exc, FMUExportError):
            raise
        err = FMUExportError(str(exc))  # the code generator's, as the export's
        err.blocks = exc.blocks
        raise err from None


def _generate(model: Any, fmi_version: str, kind: str, *, model_name: str | None,
              context: Any, integrator: str, step: float | None, fuse_linear: bool,
              expose_locals: bool, start_time: float, stop_time: float | None,
              description: str | None, interpolate_inputs: bool | None) -> Generated:
    if fmi_version not in ("2.0", "3.0"):
        raise FMUExportError(f"export_fmu(): fmi_version must be '2.0' or '3.0', got "
                             f"{fmi_version!r}")
    if kind not in _KINDS:
        raise FMUExportError(f"export_fmu(): kind must be 'cs', 'me' or 'both', got {kind!r}")
    kinds = _KINDS[kind]
    diagram = _as_diagram(model, context)
    ctx = context if context is not None else diagram.create_context()
    if ctx.diagram is not diagram:
        raise FMUExportError(f"export_fmu(): the context was made by diagram "
                             f"'{ctx.diagram.name}', not by '{diagram.name}'")
    plan = diagram.compile()
    step_ticks = 0
    if step is not None:
        step_ticks = to_ticks(step, "export_fmu() step")
        if step_ticks <= 0:
            raise FMUExportError(f"export_fmu(): step must be positive, got {step!r}")
    elif "cs" in kinds and plan.n_continuous and integrator != "zoh":
        raise FMUExportError(
            f"export_fmu(): diagram '{diagram.name}' has {plan.n_continuous} continuous "
            f"state(s): give step= (the fixed internal step [s] of the FMU's {integrator} "
            "integrator in Co-Simulation), or integrator='zoh' for an exact step of a linear "
            "system")
    interpolate_inputs = _interpolation(interpolate_inputs, integrator, kinds)
    prog = Program(diagram, ctx, integrator=integrator, step_ticks=step_ticks,
                   fuse_linear=fuse_linear, expose_locals=expose_locals, kinds=kinds,
                   interpolate_inputs=interpolate_inputs).build()

    if prog.externs:
        raise FMUExportError(
            f"export_fmu(): diagram '{diagram.name}' has blocks whose C calls compiled Python "
            f"code by address ({', '.join(sorted(prog.externs))}): it lives in this process "
            "and cannot go into an FMU; run the diagram with Simulator(compiled=True), or "
            "export this part as a Python FMU (pythonfmu3)")
    name = model_name or diagram.name
    ident = re.sub(r"\W", "_", name)
    if not ident or ident[0].isdigit():
        ident = "m_" + ident
    desc = description or (f"diagram '{diagram.name}' ({len(plan.blocks)} blocks) exported by "
                           "cosim as generated C")
    experiment = {"startTime": start_time, "stopTime": stop_time,
                  "stepSize": step if step is not None else None}
    generation = {"generationTool": "cosim fmus.cgen"}
    header = (f"/* {ident}: model core generated by cosim (fmus.cgen) from diagram "
              f"'{_safe(diagram.name)}'.\n * FMI {fmi_version}, "
              f"{' + '.join(k.upper() for k in kinds)}; integrator {integrator}"
              + (f", step {step} s" if step else "") + ". Do not edit: re-export instead. */\n")
    defines = "".join(f"#define COSIM_HAS_{k.upper()} 1\n" for k in kinds)
    defines += f"#define COSIM_INTERPOLATE {int(interpolate_inputs)}\n"
    source = csource.model_source(prog, fmi_version=fmi_version, model_identifier=ident,
                                  token=_TOKEN, header=header + defines)
    wrapper_name = fmi2.WRAPPER if fmi_version == "2.0" else fmi3.WRAPPER
    wrapper = (build.TEMPLATES / wrapper_name).read_text()
    sources = ["model.c"]
    if fmi_version == "2.0":
        md = fmi2.model_description(prog, model_name=name, model_identifier=ident, guid=_TOKEN,
                                    description=desc, kinds=kinds, sources=sources,
                                    experiment=experiment, generation=generation)
    else:
        md = fmi3.model_description(prog, model_name=name, model_identifier=ident,
                                    token=_TOKEN, description=desc, kinds=kinds,
                                    experiment=experiment, generation=generation)
    digest = hashlib.sha256((source + wrapper + md).encode()).hexdigest()
    token = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, "cosim-fmu:" + digest)) + "}"
    source = source.replace(c_string(_TOKEN), c_string(token))
    md = md.replace(_TOKEN, token)
    build_xml = fmi3.build_description(ident, sources) if fmi_version == "3.0" else None
    return Generated(ident, md, source, wrapper, build_xml, prog)



def _interpolation(interpolate_inputs: bool | None, integrator: str, kinds: tuple) -> bool:
    """Resolve ``interpolate_inputs`` (an explicit ``True`` that cannot take effect is an
    error)."""
    if interpolate_inputs is None:
        return "cs" in kinds and integrator != "zoh"
    if interpolate_inputs and "cs" not in kinds:
        raise FMUExportError("export_fmu(interpolate_inputs=True): input interpolation is a "
                             "Co-Simulation feature; export with kind='cs' or 'both', or drop "
                             "the option (Model Exchange inputs are set by the importer's "
                             "integrator)")
    if interpolate_inputs and integrator == "zoh":
        raise FMUExportError("export_fmu(interpolate_inputs=True): integrator='zoh' takes the "
                             "exact step of inputs held over the step; choose a Runge-Kutta "
                             "integrator (with step=) to interpolate inputs, or drop the option")
    return bool(interpolate_inputs)


def _as_diagram(model: Any, context: Any) -> Diagram:
    if isinstance(model, Diagram):
        return model
    if not isinstance(model, Block):
        got = (f"the DiagramBuilder '{model.name}': call build() first"
               if isinstance(model, DiagramBuilder) else type(model).__name__)
        raise FMUExportError(f"export_fmu(): expected a Block or a built Diagram, got {got}")
    if model.parent is not None or getattr(model, "_builder", None) is not None:
        raise FMUExportError(
            f"export_fmu(): block '{model.path}' already belongs to a diagram; export that "
            "diagram (exporting the ports you want), or a fresh block")
    if context is not None:
        raise FMUExportError("export_fmu(): a context can only be given with a diagram (a "
                             "single block is wrapped in a new diagram)")
    b = DiagramBuilder(model.name)
    b.add(model)
    for p in model.inputs.values():
        b.export_input(p, p.name)
    for p in model.outputs.values():
        b.export_output(p, p.name)
    return b.build()


def _safe(text: str) -> str:
    return text.replace("*/", "* /")
