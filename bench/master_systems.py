"""More FMU systems of ``bench master``: our compiled loop against the Ecos C++ master (ecospy)
on identical generated-C FMUs, one system per master configuration the compiled loop covers.

Systems (10 s, Jacobi, zero-order hold, every FMU RK4 at a tenth of its own step inside):

* ``fmi3_pair``: the LIM two-mass oscillator (:mod:`bench.lim`) as two FMI 3 CS FMUs, H = 1 ms
  (ours answers their intermediate updates in C with the held inputs; Ecos gives no callback:
  both hold the inputs over the step);
* ``multirate_pair``: the LIM pair as FMI 2 FMUs, m1 at H = 1 ms, m2 at 2 H (ours
  ``rate=2``; Ecos ``step_size_hint`` 2 ms);
* ``chain4``, ``chain10``: a sine source FMU feeding a chain of first-order lags, 4 and 10 FMI 2
  FMUs, H = 1 ms;
* ``controller_pair``: the LIM pair with m1 replaced by a native diagram (a "controller
  block" beside an FMU, RK4 at H / 10): ours runs it in the compiled loop through its C twin
  (:mod:`fmus.native_twin`; built at ``MasterScheduler(...)``, cached), Ecos the same diagram
  exported as an FMU.  Ours includes the native subsystem's Python initialization (its
  Simulator's program, about 2.3 ms of the run).

Peer ``bare-c-loop`` (:mod:`bench.fmu_floor`): the same FMUs stepped by a bare C loop with no
master (``doStep`` of each at its rate, Jacobi's one ``set`` and ``get`` per connection, batched
per FMU; the controller pair with the native diagram's exported FMU).  Every Jacobi master
makes at least these calls, so ``bare / Ecos`` is the lowest ratio any master can reach in that
run, and the time above it is each master's own work.  Measured 2026-11-30 (medians of 9,
2 vCPU): the bare loop is 0.26-0.38 of Ecos's time on the dual mass (H = 1 ms), the FMI 3 pair
and the controller pair, so ``ours / Ecos <= 0.5`` leaves ours 30-90 ns per FMU step above
it; ours measured 1.4-1.9x the bare loop there (the settling of feedthrough outputs with the
new inputs, the extrapolation histories, the recorded rows, the Python set-up and results;
for FMI 3 the FMUs' calls into our intermediate-update callback at every stage, which Ecos
does not register), Ecos 2.5-4x.

Timed as :mod:`bench.master_fmu`: loading and instantiation are build time for both; ours
``master.run()``, Ecos ``init()`` and ``step(n)``.

Why the final values (``extra["end"]``) differ from Ecos's, reproduced to all 17 digits by a
plain FMI loop (fmpy) in each master's call order: Ecos (ecospy 0.7, ``fixed_step_algorithm``)
steps every FMU, reads its outputs right after ``doStep`` and transfers them once, before
setting the new inputs.  m1's output ``fc = kc (x1 - x2)`` depends directly on its input ``x2``,
so m2 receives it computed with the ``x2`` m1 held over the step, ``x2(t_k)``: m2 sees its own
position one macro step late (Ecos re-reads ``fc`` after setting ``x2``, but the next read
overwrites it before it is transferred).  Our master updates ``fc`` with the new ``x2`` before
sending it.  Against the exact solution at H = 1 ms over 10 s: |x2(10) - exact| 0.139 (ours)
against 0.448 (Ecos), energy 14.5 kJ against 32.9 kJ (exact 10 kJ).  Systems whose outputs do
not depend directly on inputs (``chain4``, ``chain10``) agree to the last digit.
``multirate_pair`` differs for another reason: Ecos exchanges every H and gives m1 the slow
FMU's output from the end of its 2H step already halfway through it, while ours holds the value
of m2's last communication point (|x2(10) error| 0.274 for Ecos, 0.281 for ours).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .master_fmu import ecos_run

T_END = 10.0
H = 1e-3
SYSTEMS = ("fmi3_pair", "multirate_pair", "chain4", "chain10", "controller_pair")
_DIR: list = []


def _dir() -> Path:
    if not _DIR:
        _DIR.append(Path(tempfile.mkdtemp(prefix="cosim-bench-systems-")))
    return _DIR[0]


def _lag(i: int):
    from blocks import FirstOrderLag
    from cosim import DiagramBuilder
    b = DiagramBuilder(f"lag{i}")
    lag = b.add(FirstOrderLag("lag", tau_s=0.05 * (1 + i % 3)))
    b.export_input(lag.u, "u")
    b.export_output(lag.y, "y")
    return b.build()


def _sine():
    from blocks.sources import Sine
    from cosim import DiagramBuilder
    b = DiagramBuilder("src")
    s = b.add(Sine("s", 1.0, 3.0))
    b.export_output(s.y, "y")
    return b.build()


def layout(system: str) -> tuple[list, list, dict]:
    """``([(name, fmu path, rate)], connections, {name: its own step})`` of ``system``."""
    from fmus.export import export_fmu

    from .lim import CONNECTIONS, m1_diagram, m2_diagram
    d = _dir()

    def fmu(diagram, name, version="2.0", step=H):
        path = d / f"{system}_{name}.fmu"
        if not path.exists():
            export_fmu(diagram(), path, version, "cs", step=step / 10, model_name=name)
        return path
    if system in ("fmi3_pair", "multirate_pair", "controller_pair"):
        ver = "3.0" if system == "fmi3_pair" else "2.0"
        r2 = 2 if system == "multirate_pair" else 1
        subs = [("m1", fmu(m1_diagram, "m1", ver), 1),
                ("m2", fmu(m2_diagram, "m2", ver, r2 * H), r2)]
        return subs, list(CONNECTIONS), {"m1": H, "m2": r2 * H}
    n = int(system.removeprefix("chain"))
    subs = [("src", fmu(_sine, "src"), 1)] + \
        [(f"lag{i}", fmu(lambda i=i: _lag(i), f"lag{i}"), 1) for i in range(1, n)]
    conns = [("src.y", "lag1.u")] + [(f"lag{i}.y", f"lag{i + 1}.u") for i in range(1, n - 1)]
    return subs, conns, {name: H for name, _, _ in subs}


def ours(system: str, compiled: bool | None = None, t_end: float = T_END):
    """Case function: our master on ``system``."""
    from cosim import Jacobi, MasterScheduler
    from cosim.subsystem import DiagramSubsystem
    from fmus import load_fmu

    from .lim import m1_diagram
    specs, conns, _ = layout(system)
    t0 = time.perf_counter()
    subs = [load_fmu(p, name=n, rate=r) for n, p, r in specs]
    if system == "controller_pair":
        subs[0] = DiagramSubsystem(m1_diagram(), solver="rk4", dt=H / 10, name="m1")
    master = MasterScheduler(subs, conns, H, coupling=Jacobi(),
                             extrapolation=0, compiled=compiled)
    for s in subs:  # load the binary and instantiate, as Ecos's constructor does
        if hasattr(s, "inst"):
            s.inst.start()
    t1 = time.perf_counter()
    res = master.run(t_end)
    t2 = time.perf_counter()
    for s in subs:
        if hasattr(s, "free"):
            s.free()
    last = conns[-1][0]
    return t1 - t0, t2 - t1, {"end": float(res[last][-1]),
                              "compiled": res.diagnostics["compiled"]}


def ecos(system: str, t_end: float = T_END):
    """Case function: the Ecos C++ master on the same FMUs."""
    specs, conns, steps = layout(system)
    models = [(name, path, steps[name] if rate != 1 else None) for name, path, rate in specs]
    build, run, end = ecos_run(models, conns, H, t_end, conns[-1][0])
    return build, run, {"end": end}


def floor(system: str, t_end: float = T_END, exchange: bool = True):
    """Case function: a bare C loop on the FMUs, no master (:mod:`bench.fmu_floor`; the
    controller pair: with the native diagram's exported FMU): their ``doStep`` calls and
    (``exchange``) Jacobi's one ``set`` and ``get`` per connection."""
    from .fmu_floor import floor_time
    specs, conns, _ = layout(system)
    return 0.0, floor_time(specs, conns if exchange else [], H, t_end), {}
