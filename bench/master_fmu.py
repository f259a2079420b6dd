"""FMU co-simulation cases of ``bench master``: our master (compiled loop and Python loop)
against the Ecos C++ master (ecospy) on identical generated-C FMUs.

Model: the LIM two-mass oscillator (:mod:`bench.lim`) exported as two FMI 2.0
Co-Simulation FMUs of generated C (``export_fmu``, RK4 at ``H / 10`` inside), f-s
coupling (``m1.fc -> m2.fc``, ``m2.x2/v2 -> m1``), Jacobi, zero-order hold, 10 s.
Timed, like for like: ours ``master.run()`` (the FMUs' reset and initialization, the
steps and the results), Ecos ``sim.init()`` and ``sim.step(n)``; loading and
instantiating the FMUs is build time for both (``EcosSimulation(...)``; ours
``FMUSubsystem.inst.start()`` before the run, so ``run()`` resets the instances).
Ecos reads ``m1.fc`` as the FMU left it after ``doStep`` (its input ``x2`` still at
``t_k``); our master settles the feedthrough output ``fc`` with the new
``x2(t_k + H)``, so the final values differ by the coupling error (both are in
``extra``; the analysis, against the exact solution: :mod:`bench.master_systems`).

ecospy needs libtbb (the ``tbb`` package installs ``libtbb.so.12`` into the
environment's ``lib``); :func:`_ecos` preloads it or reports the peer as not installed.
"""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile
import time
from pathlib import Path

from .harness import PeerNotInstalled

_DIR: list = []
T_END = 10.0


def fmus(H: float) -> tuple[Path, Path]:
    """The two generated-C FMUs of the dual-mass oscillator for macro step ``H`` (cached)."""
    from fmus.export import export_fmu

    from .lim import m1_diagram, m2_diagram
    if not _DIR:
        _DIR.append(Path(tempfile.mkdtemp(prefix="cosim-bench-fmu-")))
    d = _DIR[0]
    paths = (d / f"m1_{H:g}.fmu", d / f"m2_{H:g}.fmu")
    if not paths[0].exists():
        export_fmu(m1_diagram(), paths[0], "2.0", "cs", step=H / 10, model_name="m1")
        export_fmu(m2_diagram(), paths[1], "2.0", "cs", step=H / 10, model_name="m2")
    return paths


def ours(H: float, compiled: bool, t_end: float = T_END):
    """Case function: our master on the two FMUs (``compiled`` loop or the Python loop)."""
    from cosim import Jacobi, MasterScheduler
    from fmus import load_fmu

    from .lim import CONNECTIONS
    f1, f2 = fmus(H)
    t0 = time.perf_counter()
    subs = [load_fmu(f1, name="m1"), load_fmu(f2, name="m2")]
    master = MasterScheduler(subs, CONNECTIONS, H, coupling=Jacobi(), extrapolation=0,
                             compiled=compiled)
    for s in subs:  # load the binary and instantiate, as Ecos's constructor does
        s.inst.start()
    t1 = time.perf_counter()
    res = master.run(t_end)
    t2 = time.perf_counter()
    d = res.diagnostics
    for s in subs:
        s.free()
    return t1 - t0, t2 - t1, {"x2_end": float(res["m2.x2"][-1]), "compiled": d["compiled"],
                              "master_us_per_fmu_step":
                                  d["master_overhead_us_per_subsystem_step"],
                              "fmu_steps": sum(d["subsystem_steps"].values())}


def _ecos():
    lib = Path(sys.prefix) / "lib" / "libtbb.so.12"
    try:
        if lib.exists():
            ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
        from ecospy.EcosSimulation import EcosSimulation
        from ecospy.EcosSimulationStructure import EcosSimulationStructure
    except (ImportError, OSError) as exc:
        raise PeerNotInstalled("ecospy", f"pip install ecospy tbb: {exc}") from None
    return EcosSimulation, EcosSimulationStructure


def ecos_run(models: list, connections: list, H: float, t_end: float, read: str):
    """The Ecos C++ master on ``models`` (``(name, path, step hint or None)``) connected by
    ``connections`` (``("a.y", "b.u")``): ``(build s, run s, value of read at the end)``."""
    EcosSimulation, EcosSimulationStructure = _ecos()
    t0 = time.perf_counter()
    ss = EcosSimulationStructure()
    for name, path, hint in models:
        ss.add_model(name, os.fspath(path), hint)
    for src, dst in connections:
        ss.make_real_connection(src.replace(".", "::"), dst.replace(".", "::"))
    sim = EcosSimulation(structure=ss, step_size=H)
    t1 = time.perf_counter()
    sim.init()
    sim.step(int(round(t_end / H)))
    t2 = time.perf_counter()
    value = sim.get_real(read.replace(".", "::"))
    sim.terminate()
    return t1 - t0, t2 - t1, float(value)


def ecos(H: float, t_end: float = T_END):
    """Case function: the Ecos C++ master (ecospy) on the same two FMUs."""
    from .lim import CONNECTIONS
    f1, f2 = fmus(H)
    build, run, x2 = ecos_run([("m1", f1, None), ("m2", f2, None)], CONNECTIONS, H, t_end,
                              "m2.x2")
    return build, run, {"x2_end": x2}


def floor(H: float, t_end: float = T_END, exchange: bool = True):
    """Case function: a bare C loop on the two FMUs, no master (:mod:`bench.fmu_floor`): their
    ``doStep`` calls and (``exchange``) Jacobi's one ``set`` and ``get`` per connection."""
    from .fmu_floor import floor_time
    from .lim import CONNECTIONS
    f1, f2 = fmus(H)
    return 0.0, floor_time([("m1", f1, 1), ("m2", f2, 1)],
                           list(CONNECTIONS) if exchange else [], H, t_end), {}
