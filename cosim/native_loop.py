r"""The macro-step loop of a master of native subsystems, in C.

A :class:`~cosim.master.MasterScheduler` whose subsystems are all
:class:`~cosim.subsystem.DiagramSubsystem`\ s pays, at every macro step, Python for the
coupling: the input polynomials, each subsystem's step and outputs, the histories.  When
those subsystems hold their state in C between steps (:mod:`cosim.held_step`: fixed-step
runs in C), that Python is most of the step's cost (the flagship's plant, one measurement
timing its subsystems' steps: about 65 of its 140 us, beside 19 us of C).
:class:`NativeLoop` runs the macro steps in one C function
(:mod:`cosim.codegen.native_loop_c`) that computes the polynomials from the histories,
writes them into each held C state, calls each subsystem's own ``cosim_sim_held_step`` and
pushes the outputs onto the histories; a subsystem that is not held in C (Python blocks such
as bridges, a Python route) is called back in Python for its step (its ``set_inputs``,
``do_step``, ``get_outputs``), so one Python subsystem does not turn the others back into
Python.  :class:`~cosim.native_session.NativeSession` is the loop stepped by its caller
(``master.stepper()``, the real-time master, ``master.run``).

Which subsystems run in C is decided each time the session plans (at its start, and again
whenever a subsystem's state was held or handed back since): held ones in C, the others
called back.  Until one is held (a subsystem's first step goes the whole way, its route
deciding), the session hands its steps to the Python loop.

Results: the same as the Python loop's bit for bit (the same polynomials, closed forms of
:meth:`SignalHistory.polynomial <cosim.extrapolation.SignalHistory.polynomial>` for orders 0
to 3: :func:`~cosim.extrapolation.lagrange_rows` from 3 samples on; the same C steps as
:mod:`cosim.held_step`'s; the same pushes), tested on generated masters against
``compiled=False`` (``tests/system/test_native_loop.py``).

A C step that does not complete (an error, a terminal event, a monitor acting) undoes the C
states of its macro step and hands the whole macro step to the Python loop, which runs it as
it always does (and raises its own error, or ends the run).  A Python subsystem's exception
(Ctrl-C included) stops the loop where it was raised, as in the Python loop.

Limitations
-----------
* Jacobi and Gauss-Seidel coupling, extrapolation orders 0 to 3, scalar float ports; no step
  control, power bonds, or algebraic loops of feedthrough outputs (feedthrough outputs
  settled by one sweep in dependency order are: :class:`~cosim.master_settle.Settler`'s
  sweep in C); the Python loop runs the others and says why in ``diagnostics["compiled"]``.
* Jacobi steps the subsystems held in C before the ones called back in Python (the results
  are the same: inputs are fixed before the steps and outputs published after them); the
  thread pool of ``Jacobi(parallel=True)`` is not used.  Gauss-Seidel keeps its order and
  calls back every subsystem after the first Python one.
* The per-subsystem wall times (``diagnostics``) are measured in C around each step and
  refresh (``CLOCK_MONOTONIC``), a Python subsystem's including the call back.
* Needs a C compiler on first use (then the cache, :mod:`cosim.codegen.cache`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .coupling import GaussSeidel, Jacobi
from .errors import BuildError
from .native_plan import library
from .native_session import NativeSession

__all__ = ["NativeLoop"]


class NativeLoop:
    """Decides whether a master of native subsystems can run in C (:meth:`reason`,
    :meth:`run_reason`) and runs it (:meth:`session`, :meth:`run`)."""

    chunk = 65536  #: at most this many steps per C call (1024 with stream writers)
    slice_s = 0.02  #: the wall time a C call aims at (Ctrl-C is seen that often)

    def reason(self, master: Any) -> str:
        """Why ``master`` cannot use the loop ('' when it can)."""
        from .subsystem import DiagramSubsystem
        c = master.coupling
        if type(c) not in (Jacobi, GaussSeidel):
            return (f"coupling '{c.name}' (the native loop runs Jacobi and Gauss-Seidel "
                    "coupling)")
        if master.step_control is not None:
            return "communication-step control"
        if master.bonds:
            return "power bonds (energy residuals)"
        for s in master.subsystems:
            if not isinstance(s, DiagramSubsystem):
                return f"subsystem '{s.name}' is not a native diagram ({type(s).__name__})"
            bad = [n for n in s.input_names + s.output_names
                   if s.shapes[n] != () or np.dtype(s.dtypes[n] or float).kind != "f"]
            if bad:
                return (f"subsystem '{s.name}': port {bad[0]!r} is not a scalar float (the "
                        "native loop couples scalar float signals)")
        high = sorted(f"{s}.{i}" for (s, i), o in master.input_orders.items() if o > 3)
        if high:
            return (f"extrapolation order above 3 ({', '.join(high)}; the native loop "
                    "extrapolates with orders 0 to 3)")
        try:
            library()
        except BuildError as exc:
            return f"the native loop could not be built: {exc}"
        return ""

    def run_reason(self, master: Any) -> str:
        """Reasons known only after initialization ('' when the loop can run)."""
        if master.settler.subs and not master.settler.once:
            return "an algebraic loop of feedthrough outputs (the loop solver)"
        return ""

    def session(self, master: Any, k: int) -> Any:
        """The loop stepped by its caller from ``master.t`` (macro step ``k``)."""
        return NativeSession(self, master, k, library())

    def run(self, master: Any, k: int, end: int, times: list, rows: Any) -> tuple:
        """Run the macro steps from ``master.t`` to ``end`` (:func:`cosim.session_run.run`)."""
        from .session_run import run
        return run(self.session(master, k), master, k, end, times, rows, self.chunk,
                   self.slice_s)
