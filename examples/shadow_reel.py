"""Shadow-model fault detection on a recorded paper reel (hil.shadow, the seed's HIL form).

The seed (research/seed-001.md sec. 1.10, 1.11 item 10): the simulation runs beside the real
machine, driven by the machine's own control signals, and measured-minus-simulated residuals
flag faults.  ``examples/paper_reel.py`` puts machine and shadow in one diagram; here the
machine is outside, as it would be on a mill:

1. **machine recording**: the reel (:func:`blocks.paper.system.reel_diagram` with the fault
   paths, one :class:`~blocks.paper.faults.FaultCase`) is simulated offline and its signals
   streamed to a CSV file by :class:`cosim.writers.CsvWriter`: the control signals (nip-load
   reference ``nip_ref.y``, web speed ``web_speed.y``) and the measured nip line loads
   ``plant.nip_A/B`` and chamber pressures ``plant.p1_A``, ``plant.p2_A``;
2. **shadow**: the nominal reel, a second ``reel_diagram``, is fed from that file by
   :class:`hil.shadow.ShadowModel` (zero-order hold of the recorded control signals) and
   its nip loads are compared with the recorded ones by the seed's rule: critical when
   :math:`|q_i^{meas} - q_i^{model}| / q_{ref} > 5\\,\\%` for 50 ms (``Residual(...,
   rel_threshold=0.05, scale="nip_ref.y", persistence_s=0.05)``).  The pressure residuals
   are recorded without a threshold (the compensated leak shows there).

The control signals given to the shadow are the operating set-points, not the machine's valve
commands: a command-driven shadow runs open loop and calls a compensated leak critical
(:mod:`blocks.paper.fault_detection` gives the reasoning and the figures).

Run ``python examples/shadow_reel.py`` (fault at 10 s, 20 s per case, about a minute) or
``--quick`` (fault at 2 s, leak ramp 2 s, 6 s per case); it prints, per fault case, the
detection time and delay after the onset, the largest nip-load residual and the largest
chamber-pressure residual.  Files go to ``--out`` (default: a temporary folder).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from blocks.paper.faults import FaultCase
from blocks.paper.system import ReelParameters, reel_diagram
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator
from cosim.writers import CsvWriter
from hil.shadow import Residual, ShadowModel

PARAMS = ReelParameters()
PERSISTENCE_S = 0.05
#: The paper_reel example's solver settings (dt: the output grid = the recording's period).
SOLVER = dict(solver="bdf", dt=0.005, rtol=1e-4, atol=1e-9, max_step=PERSISTENCE_S)
FULL = dict(onset_s=10.0, t_end_s=20.0, leak_ramp_s=5.0)
QUICK = dict(onset_s=2.0, t_end_s=6.0, leak_ramp_s=2.0)

CASES = (
    FaultCase("none", "nominal"),
    FaultCase("rail_friction", "rail friction A", mu_static=0.06, mu_dynamic=0.058),
    FaultCase("valve_leak", "valve leak P->A", leak_area_m2=2.7e-6),
    FaultCase("sensor_noise", "sensor noise A", noise_std_n=300.0),
)
CONTROL = ["nip_ref.y", "web_speed.y"]
MEASURED = ["plant.nip_A", "plant.nip_B", "plant.p1_A", "plant.p2_A"]


def machine_diagram(onset_s: float, leak_ramp_s: float) -> object:
    """The machine: reel with fault paths (``plant``) on constant operating signals."""
    b = DiagramBuilder("machine")
    nip_ref = b.add(Constant("nip_ref", PARAMS.nip_ref_n_m, unit="N/m"))
    web = b.add(Constant("web_speed", PARAMS.web_speed_m_s, unit="m/s"))
    plant = b.add(reel_diagram("plant", PARAMS, leak_onset_s=onset_s, leak_ramp_s=leak_ramp_s))
    b.connect(nip_ref.y, plant.input("nip_ref"))
    b.connect(web.y, plant.input("web_speed"))
    return b.build()


def record_machine(case: FaultCase, path: Path, *, onset_s: float, t_end_s: float,
                   leak_ramp_s: float) -> float:
    """Simulate the machine with ``case`` and stream the recording to ``path``; wall [s]."""
    d = machine_diagram(onset_s, leak_ramp_s)
    ctx = d.create_context()
    manip = case.apply(d, ctx, onset_s)
    w = CsvWriter(path, CONTROL + MEASURED)
    t0 = time.perf_counter()
    Simulator(d, ctx, record=False, observers=[w], manipulators=manip, **SOLVER).run(t_end_s)
    return time.perf_counter() - t0


def shadow_model() -> ShadowModel:
    """The nominal reel fed with the recorded control signals; the seed's 5 % rule."""
    seed_rule = dict(rel_threshold=0.05, scale="nip_ref.y", persistence_s=PERSISTENCE_S)
    return ShadowModel(
        reel_diagram("shadow", PARAMS),
        inputs={"nip_ref.y": "nip_ref", "web_speed.y": "web_speed"},
        outputs={"plant.nip_A": Residual("nip_A", **seed_rule),
                 "plant.nip_B": Residual("nip_B", **seed_rule),
                 "plant.p1_A": Residual("p1_A"), "plant.p2_A": Residual("p2_A")},
        **SOLVER)


class CaseRow(NamedTuple):
    label: str
    detected: bool
    detection_s: float        # first detection on either side (nan if none)
    delay_s: float            # detection - fault onset
    max_nip_pct: float        # max_i |r_i| / q_ref over the run [%]
    max_nip_before_n_m: float  # max_i |r_i| before the onset [N/m]
    max_dp1_bar: float
    wall_machine_s: float
    wall_shadow_s: float
    report: object


def run_case(case: FaultCase, out: Path, *, onset_s: float, t_end_s: float,
             leak_ramp_s: float, shadow: ShadowModel | None = None) -> CaseRow:
    tag = case.kind
    rec = out / f"machine_{tag}.csv"
    wall_m = record_machine(case, rec, onset_s=onset_s, t_end_s=t_end_s,
                            leak_ramp_s=leak_ramp_s)
    shadow = shadow or shadow_model()
    t0 = time.perf_counter()
    rep = shadow.replay(rec, out=out / f"residuals_{tag}.csv")
    wall_s = time.perf_counter() - t0
    det = [rep.detection(s) for s in ("plant.nip_A", "plant.nip_B")]
    det = [d for d in det if not math.isnan(d)]
    t_det = min(det) if det else math.nan
    r_nip = np.maximum(np.abs(rep["plant.nip_A.residual"]), np.abs(rep["plant.nip_B.residual"]))
    before = rep.time < onset_s
    return CaseRow(case.label or case.kind, bool(det), t_det, t_det - onset_s,
                   100.0 * float(np.max(r_nip)) / PARAMS.nip_ref_n_m,
                   float(np.max(r_nip[before])),
                   float(np.max(np.abs(rep["plant.p1_A.residual"]))) / 1e5, wall_m, wall_s, rep)


def format_table(rows: list[CaseRow]) -> str:
    lines = [f"{'fault':<18} {'detected':>9} {'t_detect':>9} {'delay':>8} {'max |r|/q_ref':>14} "
             f"{'max |r| pre-fault':>18} {'max |dp_A1|':>12}",
             f"{'':<18} {'(>5 %)':>9} {'[s]':>9} {'[s]':>8} {'[%]':>14} {'[N/m]':>18} "
             f"{'[bar]':>12}"]
    for r in rows:
        td = "-" if math.isnan(r.detection_s) else f"{r.detection_s:.3f}"
        dl = "-" if math.isnan(r.delay_s) else f"{r.delay_s:.3f}"
        lines.append(f"{r.label:<18} {'yes' if r.detected else 'no':>9} {td:>9} {dl:>8} "
                     f"{r.max_nip_pct:>14.3f} {r.max_nip_before_n_m:>18.3g} "
                     f"{r.max_dp1_bar:>12.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[CaseRow]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fault at 2 s, 6 s per case")
    ap.add_argument("--out", type=Path, default=None, help="folder for the CSV files")
    args = ap.parse_args(argv)
    timing = QUICK if args.quick else FULL
    tmp = None
    out = args.out
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="shadow_reel_")
        out = Path(tmp.name)
    out.mkdir(parents=True, exist_ok=True)
    try:
        shadow = shadow_model()
        rows = [run_case(c, out, shadow=shadow, **timing) for c in CASES]
    finally:
        if tmp is not None:
            tmp.cleanup()
    print(f"shadow reel: machine recorded at {1e3 * SOLVER['dt']:g} ms, fault at "
          f"{timing['onset_s']} s, {timing['t_end_s']} s per case; critical: nip-load "
          f"residual > 5 % of q_ref for {1e3 * PERSISTENCE_S:.0f} ms")
    print(format_table(rows))
    print("wall time per case (machine recording + shadow replay): "
          + ", ".join(f"{r.wall_machine_s:.1f} + {r.wall_shadow_s:.1f} s" for r in rows))
    return rows


if __name__ == "__main__":
    main()
