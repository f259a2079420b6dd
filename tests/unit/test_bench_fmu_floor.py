"""bench's bare C loop (``bench/fmu_floor.py``, peer ``bare-c-loop`` of ``bench master``): it
must make exactly the FMI calls it claims, or the lower bound it gives Ecos's ratio is wrong.
Oracle: FMPy stepping the same FMUs in the same call order (Jacobi: set the values last read,
doStep every FMU, get), compared bit for bit."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("fmpy")
if not shutil.which("gcc"):
    pytest.skip("the bare C loop needs gcc", allow_module_level=True)


def _fmpy_jacobi(models, connections, H, n):
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    from fmpy.fmi3 import FMU3Slave
    fmus, vr = {}, {}
    for name, path, _ in models:
        md = read_model_description(str(path))
        cls = FMU3Slave if md.fmiVersion.startswith("3") else FMU2Slave
        # (fmpy keeps an FMI 3 instantiationToken as guid)
        f = cls(guid=md.guid, unzipDirectory=extract(str(path)),
                modelIdentifier=md.coSimulation.modelIdentifier, instanceName=name)
        f.instantiate()
        if cls is FMU2Slave:
            f.setupExperiment(startTime=0.0)
        f.enterInitializationMode()
        f.exitInitializationMode()
        fmus[name] = f
        vr[name] = {v.name: v.valueReference for v in md.modelVariables}
    rate = {name: r for name, _, r in models}
    last = {src: 0.0 for src, _ in connections}

    def real(name, setter):
        f = fmus[name]
        return getattr(f, ("setFloat64" if setter else "getFloat64")
                       if isinstance(f, FMU3Slave) else ("setReal" if setter else "getReal"))
    for k in range(n):
        due = [name for name, _, _ in models if k % rate[name] == 0]
        for name in due:
            ins = [(dst.split(".", 1)[1], last[src]) for src, dst in connections
                   if dst.split(".")[0] == name]
            if ins:
                real(name, True)([vr[name][p] for p, _ in ins], [v for _, v in ins])
        for name in due:
            fmus[name].doStep(currentCommunicationPoint=k * H,
                              communicationStepSize=rate[name] * H)
        for src in sorted(last):
            name, port = src.split(".", 1)
            if name in due:
                last[src] = real(name, False)([vr[name][port]])[0]
    for f in fmus.values():
        f.terminate()
        f.freeInstance()
    return last


@pytest.mark.parametrize("system", ["fmi3_pair", "multirate_pair", "chain4"])
def test_bare_loop_makes_the_calls_of_a_jacobi_master(system):
    from bench import master_systems as ms
    from bench.fmu_floor import floor_time
    specs, conns, _ = ms.layout(system)
    last: dict = {}
    t = floor_time(specs, conns, ms.H, 0.2, last)
    assert t > 0
    assert last == _fmpy_jacobi(specs, conns, ms.H, 200)
    assert all(v != 0.0 for v in last.values())  # the values moved: the steps were taken


def test_bare_loop_without_exchange_and_a_mix_is_refused():
    from bench import master_systems as ms
    from bench.fmu_floor import floor_time
    specs, _, _ = ms.layout("chain4")
    last: dict = {}
    assert floor_time(specs, [], ms.H, 0.05, last) > 0 and last == {}
    f3 = ms.layout("fmi3_pair")[0]
    with pytest.raises(ValueError, match="mix of FMI 2 and FMI 3"):
        floor_time([specs[0], f3[0]], [], ms.H, 0.01)
