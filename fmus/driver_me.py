"""The Model Exchange layer of an FMU driver: :class:`ModelExchangeDriver` (FMI 2 and 3).

Time, continuous states, derivatives and event indicators (one call per evaluation point:
:meth:`ModelExchangeDriver.me_eval`), the integrator step, Continuous-Time Mode (Event
Mode: :mod:`fmus.driver_events`).
"""

from __future__ import annotations

import ctypes

from .driver_events import EventModeDriver
from .errors import FMUCallError
from .fmi_calls import FmiCalls

__all__ = ["ModelExchangeDriver"]


class ModelExchangeDriver(EventModeDriver, interface="ME"):
    """A Model Exchange instance (:class:`~fmus.driver_events.EventModeDriver` plus the
    calls of Model Exchange)."""

    def __init__(self, spec, calls: FmiCalls) -> None:
        super().__init__(spec, calls)
        nx, nz = spec.n_states, spec.n_indicators
        self._x = (ctypes.c_double * max(nx, 1))()
        self._dx = (ctypes.c_double * max(nx, 1))()
        self._z = (ctypes.c_double * max(nz, 1))()
        self._nx, self._nz = nx, nz
        p = calls.prefix
        names = (f"{p}SetTime", f"{p}SetContinuousStates", calls.DERIVATIVES,
                 f"{p}GetEventIndicators", f"{p}GetContinuousStates")
        self._names = names
        self._fns = tuple(calls.fn(n) for n in names)

    def _instantiate(self) -> None:
        self.calls.instantiate(self.messages.record)

    def set_time(self, t: float) -> None:
        self.time = t
        try:
            st = self._fns[0](self.component, t)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        if st > 1:
            raise self._status(self._names[0], st)

    def set_states(self, x: list) -> None:
        self._x[:self._nx] = x
        try:
            st = self._fns[1](self.component, self._x, self._nx)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        if st > 1:
            raise self._status(self._names[1], st)

    def get_states(self) -> list:
        try:
            st = self._fns[4](self.component, self._x, self._nx)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        if st > 1:
            raise self._status(self._names[4], st)
        return self._x[:self._nx]

    def get_nominals(self) -> list:
        buf = (ctypes.c_double * max(self._nx, 1))()
        self._call("getNominalsOfContinuousStates", buf, self._nx)
        return buf[:self._nx]

    def me_eval(self, t: float | None, x: list | None, sets: list, derivatives: bool,
                indicators: bool, out_keys: list) -> tuple:
        """Push what changed (time, states, ``(key, values)`` sets), then read the
        derivatives, the event indicators and ``out_keys``: one call per point."""
        c = self.component
        set_time, set_states, get_der, get_ind, _ = self._fns
        try:
            if t is not None:
                self.time = t
                st = set_time(c, t)
                if st > 1:
                    raise self._status(self._names[0], st)
            if x is not None:
                self._x[:self._nx] = x
                st = set_states(c, self._x, self._nx)
                if st > 1:
                    raise self._status(self._names[1], st)
            for key, vals in sets:
                self.set(key, vals)
            dx = z = None
            if derivatives and self._nx:
                st = get_der(c, self._dx, self._nx)
                if st > 1:
                    raise self._status(self._names[2], st)
                dx = self._dx[:self._nx]
            if indicators and self._nz:
                st = get_ind(c, self._z, self._nz)
                if st > 1:
                    raise self._status(self._names[3], st)
                z = self._z[:self._nz]
        except FMUCallError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        get = self.get
        return dx, z, [get(k) for k in out_keys]

    def completed_step(self, no_set_prior: bool = True) -> tuple:
        """``(enter_event_mode, terminate)`` after an accepted integrator step."""
        try:
            return self.fmu.completedIntegratorStep(no_set_prior)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, f"{self.calls.prefix}CompletedIntegratorStep") from None

    def enter_continuous_mode(self) -> None:
        self._call("enterContinuousTimeMode")
