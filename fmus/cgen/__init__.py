"""Generated-C FMU export: blocks and diagrams as portable FMI 2.0 / 3.0 FMUs.

:func:`fmus.export.export_fmu` turns a diagram into C: the model core
(``sources/model.h``, generated from the compiled plan: straight-line output
code in evaluation order, fused linear groups as matrix code with the
coefficients as literals, the blocks' own C for the rest, the discrete updates
per rate group, the fixed-step integrator and the stepping loop of the
Simulator) plus an FMI wrapper (``sources/model.c``), compiled with gcc into
``binaries/<platform>/<modelIdentifier>.so``.  The FMU needs no Python at run
time and supports FMU state get/set/serialize.

What can be exported
--------------------
========================  =========================================================
FMI 2.0 / 3.0             Co-Simulation, Model Exchange, or both in one FMU
blocks                    StateSpace, TransferFunction, FirstOrderLag, Integrator,
                          FilteredDerivative, PID (continuous, with limits and
                          anti-windup), Gain, Sum, Product, Saturation, DeadZone,
                          Abs, MinMax, Switch, UnitConversion, Mux, Demux,
                          RateLimiter, Relay, Table1D, Table2D, DiscreteStateSpace,
                          DiscreteTransferFunction, DiscreteIntegrator, DiscretePID,
                          UnitDelay, ZeroOrderHold, RateTransition, Constant, Step,
                          Ramp, Sine, TimeSource; any block with ``linear_model``
                          (its matrices as constants); any block with ``c_model``
                          or a registered description (:mod:`fmus.cgen.model`)
fused linear subsystems   straight-line ``A x + B v + e`` / ``C x + D v + f``
                          (linear algebraic loops are solved by the fusion)
Co-Simulation integrator  explicit Runge-Kutta (rk4, heun, midpoint, euler) with a
                          fixed internal step, or ``zoh``: the exact step of an
                          all-linear continuous part (matrix exponential in C)
Model Exchange            sample hits and time events as ``nextEventTime``; zero
                          crossings with C (``CZeroCrossing``) as state events
                          (event indicators)
input interpolation       Co-Simulation with a Runge-Kutta integrator: FMI 2
                          ``canInterpolateInputs`` (input derivatives of orders 1-3),
                          FMI 3 intermediate update at every stage
                          (``export_fmu(interpolate_inputs=...)``)
directional derivatives   outputs and state derivatives with respect to inputs and
                          states: the diagram's Jacobian through a tangent program
                          (fused linear groups exact, other blocks by central
                          differences of their own C; :mod:`cosim.codegen.tangent`)
units                     port and parameter units as ``UnitDefinitions``
                          (``cosim.units`` BaseUnit model)
========================  =========================================================

Limitations
-----------
* Zero crossings only in Model Exchange and only where the block's C description gives them
  (``CModel.zero_crossings``); no event iteration (a crossing a handler causes is seen at
  the next event); a direction-0 crossing whose witness stays exactly at 0 after its event
  is kept on the side it arrived on. No algebraic loops through nonlinear blocks, no Python
  code (a ``FunctionBlock`` whose function does not translate into C:
  :mod:`cosim.codegen.pyfunc`; ``ClosedFormSource``, ``FromArrays``/``FromFile``, ``Pulse``,
  time-event handlers, monitors are not exported).
* Signals and discrete states are doubles (bool/int discrete states are stored
  as 0/1 or the integer value); no Integer/Boolean/String FMI variables.
* Parameters of blocks fused into a linear group are baked into the fused
  matrices (``fuse_linear=False`` keeps them tunable unless a linear algebraic
  loop needs the fusion); sample periods, table breakpoints, PID limits and
  structural zeros are constants.  Tunable parameters are not validated in C
  (e.g. ``lower <= upper`` of a Saturation).
* Table extrapolation ``"error"`` makes the FMI call return an error status
  (the Python block raises); other Python exceptions of block arithmetic (a
  division by zero in ``Product``) become inf/NaN in C.  A continuous state that
  becomes non-finite fails the step with the state's name.
* Time is integer nanoseconds (as in the Simulator): communication points are
  rounded to 1 ns.  At a sample hit that coincides with a communication point
  a Co-Simulation FMU uses the inputs of the step that ends there (held, or with
  interpolation the importer's polynomial at that time, as a native
  ``DiagramSubsystem`` does); a Model Exchange FMU uses the inputs set at the event.
* A registered description also applies to subclasses (TransferFunction and
  FirstOrderLag use StateSpace's): a subclass that changes the arithmetic must
  give its own ``c_model``.  The descriptions of Saturation, DeadZone, Switch,
  Ramp and Sine read constants those blocks keep only in their output closures.
* Directional derivatives of blocks outside fused linear groups (nonlinear
  blocks; every block with ``fuse_linear=False``) are central differences: O(h^2),
  the mean slope at a kink within the step; none with respect to parameters, no
  adjoint derivatives.  Input derivatives above order 3 are an error;
  ``integrator="zoh"`` holds inputs (no interpolation); no output derivatives.
  FMI 3 without event mode, early return, intermediate get, clocks or Scheduled
  Execution; ``fmi3GetVariableDependencies`` is not provided (the model description
  has the dependencies).
* Binaries are compiled for Linux x86_64 (FMI 2 and 3) and aarch64 (FMI 3);
  elsewhere export a source FMU (``compile=False``).
* Results agree with the Simulator to rounding, not always to the last bit:
  NumPy's matrix products may sum in another order, and the Simulator uses a
  precomputed propagator matrix for all-linear models where the FMU takes the
  Runge-Kutta stages.
* The fused matrices are emitted as straight-line code (one term per nonzero):
  fine for hundreds of states, slow to compile for very large systems.

Headers
-------
``fmus/cgen/include`` holds the FMI 2.0 and 3.0 headers (2-clause BSD, from the
FMI standard as shipped with fmpy), so exporting needs gcc but not fmpy.
"""

from cosim.codegen import blocks as _blocks  # noqa: F401  (registers the built-in descriptions)

from .model import (
    CArray,
    CContext,
    CModel,
    CZeroCrossing,
    FMUExportError,
    c_float,
    find_c_model,
    linear_c_model,
    register_c_model,
    registered_types,
)

__all__ = ["CArray", "CContext", "CModel", "CZeroCrossing", "FMUExportError", "c_float",
           "find_c_model", "linear_c_model", "register_c_model", "registered_types"]
