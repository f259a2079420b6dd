"""The Co-Simulation layer of an FMU driver: :class:`CoSimulationDriver` (FMI 2 and 3).

A communication step (:meth:`CoSimulationDriver.cs_step`: inputs, step, outputs in one
call), FMI 2 input derivatives, and FMI 3 early return, intermediate update (the
inputs between communication points given as polynomials) and Step Mode (Event Mode:
:mod:`fmus.driver_events`).
"""

from __future__ import annotations

from typing import Any

from .driver_events import EventModeDriver
from .fmi3_update import IntermediateInputs
from .fmi_calls import FmiCalls

__all__ = ["CoSimulationDriver"]


class CoSimulationDriver(EventModeDriver, interface="CS"):
    """A Co-Simulation instance (:class:`~fmus.driver_events.EventModeDriver`, for FMI 3
    with ``eventModeUsed``, plus the calls of Co-Simulation)."""

    def __init__(self, spec, calls: FmiCalls) -> None:
        super().__init__(spec, calls)
        self._do_step = calls.do_step
        self._step_name = f"{calls.prefix}DoStep"
        self._intermediate: tuple | None = None
        self._early_request: float | None = None
        #: the intermediate update in C (:mod:`fmus.fmi3_update`), once instantiated with it
        self.update: IntermediateInputs | None = None

    def _instantiate(self) -> None:
        sp = self.spec
        update = None
        if sp.interface == "CS" and self.calls.major == 3 and \
                (sp.early_return or sp.intermediate_vrs):
            update = IntermediateInputs(list(sp.intermediate_vrs or []))
        self.update = self.calls.instantiate(self.messages.record, self._intermediate_update,
                                             update)

    def do_step(self, t: float, h: float, no_set_prior: bool = True) -> tuple:
        """``(status, event_needed, terminate, early_return, last_time)``; status is
        ``"ok"`` or ``"discard"`` (other statuses raise)."""
        self.time = t
        try:
            st, event, term, early, last = self._do_step(self.component, t, h, no_set_prior)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc, self._step_name) from None
        if st > 1:
            if st == 2:
                return ("discard", event, term, early, last)
            raise self._status(self._step_name, st)
        if self.update is not None and self.update.env.errors:
            n = self.update.take_errors()
            self.messages.append(f"[importer] intermediate update failed: fmi3SetFloat64 "
                                 f"returned {self.update.env.last_error} ({n} time(s))")
        self.time = last
        return ("ok", event, term, early, last)

    def cs_step(self, t: float, h: float, no_set_prior: bool, sets: list,
                derivs: list, out_keys: list, intermediate: tuple | None = None) -> tuple:
        """Set inputs (``sets``: ``(key, values)``; ``derivs``: ``(key, order, values)``),
        step, read ``out_keys``: ``(step result, [values per key])`` in one call."""
        for key, vals in sets:
            self.set(key, vals)
        for key, order, vals in derivs:
            self.set_input_derivatives(key, order, vals)
        if intermediate is not None:
            self.set_intermediate(*intermediate)
        res = self.do_step(t, h, no_set_prior)
        get = self.get
        return res, [get(k) for k in out_keys]

    def enter_step_mode(self) -> None:
        self._call("enterStepMode")

    def set_input_derivatives(self, key: int, order: int, values: list) -> None:
        """FMI 2 ``fmi2SetRealInputDerivatives`` of one order for a registered set."""
        vs = self._sets[key]
        try:
            st = self.calls.set_input_derivatives(self.component, vs.vr, vs.n, order, values)
        except Exception as exc:  # noqa: BLE001
            raise self._fail(exc) from None
        if st > 1:
            raise self._status("fmi2SetRealInputDerivatives", st)

    def set_intermediate(self, key: int | None, t0: float = 0.0,
                         coeffs: list | None = None) -> None:
        """Inputs for FMI 3 intermediate update: ``value(t) = sum c_k (t - t0)^k`` per
        variable of the registered set ``key`` (``coeffs``: per variable, lowest first)."""
        self._intermediate = None if key is None else (key, t0, coeffs)
        if self.update is not None:
            if key is None:
                self.update.clear()
            else:
                if list(self._sets[key].vr) != list(self.update.vr):
                    raise ValueError(f"{self.label}: set_intermediate is for the variables "
                                     "flagged intermediateUpdate at instantiation "
                                     f"{list(self.update.vr)}, not {list(self._sets[key].vr)}")
                self.update.set(t0, coeffs)

    def request_early_return(self, t: float | None) -> None:
        """Ask the FMU (FMI 3, intermediate update) to return early at ``t``."""
        self._early_request = t
        if self.update is not None:
            self.update.request_early(t)

    def _intermediate_update(self, env: Any, t: float, set_requested: bool,
                             get_allowed: bool, step_finished: bool, can_return_early: bool,
                             early_requested: Any, early_time: Any) -> None:
        """The FMU's intermediate update callback (FMI 3): the inputs at ``t`` from the
        polynomials of :meth:`set_intermediate`, an early return when asked for."""
        try:
            if set_requested and self._intermediate is not None:
                key, t0, coeffs = self._intermediate
                tau = t - t0
                vals = []
                for c in coeffs:
                    acc = 0.0
                    for ck in reversed(c):
                        acc = acc * tau + ck
                    vals.append(acc)
                self.set(key, vals)
            if can_return_early and self._early_request is not None \
                    and t >= self._early_request:
                early_requested[0] = True
                early_time[0] = self._early_request
        except Exception as exc:  # noqa: BLE001 - never raise through C
            self.messages.append(f"[importer] intermediate update failed: {exc!r}")
