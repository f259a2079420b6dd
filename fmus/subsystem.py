r"""A Co-Simulation FMU as a subsystem of the co-simulation master.

:class:`FMUSubsystem` implements :class:`cosim.subsystem.Subsystem` over one
FMU instance (FMI 2.0 or 3.0 Co-Simulation, through fmpy's low-level
classes; fmpy's one-shot ``simulate_fmu`` is never used).  The master sees
an ordinary subsystem:

* ports from the model description: every ``input`` and ``output`` of type
  Real/Float, Integer (every FMI 3 width), Enumeration and Boolean (FMI 3 arrays as
  array ports), and scalar String and Binary ones (``str`` and ``bytes`` values),
  units mapped to cosim units (:mod:`fmus.description`), so the master's connections
  convert and reject units as for any subsystem; non-Real values pass exactly
  (Python ints, bools, str, bytes, held over the step: the master never extrapolates
  nor iterates them);
* an input left unconnected in the master keeps the FMU's start value (or the
  ``start=`` value): ``optional_inputs`` lists them;
* ``terminateSimulation`` (FMI 2: ``fmi2Discard`` with ``fmi2Terminated``; FMI 3: the
  ``terminate`` flag of ``doStep`` or of the event iteration) ends the master's run
  cleanly after that communication point, with the reason in
  ``results.diagnostics["terminated"]``;
* ``initialize`` enters Initialization Mode and stays there: ``set_inputs`` +
  ``refresh_outputs`` set the inputs and read the initial outputs in it (as FMPy sets
  inputs before ``exitInitializationMode``), ``finish_initialization`` (called by the
  master, else by the first ``do_step``) sets the inputs given and leaves it;
  ``initial_feedthrough`` gives the master the outputs' dependencies at initialization
  (``ModelStructure/InitialUnknowns``) to order or iterate the connected FMUs by;
* ``set_inputs(t0, polys)`` keeps the master's polynomials; the values at the
  start of the step are set before ``doStep``.  An FMI 2 FMU with
  ``canInterpolateInputs`` also gets the polynomial's time derivatives
  (``fmi2SetRealInputDerivatives``, up to ``input_derivative_order`` and the
  FMU's ``maxInputDerivativeOrder``); an FMI 3 FMU with
  ``providesIntermediateUpdate`` gets the polynomial's value at each
  intermediate update for inputs flagged ``intermediateUpdate``.  Every other
  input is held over the step, so ``max_input_order`` is 0 for it and the
  master gives it a constant: the newest value, i.e. the end-of-step iterate
  under iterative coupling (and the source's new output for Gauss-Seidel's
  later subsystems), the start value when it extrapolates;
* ``do_step`` is one ``doStep`` (FMI 3: early returns are continued to the end
  of the communication step, with event mode handled in between when
  ``hasEventMode``; the event times are kept in :attr:`events`);
* ``save_state``/``restore_state`` use ``get/setFMUstate`` when the FMU has
  ``canGetAndSetFMUstate`` (``can_save_state``), so rollback-based couplings
  and Richardson step control work; otherwise the master refuses them;
* ``feedthrough`` comes from ``ModelStructure/Outputs`` dependencies (missing
  ``dependencies`` means all inputs, as FMI says; override with
  ``feedthrough={...}``); ``output_jacobian`` uses directional derivatives
  when the FMU provides them, else finite differences of set-inputs /
  get-outputs at the communication point (for the master's Newton loop
  solver);
* every run reuses the instance with ``reset`` (a fresh instance after an
  error); parameters and ``start=`` values are set before initialization (FMI 3
  structural parameters in Configuration Mode; only values differing from the
  model description's start values), tunable ones also between steps
  (:meth:`set_parameter`).

Ports
-----
======  ======================================  =====================================
in      each FMU ``input`` (any type)           unit from the FMU, start as its value
out     each FMU ``output`` (any type)          feedthrough from ``ModelStructure``
======  ======================================  =====================================

Data-exchange timing (no interpolation, the FMU holds its inputs)::

    master:  set u ---- doStep(t_k, H) ----> get y(t_k + H)
    FMU:     u held over [t_k, t_k + H] (with canInterpolateInputs or intermediate
             update: the master's polynomial instead)
    u:       Jacobi / first of Gauss-Seidel: y(t_k) (extrapolation at t_k)
             later Gauss-Seidel subsystems:  y(t_k + H) of the ones before
             iterative coupling:             the iterate z at t_k + H

Limitations
-----------
* A CS FMU without ``canInterpolateInputs`` (FMI 2) or intermediate update (FMI 3)
  holds each input constant over the communication step, as FMI prescribes
  (``max_input_order`` 0): the master lowers the order of its inputs to 0 (warning
  when an order was given explicitly), so its side of the coupling is of order 1
  whatever the extrapolation (iterative coupling included: an implicit order-1
  coupling, tests/system/test_master_fmu_coupling.py).
* String and Binary *arrays* and FMI 3 clocks are not ports (String and Binary
  arrays take ``start=`` values); scalar String and Binary signals are ports (dtype
  :data:`cosim.ports.STRING` / :data:`~cosim.ports.BINARY`) and are written to the
  results files (:mod:`cosim.csv_results`); Scheduled Execution is not supported; output
  derivatives (``maxOutputDerivativeOrder``) are not used; arrays of inputs have
  no directional-derivative Jacobian (finite differences are used).
* A discarded step (``fmi2Discard`` without ``fmi2Terminated``) raises
  :class:`~fmus.errors.FMUDiscardError`: the master has no retry-with-a-smaller-step
  protocol for it.
* A termination inside a communication step (FMI 3 early return with ``terminate``)
  ends the run at the communication point after it; the exact time is in the reason.
* An FMU without ``canHandleVariableCommunicationStepSize`` is refused a step of
  another size than its first (so no step control).
* An FMU without ``canGetAndSetFMUstate`` cannot be rolled back: the master
  refuses iterative coupling, Richardson step control and the high-order start
  for it (``can_save_state`` is False).
* FMI 3: the importer never asks for an early return itself; events the FMU
  reports are handled and kept in :attr:`events`, not published to the master
  as extra communication points.
* After an FMI status ``Fatal`` the instance is not freed (FMI allows no further
  call; freeing a pythonfmu instance then corrupts the host's heap) and a new one
  is made for the next run; ``out_of_process=True`` contains such FMUs.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from cosim.errors import ContextError, RateError, StepError
from cosim.subsystem import Subsystem
from cosim.time import format_time

from .compiled_master import compiled_loop
from .cs_inputs import group_values, poly_derivative
from .errors import FMUConfigError, FMUDiscardError, FMUError
from .fmu_file import FMUFile as FMU
from .instance import (
    check_value,
    is_port_var,
    port_dtype,
    set_before_init,
    set_variables,
)
from .opening import open_instance
from .subsystem_jacobian import OutputJacobian

__all__ = ["FMUSubsystem"]

_NS = 1e-9


def _cs_features(info: Any, caps: dict, early_return: bool, event_mode: bool,
                 intermediate_update: bool) -> dict:
    """The FMI 3 Co-Simulation features a subsystem uses (those asked for that the FMU
    has), and the instance options they need."""
    fmi3 = info.fmi_major == 3
    early = bool(early_return and fmi3 and caps.get("mightReturnEarlyFromDoStep"))
    events = bool(event_mode and fmi3 and caps.get("hasEventMode"))
    inter_vars = [v for v in info.inputs if is_port_var(v) and v.intermediate_update
                  and v.kind == "real" and not v.shape]
    inter = bool(intermediate_update and fmi3 and inter_vars
                 and caps.get("providesIntermediateUpdate"))
    return dict(early_return=early, event_mode=events, intermediate=inter,
                inter_vars=inter_vars,
                options=dict(early_return=early, event_mode=events,
                             intermediate_vrs=[v.vr for v in inter_vars] if inter else None))


def intermediate_polynomials(s: Any) -> tuple | None:
    """``(key, t0, coefficients per variable)`` of an FMI 3 subsystem's inputs flagged
    ``intermediateUpdate`` for the step set up by ``set_inputs`` (the driver's
    ``set_intermediate``), or ``None`` (no intermediate update, or one of them unconnected)."""
    if not s.intermediate or not s._polys:
        return None
    coeffs = []
    for v in s._inter_vars:
        c = s._polys.get(v.port)
        if c is None:
            return None
        coeffs.append([float(x) for x in (c if isinstance(c, tuple)
                                          else np.asarray(c, float)[:, 0])])
    return (s._inter_key, s._poly_t0, coeffs)


class FMUSubsystem(Subsystem):
    """A Co-Simulation FMU for :class:`~cosim.master.MasterScheduler` (module docstring).

    A master whose subsystems are all FMUs runs its macro steps in C where it can
    (:mod:`fmus.compiled_master`, offered as :attr:`compiled_loop`).

    Parameters
    ----------
    fmu : FMU or path
        The FMU (:class:`~fmus.importer.FMU` or a ``.fmu`` path).
    name : str, optional
        Subsystem name (default: the model name).
    parameters : dict, optional
        ``{variable: value}`` set before initialization (names or port names).
    start : dict, optional
        ``{variable: value}`` start values of any variable FMI lets an importer set
        before initialization: parameters, inputs (the value an unconnected input
        keeps), variables with ``initial="exact"``/``"approx"``, String and Binary
        variables (Binary as bytes or a hex string).
    rate : int
        Steps every ``rate`` macro steps (:class:`~cosim.subsystem.Subsystem`).
    tolerance, stop_time : float, optional
        Passed to the FMU's experiment set-up.
    feedthrough : dict, optional
        ``{output: [inputs]}`` replacing the model description's dependencies
        (many exporters omit them, which means "all inputs").
    input_derivative_order : int
        Highest input derivative passed to FMI 2 FMUs with ``canInterpolateInputs``
        (0 disables it).
    intermediate_update : bool
        FMI 3: give the FMU the inputs flagged ``intermediateUpdate`` at every
        intermediate update it asks for (the polynomial at that time), where it has
        ``providesIntermediateUpdate``.
    early_return, event_mode : bool
        FMI 3: allow early return from ``doStep`` / use event mode, where the FMU
        supports them.
    out_of_process : bool
        Run the FMU in a child process with a watchdog (:mod:`fmus.remote`).
    timeout_s : float, optional
        Watchdog time per FMU call in the out-of-process mode.
    call_log : callable or path, optional
        Receives every FMI call as a line (a path: appended to that file).
    logging_on : bool
        Ask the FMU for debug logging (its messages go into error messages).
    check : bool
        Check the FMU's instantiation token now (:meth:`fmus.fmu_file.FMUFile.check_instance`:
        free when the token occurs in the binary, else one instantiate-and-free), so a
        wrong token is a build error, not a failure at the first step.
    """

    #: the compiled macro-step loop a master of FMUs may use (:mod:`fmus.compiled_master`)
    compiled_loop = compiled_loop

    def __init__(self, fmu: FMU | str | os.PathLike, name: str | None = None, *,
                 check: bool = True,
                 parameters: dict | None = None, start: dict | None = None,
                 rate: int = 1,
                 tolerance: float | None = None, stop_time: float | None = None,
                 feedthrough: dict | None = None, input_derivative_order: int = 3,
                 intermediate_update: bool = True,
                 early_return: bool = True, event_mode: bool = True,
                 out_of_process: bool = False, timeout_s: float | None = 10.0,
                 call_log: Any = None, logging_on: bool = False) -> None:
        def features(info: Any, caps: dict) -> dict:
            return _cs_features(info, caps, early_return, event_mode, intermediate_update)

        op = open_instance(fmu, "CoSimulation", name, kind="subsystem", check=check,
                           parameters=parameters, start=start, out_of_process=out_of_process,
                           timeout_s=timeout_s, call_log=call_log, logging_on=logging_on,
                           driver_options=lambda info, caps: features(info, caps)["options"])
        fmu, info, caps = self.fmu, self.info, self.caps = op.fmu, op.info, op.caps
        self.inst = op.inst
        self.name = op.name
        if int(rate) < 1:
            raise RateError(f"subsystem '{self.name}': rate must be an integer >= 1, got "
                            f"{rate!r}")
        self.rate = int(rate)
        self.tolerance, self.stop_time = tolerance, stop_time
        self.can_save_state = bool(caps.get("canGetAndSetFMUstate"))
        self.variable_step = bool(caps.get("canHandleVariableCommunicationStepSize"))
        feat = features(info, caps)
        self.fmi3 = info.fmi_major == 3
        self.early_return = feat["early_return"]
        self.event_mode = feat["event_mode"]
        self.intermediate = feat["intermediate"]
        inter_vars = feat["inter_vars"]
        self.in_vars = [v for v in info.inputs if is_port_var(v)]
        self.out_vars = [v for v in info.outputs if is_port_var(v)]
        if not self.out_vars:
            raise FMUConfigError(f"subsystem '{self.name}': FMU '{fmu.path.name}' has no "
                                 "outputs to exchange (String and Binary arrays are not "
                                 "ports)")
        self.input_names = [v.port for v in self.in_vars]
        self.output_names = [v.port for v in self.out_vars]
        self.shapes = {v.port: v.shape for v in self.in_vars + self.out_vars}
        self.units = {v.port: v.unit for v in self.in_vars + self.out_vars}
        self.dtypes = {v.port: np.dtype(port_dtype(v)) for v in self.in_vars + self.out_vars}
        self._in_by_port = {v.port: v for v in self.in_vars}
        self.params = op.params
        #: values of inputs left unconnected (start values), set as any other input
        self._held = {v.port: op.starts.get(v, v.start) for v in self.in_vars}
        self.optional_inputs = frozenset(p for p, x in self._held.items() if x is not None)
        self._start_values = op.other_starts(inputs=True)
        self._ft = self._feedthrough(feedthrough)
        interp_ok = caps.get("canInterpolateInputs") and not self.fmi3
        max_deriv = caps.get("maxInputDerivativeOrder")
        self.deriv_order = int(input_derivative_order) if interp_ok else 0
        if isinstance(max_deriv, int) and max_deriv >= 1:
            self.deriv_order = min(self.deriv_order, max_deriv)
        # the polynomial degree each input follows within a step (the master lowers the
        # order it gives to this): input derivatives (FMI 2), the polynomial at each
        # intermediate update (FMI 3), else held (0: the newest value)
        inter_ports = {v.port for v in inter_vars} if self.intermediate else set()
        self.max_input_order = {
            v.port: (min(3, self.deriv_order) if v.kind == "real" else 0) if self.deriv_order
            else (3 if v.port in inter_ports else 0) for v in self.in_vars}
        # value-reference sets, one per FMI type (keys stay valid across instances)
        self._in_groups = self._groups(self.in_vars)
        self._out_groups = self._groups(self.out_vars)
        self._out_keys = [k for k, _ in self._out_groups]
        self._fast_plan()
        real_in = [v for v in self.in_vars if v.kind == "real"]
        self._deriv_key = (self.inst.register(real_in[0].type, [v.vr for v in real_in],
                                              sum(v.size for v in real_in))
                           if real_in and self.deriv_order else None)
        self._deriv_vars = real_in
        self._inter_vars = inter_vars
        self._inter_key = (self.inst.register(inter_vars[0].type, [v.vr for v in inter_vars])
                           if self.intermediate else None)
        self._param_keys: dict = {}
        self._pushed: dict = {}
        #: d output / d input (an object the subsystem holds: fmus/subsystem_jacobian.py)
        self.jacobian = OutputJacobian(
            self, in_vars=self.in_vars, out_vars=self.out_vars, feedthrough=self._ft,
            in_groups=self._in_groups, out_keys=self._out_keys, sent=self._pushed,
            directional=bool(caps.get("providesDirectionalDerivative")))
        self._polys: dict = {}
        self._poly_t0 = 0.0
        self._outs: list | None = None
        self._initializing = False  # in Initialization Mode (initialize ... finish)
        self._out_dict: dict | None = None
        self._t: int | None = None
        self._h_first: int | None = None
        self._sent_orders = 0
        self._pending_params: dict = {}
        self.events: list[float] = []
        self.steps = 0
        self.terminated: dict | None = None

    # ------------------------------------------------------------ set-up
    def _groups(self, variables: list) -> list:
        by_type: dict[str, list] = {}
        for v in variables:
            by_type.setdefault(v.type, []).append(v)
        out = []
        for typ, vs in by_type.items():
            key = self.inst.register(typ, [v.vr for v in vs], sum(v.size for v in vs))
            out.append((key, vs))
        return out

    def _fast_plan(self) -> None:
        """Scalar Real groups (the common case) skip the per-variable conversions."""
        self._in_fast = [(key, tuple(v.port for v in vs),
                          all(v.kind == "real" and not v.shape for v in vs))
                         for key, vs in self._in_groups]
        self._out_fast = [(tuple(v.port for v in vs),
                           all(v.kind == "real" and not v.shape for v in vs))
                          for _, vs in self._out_groups]
        self._out_single = (self._out_fast[0][0] if len(self._out_fast) == 1
                            and self._out_fast[0][1] else None)

    def _feedthrough(self, override: dict | None) -> dict[str, set[str]]:
        ins = {v.name: v.port for v in self.in_vars}
        out = {}
        for v in self.out_vars:
            deps = self.info.feedthrough.get(v.name)
            out[v.port] = set(ins.values()) if deps is None else {ins[d] for d in deps
                                                                  if d in ins}
        for key, deps in (override or {}).items():
            var = self.info.variable(key)
            if var.port not in out:
                raise FMUConfigError(f"subsystem '{self.name}': feedthrough names {key!r}, "
                                     f"which is not an output; outputs: "
                                     f"{', '.join(out)}")
            ports = set()
            for d in deps:
                dv = self.info.variable(d)
                if dv.port not in ins.values():
                    raise FMUConfigError(f"subsystem '{self.name}': feedthrough of {key!r} "
                                         f"names {d!r}, which is not an input")
                ports.add(dv.port)
            out[var.port] = ports
        return out

    def feedthrough(self) -> dict[str, set[str]]:
        return {k: set(v) for k, v in self._ft.items()}

    def initial_feedthrough(self) -> dict[str, set[str]]:
        """The inputs each output depends on in Initialization Mode
        (``ModelStructure/InitialUnknowns``; an unlisted output with ``initial="exact"``:
        none; one the list misses, or an FMU listing no initial unknowns: all), joined with
        :meth:`feedthrough`."""
        ins = {v.name: v.port for v in self.in_vars}
        out = {}
        for v in self.out_vars:
            deps = self.info.initial_feedthrough.get(v.name)
            out[v.port] = set(ins.values()) if deps is None else {ins[d] for d in deps
                                                                  if d in ins}
            out[v.port] |= self._ft.get(v.port, set())
        return out

    def check_step(self, h_ticks: int) -> None:
        """Called by the master with the communication step (ticks)."""
        if h_ticks <= 0:
            raise RateError(f"subsystem '{self.name}': communication step must be positive")

    def set_parameter(self, name: str, value: Any) -> None:
        """Set a parameter for the next run; a ``tunable`` one also from the next step on.

        A ``fixed`` parameter changed during a run takes effect at the next
        ``initialize`` (FMI allows setting it only before initialization).
        """
        var = self.info.variable(name)
        if var.causality not in ("parameter", "structuralParameter"):
            raise FMUConfigError(f"subsystem '{self.name}': {var.name!r} is a "
                                 f"{var.causality}, not a parameter")
        val = check_value(var, value, f"subsystem '{self.name}'")
        if self.inst.initialized and var.variability == "tunable":
            self._pending_params[var] = val
        self.params[var] = val

    # -------------------------------------------------------- lifecycle
    def initialize(self, t0_ticks: int) -> None:
        inst = self.inst
        drv = inst.start()
        self.event_mode = bool(inst.opts.get("event_mode"))  # False if the FMU refused it
        self._pushed.clear()
        self._pending_params.clear()
        self._sent_orders = 0
        self.events = []
        self.steps = 0
        self.terminated = None
        self._h_first = None
        t0 = t0_ticks * _NS
        try:
            set_before_init(inst, self._param_keys, self.params, self._start_values)
            drv.enter_initialization(t0, self.tolerance, self.stop_time)
            self._initializing = True
            self._outs = [drv.get(k) for k in self._out_keys]
        except FMUError:
            inst.broken = True
            raise
        self._out_dict = None
        self._t = t0_ticks
        self._polys = {}

    def finish_initialization(self) -> None:
        """Set the inputs given since :meth:`initialize` and leave Initialization Mode
        (FMI 3 with event mode: the event iteration, then Step Mode); the outputs are read
        again.  :meth:`do_step` calls it when the master did not."""
        if not self._initializing:
            return
        inst, drv = self.inst, self.inst.drv
        t0 = self._t * _NS
        try:
            for key, vals in self._input_sets(t0):
                drv.set(key, vals)
            drv.exit_initialization()
            self._initializing = False
            inst.initialized = True
            if self.event_mode:  # FMI 3: Event Mode after initialization
                terminate, _, _ = drv.event_iteration()
                if terminate:
                    self._terminate(t0, "during initialization")
                drv.enter_step_mode()
            self._outs = [drv.get(k) for k in self._out_keys]
        except FMUError:
            inst.broken = True
            raise
        self._out_dict = None

    def _terminate(self, t: float, when: str = "") -> None:
        self.terminated = {"t": t, "reason": f"FMU '{self.fmu.path.name}' asked to terminate "
                           f"the simulation (terminateSimulation) at t = {t:.9g} s"
                           + (f" {when}" if when else "")}

    def set_inputs(self, t0: float, polys: dict[str, Any]) -> None:
        self._poly_t0 = t0
        self._polys = polys

    def _input_sets(self, t: float) -> list:
        """``(key, values)`` for the input groups whose values at ``t`` changed."""
        polys = self._polys
        if not polys:
            return []
        tau = t - self._poly_t0
        if abs(tau) < 1e-12:
            tau = 0.0
        sets = []
        pushed = self._pushed
        if self._sent_orders:
            # an FMU may move its inputs along the derivatives' polynomial over the step (the
            # project's exported FMUs hold u at its end-of-step value): set them all again
            pushed.clear()
        for (key, ports, fast), (_, vs) in zip(self._in_fast, self._in_groups):
            if fast and tau == 0.0:
                try:
                    vals = [polys[p][0] for p in ports]
                except KeyError:  # some input of the group unconnected: the slow path
                    vals = group_values(vs, self._polys, self._held, self.optional_inputs, tau)
                    if vals is None:
                        continue
                if type(vals[0]) is not float:
                    vals = [float(np.ravel(x)[0]) for x in vals]
            else:
                vals = group_values(vs, self._polys, self._held, self.optional_inputs, tau)
                if vals is None:
                    continue
            if pushed.get(key) != vals:
                pushed[key] = vals
                sets.append((key, vals))
        return sets

    def _input_derivs(self, t: float) -> list:
        if self._deriv_key is None or not self._polys:
            return []
        order = 0
        for v in self._deriv_vars:
            c = self._polys.get(v.port)
            if c is not None:
                order = max(order, len(c) - 1)
        order = min(order, self.deriv_order)
        tau = t - self._poly_t0
        out = []
        for k in range(1, max(order, self._sent_orders) + 1):
            vals = []
            for v in self._deriv_vars:
                c = self._polys.get(v.port)
                if c is None or k > order:
                    vals.extend([0.0] * v.size)
                else:
                    d = poly_derivative(c, tau, k)
                    if type(d) is float:
                        vals.append(d)
                    else:
                        vals.extend(d.ravel().tolist())
            out.append((self._deriv_key, k, vals))
        self._sent_orders = order
        return out

    def do_step(self, t0_ticks: int, h_ticks: int) -> None:
        if self._t != t0_ticks:
            where = "not initialized" if self._t is None else \
                f"at t = {self._t * _NS:.9g} s"
            raise ContextError(f"subsystem '{self.name}' is {where}, asked to step from "
                               f"{t0_ticks * _NS:.9g} s")
        if self._h_first is None:
            self._h_first = h_ticks
        elif h_ticks != self._h_first and not self.variable_step:
            raise StepError(f"subsystem '{self.name}': FMU '{self.fmu.path.name}' cannot "
                            "handle a variable communication step "
                            "(canHandleVariableCommunicationStepSize=false): it started with "
                            f"{format_time(self._h_first)}, asked for {format_time(h_ticks)}; "
                            "use a fixed macro step without step control")
        if self._initializing:
            self.finish_initialization()
        drv = self.inst.drv
        t, h = t0_ticks * _NS, h_ticks * _NS
        t_end = (t0_ticks + h_ticks) * _NS
        try:
            if self._pending_params:
                set_variables(self.inst, self._param_keys, self._pending_params)
                self._pending_params.clear()
            inter = intermediate_polynomials(self)
            res, outs = drv.cs_step(t, h, not self.can_save_state, self._input_sets(t),
                                    self._input_derivs(t), self._out_keys, inter)
            if inter is not None:  # the intermediate updates moved the inputs along the
                self._pushed.clear()  # polynomial: what was set before no longer stands
            if res[0] != "ok" or res[1] or res[2] or res[3]:  # (else finish_step: outs)

                def resume(t: float) -> tuple:  # an early return: on from where it stopped
                    return drv.cs_step(t, t_end - t, not self.can_save_state,
                                       self._input_sets(t), self._input_derivs(t),
                                       self._out_keys, intermediate_polynomials(self))
                outs = self.finish_step(res, t, h, t_end, outs, resume)
        except FMUError:
            self.inst.broken = True
            raise
        self._outs = outs
        self._out_dict = None
        self._t = t0_ticks + h_ticks
        self.steps += 1

    def finish_step(self, res: tuple, t: float, h: float, t_end: float, outs: Any,
                    resume: Any) -> Any:
        """The rest of a step after its first ``doStep`` result ``res`` (``(status, event,
        terminate, early, last)``): termination, a discard, FMI 3 Event Mode, an early
        return continued by ``resume(t)`` (``(res, outs)``).  Returns the outputs (``outs``
        or read again).  Also the compiled loop's (:mod:`fmus.compiled_master`) for the
        steps that need it."""
        drv = self.inst.drv
        while True:
            status, event, terminate, early, last = res
            if terminate:  # not an error: the run ends after this step
                self._terminate(last)
                try:
                    outs = [drv.get(k) for k in self._out_keys]
                except FMUError:  # FMI 2 after a discard: the last outputs stand
                    outs = self._outs
                return outs
            if status == "discard":
                err = FMUDiscardError(
                    f"subsystem '{self.name}': FMU '{self.fmu.path.name}' discarded the "
                    f"step from t = {t:.9g} s (h = {h:g} s), reaching t = {last:.9g} s; "
                    "reduce the macro step (or use step control with a smaller h_max)",
                    "doStep", "discard", t, drv.log_lines())
                err.last_time = last
                raise err
            if event and self.event_mode:
                drv.enter_event_mode()
                term, _, _ = drv.event_iteration()
                if term:
                    self._terminate(last)
                    self.events.append(last)
                    return [drv.get(k) for k in self._out_keys]
                drv.enter_step_mode()
            if not early or last >= t_end - 1e-12 * max(1.0, abs(t_end)):
                if event:
                    self.events.append(last)
                    outs = [drv.get(k) for k in self._out_keys]
                return outs
            # early return: continue from where the FMU stopped
            self.events.append(last)
            if last <= t:
                raise StepError(f"subsystem '{self.name}': FMU '{self.fmu.path.name}' "
                                f"returned early at t = {last:.9g} s without progress")
            t = last
            res, outs = resume(t)

    def output_jacobian(self, rel_step: float = 1e-7) -> dict:
        """``{(output, input): d output / d input}`` for the feedthrough pairs
        (:class:`~fmus.subsystem_jacobian.OutputJacobian`)."""
        return self.jacobian(rel_step)

    def take_outputs(self, outs: list) -> None:
        """The output values ``outs`` (per output key) were just read from the FMU."""
        self._outs = outs
        self._out_dict = None

    def get_outputs(self) -> dict[str, Any]:
        d = self._out_dict
        if d is None:
            if self._out_single is not None:  # one group of scalar Reals: the common case
                d = self._out_dict = dict(zip(self._out_single, self._outs[0]))
                return d
            d = {}
            for (_, vs), (ports, fast), vals in zip(self._out_groups, self._out_fast,
                                                    self._outs):
                if fast:
                    d.update(zip(ports, vals))
                    continue
                i = 0
                for v in vs:
                    if v.shape:
                        n = v.size
                        d[v.port] = np.asarray(vals[i:i + n], dtype=v.dtype).reshape(v.shape)
                        i += n
                    else:
                        x = vals[i]
                        kind = v.kind
                        d[v.port] = float(x) if kind == "real" else int(x) if kind == "int" \
                            else bool(x) if kind == "bool" else x  # str / bytes as they are
                        i += 1
            self._out_dict = d
        return d

    def refresh_outputs(self) -> None:
        drv = self.inst.drv
        t = (self._t or 0) * _NS
        try:
            for key, vals in self._input_sets(t):
                drv.set(key, vals)
            self._outs = [drv.get(k) for k in self._out_keys]
        except FMUError:
            self.inst.broken = True
            raise
        self._out_dict = None

    # ---------------------------------------------------------- rollback
    def save_state(self) -> Any:
        return self.save_state_into(None)

    def save_state_into(self, token: Any) -> Any:
        """:meth:`save_state` into ``token`` (the FMU overwrites the state it holds:
        :meth:`FMUInstance.save <fmus.instance.FMUInstance.save>`; ``None``: a new token)."""
        if not self.can_save_state:
            return super().save_state()
        # what a saved state keeps besides the FMU's own
        extra = (self._t, self._outs, self._sent_orders, len(self.events), self._h_first,
                 self.terminated)  # the inputs set are not kept: a restore sets them all again
        return self.inst.save(extra, into=token)

    def restore_state(self, token: Any) -> None:
        if not self.can_save_state:
            return super().restore_state(token)
        self.inst.restore(token)
        t, outs, orders, nev, h_first, self.terminated = token.extra
        self._t, self._outs, self._sent_orders = t, outs, orders
        self._h_first = h_first
        self._pushed.clear()  # the FMU state holds its own inputs: push all again
        del self.events[nev:]
        self._out_dict = None

    # ------------------------------------------------------------- misc
    def free(self) -> None:
        """Free the FMU instance now (a later ``initialize`` makes a new one)."""
        self.inst.free()

    def __repr__(self) -> str:
        return f"<FMUSubsystem '{self.name}' ({self.fmu.path.name})>"
