r"""Shadow-model mode: a model beside the machine, driven by the machine's control signals.

The seed (research/seed-001.md sec. 1.10, 1.11 item 10): "control signals of existing reel
are utilized as input for the simulation model.  In this way, residuals of measured and
simulated state variables can be formed while the values of residual can be used to detect
abnormalities."  The machine is outside (a recording or a live stream); the model is a cosim
diagram whose exported inputs receive the machine's control signals (zero-order hold) and
whose outputs are compared with the machine's measurements.

>>> shadow = ShadowModel(model, inputs={"u": "u"},                    # doctest: +SKIP
...                      outputs={"y_meas": Residual("y", abs_threshold=0.05,
...                                                  persistence_s=0.02)},
...                      solver="rk4", dt=1e-3)
>>> report = shadow.replay("machine.csv", out="residuals.csv")       # doctest: +SKIP
>>> live = shadow.stream(out="live.csv")                             # doctest: +SKIP
>>> live.step(t, {"u": 1.0}, {"y_meas": 0.3})   # every frame        # doctest: +SKIP
>>> print(live.finish().summary())                                   # doctest: +SKIP

=============================  ======================================================
module                         contents
=============================  ======================================================
:mod:`hil.shadow.rules`        :class:`Residual`, :class:`RuleState`,
                               :func:`advance_rule`: the equations
:mod:`hil.shadow.recording`    :class:`Recording` (the machine data),
                               :class:`HeldSignal` (zero-order hold of an input)
:mod:`hil.shadow.report`       :class:`ShadowReport`, :class:`FaultEvent`, the
                               per-sample core of the recorded and streamed modes
:mod:`hil.shadow.model`        :class:`ShadowModel` (recorded), :class:`ShadowStream`
                               (streamed)
:mod:`hil.shadow.monitor`      :class:`ShadowMonitor` (in a diagram): its ports
:mod:`hil.shadow.errors`       :class:`ShadowDataError`
=============================  ======================================================

Feeding modes
-------------
* **recorded** (:meth:`ShadowModel.replay`): a :class:`Recording` (arrays, a cosim CSV or
  HDF5 results file, :class:`~cosim.observers.Results` or a pandas DataFrame) drives the
  model in one offline run, as fast as possible: each model input is a :class:`HeldSignal`
  (zero-order hold of the recorded samples, switching at the start of an integration
  interval; the instants where a value changes are breakpoints, so a variable-step solver
  restarts only there), and the residual is formed at every recording time in the range.
  The simulator must reach the recording times: those off its ``dt`` grid are made
  breakpoints too.
* **streamed** (:meth:`ShadowModel.stream`): :meth:`ShadowStream.step` ``(t, inputs,
  measured)`` per frame, from a live loop (the real-time runner's ``on_frame``, a CAN or DAQ
  callback): it advances the model from the previous frame to ``t`` with the previous
  inputs held, then forms the residuals at ``t`` with the new inputs.  On the same data and
  a fixed-step solver it gives the recorded mode's residuals (tested to 1e-12); a
  variable-step solver is restarted every frame.
* **in a diagram** (:class:`ShadowMonitor`): a sampled block with typed input ports for
  measured and simulated signals, for a diagram that holds the model and the bridge blocks
  of the machine's I/O, paced by :class:`~hil.runner.RealTimeRunner`.  Same rule
  (:func:`advance_rule`), state in the context (rollback works); its outputs at a sample hit
  already include that sample (no one-sample delay).  Fault events are not listed by the
  block: record its ``flag_*`` outputs.

Errors: an unknown signal or port name lists the valid ones (:class:`~cosim.errors.PortError`);
incompatible units are refused (:class:`~cosim.errors.UnitError`); a non-finite machine value,
unsorted times or a recording that does not cover the requested range raise
:class:`ShadowDataError` with the signal and time.

Limitations
-----------
* No online parameter estimation: the seed's second idea ("using parameter estimation, the
  simulation model can be updated so that the simulation model functions like an existing
  system") is not built; the model runs with fixed parameters and its own initial state
  (``setup(ctx)`` sets it).  A model that drifts from a healthy machine gives residuals.
* Scalar signals only; zero-order hold only (no interpolation of the control signals).
  Every change of a recorded control signal is a breakpoint: a signal that changes at
  every sample restarts a variable-step solver at every sample (prefer a fixed-step one).
* Measurement delays and clock offsets between machine and model are not estimated: the
  recording's time stamps are taken as the model's time (rounded to 1 ns).
* The report keeps every sample in memory too (for its arrays); a very long live run
  should be cut into sessions.
* Events of a non-latched rule that chatters at the threshold are reported one by one (no
  release hysteresis).
"""

from .errors import ShadowDataError
from .model import ShadowModel, ShadowStream
from .monitor import ShadowMonitor
from .recording import HeldSignal, Recording
from .report import FaultEvent, ShadowReport
from .rules import Residual, RuleState, advance_rule

__all__ = ["FaultEvent", "HeldSignal", "Recording", "Residual", "RuleState", "ShadowDataError",
           "ShadowModel", "ShadowMonitor", "ShadowReport", "ShadowStream", "advance_rule"]
