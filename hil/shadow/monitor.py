r"""The residual rules as a block of a diagram: :class:`ShadowMonitor` (the third feeding
mode of :mod:`hil.shadow`), paced by :class:`~hil.runner.RealTimeRunner` beside the model
and the bridge blocks of the machine's I/O.

Block :class:`ShadowMonitor`, ports (one group per rule, ``<s>`` the rule's name)
-----------------------------------------------------------------------------------------
==========  ============  ===========  ====================================================
direction   name          unit         meaning
==========  ============  ===========  ====================================================
in          meas_<s>      rule unit    machine measurement
in          model_<s>     rule unit    model output
in          scale_<s>     rule unit    scale s_k (only if the rule's scale is a signal)
out         residual_<s>  rule unit    filtered residual r̄_k; reads its inputs
out         relative_<s>  1            rho_k; reads its inputs
out         flag_<s>      1            0/1 fault flag; reads its inputs
out         any_fault     1            1 if any flag is set; reads every input
==========  ============  ===========  ====================================================
"""

from __future__ import annotations

from typing import Any

from cosim.block import Block
from cosim.errors import ParameterError

from .rules import Residual, RuleState, advance_rule

__all__ = ["ShadowMonitor"]


class ShadowMonitor(Block):
    """Residual rules as a sampled block (ports: the module docstring's table).

    Parameters
    ----------
    name : str
    rules : dict
        Signal name -> :class:`Residual` (``model`` is informative here: the block reads
        the model value from its port ``model_<name>``).
    period_s : float
        Sample period of the rule.
    units : dict, optional
        Signal name -> unit of its ports.
    """

    def __init__(self, name: str, rules: dict, period_s: float,
                 units: dict | None = None) -> None:
        super().__init__(name)
        if not rules:
            raise ParameterError(f"ShadowMonitor '{name}': give at least one rule")
        self.rules = dict(rules)
        self.ports: dict[str, tuple] = {}
        self.states = {}
        units = units or {}
        for n, rule in self.rules.items():
            if not isinstance(rule, Residual):
                raise ParameterError(f"ShadowMonitor '{name}': rule {n!r} must be a Residual")
            if rule.scale is not None and not isinstance(rule.scale, (int, float, str)):
                raise ParameterError(f"ShadowMonitor '{name}': bad scale for {n!r}")
            u = units.get(n)
            meas = self.declare_input(f"meas_{n}", unit=u)
            model = self.declare_input(f"model_{n}", unit=u)
            scale = self.declare_input(f"scale_{n}", unit=u) \
                if isinstance(rule.scale, str) else None
            self.ports[n] = (meas, model, scale)
            self.states[n] = self.declare_discrete_state(f"rule_{n}", RuleState())
            deps = tuple(p for p in (meas, model, scale) if p is not None)
            self.declare_outputs(
                [(f"residual_{n}", u), (f"relative_{n}", "1"), (f"flag_{n}", "1")],
                lambda ctx, n=n: self._outputs(ctx, n), depends_on=deps)
        self.any_fault = self.declare_output(
            "any_fault", lambda ctx: float(any(self._step(ctx, n)[0].flag for n in self.rules)),
            unit="1")
        self.declare_periodic_update(period_s, self._update)

    def _step(self, ctx: Any, n: str) -> tuple[RuleState, float]:
        rule = self.rules[n]
        meas, model, scale = self.ports[n]
        ym, yh = ctx.input(meas), ctx.input(model)
        s = ctx.input(scale) if scale is not None else (
            yh if rule.scale is None else float(rule.scale))
        return advance_rule(rule, ctx.discrete(self.states[n]), ctx.time, ym - yh, s)

    def _outputs(self, ctx: Any, n: str) -> tuple[float, float, float]:
        st, rho = self._step(ctx, n)
        return st.rf, rho, 1.0 if st.flag else 0.0

    def _update(self, ctx: Any) -> None:
        for n in self.rules:
            ctx.set_discrete(self.states[n], self._step(ctx, n)[0])
