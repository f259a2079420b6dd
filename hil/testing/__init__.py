"""HIL test steps: traces, conditions with margins, temporal checks, stimuli, captures and
measurement files, on any time series (a cosim ``Results``, a capture taken frame by frame,
plain arrays).  The pieces a HIL test case is written with (ASAM XIL's signal generator,
capture with triggers, and the checks), independent of the rig that feeds them.

==============================  ===========================================================
module                          contents
==============================  ===========================================================
:mod:`hil.testing.signals`      :class:`Trace` (times, named 1-D signals, units; hold-last
                                ``at``, ``slice``, ``window`` as a table), :class:`Recorder`
                                (a trace sample by sample)
:mod:`hil.testing.conditions`   ``sig("gap") >= 20``: conditions with margins (distance to
                                switching, in the signal's unit), ``& | ~``, callables
:mod:`hil.testing.checks`       ``eventually``, ``always``, ``settles``, ``responds``:
                                :class:`CheckResult` (when, by how much, the signals
                                around), :func:`check` raises :class:`CheckFailed`
:mod:`hil.testing.stimulus`     step, ramp, sine, square, pulse, table and replayed-trace
                                generators started/stopped by time or trigger;
                                :class:`Player` for a frame loop
:mod:`hil.testing.capture`      :class:`Capture`: start/stop triggers, pre-trigger history,
                                post-trigger time, decimation; fed per sample or a trace
:mod:`hil.testing.mdf`          :func:`write_mdf`, :func:`read_mdf`: ASAM MDF 4 (``.mf4``)
                                files of traces and raw CAN frames (asammdf, imported
                                when a file is written or read)
:mod:`hil.testing.rigfile`      rig files (TOML/YAML): buses, plant, controller, budgets,
                                the signal map; :func:`load_rig`
:mod:`hil.testing.rig`          :class:`Rig`: signals by test name, runs, stimuli,
                                captures, fault steps and checks on a virtual or real-time
                                rig (:mod:`hil.testing.rig_loop`)
:mod:`hil.testing.report`       the HTML report of HIL tests (``--hil-report``)
:mod:`hil.testing.errors`       :class:`TraceError`, :class:`WindowError`,
                                :class:`CheckFailed`, :class:`NotTriggered`,
                                :class:`CaptureIncomplete`
==============================  ===========================================================

Everything is sample-based (a signal is known at its samples; between them the last
sample holds) and times within 1 ns are equal.  The guides are
``docs/guides/hil-test-steps.md`` and, for test cases on a rig with the pytest plugin
(:mod:`hil.pytest_plugin`), ``docs/guides/hil-tests.md``.
"""

from .capture import Capture
from .checks import CheckResult, always, check, eventually, responds, settles
from .conditions import Cond, Evaluation, Expr, as_cond, sig
from .errors import CaptureIncomplete, CheckFailed, NotTriggered, TraceError, WindowError
from .mdf import Frame, Measurement, read_mdf, write_mdf
from .rig import Rig, RigError, RigNotConfigured, RigTimeout
from .rigfile import RigFileError, load_rig
from .signals import TIME_EPS, Recorder, Trace, Window, as_trace
from .stimulus import Player, Pulse, Ramp, Replay, Sine, Square, Step, Table

__all__ = [
    "Trace", "Window", "Recorder", "as_trace", "TIME_EPS",
    "sig", "Cond", "Expr", "Evaluation", "as_cond",
    "CheckResult", "check", "eventually", "always", "settles", "responds",
    "Step", "Ramp", "Sine", "Square", "Pulse", "Table", "Replay", "Player",
    "Capture",
    "Frame", "Measurement", "read_mdf", "write_mdf",
    "Rig", "RigError", "RigTimeout", "RigNotConfigured", "RigFileError", "load_rig",
    "TraceError", "WindowError", "CheckFailed", "NotTriggered", "CaptureIncomplete",
]
