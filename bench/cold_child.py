"""One cold run in a fresh interpreter, for :mod:`bench.cold_start` (run by path, not
imported: ``python bench/cold_child.py {ours|ecos} SPEC_JSON``).

Prints one JSON object: ``phases`` (seconds each, exclusive: a phase's time leaves out
the phases timed inside it), ``total_s`` (the first line of this script to the end of the
run: imports included), ``after_import_s`` (from after the imports: the loading and the
run), and the run's final ``x2_end``.  The clock starts at this script's first line, so
the interpreter's own start is the same for both masters and not in the figures.

Ours: ``import`` (cosim and fmus), ``unpack`` (the archive), ``parse`` (the model
description), ``load`` (the rest of ``load_fmu``: the subsystem, its binary checked, the
modules it needs), ``master`` (``MasterScheduler(...)``), ``library`` (the compiled
loop's library: cache lookup and ``dlopen``, or the compiler), ``instantiate`` (the
FMUs' binaries loaded and instantiated), ``run`` (the rest of ``master.run``: the
initialization, the steps, the results).  The phases inside a call are timed by
wrapping the functions by name (:class:`Phases`); none of them changes what runs.

Ecos: ``import`` (libtbb preloaded, ecospy), ``structure`` (the models and
connections), ``build`` (``EcosSimulation``: unpacking, parsing, instantiation, in
C++), ``run`` (``init`` and ``step``).
"""

import time

_T0 = time.perf_counter()

import json  # noqa: E402
import sys  # noqa: E402


class Phases:
    """Exclusive wall time per phase: a phase nested in another is not counted twice."""

    def __init__(self):
        self.t = {}
        self._inner = []

    def _add(self, phase, t0):
        dt = time.perf_counter() - t0
        inner = self._inner.pop()
        self.t[phase] = self.t.get(phase, 0.0) + dt - inner
        if self._inner:
            self._inner[-1] += dt

    def since(self, phase, t0):
        """Count the time from ``t0`` to now as ``phase`` (one not inside another)."""
        self._inner.append(0.0)
        self._add(phase, t0)

    def call(self, phase, fn, *args, **kw):
        t0 = time.perf_counter()
        self._inner.append(0.0)
        try:
            return fn(*args, **kw)
        finally:
            self._add(phase, t0)

    def wrap(self, owner, attr, phase):
        """Time every call of ``owner.attr`` as ``phase`` (a module function or a
        method)."""
        fn = getattr(owner, attr)

        def timed(*args, **kw):
            return self.call(phase, fn, *args, **kw)
        setattr(owner, attr, timed)


def ours(spec, ph):
    from cosim import Jacobi, MasterScheduler
    from fmus import load_fmu
    ph.since("import", _T0)
    t1 = time.perf_counter()
    import fmus.fmu_cache as fc
    ph.wrap(fc, "extract", "unpack")
    ph.wrap(fc, "description", "parse")
    subs = [ph.call("load", load_fmu, path, name=name) for name, path in spec["fmus"]]
    import fmus.compiled_master as cm
    import fmus.instance as fi
    ph.wrap(cm, "_library", "library")
    ph.wrap(fi.FMUInstance, "start", "instantiate")
    conns = [tuple(c) for c in spec["connections"]]
    master = ph.call("master", MasterScheduler, subs, conns, spec["H"], coupling=Jacobi(),
                     extrapolation=0, compiled=True)
    res = ph.call("run", master.run, spec["t_end"])
    t2 = time.perf_counter()
    out = {"x2_end": float(res["m2.x2"][-1]), "compiled": res.diagnostics["compiled"]}
    for s in subs:
        s.free()
    return t1, t2, out


def ecos(spec, ph):
    import ctypes
    import os
    lib = os.path.join(sys.prefix, "lib", "libtbb.so.12")
    if os.path.exists(lib):
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    from ecospy.EcosSimulation import EcosSimulation
    from ecospy.EcosSimulationStructure import EcosSimulationStructure
    ph.since("import", _T0)
    t1 = time.perf_counter()

    def structure():
        ss = EcosSimulationStructure()
        for name, path in spec["fmus"]:
            ss.add_model(name, path)
        for src, dst in spec["connections"]:
            ss.make_real_connection(src.replace(".", "::"), dst.replace(".", "::"))
        return ss
    ss = ph.call("structure", structure)
    sim = ph.call("build", EcosSimulation, structure=ss, step_size=spec["H"])

    def run():
        sim.init()
        sim.step(int(round(spec["t_end"] / spec["H"])))
        return sim.get_real("m2::x2")
    x2 = ph.call("run", run)
    t2 = time.perf_counter()
    sim.terminate()
    return t1, t2, {"x2_end": float(x2)}


def main():
    who, spec = sys.argv[1], json.loads(sys.argv[2])
    ph = Phases()
    t1, t2, out = {"ours": ours, "ecos": ecos}[who](spec, ph)
    out.update(phases=ph.t, total_s=t2 - _T0, after_import_s=t2 - t1,
               modules=len(sys.modules))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
