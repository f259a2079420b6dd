"""The Scheduled Execution layer of an FMU driver (FMI 3 only):
:class:`ScheduledExecutionDriver`.

Instantiation with a clockUpdate callback of ours, one model partition per call
(:meth:`ScheduledExecutionDriver.se_activate`), clocks, intervals and shifts.

Partitions run one after another, never preempted (the preemption locks are empty).
"""

from __future__ import annotations

import ctypes
from typing import Any

from .driver_base import Driver
from .errors import FMUCallError
from .fmi_calls import FmiCalls

__all__ = ["ScheduledExecutionDriver"]


class ScheduledExecutionDriver(Driver, interface="SE"):
    """A Scheduled Execution instance (:class:`~fmus.driver_base.Driver` plus the calls
    of Scheduled Execution)."""

    def __init__(self, spec, calls: FmiCalls) -> None:
        super().__init__(spec, calls)
        self._activate = calls.fn("fmi3ActivateModelPartition")
        self._se_query: tuple | None = None  # what the clockUpdate callback asks for
        self._se_seen: tuple = ([], {})       # what it got: (ticked vrs, {vr: interval})
        self._se_error: Exception | None = None

    def _instantiate(self) -> None:
        self.calls.instantiate_scheduled(self.messages.record, self._clock_update)

    def _call_fmi(self, name: str, *args: Any) -> Any:
        try:
            return getattr(self.fmu, name)(self.component, *args)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, name) from None

    def _clock_update(self, env: Any) -> None:
        """The FMU's ``fmi3ClockUpdateCallback`` (Clock Update Mode, inside
        ``fmi3ActivateModelPartition``): ask which output clocks ticked
        (``fmi3GetClock``, which reports a tick once) and the countdown intervals
        (``fmi3GetIntervalDecimal``), as FMI 3.0 section 5.2.2 requires."""
        query = self._se_query
        if query is None:
            self.messages.append("[importer] clockUpdate called outside a model partition "
                                 "activation: ignored")
            return
        out_vrs, interval_vrs = query
        ticked, intervals = self._se_seen
        try:
            if out_vrs:
                for vr, on in zip(out_vrs, self.get_clocks(out_vrs)):
                    if on:
                        ticked.append(vr)
            if interval_vrs:
                for vr, iq in zip(interval_vrs, self.get_intervals(interval_vrs)):
                    intervals[vr] = iq
        except Exception as exc:  # noqa: BLE001 - never raise through C
            self._se_error = exc

    def se_activate(self, clock_vr: int, t: float, sets: list, out_keys: list,
                    out_clock_vrs: list, interval_vrs: list) -> tuple:
        """One model partition: set the inputs (``sets``: ``(key, values)``),
        ``fmi3ActivateModelPartition(clock_vr, t)``, read ``out_keys``.

        Returns ``(ticked, intervals, outs)``: the output clocks (of ``out_clock_vrs``) that
        ticked and ``{vr: (interval, qualifier)}`` of the countdown clocks (of
        ``interval_vrs``) the FMU announced through its clockUpdate callback during the
        call, and the values of ``out_keys``.  One call (one round trip out of process).
        """
        for key, vals in sets:
            self.set(key, vals)
        self.time = t
        self._se_query = (list(out_clock_vrs), list(interval_vrs))
        self._se_seen = ([], {})
        self._se_error = None
        try:
            st = self._activate(self.component, clock_vr, t)
            if st > 1:
                raise self._status("fmi3ActivateModelPartition", st)
        except FMUCallError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, "fmi3ActivateModelPartition") from None
        finally:
            self._se_query = None
        if self._se_error is not None:
            err, self._se_error = self._se_error, None
            raise err if isinstance(err, FMUCallError) else self._fail(err)
        ticked, intervals = self._se_seen
        get = self.get
        return list(ticked), dict(intervals), [get(k) for k in out_keys]

    def get_clocks(self, vrs: list) -> list:
        """``fmi3GetClock``: whether each clock is active (an output clock once per tick)."""
        from fmpy.fmi3 import fmi3Clock
        n = len(vrs)
        v = (ctypes.c_uint * n)(*vrs)
        vals = (fmi3Clock * n)()
        self._call_fmi("fmi3GetClock", v, n, vals)
        return [bool(x) for x in vals]

    def get_intervals(self, vrs: list) -> list:
        """``fmi3GetIntervalDecimal``: ``[(interval, qualifier)]`` (qualifier 0 not yet
        known, 1 unchanged, 2 changed)."""
        n = len(vrs)
        v = (ctypes.c_uint * n)(*vrs)
        iv = (ctypes.c_double * n)()
        q = (ctypes.c_int * n)()
        self._call_fmi("fmi3GetIntervalDecimal", v, n, iv, q)
        return [(iv[i], q[i]) for i in range(n)]

    def get_shifts(self, vrs: list) -> list:
        """``fmi3GetShiftDecimal`` of time-based clocks [s]."""
        n = len(vrs)
        v = (ctypes.c_uint * n)(*vrs)
        sh = (ctypes.c_double * n)()
        self._call_fmi("fmi3GetShiftDecimal", v, n, sh)
        return sh[:]

    def set_intervals(self, vrs: list, intervals: list) -> None:
        """``fmi3SetIntervalDecimal`` (fixed and tunable clocks, Initialization Mode)."""
        n = len(vrs)
        self._call_fmi("fmi3SetIntervalDecimal", (ctypes.c_uint * n)(*vrs), n,
                       (ctypes.c_double * n)(*intervals))
