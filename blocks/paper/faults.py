"""Fault injection for the reel: the seed's three fault cases (Paper IV sec. 4).

* rail friction of carriage A: the static and sliding coefficients of
  :class:`~blocks.paper.reel.ReelMechanics` (parameters ``mu_static_carriage_A``,
  ``mu_dynamic_carriage_A``) step to the fault values at the fault time (a
  :class:`cosim.manipulators.Scenario` action);
* servo-valve leak P->A: the area of the leak orifice of side A ramps from 0 to its fault
  value (:class:`FaultRamp`, a valve's worn metering land develops, it does not appear in
  one instant; as a step, even the example's mild leak, which the controller compensates
  in steady state, changes the nip load by 33 % for a moment);
* force-sensor noise on sensor A: the ``noise_std`` parameter of
  :class:`~blocks.paper.sensors.ForceSensor` steps to the fault level (a cable or
  amplifier fault sets in at once).

:class:`FaultCase` names one case and its severity; :meth:`FaultCase.apply` sets it up on a
context and gives the manipulators, for a diagram whose machine is a
:func:`blocks.paper.system.reel_diagram` named ``plant`` built with ``leak_onset_s``.

Limitations: one fault at a time; friction on the carriage-A rails only (the sledge and
side-B coefficients are parameters too, but no case uses them); the leak is a turbulent
orifice (an eroded land), not a laminar clearance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.manipulators import Scenario

KINDS = ("none", "rail_friction", "valve_leak", "sensor_noise")


class FaultRamp(Block):
    """A fault magnitude that ramps linearly from 0 to ``magnitude`` (a parameter).

    .. math:: y(t) = m\\,\\mathrm{clip}\\big((t - t_0)/T_r,\\ 0,\\ 1\\big)

    :math:`t_0` (``onset_s``) and :math:`T_r` (``ramp_s``) are fixed when the block is
    built (the integrator stops exactly at both corners: time events); the magnitude m is
    the tunable parameter ``magnitude`` (0 = no fault), so one diagram serves every
    severity.

    Ports
    -----
    out  y   scalar [unit]; no inputs

    Parameters
    ----------
    onset_s : float
        :math:`t_0` [s] > 0, when the fault starts.
    ramp_s : float
        :math:`T_r` [s] > 0, the time to full magnitude.
    magnitude : float
        m, the initial value of the tunable parameter ``magnitude`` (in ``unit``).
    unit : str, optional
        The unit of the output (and of the magnitude).
    """

    def __init__(self, name: str, *, onset_s: float, ramp_s: float, magnitude: float = 0.0,
                 unit: str | None = None) -> None:
        super().__init__(name)
        own = f"FaultRamp '{name}'"
        for label, v in (("onset_s", onset_s), ("ramp_s", ramp_s)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ParameterError(f"{own}: {label} must be finite and > 0, got {v!r}")

        def finite(v: Any) -> float:
            f = float(v)
            if not math.isfinite(f):
                raise ValueError(f"{own}: magnitude must be finite")
            return f

        self.t0, self.tr = float(onset_s), float(ramp_s)
        self.magnitude = self.declare_parameter("magnitude", magnitude, unit, validate=finite)
        self.declare_time_event([self.t0, self.t0 + self.tr])
        t0, tr = self.t0, self.tr

        def calc(ctx: Any) -> float:
            s = (ctx.time - t0) / tr
            if s <= 0.0:
                return 0.0
            return ctx.param(self.magnitude) * (1.0 if s >= 1.0 else s)
        self.y = self.declare_output("y", calc, unit=unit, depends_on=())

    def c_model(self, cg: Any) -> Any:
        """The C form (:func:`blocks.paper._cforms.fault_ramp`)."""
        from ._cforms import fault_ramp
        return fault_ramp(self, cg)


@dataclass(frozen=True)
class FaultCase:
    """One fault scenario: kind, severity values, onset.

    Parameters
    ----------
    kind : {"none", "rail_friction", "valve_leak", "sensor_noise"}
    label : str
        Name in tables.
    mu_static, mu_dynamic : float
        Rail friction of carriage A after the onset (``rail_friction``).
    leak_area_m2 : float
        Final leak-orifice area (``valve_leak``; the ramp is built into the diagram).
    noise_std_n : float
        Noise level of sensor A (``sensor_noise``).
    """

    kind: str
    label: str = ""
    mu_static: float = 0.0
    mu_dynamic: float = 0.0
    leak_area_m2: float = 0.0
    noise_std_n: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ParameterError(f"FaultCase: kind must be one of {', '.join(KINDS)}, got "
                                 f"{self.kind!r}")
        for name in ("mu_static", "mu_dynamic", "leak_area_m2", "noise_std_n"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ParameterError(f"FaultCase '{self.label or self.kind}': {name} must be "
                                     f"finite and >= 0, got {v!r}")
        if self.kind == "rail_friction" and not self.mu_static > 0:
            raise ParameterError(f"FaultCase '{self.label}': rail_friction needs mu_static "
                                 "and mu_dynamic (the fault values)")
        if self.kind == "valve_leak" and not self.leak_area_m2 > 0:
            raise ParameterError(f"FaultCase '{self.label}': valve_leak needs leak_area_m2 > 0")
        if self.kind == "sensor_noise" and not self.noise_std_n > 0:
            raise ParameterError(f"FaultCase '{self.label}': sensor_noise needs noise_std_n > 0")

    def apply(self, diagram: Any, ctx: Any, onset_s: float, plant: str = "plant") -> list:
        """Set up the case on a fresh context; returns the manipulators to run with.

        The leak magnitude is set in the context now (its ramp starts at the onset built
        into the diagram); friction and noise are switched by a Scenario at ``onset_s``.
        """
        if self.kind == "valve_leak":
            sub = diagram.find(plant)
            if "leak_ramp" not in getattr(sub, "blocks", {}):
                raise ParameterError(f"FaultCase '{self.label}': '{plant}' has no leak path; "
                                     "build it with reel_diagram(..., leak_onset_s=...)")
            ctx.set_param(sub.blocks["leak_ramp"].parameter("magnitude"), self.leak_area_m2)
            return []
        if self.kind == "rail_friction":
            mech = diagram.find(f"{plant}/mech")
            ms, md = self.mu_static, self.mu_dynamic

            def act(sim: Any) -> None:
                sim.ctx.set_param(mech.parameter("mu_static_carriage_A"), ms)
                sim.ctx.set_param(mech.parameter("mu_dynamic_carriage_A"), md)
            return [Scenario([(onset_s, act)])]
        if self.kind == "sensor_noise":
            sensor = diagram.find(f"{plant}/sensor_A")
            std = self.noise_std_n

            def act(sim: Any) -> None:
                sim.ctx.set_param(sensor.parameter("noise_std"), std)
            return [Scenario([(onset_s, act)])]
        return []
