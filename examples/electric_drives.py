"""Electric drives: the CTMS DC motor step response and a PMSM torque step under FOC.

DC motor (anchors-domain.md section 6.1, the CTMS "DC Motor Speed" example): J = 0.01 kg m^2,
b = 0.1 N m s, K = 0.01 N m/A, R = 1 Ohm, L = 0.5 H, a 1 V step.  Published (python-control
reproduction): poles -9.9975 and -2.0025, rise time 1.131 s, settling time (2 %) 2.070 s;
those two times are python-control's ``step_info`` on its default 251-point grid, the
continuous response has 1.13503 s and 2.06518 s (closed form in :func:`dc_motor_exact_times`).

PMSM (gym-electric-motor's default machine: R_s = 18 mOhm, L_d = 0.37 mH, L_q = 1.2 mH,
p = 3, psi_p = 66 mWb; 300 V DC link) at a held speed of 200 rad/s, a 5 N m torque step
at 1 ms through :func:`blocks.electric.PMSMDrive` (PI current control tuned by pole-zero
cancellation for a 2000 rad/s bandwidth, decoupling feed-forward, ideal averaged
inverter): the q current follows :math:`i_q^* (1 - e^{-\\omega_c t})`, the steady state is
the dq equations' (:meth:`~blocks.electric.PMSMParameters.steady_state_voltages`).

Run ``python examples/electric_drives.py``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from blocks.electric import GEM_PMSM, DCMotor, PMSMDrive
from blocks.sources import Constant, Step
from cosim import DiagramBuilder, Simulator

CTMS = dict(resistance_ohm=1.0, inductance_h=0.5, torque_constant_nm_per_a=0.01,
            inertia_kgm2=0.01, friction_nms_per_rad=0.1)
PMSM_SPEED, PMSM_TORQUE, PMSM_T_STEP, U_DC, BANDWIDTH = 200.0, 5.0, 1e-3, 300.0, 2000.0


def dc_motor_exact_times() -> tuple[float, float]:
    """(10-90 % rise time, 2 % settling time) of the CTMS speed step, from the closed form."""
    A, _, _, _ = DCMotor("m", **CTMS).matrices()
    p1, p2 = sorted(np.linalg.eigvals(A).real)  # -9.9975, -2.0025

    def y(t):  # normalized step response of two real poles
        return 1.0 - (p2 * math.exp(p1 * t) - p1 * math.exp(p2 * t)) / (p2 - p1)
    t10 = brentq(lambda t: y(t) - 0.1, 1e-6, 10.0)
    t90 = brentq(lambda t: y(t) - 0.9, 1e-6, 10.0)
    ts = brentq(lambda t: y(t) - 0.98, 1e-6, 10.0)
    return t90 - t10, ts


def dc_motor_step(dt: float = 1e-3, t_end: float = 10.0) -> dict:
    """Simulated CTMS step: poles, final speed, rise and settling times (interpolated)."""
    b = DiagramBuilder("ctms")
    v = b.add(Constant("v", 1.0, unit="V"))
    tl = b.add(Constant("tl", 0.0, unit="N*m"))
    m = b.add(DCMotor("m", **CTMS))
    b.connect(v.y, m.voltage)
    b.connect(tl.y, m.load_torque)
    res = Simulator(b.build(), solver="rk4", dt=dt, record=["m.speed"]).run(t_end)
    t, w = np.asarray(res.time), np.asarray(res["m.speed"])
    final = 0.01 / (0.1 * 1.0 + 0.01 ** 2)  # K / (b R + K^2)

    def cross(level):
        k = int(np.argmax(w >= level))
        return t[k - 1] + (level - w[k - 1]) / (w[k] - w[k - 1]) * (t[k] - t[k - 1])
    A, _, _, _ = m.matrices()
    return {"poles": sorted(np.linalg.eigvals(A).real), "final": float(w[-1]),
            "final_exact": final, "rise_s": cross(0.9 * final) - cross(0.1 * final),
            "settling_s": cross(0.98 * final), "overshoot": float(np.max(w) / final - 1.0)}


def pmsm_torque_step(t_end: float = 0.02, dt: float = 1e-6) -> dict:
    """The PMSM torque step: the i_q response against the first-order closed loop, and
    the steady state against the dq equations."""
    b = DiagramBuilder("pmsm")
    drive = b.add(PMSMDrive("drive", GEM_PMSM, bandwidth_rad_s=BANDWIDTH))
    tr = b.add(Step("tr", PMSM_T_STEP, PMSM_TORQUE, unit="N*m"))
    w = b.add(Constant("w", PMSM_SPEED, unit="rad/s"))
    udc = b.add(Constant("udc", U_DC, unit="V"))
    b.connect(tr.y, drive.input("torque_ref"))
    b.connect(w.y, drive.input("speed"))
    b.connect(udc.y, drive.input("u_dc"))
    rec = ["drive/motor.i_d", "drive/motor.i_q", "drive/motor.torque", "drive/inverter.u_d",
           "drive/inverter.u_q"]
    res = Simulator(b.build(), solver="rk4", dt=dt, record=rec).run(t_end)
    t = np.asarray(res.time)
    kt = 1.5 * GEM_PMSM.pole_pairs * GEM_PMSM.flux_linkage_wb
    iq_ref = PMSM_TORQUE / kt
    tau = np.clip(t - PMSM_T_STEP, 0.0, None)
    iq_first_order = iq_ref * (1.0 - np.exp(-BANDWIDTH * tau))
    iq = np.asarray(res["drive/motor.i_q"])
    ud_ss, uq_ss = GEM_PMSM.steady_state_voltages(0.0, iq_ref, PMSM_SPEED)
    return {"iq_ref": iq_ref, "iq_final": float(iq[-1]),
            "id_final": float(res["drive/motor.i_d"][-1]),
            "torque_final": float(res["drive/motor.torque"][-1]),
            "iq_max_dev_from_first_order": float(np.max(np.abs(iq - iq_first_order))),
            "u_final": (float(res["drive/inverter.u_d"][-1]),
                        float(res["drive/inverter.u_q"][-1])),
            "u_steady_state": (ud_ss, uq_ss)}


def main() -> None:
    d = dc_motor_step()
    rise, settle = dc_motor_exact_times()
    print("CTMS DC motor, 1 V step:")
    print(f"  poles {d['poles'][0]:.4f}, {d['poles'][1]:.4f} (published -9.9975, -2.0025)")
    print(f"  rise time {d['rise_s']:.5f} s (closed form {rise:.5f}; published 1.131 on "
          "python-control's grid)")
    print(f"  settling time {d['settling_s']:.5f} s (closed form {settle:.5f}; published "
          "2.070)")
    p = pmsm_torque_step()
    print(f"PMSM torque step {PMSM_TORQUE:g} N m at {PMSM_SPEED:g} rad/s:")
    print(f"  i_q {p['iq_final']:.4f} A (reference {p['iq_ref']:.4f}), i_d {p['id_final']:.2e} "
          f"A, torque {p['torque_final']:.4f} N m")
    print(f"  i_q against the first-order loop (bandwidth {BANDWIDTH:g} rad/s): max deviation "
          f"{p['iq_max_dev_from_first_order']:.2e} A")
    print(f"  voltages ({p['u_final'][0]:.4f}, {p['u_final'][1]:.4f}) V, dq steady state "
          f"({p['u_steady_state'][0]:.4f}, {p['u_steady_state'][1]:.4f}) V")


if __name__ == "__main__":
    main()
