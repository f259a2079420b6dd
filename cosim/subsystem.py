"""Subsystems: parts of a model that a co-simulation master steps as black boxes.

The co-simulation protocol (:class:`Subsystem`) is what the master knows:

* ``input_names`` / ``output_names`` (with shapes and units),
* ``set_inputs(t0, polys)``: each input as a polynomial in ``tau = t - t0``
  over the coming macro step (extrapolated or interpolated by the master),
* ``do_step(t0_ticks, h_ticks)``: advance from ``t0`` to ``t0 + h``,
* ``get_outputs()``: the outputs at the current time,
* ``save_state()`` / ``restore_state(token)`` for rollback (``can_save_state``);
  optionally ``save_state_into(token)``, which reuses a token only its caller holds,
* ``feedthrough()``: which inputs each output reads directly,
* ``initial_feedthrough()`` and ``finish_initialization()``: between ``initialize`` and
  ``finish_initialization`` the master sets the inputs at ``t0`` and reads the initial
  outputs (an FMU in Initialization Mode) until they are consistent,
* optionally ``output_jacobian()``: d outputs / d inputs at the current point,
* optionally ``step_jacobian()``: d outputs at the end of the last step / d the
  inputs' values there (the sensitivity iterative Newton coupling needs),
* ``max_input_order``: the highest polynomial degree the subsystem follows
  within a step (an int, or ``{input: degree}``; default 3).  The master gives
  an input no higher order than this: a Co-Simulation FMU that holds its inputs
  has 0 and gets the newest value, i.e. the end-of-step value when the master
  interpolates (iterative coupling, Gauss-Seidel's later subsystems).

:class:`DiagramSubsystem` implements all of it for a native diagram: the
diagram's exported inputs are driven by :class:`CouplingInput` blocks that
evaluate the master's polynomial at every micro step and solver stage, and the
diagram runs on its own :class:`~cosim.simulator.Simulator` with its own solver
and step.  FMUs and devices (later) implement what they can.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .block import Block
from .diagram import DiagramBuilder, require_diagram
from .errors import BuildError, ContextError, RateError
from .time import format_time

#: the most coefficients a master's input polynomial has (order 3)
_MAX_TERMS = 4


def _pack_poly(v: tuple) -> list:
    """A scalar coupling input's ``(t0, coefficients)`` as ``t0, n, c0, ..., c3``."""
    t0, c = v
    if len(c) > _MAX_TERMS:
        raise ValueError(f"a coupling polynomial of {len(c)} terms (at most {_MAX_TERMS})")
    return [t0, float(len(c)), *c] + [0.0] * (_MAX_TERMS - len(c))


def _unpack_poly(d: list, old: Any) -> tuple:
    """:func:`_pack_poly` undone."""
    return (d[0], tuple(d[2:2 + int(d[1])]))


class CouplingInput(Block):
    """A coupling signal given by the master as a polynomial in time.

    .. math:: y(t) = \\sum_j c_j (t - t_0)^j

    The coefficients live in the discrete state ``poly`` (set by the master
    before each macro step), so snapshots and rollback include them.

    A non-Real input (``dtype`` Boolean, integer of any width, string, bytes) gets
    the master's held value as it is (a polynomial of degree 0, never through
    float64).

    Ports
    -----
    out  y   shape, dtype and unit of the input it drives (no inputs)
    """

    #: its output has no value of its own before the master sets the polynomial (the zero
    #: it starts with is a placeholder): blocks that initialize an FMU from it use the
    #: FMU's start value until then (:func:`fmus.fmu_block.late_inputs`)
    initially_unset = True

    def __init__(self, name: str, shape: Any = (), unit: str | None = None,
                 dtype: Any = float) -> None:
        super().__init__(name)
        size = int(np.prod(shape)) if shape else 1
        self.scalar = shape == ()
        self.shape = shape
        self.dtype = np.dtype(dtype)
        #: a non-Real input: held at the master's value, kept in its own dtype
        self.exact = self.dtype.kind != "f"
        if self.exact:
            zero = self.dtype.type() if self.dtype.kind != "O" else None
            zero = zero.item() if isinstance(zero, np.generic) else zero
            init = (0.0, (zero,)) if self.scalar else (0.0, np.full((1, size), zero,
                                                                    dtype=self.dtype))
        else:
            init = (0.0, (0.0,)) if self.scalar else (0.0, np.zeros((1, size)))
        self.poly = self.declare_discrete_state("poly", init)
        if self.scalar and not self.exact:  # generated C keeps (t0, c) as t0, n, c0..c3
            self.poly.c_codec = (2 + _MAX_TERMS, _pack_poly, _unpack_poly)
        #: the index of ``poly`` in its diagram's contexts (``ctx.xd``), set by the
        #: :class:`DiagramSubsystem` that made the block: read every solver stage, it
        #: saves the handle lookup of ``ctx.discrete``
        self.xd_index: int | None = None
        self.y = self.declare_output("y", self._calc, shape=shape, unit=unit,
                                     dtype=self.dtype, depends_on=())

    def _calc(self, ctx: Any) -> Any:
        i = self.xd_index
        t0, c = ctx.discrete(self.poly) if i is None else ctx.xd[i]
        tau = ctx.time - t0
        if self.scalar:
            n = len(c)
            if n == 2:  # linear extrapolation, the common case
                return c[0] + c[1] * tau
            if n == 1:  # held
                return c[0]
            acc = c[-1]
            for k in range(len(c) - 2, -1, -1):
                acc = acc * tau + c[k]
            return acc
        acc = c[-1].copy()
        for row in c[-2::-1]:
            acc = acc * tau + row
        return acc.reshape(self.shape)

    def c_model(self, cg: Any) -> Any:
        """The C form (compiled runs of a :class:`DiagramSubsystem`): :meth:`_calc`'s
        operations on the packed ``(t0, n, c0, ..., c3)`` of a scalar Real input."""
        from .codegen.model import CModel, CodegenError
        if not self.scalar or self.exact:
            raise CodegenError(f"coupling input '{self.name}': only a scalar Real input has "
                               "a C form (an array or a held non-Real one runs in Python)")
        x = [cg.xd(self.poly, k) for k in range(2 + _MAX_TERMS)]
        c = ", ".join(x[2:])
        return CModel(outputs={"y": (
            f"double tau = {cg.t} - {x[0]}; int n = (int){x[1]};\n"
            f"if (n == 2) {cg.y(self.y)} = {x[2]} + {x[3]} * tau;\n"
            f"else if (n == 1) {cg.y(self.y)} = {x[2]};\n"
            f"else {{ double c[{_MAX_TERMS}] = {{{c}}}; double acc = c[n - 1];\n"
            f"  for (int k = n - 2; k >= 0; k--) acc = acc * tau + c[k];\n"
            f"  {cg.y(self.y)} = acc; }}")}, time_dependent=True)

    def inline_output(self, port: Any, bind: Any, plan: Any) -> str | None:
        """:meth:`_calc` as an expression for generated code (:mod:`cosim.evaluator`):
        the linear and the held case of a scalar input inline (the same operations), any
        other through :meth:`_calc`."""
        if not self.scalar:
            return None
        i = plan.dstate_index[self.poly]
        return (f"(_p[1][0] + _p[1][1] * (ctx.time - _p[0]) "
                f"if (_n := len((_p := ctx.xd[{i}])[1])) == 2 "
                f"else _p[1][0] if _n == 1 else {bind(self._calc)}(ctx))")

    def set_polynomial(self, ctx: Any, t0: float, coeffs: Any) -> None:
        """Set coefficients (lowest power first) for ``tau = t - t0``.

        A tuple of floats for a scalar input, or an array ``(order+1, size)``.
        """
        if self.scalar:
            if not isinstance(coeffs, tuple):
                coeffs = np.asarray(coeffs).reshape(len(coeffs), -1)[:, 0]
                coeffs = tuple(coeffs.tolist() if self.exact else (float(v) for v in coeffs))
            ctx.set_discrete(self.poly, (t0, coeffs))
        else:
            ctx.set_discrete(self.poly, (float(t0), np.array(
                coeffs, dtype=self.dtype if self.exact else float)))


class Subsystem(ABC):
    """The co-simulation protocol (see the module docstring).

    Implementers' checklist: set ``name``, ``input_names``, ``output_names``,
    ``shapes`` and ``units`` (dicts by port name), ``rate`` (integer ratio of
    the subsystem's communication step to the master's macro step),
    ``can_save_state`` and, where some inputs may stay unconnected,
    ``optional_inputs``; implement the abstract methods.
    """

    name: str
    input_names: list[str]
    output_names: list[str]
    shapes: dict[str, tuple]
    units: dict[str, str | None]
    rate: int = 1
    can_save_state: bool = False
    #: inputs that may be left unconnected in a master (they keep the subsystem's own
    #: value, e.g. an FMU input's start value)
    optional_inputs: frozenset = frozenset()
    #: highest polynomial degree of an input the subsystem follows within a step (int, or
    #: ``{input: degree}``): 3 for a native diagram, 0 for an FMU that holds its inputs
    max_input_order: Any = 3

    @abstractmethod
    def initialize(self, t0_ticks: int) -> None:
        """Prepare to start at ``t0`` (states at their initial values)."""

    @abstractmethod
    def set_inputs(self, t0: float, polys: dict[str, np.ndarray]) -> None:
        """Inputs as polynomials in ``t - t0`` for the coming step."""

    @abstractmethod
    def do_step(self, t0_ticks: int, h_ticks: int) -> None:
        """Advance from ``t0`` to ``t0 + h``."""

    @abstractmethod
    def get_outputs(self) -> dict[str, Any]:
        """Outputs at the current time."""

    @abstractmethod
    def refresh_outputs(self) -> None:
        """Recompute outputs after ``set_inputs`` without stepping (initialization)."""

    def feedthrough(self) -> dict[str, set[str]]:
        """For each output, the inputs it reads directly (default: all)."""
        return {o: set(self.input_names) for o in self.output_names}

    def initial_feedthrough(self) -> dict[str, set[str]]:
        """For each output, the inputs it depends on at initialization (default: as
        :meth:`feedthrough`; an FMU's ``InitialUnknowns`` may add inputs that set its
        initial states, e.g. a lag starting at steady state ``y(0) = u(0)``)."""
        return self.feedthrough()

    def finish_initialization(self) -> None:
        """End the initialization the master began with :meth:`initialize`.

        Between the two, ``set_inputs`` + ``refresh_outputs`` give the initial outputs for
        the inputs at the start time (an FMU is in Initialization Mode then).  Default:
        nothing to do."""
        return None

    def save_state(self) -> Any:
        raise ContextError(f"subsystem '{self.name}' cannot save its state; rollback-based "
                           "methods (step rejection, iterative coupling) need save/restore")

    def save_state_into(self, token: Any) -> Any:
        """:meth:`save_state`, reusing ``token``: a token this subsystem's ``save_state``
        or ``save_state_into`` returned, which its holder alone uses (a master's per-step
        rollback slot, :meth:`MasterScheduler.save <cosim.master.MasterScheduler.save>`),
        so the memory it holds (an FMU's state) need not be allocated again.  Returns the
        token holding the state now (``token`` or a new one).  Default: a new one."""
        return self.save_state()

    def restore_state(self, token: Any) -> None:
        raise ContextError(f"subsystem '{self.name}' cannot restore its state")

    def output_jacobian(self) -> dict | None:
        """d outputs / d inputs at the current point, where the subsystem provides it."""
        return None

    def unread_inputs(self) -> set[str]:
        """Inputs nothing inside the subsystem reads (default: none known)."""
        return set()

    def step_jacobian(self) -> dict | None:
        """``{(output, input): d y(t + h) / d u(t + h)}`` of the step just taken, or None.

        The sensitivity of the outputs at the end of the last step to the value
        the input polynomial reached there (the other coefficients fixed).  A
        subsystem that knows it (a linear model, an FMU with sensitivities)
        returns it; iterative Newton coupling then needs no extra steps for it.
        """
        return None


def max_input_order(sub: Any, name: str) -> int:
    """The highest polynomial degree ``sub`` follows for input ``name`` (0-3)."""
    limit = getattr(sub, "max_input_order", 3)
    if isinstance(limit, dict):
        limit = limit.get(name, 3)
    return max(0, min(3, int(limit)))


class DiagramSubsystem(Subsystem):
    """A native diagram as a co-simulation subsystem with its own solver and step.

    Parameters
    ----------
    diagram : Diagram
        Its exported inputs become the subsystem inputs, its exported outputs
        the subsystem outputs.
    solver, dt, **simulator_options
        The subsystem's own integrator (any core solver) and step [s];
        ``dt="advance"`` (fixed-step solvers): one solver step per communication
        step, whatever its length (for step-controlled masters).
    rate : int
        The subsystem steps every ``rate`` macro steps, over ``rate * H``
        (multi-rate by decimation).
    name : str, optional
    hold_inputs : bool
        Hold every input constant over a step, as a Co-Simulation FMU without
        input interpolation does (``max_input_order = 0``): the same interface
        values as such an FMU, e.g. to compare a diagram with its export.
    """

    def __init__(self, diagram: Any, *, solver: str = "rk4", dt: float | None = None,
                 rate: int = 1, name: str | None = None, hold_inputs: bool = False,
                 **simulator_options: Any) -> None:
        from .simulator import Simulator
        diagram = require_diagram(diagram, f"DiagramSubsystem({name or ''})")
        if int(rate) < 1:
            raise RateError(f"subsystem '{name or diagram.name}': rate must be an integer "
                            f">= 1, got {rate!r}")
        self.name = name or diagram.name
        self.rate = int(rate)
        self.max_input_order = 0 if hold_inputs else 3
        self.diagram = diagram
        b = DiagramBuilder(f"{self.name}_cosim")
        b.add(diagram)
        self._drivers: dict[str, CouplingInput] = {}
        for p in diagram.inputs.values():
            ci = b.add(CouplingInput(f"coupling_{p.name}", p.shape, p.unit_text, p.dtype))
            b.connect(ci.y, p)
            self._drivers[p.name] = ci
        for p in diagram.outputs.values():
            b.export_output(p, p.name)
        self.wrapper = b.build()
        held = [n for n, d in self._drivers.items() if d.exact]
        if held and not hold_inputs:  # non-Real inputs follow no polynomial: held
            self.max_input_order = {n: 0 if n in held else 3 for n in self._drivers}
        self.input_names = list(diagram.inputs)
        self.output_names = list(diagram.outputs)
        if not self.output_names:
            raise BuildError(f"subsystem '{self.name}': diagram '{diagram.name}' exports no "
                             "outputs; export what other subsystems need with export_output()")
        self.shapes = {n: p.shape for n, p in list(diagram.inputs.items())
                       + list(diagram.outputs.items())}
        self.units = {n: p.unit_text for n, p in list(diagram.inputs.items())
                      + list(diagram.outputs.items())}
        self.dtypes = {n: p.dtype for n, p in list(diagram.inputs.items())
                       + list(diagram.outputs.items())}
        self._out_ports = [self.wrapper.outputs[n] for n in self.output_names]
        self._held: Any = None  # the state held in C between macro steps (cosim.held_step)
        self._held_on: Any = None  # (the C run, its HeldStep)
        self._ctx = self.wrapper.create_context()
        plan = self.wrapper.compile()
        # direct slots: scalar inputs' polynomial states, outputs' signal slots
        self._scalar_in = {n: plan.dstate_index[d.poly] for n, d in self._drivers.items()
                           if d.scalar}
        for d in self._drivers.values():
            d.xd_index = plan.dstate_index[d.poly]
        self._out_slots = [(n, plan.output_slot[p]) for n, p in zip(self.output_names,
                                                                    self._out_ports)]
        self._sim = Simulator(self.wrapper, self._ctx, solver=solver, dt=dt, record=False,
                              **simulator_options)
        self._sim.prepare()  # its program now, as an FMU is instantiated when it is loaded
        self.solver_name = self._sim.solver_name
        self.can_save_state = not self.wrapper.compile().opaque_states or all(
            h.save is not None for h in self.wrapper.compile().opaque_states)

    @property
    def ctx(self) -> Any:
        """The diagram's context (a state held in C is handed back first:
        :mod:`cosim.held_step`)."""
        if self._held is not None:
            self._release()
        return self._ctx

    @property
    def sim(self) -> Any:
        """The diagram's :class:`~cosim.simulator.Simulator` (a state held in C is handed
        back first)."""
        if self._held is not None:
            self._release()
        return self._sim

    def _release(self) -> None:
        held, self._held = self._held, None
        held.release()

    def _hold(self) -> None:
        """After a step the whole way: hold the state in C from now on where it may be."""
        run = self._sim.route.run
        if run is None:
            return
        from .held_step import HeldStep
        if not HeldStep.applies(self):
            return
        if self._held_on is None or self._held_on[0] is not run:
            self._held_on = (run, HeldStep(self, run))
        run.held = True  # (the context was just copied from it: the two are equal)
        self._held = self._held_on[1]

    @property
    def dt_ticks(self) -> int | None:
        """The Simulator's step (or output grid) in ticks (``Simulator.grid``)."""
        return self._sim.grid.ticks

    @property
    def terminated(self) -> dict | None:
        """Set when a block of the diagram ended the run (``Simulator.terminated``)."""
        return self._sim.terminated

    def initialize(self, t0_ticks: int) -> None:
        self.ctx.ticks = t0_ticks
        self.ctx.time = self.ctx.mode_time = t0_ticks * 1e-9
        self.sim.initialize()
        self._initializing = True

    def finish_initialization(self) -> None:
        self._initializing = False

    def check_step(self, h_ticks: int) -> None:
        if self.dt_ticks and self._sim.fixed and h_ticks % self.dt_ticks:
            raise RateError(f"subsystem '{self.name}': communication step "
                            f"{format_time(h_ticks)} is not a multiple of its solver step "
                            f"dt = {format_time(self.dt_ticks)}")

    def set_inputs(self, t0: float, polys: dict[str, np.ndarray]) -> None:
        held = self._held
        if held is not None and held.set_inputs(t0, polys):
            return
        xd, scalar = self.ctx.xd, self._scalar_in
        for name, coeffs in polys.items():
            if type(coeffs) is tuple and name in scalar:
                xd[scalar[name]] = (t0, coeffs)
            else:
                self._drivers[name].set_polynomial(self.ctx, t0, coeffs)

    def refresh_outputs(self) -> None:
        held = self._held
        if held is not None and not self._initializing and held.refresh():
            return
        if getattr(self, "_initializing", False):  # FMU blocks initialize with these inputs
            self.sim.reinitialize_outputs()
        else:
            self.sim.evaluate_outputs()

    def do_step(self, t0_ticks: int, h_ticks: int) -> None:
        self._initializing = False
        held = self._held
        if held is not None:  # the state in C (cosim.held_step)
            held.step(t0_ticks, t0_ticks + h_ticks)
            if not held.run.held:  # failed, interrupted or terminated: handed back
                self._held = None
            return
        ctx = self._ctx
        if ctx.ticks != t0_ticks:
            raise ContextError(f"subsystem '{self.name}' is at t = {ctx.time:.9g} s, "
                               f"asked to step from {t0_ticks * 1e-9:.9g} s")
        self._sim.advance_to_ticks(t0_ticks + h_ticks)
        self._hold()

    def get_outputs(self) -> dict[str, Any]:
        held = self._held
        if held is not None:
            return held.outputs()
        sig = self._ctx.signals
        return {n: sig[i] for n, i in self._out_slots}

    def expect(self, end_ticks: int) -> None:
        """The master will step this subsystem to tick ``end_ticks`` in many short steps (a
        real-time runner's frames): its Simulator (``compiled=None``) builds its C now,
        before the first frame, where the diagram can run in C
        (:meth:`cosim.compiled_route.CompiledRoute.expect`)."""
        self.sim.route.expect(end_ticks)

    def plan_run(self, end_ticks: int | None) -> None:
        """The master's run will step this subsystem to tick ``end_ticks``: its Simulator
        (``compiled=None``) weighs compiling on the work up to there, as a Simulator run to
        that end would (:meth:`cosim.compiled_route.CompiledRoute.plan_to`)."""
        self.sim.route.plan_to(end_ticks)

    def unread_inputs(self) -> set[str]:
        """Exported inputs whose every reader discards its input (a ``Terminator``)."""
        plan = self.wrapper.compile()
        readers: dict[int, list] = {}
        for port, slot in plan.input_slot.items():
            readers.setdefault(slot, []).append(port.block)
        out = set()
        for name, drv in self._drivers.items():
            blocks = readers.get(plan.output_slot[drv.y], [])
            if all(getattr(b, "discards_input", False) for b in blocks):
                out.add(name)
        return out

    def feedthrough(self) -> dict[str, set[str]]:
        plan = self.wrapper.compile()
        driver_slot = {plan.output_slot[d.y]: n for n, d in self._drivers.items()}
        out = {}
        for name, port in zip(self.output_names, self._out_ports):
            seen, stack, found = set(), [plan.producer[plan.output_slot[port]]], set()
            while stack:
                node = stack.pop()
                if node.index in seen:
                    continue
                seen.add(node.index)
                for s in node.reads:
                    if s in driver_slot:
                        found.add(driver_slot[s])
                    elif s in plan.producer:
                        stack.append(plan.producer[s])
            out[name] = found
        return out

    def output_jacobian(self, rel_step: float = 1e-7) -> dict:
        """``d output / d input`` at the current time and state, by finite differences.

        Each input with direct feedthrough is shifted by a constant ``delta``
        (its polynomial's constant term) and the outputs are re-evaluated; no
        state changes.  Returns ``{(output, input): array (out size, in size)}``
        for the pairs with feedthrough.
        """
        ft = self.feedthrough()
        sim, ctx = self.sim, self.ctx
        sim.evaluate_outputs()
        base = {o: np.ravel(np.asarray(v, float)).copy() for o, v in self.get_outputs().items()}
        out: dict = {}
        for name, drv in self._drivers.items():
            readers = [o for o in self.output_names if name in ft[o]]
            if not readers:
                continue
            saved = ctx.discrete(drv.poly)
            t0, c = saved
            size = 1 if drv.scalar else np.asarray(c).shape[1]
            value = np.ravel(np.asarray(ctx.output(drv.y), float))
            cols = {o: np.empty((base[o].size, size)) for o in readers}
            for j in range(size):
                delta = rel_step * max(1.0, abs(float(value[j])))
                if drv.scalar:
                    ctx.set_discrete(drv.poly, (t0, (c[0] + delta,) + tuple(c[1:])))
                else:
                    cp = np.array(c, dtype=float)
                    cp[0, j] += delta
                    ctx.set_discrete(drv.poly, (t0, cp))
                sim.evaluate_outputs()
                outs = self.get_outputs()
                for o in readers:
                    cols[o][:, j] = (np.ravel(np.asarray(outs[o], float)) - base[o]) / delta
                ctx.set_discrete(drv.poly, saved)
            for o in readers:
                out[(o, name)] = cols[o]
        sim.evaluate_outputs()
        return out

    def save_state(self) -> Any:
        return self.ctx.snapshot()

    def save_state_into(self, token: Any) -> Any:
        return self.ctx.snapshot(into=token)

    def restore_state(self, token: Any) -> None:
        self.ctx.restore(token)
        self.sim.reset_solver_history()
