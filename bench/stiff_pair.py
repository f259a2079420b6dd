r"""Stiff pair: a current-controlled drive (fast) coupled to a flexible drive train (slow).

The acceptance case "multi-rate gain on a stiff pair" of the co-simulation
master (Korkealaakso: one integrator for a whole machine forces the stiffest
step on everything).  The same equations are built three ways: the ``drive``
diagram (stiff, linear), the ``load`` diagram (slow, nonlinear) and the
``monolithic`` diagram that wires the two together; :func:`rhs` writes them
once more, independently, in NumPy for the reference.

Model (SI units; symbols as in :data:`P`)
-----------------------------------------
Drive (power electronics, controllers and armature; input the motor speed
:math:`\omega_m`, output the air-gap torque :math:`T_m = k\, i`)::

    speed PI:        e_w = w_ref(t) - w_m,   I_w' = K_iw e_w,   T_ref = K_pw e_w + I_w
    current ref.:    i_ref = T_ref / k
    current PI:      e_i = i_ref - i_s,      I_c' = K_ii e_i,   v_ref = K_pi e_i + I_c
    inverter (PWM average, delay):           T_d u' = v_ref - u
    armature:        L i' = u - R i - k w_m
    current sensor:  i_s' = w_s (i - i_s)    (anti-aliasing filter, 10 kHz)

with the speed reference :math:`\omega_{ref}(t) = W (1 - e^{-(t/\tau)^2})` (a
smooth run-up).  States ``u, i, I_c, i_s, I_w``; all blocks are linear, so the
evaluator fuses them and steps them by the exact RK4 propagator.  The current
PI is tuned by the technical optimum (:math:`K_{pi} = L / (2 T_d)`,
:math:`K_{ii} = K_{pi} R / L`).  Eigenvalues: a current-loop pair at about
2.2 kHz and the sensor pole near 10.6 kHz (|lambda| = 6.7e4 1/s, which alone
limits explicit RK4 to h < 2.785 / |lambda| = 41.7 us).

Load (motor rotor, flexible coupling, gear pump feeding a hydraulic line; input
:math:`T_m`, output :math:`\omega_m`)::

    J_m w_m' = T_m - T_s - T_fm(w_m)
    dth'     = w_m - w_L
    J_L w_L' = T_s - T_fL(w_L) - T_p
    C_h p'   = D w_L - K_l p - q_v(p)
    T_s      = c dth (1 + (dth / th_n)^2) + d (w_m - w_L)   progressive coupling
    T_fm     = b_m w_m + T_cm tanh(w_m / w_e)               motor bearing friction
    T_fL     = T_cL tanh(w_L / w_e)                         load Coulomb friction
    T_p      = D p / eta(w_L, p)                            pump torque, measured
                                                            efficiency map (bilinear)
    q_v      = K_o p / sqrt(|p| + p_t)                      valve (orifice with a
                                                            laminar transition)

States ``w_m, dth, w_L, p``; five nonlinear blocks (four FunctionBlocks, one
Table2D) around a fused linear part.  Linearized at rest the two-mass mode is
at 9.98 Hz (10.4 Hz at the final running point), lightly damped; the line
and the speed loop add slow real poles (the load alone has nothing above 15 Hz).

Coupling (torque <-> speed): ``drive.torque -> load.torque`` and
``load.speed -> drive.speed``.  No output reads an input directly (the torque
is ``k i``, the speed a state), so there is no algebraic loop.

Runs
----
:func:`run_single_rate`: the monolithic diagram, one RK4 integrator at step
``dt`` (the step the stiff part needs).  :func:`run_multirate`: the two
subsystems under :class:`~cosim.MasterScheduler` with macro step ``H``; the
drive takes RK4 micro steps of ``dt_fast`` (exact propagator) inside each macro
step, the load RK4 steps of ``dt_slow``.  Both return ``(wall_s, error,
diagnostics)``, where the error is the largest over the nine states of
``max_t |x - x_ref| / max_t |x_ref|`` on the common record grid, against
:func:`reference` (SciPy Radau, rtol = atol = 1e-12, checked against DOP853).

``python -m bench.stiff_pair`` searches the largest single-rate RK4 step,
times both runs (median of repeats) and prints a markdown report.
"""

from __future__ import annotations

import math
import statistics
import time
from functools import lru_cache
from typing import Any

import numpy as np

from blocks.continuous import Integrator
from blocks.lti import FirstOrderLag
from blocks.math import Gain, Sum
from blocks.sources import ClosedFormSource
from blocks.tables import Table2D
from cosim import (
    Block,
    DiagramBuilder,
    FunctionBlock,
    GaussSeidel,
    Iterative,
    Jacobi,
    LinearModel,
    MasterScheduler,
    NonFiniteError,
    Simulator,
    StepError,
)
from cosim.subsystem import DiagramSubsystem

# ---------------------------------------------------------------- parameters
P: dict[str, float] = {
    # drive (armature, inverter, sensor)
    "R": 0.4,            # armature resistance [ohm]
    "L": 0.8e-3,         # armature inductance [H]
    "k": 0.6,            # torque / back-emf constant [N*m/A] = [V*s/rad]
    "Td": 50e-6,         # inverter (PWM) equivalent delay [s]
    "ws": 2 * math.pi * 10e3,  # current-sensor filter bandwidth [rad/s]
    # speed reference w_ref(t) = W (1 - exp(-(t/tau)^2))
    "W": 60.0,           # final speed [rad/s]
    "tau": 0.25,         # run-up time constant [s]
    # speed PI [N*m per rad/s], [N*m per rad]
    "Kpw": 0.6,
    "Kiw": 1.5,
    # load: rotor, coupling, driven machine
    "Jm": 0.1,           # motor rotor inertia [kg*m^2]
    "JL": 0.1,           # load inertia [kg*m^2]
    "c": 197.0,          # coupling stiffness at zero twist [N*m/rad]
    "thn": 0.15,         # progression twist: stiffness c (1 + 3 (dth/thn)^2) [rad]
    "d": 0.15,           # coupling damping [N*m*s/rad]
    "bm": 2e-3,          # motor viscous friction [N*m*s/rad]
    "Tcm": 0.1,          # motor Coulomb friction [N*m]
    "TcL": 0.4,          # load Coulomb friction [N*m]
    "we": 1.0,           # friction smoothing speed [rad/s]
    # driven machine: gear pump feeding a hydraulic line that ends in a valve
    "D": 1.5e-6,         # pump displacement [m^3/rad]
    "Ch": 2e-12,         # hydraulic capacitance V / beta_eff (hose + oil) [m^3/Pa]
    "Ko": 7.3e-8,        # valve flow coefficient [m^3/(s*Pa^0.5)]
    "pt": 2e5,           # laminar-turbulent transition pressure of the valve [Pa]
    "Kl": 2e-12,         # pump leakage coefficient [m^3/(s*Pa)]
}
P["Kpi"] = P["L"] / (2 * P["Td"])   # current PI proportional gain [V/A]
P["Kii"] = P["Kpi"] * P["R"] / P["L"]  # current PI integral gain [V/(A*s)]

# measured hydro-mechanical efficiency map of the pump, eta(speed [rad/s], pressure [Pa])
ETA_SPEED = [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
ETA_PRESSURE = [0.0, 5e5, 10e5, 15e5, 20e5, 25e5]
ETA = [[0.78, 0.800, 0.815, 0.825, 0.832, 0.836],
       [0.82, 0.845, 0.862, 0.872, 0.879, 0.884],
       [0.84, 0.866, 0.884, 0.895, 0.902, 0.907],
       [0.85, 0.876, 0.894, 0.905, 0.913, 0.918],
       [0.85, 0.879, 0.898, 0.909, 0.917, 0.922],
       [0.84, 0.877, 0.897, 0.909, 0.917, 0.922]]

T_END = 1.0  # [s]
STATES = ["drive.u", "drive.i", "drive.I_c", "drive.i_s", "drive.I_w",
          "load.w_m", "load.dth", "load.w_L", "load.p"]
STATE_UNITS = ["V", "A", "V", "A", "N*m", "rad/s", "rad", "rad/s", "Pa"]
N_STATES = len(STATES)
TOL = 1e-5  # acceptance: max state error / amplitude


def speed_reference(t: float) -> float:
    """w_ref(t) = W (1 - exp(-(t / tau)^2)) [rad/s]."""
    return P["W"] * (1.0 - math.exp(-(t / P["tau"]) ** 2))


# -------------------------------------------------------------------- blocks
class ArmatureRL(Block):
    """Armature circuit of a DC machine: :math:`L \\dot i = u - R i - k \\omega`.

    Ports
    -----
    in   voltage  scalar  V
    in   speed    scalar  rad/s   (back-emf k w)
    out  current  scalar  A       state only
    out  torque   scalar  N*m     state only (air-gap torque k i)
    """

    def __init__(self, name: str, R: float, L: float, k: float, i0: float = 0.0) -> None:
        super().__init__(name)
        self.R, self.L, self.k = float(R), float(L), float(k)
        self.voltage = self.declare_input("voltage", unit="V")
        self.speed = self.declare_input("speed", unit="rad/s")
        self.x = self.declare_continuous_state("i", float(i0))
        self.current = self.declare_output("current", lambda ctx: ctx.state(self.x), unit="A",
                                           depends_on=())
        self.torque = self.declare_output("torque", lambda ctx: self.k * ctx.state(self.x),
                                          unit="N*m", depends_on=())

    def derivatives(self, ctx: Any) -> float:
        return (ctx.input(self.voltage) - self.R * ctx.state(self.x)
                - self.k * ctx.input(self.speed)) / self.L

    def linear_model(self, ctx: Any) -> LinearModel:
        R, L, k = self.R, self.L, self.k
        return LinearModel([[-R / L]], [[1.0 / L, -k / L]], [[1.0], [k]], np.zeros((2, 2)),
                           [self.voltage, self.speed], [self.current, self.torque], [self.x])


def _pi(b: DiagramBuilder, name: str, kp: float, ki: float, unit_in: str, unit_out: str,
        err_port: Any) -> tuple[Any, Any]:
    """PI controller kp e + I, I' = ki e from primitives (the integrator state is exported).

    Returns (output port, integrator output port).
    """
    gi = b.add(Gain(f"{name}_ki", ki, input_unit=unit_in, unit=f"{unit_out}/s"))
    integ = b.add(Integrator(f"{name}_I", unit=unit_out, input_unit=f"{unit_out}/s"))
    gp = b.add(Gain(f"{name}_kp", kp, input_unit=unit_in, unit=unit_out))
    out = b.add(Sum(f"{name}_out", "++", unit=unit_out))
    b.connect(err_port, gi.u)
    b.connect(err_port, gp.u)
    b.connect(gi.y, integ.u)
    b.connect(gp.y, out.ins[0])
    b.connect(integ.y, out.ins[1])
    return out.y, integ.y


def drive_diagram() -> Any:
    """The stiff part: speed and current loops, inverter, armature, current sensor.

    Exported input ``speed`` [rad/s]; outputs ``torque`` [N*m] and the states
    ``u`` [V], ``i`` [A], ``I_c`` [V], ``i_s`` [A], ``I_w`` [N*m].
    """
    b = DiagramBuilder("drive")
    ref = b.add(ClosedFormSource("w_ref", speed_reference, unit="rad/s"))
    e_w = b.add(Sum("e_w", "+-", unit="rad/s"))
    b.connect(ref.y, e_w.ins[0])
    t_ref, i_w = _pi(b, "speed_pi", P["Kpw"], P["Kiw"], "rad/s", "N*m", e_w.y)
    i_ref = b.add(Gain("i_ref", 1.0 / P["k"], input_unit="N*m", unit="A"))
    b.connect(t_ref, i_ref.u)
    e_i = b.add(Sum("e_i", "+-", unit="A"))
    b.connect(i_ref.y, e_i.ins[0])
    v_ref, i_c = _pi(b, "current_pi", P["Kpi"], P["Kii"], "A", "V", e_i.y)
    inverter = b.add(FirstOrderLag("inverter", P["Td"], unit="V"))
    b.connect(v_ref, inverter.u)
    arm = b.add(ArmatureRL("armature", P["R"], P["L"], P["k"]))
    b.connect(inverter.y, arm.voltage)
    sensor = b.add(FirstOrderLag("sensor", 1.0 / P["ws"], unit="A"))
    b.connect(arm.current, sensor.u)
    b.connect(sensor.y, e_i.ins[1])
    b.export_input([e_w.ins[1], arm.speed], "speed")
    b.export_output(arm.torque, "torque")
    for port, name in ((inverter.y, "u"), (arm.current, "i"), (i_c, "I_c"),
                       (sensor.y, "i_s"), (i_w, "I_w")):
        b.export_output(port, name)
    return b.build()


def _shaft(dth: float, dw: float) -> float:
    return P["c"] * dth * (1.0 + (dth / P["thn"]) ** 2) + P["d"] * dw


def _motor_friction(w: float) -> float:
    return P["bm"] * w + P["Tcm"] * math.tanh(w / P["we"])


def _load_friction(w: float) -> float:
    return P["TcL"] * math.tanh(w / P["we"])


def _pump_torque(p: float, eta: float) -> float:
    return P["D"] * p / eta


def _valve(p: float) -> float:
    return P["Ko"] * p / math.sqrt(abs(p) + P["pt"])


def load_diagram() -> Any:
    """The slow part: rotor, progressive coupling, load inertia, friction, pump and line.

    Exported input ``torque`` [N*m]; outputs ``speed`` [rad/s] (= ``w_m``) and the
    states ``w_m`` [rad/s], ``dth`` [rad], ``w_L`` [rad/s], ``p`` [Pa].
    """
    b = DiagramBuilder("load")
    # motor rotor: J_m w_m' = T_m - T_s - T_fm
    sum_m = b.add(Sum("sum_m", "+--", unit="N*m"))
    acc_m = b.add(Gain("inv_Jm", 1.0 / P["Jm"], input_unit="N*m", unit="rad/s^2"))
    w_m = b.add(Integrator("w_m", unit="rad/s", input_unit="rad/s^2"))
    # coupling twist and torque
    dw = b.add(Sum("dw", "+-", unit="rad/s"))
    dth = b.add(Integrator("dth", unit="rad", input_unit="rad/s"))
    shaft = b.add(FunctionBlock("coupling", _shaft, inputs=[("dth", "rad"), ("dw", "rad/s")],
                                outputs=[("T", "N*m")]))
    fric_m = b.add(FunctionBlock("friction_m", _motor_friction, inputs=[("w", "rad/s")],
                                 outputs=[("T", "N*m")]))
    # load: J_L w_L' = T_s - T_fL - T_p
    fric_l = b.add(FunctionBlock("friction_L", _load_friction, inputs=[("w", "rad/s")],
                                 outputs=[("T", "N*m")]))
    eta = b.add(Table2D("eta", ETA_SPEED, ETA_PRESSURE, ETA, input_units=("rad/s", "Pa")))
    pump = b.add(FunctionBlock("pump", _pump_torque, inputs=[("p", "Pa"), "eta"],
                               outputs=[("T", "N*m")]))
    sum_l = b.add(Sum("sum_L", "+--", unit="N*m"))
    acc_l = b.add(Gain("inv_JL", 1.0 / P["JL"], input_unit="N*m", unit="rad/s^2"))
    w_l = b.add(Integrator("w_L", unit="rad/s", input_unit="rad/s^2"))
    # line: C_h p' = D w_L - K_l p - q_valve(p)
    q_pump = b.add(Gain("displacement", P["D"], input_unit="rad/s", unit="m^3/s"))
    leak = b.add(Gain("leakage", P["Kl"], input_unit="Pa", unit="m^3/s"))
    valve = b.add(FunctionBlock("valve", _valve, inputs=[("p", "Pa")],
                                outputs=[("q", "m^3/s")]))
    sum_q = b.add(Sum("sum_q", "+--", unit="m^3/s"))
    dp = b.add(Gain("inv_Ch", 1.0 / P["Ch"], input_unit="m^3/s", unit="Pa/s"))
    p = b.add(Integrator("p", unit="Pa", input_unit="Pa/s"))
    b.connect(shaft.output("T"), sum_m.ins[1])
    b.connect(fric_m.output("T"), sum_m.ins[2])
    b.connect(sum_m.y, acc_m.u)
    b.connect(acc_m.y, w_m.u)
    b.connect(w_m.y, dw.ins[0])
    b.connect(w_l.y, dw.ins[1])
    b.connect(dw.y, dth.u)
    b.connect(dth.y, shaft.input("dth"))
    b.connect(dw.y, shaft.input("dw"))
    b.connect(w_m.y, fric_m.input("w"))
    b.connect(w_l.y, fric_l.input("w"))
    b.connect(w_l.y, eta.input("u0"))
    b.connect(p.y, eta.input("u1"))
    b.connect(p.y, pump.input("p"))
    b.connect(eta.output("y"), pump.input("eta"))
    b.connect(shaft.output("T"), sum_l.ins[0])
    b.connect(fric_l.output("T"), sum_l.ins[1])
    b.connect(pump.output("T"), sum_l.ins[2])
    b.connect(sum_l.y, acc_l.u)
    b.connect(acc_l.y, w_l.u)
    b.connect(w_l.y, q_pump.u)
    b.connect(p.y, leak.u)
    b.connect(p.y, valve.input("p"))
    b.connect(q_pump.y, sum_q.ins[0])
    b.connect(leak.y, sum_q.ins[1])
    b.connect(valve.output("q"), sum_q.ins[2])
    b.connect(sum_q.y, dp.u)
    b.connect(dp.y, p.u)
    b.export_input(sum_m.ins[0], "torque")
    b.export_output(w_m.y, "speed")
    b.export_output(w_m.y, "w_m")
    b.export_output(dth.y, "dth")
    b.export_output(w_l.y, "w_L")
    b.export_output(p.y, "p")
    return b.build()


def monolithic_diagram() -> Any:
    """Drive and load wired in one diagram (for one integrator over everything)."""
    b = DiagramBuilder("machine")
    drive = b.add(drive_diagram())
    load = b.add(load_diagram())
    b.connect(drive.outputs["torque"], load.inputs["torque"])
    b.connect(load.outputs["speed"], drive.inputs["speed"])
    return b.build()


CONNECTIONS = [("drive.torque", "load.torque"), ("load.speed", "drive.speed")]


# ------------------------------------------------------ independent reference
_ETA_W = np.array(ETA_SPEED)
_ETA_P = np.array(ETA_PRESSURE)
_ETA = np.array(ETA)


def _eta(w: float, p: float) -> float:
    """The efficiency map, bilinear, inputs clamped to the grid (as Table2D 'clip')."""
    w = min(max(w, _ETA_W[0]), _ETA_W[-1])
    p = min(max(p, _ETA_P[0]), _ETA_P[-1])
    i = min(int(np.searchsorted(_ETA_W, w, side="right")) - 1, _ETA_W.size - 2)
    j = min(int(np.searchsorted(_ETA_P, p, side="right")) - 1, _ETA_P.size - 2)
    a = (w - _ETA_W[i]) / (_ETA_W[i + 1] - _ETA_W[i])
    c = (p - _ETA_P[j]) / (_ETA_P[j + 1] - _ETA_P[j])
    return ((1 - a) * (1 - c) * _ETA[i, j] + a * (1 - c) * _ETA[i + 1, j]
            + (1 - a) * c * _ETA[i, j + 1] + a * c * _ETA[i + 1, j + 1])


def rhs(t: float, x: np.ndarray) -> np.ndarray:
    """The whole model, x = [u, i, I_c, i_s, I_w, w_m, dth, w_L, p] (order of STATES)."""
    u, i, ic, i_s, iw, wm, dth, wl, p = x
    e_w = P["W"] * (1.0 - np.exp(-(t / P["tau"]) ** 2)) - wm
    i_ref = (P["Kpw"] * e_w + iw) / P["k"]
    e_i = i_ref - i_s
    v_ref = P["Kpi"] * e_i + ic
    ts = P["c"] * dth * (1.0 + (dth / P["thn"]) ** 2) + P["d"] * (wm - wl)
    tfm = P["bm"] * wm + P["Tcm"] * np.tanh(wm / P["we"])
    tfl = P["TcL"] * np.tanh(wl / P["we"]) + P["D"] * p / _eta(wl, p)
    q = P["D"] * wl - P["Kl"] * p - P["Ko"] * p / np.sqrt(abs(p) + P["pt"])
    return np.array([
        (v_ref - u) / P["Td"],
        (u - P["R"] * i - P["k"] * wm) / P["L"],
        P["Kii"] * e_i,
        P["ws"] * (i - i_s),
        P["Kiw"] * e_w,
        (P["k"] * i - ts - tfm) / P["Jm"],
        wm - wl,
        (ts - tfl) / P["JL"],
        q / P["Ch"],
    ])


def jacobian(x: np.ndarray, t: float = 0.0, eps: float = 1e-7) -> np.ndarray:
    """d rhs / d x by central differences (the model matrix of the linearization)."""
    n = x.size
    J = np.empty((n, n))
    for j in range(n):
        dx = np.zeros(n)
        dx[j] = eps * max(1.0, abs(x[j]))
        J[:, j] = (rhs(t, x + dx) - rhs(t, x - dx)) / (2 * dx[j])
    return J


def mode_frequencies_hz(x: np.ndarray | None = None) -> dict[str, Any]:
    """Eigenvalues of the linearization at ``x`` (default: rest), split drive / load.

    Returns the eigenvalues of the whole model and of the two diagonal blocks
    (drive with the speed frozen, load with the torque frozen), in 1/s.
    """
    x = np.zeros(N_STATES) if x is None else np.asarray(x, float)
    J = jacobian(x)
    return {"all": np.linalg.eigvals(J), "drive": np.linalg.eigvals(J[:5, :5]),
            "load": np.linalg.eigvals(J[5:, 5:])}


@lru_cache(maxsize=4)
def _reference_solution(t_end: float, method: str) -> Any:
    from scipy.integrate import solve_ivp
    sol = solve_ivp(rhs, (0.0, t_end), np.zeros(N_STATES), method=method, rtol=1e-12, atol=1e-12,
                    dense_output=True)
    if not sol.success:
        raise RuntimeError(f"reference ({method}) failed: {sol.message}")
    return sol


def reference(t: Any, t_end: float = T_END, method: str = "Radau") -> np.ndarray:
    """Reference states at times ``t``, shape (len(t), 9) (Radau, rtol = atol = 1e-12)."""
    return _reference_solution(float(t_end), method).sol(np.asarray(t, float)).T


@lru_cache(maxsize=4)
def amplitudes(t_end: float = T_END) -> np.ndarray:
    """max_t |x_ref(t)| per state on a 0.1 ms grid."""
    n = int(round(t_end / 1e-4))
    return np.max(np.abs(reference(np.linspace(0.0, t_end, n + 1), t_end)), axis=0)


def state_error(t: np.ndarray, X: np.ndarray, t_end: float = T_END) -> tuple[float, np.ndarray]:
    """(max over states, per state) of max_t |x - x_ref| / max_t |x_ref|."""
    if not np.all(np.isfinite(X)):
        return math.inf, np.full(X.shape[1], math.inf)
    per = np.max(np.abs(X - reference(t, t_end)), axis=0) / amplitudes(t_end)
    return float(np.max(per)), per


# ---------------------------------------------------------------------- runs
def run_single_rate(dt: float, t_end: float = T_END, record_dt: float = 2e-3,
                    solver: str = "rk4", compiled: bool | None = None) -> tuple[float, float, dict]:
    """The monolithic diagram under one RK4 integrator at step ``dt``.

    Records the nine states every ``round(record_dt / dt)`` steps.  Returns
    ``(wall_s, max relative state error, diagnostics)``; a run that blows up
    (``NonFiniteError``, or an overflow inside a block function) returns an
    infinite error.
    """
    diagram = monolithic_diagram()
    ports = [_find_output(diagram, s) for s in STATES]
    every = max(1, int(round(record_dt / dt)))
    sim = Simulator(diagram, solver=solver, dt=dt, record=ports, record_every=every,
                    compiled=compiled)
    c0 = time.process_time()
    w0 = time.perf_counter()
    try:
        res = sim.run(t_end)
    except (NonFiniteError, StepError) as exc:
        # an unstable run ends in a non-finite state or an overflow in a block function
        if not isinstance(exc, NonFiniteError) and not isinstance(exc.__cause__,
                                                                  ArithmeticError):
            raise
        wall = time.perf_counter() - w0
        return wall, math.inf, {"dt": dt, "blew_up": str(exc), "steps": sim.stats["steps"]}
    wall = time.perf_counter() - w0
    cpu = time.process_time() - c0
    X = np.column_stack([res[p.path] for p in ports])
    err, per = state_error(res.time, X, t_end)
    d = res.diagnostics
    diag = {"dt": dt, "cpu_s": cpu, "steps": d["steps"], "rhs_evals": d["rhs_evals"],
            "slow_rhs_evals": d["rhs_evals"], "propagator": d["propagator"],
            "errors": dict(zip(STATES, per.tolist())), "time": res.time, "states": X}
    return wall, err, diag


def _find_output(diagram: Any, name: str) -> Any:
    """The leaf output port behind the exported output ``sub.port`` of a child diagram."""
    sub, port = name.split(".")
    child = diagram.find(sub)
    return child.output_map[child.outputs[port]]


def make_master(H: float = 2e-3, dt_fast: float = 40e-6, dt_slow: float | None = None,
                coupling: str = "gauss_seidel", order: int = 2,
                first: str = "drive", compiled: bool | None = None) -> MasterScheduler:
    """The co-simulation: drive (RK4, ``dt_fast``) and load (RK4, ``dt_slow``, default H);
    ``compiled``: the subsystems' Simulators' and the master's option."""
    drive = DiagramSubsystem(drive_diagram(), solver="rk4", dt=dt_fast, compiled=compiled)
    load = DiagramSubsystem(load_diagram(), solver="rk4", dt=dt_slow or H, compiled=compiled)
    couplings = {"jacobi": lambda: Jacobi(),
                 "gauss_seidel": lambda: GaussSeidel(
                     [first, "load" if first == "drive" else "drive"]),
                 "iterative": lambda: Iterative("broyden")}
    return MasterScheduler([drive, load], CONNECTIONS, H, coupling=couplings[coupling](),
                           extrapolation=order, compiled=compiled)


def run_multirate(H: float = 2e-3, dt_fast: float = 40e-6, dt_slow: float | None = None,
                  coupling: str = "gauss_seidel", order: int = 2, first: str = "drive",
                  t_end: float = T_END) -> tuple[float, float, dict]:
    """Multi-rate co-simulation; returns ``(wall_s, max relative state error, diagnostics)``.

    The states are compared at the communication points (every ``H``).
    """
    master = make_master(H, dt_fast, dt_slow, coupling, order, first)
    c0 = time.process_time()
    w0 = time.perf_counter()
    res = master.run(t_end)
    wall = time.perf_counter() - w0
    cpu = time.process_time() - c0
    X = np.column_stack([res[s] for s in STATES])
    err, per = state_error(res.time, X, t_end)
    drive, load = master.subsystems
    d = res.diagnostics
    diag = {"H": H, "dt_fast": dt_fast, "dt_slow": dt_slow or H, "coupling": coupling,
            "order": order, "first": first, "cpu_s": cpu, "macro_steps": d["macro_steps"],
            "subsystem_steps": d["subsystem_steps"], "subsystem_wall_s": d["subsystem_wall_s"],
            "master_overhead_us_per_subsystem_step":
                d["master_overhead_us_per_subsystem_step"],
            "drive_steps": drive.sim.stats["steps"], "drive_rhs_evals":
                drive.sim.diagnostics()["rhs_evals"],
            "drive_propagator": drive.sim.diagnostics()["propagator"],
            "slow_steps": load.sim.stats["steps"],
            "slow_rhs_evals": load.sim.diagnostics()["rhs_evals"],
            "iterations_per_step_mean": d["iterations_per_step_mean"],
            "errors": dict(zip(STATES, per.tolist())), "time": res.time, "states": X}
    return wall, err, diag


def largest_single_rate_step(lo_us: int = 10, hi_us: int = 200) -> tuple[float, dict]:
    """The largest RK4 step (whole microseconds) at which the monolithic run meets TOL.

    Bisection on [lo, hi] us, assuming that the error criterion, once missed,
    stays missed at larger steps (checked: the miss is the RK4 stability limit
    of the sensor pole); returns (step [s], {step_us: error}).
    """
    tried: dict[int, float] = {}

    def ok(us: int) -> bool:
        if us not in tried:
            tried[us] = run_single_rate(us * 1e-6)[1]
        return tried[us] <= TOL

    if not ok(lo_us):
        raise RuntimeError(f"the monolithic RK4 run misses {TOL} already at {lo_us} us")
    while hi_us - lo_us > 1:
        mid = (lo_us + hi_us) // 2
        if ok(mid):
            lo_us = mid
        else:
            hi_us = mid
    return lo_us * 1e-6, dict(sorted(tried.items()))


def timed_median(fn: Any, repeats: int) -> tuple[float, list[float], Any]:
    """Median wall time of ``fn()`` (which returns (wall, err, diag)) over ``repeats``."""
    import gc
    walls, out = [], None
    for _ in range(repeats):
        gc.collect()
        out = fn()
        walls.append(out[0])
    return statistics.median(walls), walls, out


# multi-rate configuration chosen from the coupling / order study in the report
MULTIRATE = {"H": 2e-3, "dt_fast": 40e-6, "dt_slow": 2e-3, "coupling": "gauss_seidel",
             "order": 3, "first": "drive"}


def breakdown() -> dict:
    """Where the multi-rate run spends its time (cProfile-free: the master's own timers)."""
    _, _, d = run_multirate(**MULTIRATE)
    sub = d["subsystem_wall_s"]
    return {"drive_us_per_micro_step": 1e6 * sub["drive"] / d["drive_steps"],
            "load_us_per_step": 1e6 * sub["load"] / d["slow_steps"],
            "master_us_per_subsystem_step": d["master_overhead_us_per_subsystem_step"],
            "subsystem_wall_s": sub, "drive_steps": d["drive_steps"],
            "slow_steps": d["slow_steps"], "macro_steps": d["macro_steps"]}


def main(repeats: int = 5, search: bool = True) -> str:
    """Search the single-rate step, time both runs interleaved, return a markdown report."""
    amplitudes()
    if search:
        with np.errstate(over="ignore", invalid="ignore"):
            h, tried = largest_single_rate_step()
    else:
        h, tried = 41e-6, {}
    with np.errstate(over="ignore", invalid="ignore"):
        two_h = run_single_rate(2 * h)[1]
    mono, multi = [], []
    for _ in range(repeats):  # interleaved, so machine load hits both alike
        mono.append(run_single_rate(h))
        multi.append(run_multirate(**MULTIRATE))
    wm = statistics.median(r[0] for r in mono)
    wr = statistics.median(r[0] for r in multi)
    cm = statistics.median(r[2]["cpu_s"] for r in mono)
    cr = statistics.median(r[2]["cpu_s"] for r in multi)
    dm, dr = mono[-1][2], multi[-1][2]
    b = breakdown()
    lines = [
        "single-rate RK4 step search [us: error]: "
        + ", ".join(f"{k}: {v:.3g}" for k, v in tried.items()),
        f"largest single-rate RK4 step: {h * 1e6:.0f} us, error {mono[-1][1]:.3g}; "
        f"at {2 * h * 1e6:.0f} us: {two_h:.3g}",
        f"multi-rate {MULTIRATE}: error {multi[-1][1]:.3g}",
        "per-state errors, single-rate: "
        + ", ".join(f"{k} {v:.2g}" for k, v in dm["errors"].items()),
        "per-state errors, multi-rate: "
        + ", ".join(f"{k} {v:.2g}" for k, v in dr["errors"].items()),
        f"single-rate: {dm['steps']} steps, {dm['rhs_evals']} evaluations of the whole model",
        f"multi-rate: {dr['macro_steps']} macro steps, drive {dr['drive_steps']} micro steps "
        f"(propagator {dr['drive_propagator']}), load {dr['slow_steps']} steps / "
        f"{dr['slow_rhs_evals']} evaluations",
        f"wall [s] single-rate {[round(r[0], 3) for r in mono]} median {wm:.3f}",
        f"wall [s] multi-rate  {[round(r[0], 3) for r in multi]} median {wr:.3f}",
        f"wall ratio (median) {wm / wr:.2f}; CPU-time ratio (median) {cm / cr:.2f}",
        f"breakdown: drive {b['drive_us_per_micro_step']:.2f} us/micro step, load "
        f"{b['load_us_per_step']:.1f} us/step, master "
        f"{b['master_us_per_subsystem_step']:.1f} us per subsystem macro step; single-rate "
        f"{1e6 * wm / dm['steps']:.1f} us/step",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    import sys
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
