"""Shadow-model fault detection with the seed's 5 % nip-load criterion.

The seed (Paper III/IV; research/seed-001.md sec. 1.10): "residuals of measured and
simulated state variables can be formed while the values of residual can be used to detect
abnormalities", and "a failure situation can be considered critical when it causes a 5 %
change in the nip load".

Shadow model and residuals
--------------------------
The shadow is a second instance of the same reel (:func:`blocks.paper.system.reel_diagram`)
with nominal parameters, driven by the same operating signals as the machine: the nip-load
reference and the web speed.  It runs its own force controller on its own (noise-free)
sensors, so it reproduces what the nip load *should be* under the present operating
conditions.  The residual of a signal is machine minus shadow; for the nip load

.. math:: r_i(t) = q_i^{machine}(t) - q_i^{shadow}(t), \\qquad i = A, B

(line loads at the two ends of the contact line), which is exactly the seed's "change in
the nip load" caused by a fault (the seed compares each faulty run with the normal one).

Why the shadow is not driven by the machine's valve commands (the seed's other wording:
"control signals of existing reel are utilized as input for the simulation model";
``reel_diagram(..., external_commands=True)`` builds that variant): such a shadow runs open
loop, so a fault the controller compensates (a valve leak) moves the machine's command, which
the shadow turns into a wrong nip load, a critical alarm for a harmless fault; and a fault
that acts through the controller (sensor noise) reaches the shadow through the very commands
it is fed, so the shadow reproduces the real nip fluctuation and the nip residual is zero
whatever the noise level.  Measured (tests/system/test_paper_reel.py): the mild P->A leak,
which changes the real nip load by 1.6 %, gives a 496 % residual with the command-driven
shadow; mild sensor noise (a real 3.4 % change) gives 0.  The command and pressure
residuals of the closed-loop shadow still show a compensated leak (the example reports
them) without calling it critical.

Sensor noise: the machine's controller acts on its noisy sensor, so the real nip load
fluctuates.  The criterion uses the real nip load against the shadow's, never the noisy
measurement: the noise itself is not a nip-load change; what the loop makes of it is.  (On a
real reel the nip load is "cumbersome to measure"; the machine's nip load here is the plant
model's, standing in for a nip-load measurement or estimate: a limitation of the study.)

Decision rule
-------------
Critical when :math:`\\rho(t) = \\max_i |r_i(t)| / |q_{ref}(t)|` has stayed above the
threshold (0.05) without interruption for the persistence time :math:`T_p`, which rejects
single spikes.  :class:`NipLoadMonitor` evaluates it in continuous time inside the diagram
(zero-crossing events, no sampling: a variable-step solver is not restarted every sample);
:func:`detect_persistent` applies the same rule to a recorded signal.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError

SIDES = ("A", "B")


class NipLoadMonitor(Block):
    """Residuals machine - shadow of the nip load and the seed's 5 % criterion, online.

    .. math::

        r_i &= q_i - \\hat q_i, \\qquad
        \\rho = \\max_i |r_i| \\,/\\, \\max(|q_{ref}|, q_{min}) \\\\
        \\text{alarm at } t &\\iff \\rho(s) > \\rho_{max}\\ \\ \\forall s \\in [t - T_p, t]
        \\ \\text{(first such t; the alarm then latches)}

    Implemented with zero crossings: ``exceed_up``/``exceed_down`` on
    :math:`\\rho - \\rho_{max}` start and stop a timer, ``persist`` on
    :math:`t - t_{up} - T_p` (while above) raises the alarm; once it has latched the
    witnesses are constant (each event restarts a variable-step solver).  Located by root finding on
    the solver's dense output, so the detection time is not quantized to a sample period.
    A dip below the threshold shorter than one solver step is not seen (bound the step
    with the simulator's ``max_step``, e.g. :math:`T_p`); the monitor assumes
    :math:`\\rho(0)` below the threshold.

    Ports
    -----
    in   plant_A, plant_B     scalar [N/m]  machine nip line loads (ends A and B)
    in   shadow_A, shadow_B   scalar [N/m]  shadow-model nip line loads
    in   reference            scalar [N/m]  nip-load reference q_ref
    out  residual_A           scalar [N/m]  r_A; reads plant_A, shadow_A
    out  residual_B           scalar [N/m]  r_B; reads plant_B, shadow_B
    out  relative             scalar [1]  rho; reads every input
    out  alarm                scalar [1]  0, or 1 from the detection on; state only
    out  detection_time       scalar [s]  time of the alarm (nan before); state only

    Parameters
    ----------
    threshold : float
        :math:`\\rho_{max}` (the seed: 0.05).
    persistence_s : float
        :math:`T_p` > 0.
    min_reference_n_m : float
        :math:`q_{min}` > 0, guards the division while the reference is zero.
    """

    def __init__(self, name: str, *, threshold: float = 0.05, persistence_s: float = 0.05,
                 min_reference_n_m: float = 1.0) -> None:
        super().__init__(name)
        own = f"NipLoadMonitor '{name}'"
        for label, v in (("threshold", threshold), ("persistence_s", persistence_s),
                         ("min_reference_n_m", min_reference_n_m)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ParameterError(f"{own}: {label} must be finite and > 0, got {v!r}")
        self.threshold, self.tp = float(threshold), float(persistence_s)
        self.q_min = float(min_reference_n_m)
        self.plant = {s: self.declare_input(f"plant_{s}", unit="N/m") for s in SIDES}
        self.shadow = {s: self.declare_input(f"shadow_{s}", unit="N/m") for s in SIDES}
        self.reference = self.declare_input("reference", unit="N/m")
        self.above = self.declare_discrete_state("above", False)
        self.t_up = self.declare_discrete_state("t_up", math.nan)
        self.alarm_state = self.declare_discrete_state("alarm", False)
        self.t_detect = self.declare_discrete_state("t_detect", math.nan)
        self.residual_A = self.declare_output(
            "residual_A", lambda ctx: self._residual(ctx, "A"), unit="N/m",
            depends_on=(self.plant["A"], self.shadow["A"]))
        self.residual_B = self.declare_output(
            "residual_B", lambda ctx: self._residual(ctx, "B"), unit="N/m",
            depends_on=(self.plant["B"], self.shadow["B"]))
        self.relative = self.declare_output("relative", self.rho, unit="1")
        self.alarm = self.declare_output(
            "alarm", lambda ctx: 1.0 if ctx.discrete(self.alarm_state) else 0.0, unit="1",
            depends_on=())
        self.detection_time = self.declare_output(
            "detection_time", lambda ctx: float(ctx.discrete(self.t_detect)), unit="s",
            depends_on=())
        self.declare_zero_crossing(self._margin, self._up, direction=1, name="exceed_up")
        self.declare_zero_crossing(self._margin, self._down, direction=-1, name="exceed_down")
        self.declare_zero_crossing(self._timer, self._raise, direction=1, name="persist")

    def _residual(self, ctx: Any, side: str) -> float:
        return ctx.input(self.plant[side]) - ctx.input(self.shadow[side])

    def rho(self, ctx: Any) -> float:
        """:math:`\\rho`, the largest nip-load residual relative to the reference."""
        r = max(abs(self._residual(ctx, "A")), abs(self._residual(ctx, "B")))
        return r / max(abs(ctx.input(self.reference)), self.q_min)

    def _margin(self, ctx: Any) -> float:
        # rho - threshold; a constant -1 once the alarm has latched (no more events)
        if ctx.discrete(self.alarm_state):
            return -1.0
        return self.rho(ctx) - self.threshold

    def _timer(self, ctx: Any) -> float:
        if ctx.discrete(self.alarm_state) or not ctx.discrete(self.above):
            return -1.0
        return ctx.time - ctx.discrete(self.t_up) - self.tp

    def _up(self, ctx: Any) -> None:
        ctx.set_discrete(self.above, True)
        ctx.set_discrete(self.t_up, ctx.time)

    def _down(self, ctx: Any) -> None:
        ctx.set_discrete(self.above, False)

    def _raise(self, ctx: Any) -> None:
        ctx.set_discrete(self.alarm_state, True)
        ctx.set_discrete(self.t_detect, ctx.time)

    def c_model(self, cg: Any) -> Any:
        """The C form (:mod:`cosim.codegen`): the same arithmetic (Python's ``max``: the
        first argument unless the second is greater), the three zero crossings in C."""
        from cosim.codegen import CModel, CZeroCrossing, c_float
        res = {s: f"({cg.u(self.plant[s])} - {cg.u(self.shadow[s])})" for s in SIDES}
        rho = ("cosim_nip_rho(" + ", ".join([cg.u(self.plant["A"]), cg.u(self.shadow["A"]),
                                             cg.u(self.plant["B"]), cg.u(self.shadow["B"]),
                                             cg.u(self.reference), c_float(self.q_min)])
               + ")")
        cg.helper("cosim_nip_rho", _RHO_C)
        above, t_up = cg.xd(self.above), cg.xd(self.t_up)
        alarm, t_det = cg.xd(self.alarm_state), cg.xd(self.t_detect)
        return CModel(
            outputs={
                "residual_A": f"{cg.y(self.residual_A)} = {res['A']};",
                "residual_B": f"{cg.y(self.residual_B)} = {res['B']};",
                "relative": f"{cg.y(self.relative)} = {rho};",
                "alarm": f"{cg.y(self.alarm)} = {alarm} != 0.0 ? 1.0 : 0.0;",
                "detection_time": f"{cg.y(self.detection_time)} = {t_det};"},
            zero_crossings={
                "exceed_up": CZeroCrossing(
                    f"({alarm} != 0.0 ? -1.0 : {rho} - {c_float(self.threshold)})",
                    f"{above} = 1.0;\n{t_up} = {cg.t};"),
                "exceed_down": CZeroCrossing(
                    f"({alarm} != 0.0 ? -1.0 : {rho} - {c_float(self.threshold)})",
                    f"{above} = 0.0;"),
                "persist": CZeroCrossing(
                    f"(({alarm} != 0.0 || {above} == 0.0) ? -1.0 : "
                    f"{cg.t} - {t_up} - {c_float(self.tp)})",
                    f"{alarm} = 1.0;\n{t_det} = {cg.t};")})


#: rho of NipLoadMonitor in C (NipLoadMonitor.rho)
_RHO_C = """static double cosim_nip_rho(double pa, double sa, double pb, double sb, double ref,
                            double q_min) {
    double ra = fabs(pa - sa), rb = fabs(pb - sb), r = rb > ra ? rb : ra;
    double q = fabs(ref);
    return r / (q_min > q ? q_min : q);
}"""


def detect_persistent(t: Any, relative: Any, threshold: float = 0.05,
                      persistence_s: float = 0.05) -> float:
    """The decision rule on a sampled record: first t with rho > threshold over [t - T_p, t].

    The up-crossing instant is interpolated linearly between samples; the rule fires at
    the up-crossing plus :math:`T_p` if every sample up to then stays above the threshold
    (and the record reaches that time).  Returns nan if it never fires.
    """
    t = np.asarray(t, dtype=float)
    rho = np.asarray(relative, dtype=float)
    if t.shape != rho.shape or t.ndim != 1:
        raise ParameterError("detect_persistent: t and relative must be 1-D of equal length")
    above = rho > threshold
    k = 0
    n = t.size
    while k < n:
        if not above[k]:
            k += 1
            continue
        if k == 0:
            t_up = t[0]
        else:
            r0, r1 = rho[k - 1], rho[k]
            t_up = t[k - 1] + (threshold - r0) / (r1 - r0) * (t[k] - t[k - 1])
        j = k
        while j < n and above[j]:
            j += 1
        t_fire = t_up + persistence_s
        last_above = t[j - 1] if j == n else t[j - 1] + (t[j] - t[j - 1]) * \
            (rho[j - 1] - threshold) / (rho[j - 1] - rho[j])
        if t_fire <= last_above and t_fire <= t[-1]:
            return float(t_fire)
        k = j
    return math.nan


def in_time_order(t: Any) -> np.ndarray:
    """Mask of the samples of a record that are in time order.

    After a zero-crossing event a variable-step run records the output-grid points that lie
    between the previous solver step and the event only after the event (cosim's
    ``cosim.variable_step``), with the post-event discrete state and a dense output evaluated
    before its step: keep a sample only if its time is later than every earlier one.
    """
    t = np.asarray(t, dtype=float)
    return t > np.maximum.accumulate(np.concatenate(([-np.inf], t[:-1])))
