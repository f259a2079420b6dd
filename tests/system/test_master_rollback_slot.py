"""Issue 34: the master's per-step rollback slot (``MasterScheduler.save(slot=...)``).

Iterative coupling and step control save a checkpoint at every macro step.  The slot
saves each one into the checkpoint of the step before: an FMU overwrites the state it
holds (``fmi2GetFMUstate`` / ``fmi3GetFMUState`` into an existing state, as FMI allows)
instead of allocating one and freeing the old one at every step, a native subsystem's
context snapshot is overwritten in place.  Checked here, counted through the driver:

* one FMU state allocated per instance and run, none freed until the run ends (then the
  slot's), for FMI 2 and FMI 3, in and out of process, iterative coupling and step control;
* a checkpoint or token handed to the user is never overwritten;
* an FMU that hands back a new state instead (pythonfmu) is asked for new ones from then on;
* the results are those of fresh checkpoints at every step, bit for bit, for every
  iterative method and every subsystem kind (native, FMUs, an ME FMU inside a diagram);
* iterative coupling settles the communication point once (its last sweep did).

Model: the LIM two-mass oscillator (bench/lim.py), as in test_master_fmu_coupling.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.lim import CONNECTIONS, m1_diagram, m2_diagram
from cosim import DiagramBuilder, Iterative, Jacobi, MasterScheduler, StepController
from cosim.errors import ContextError
from cosim.subsystem import DiagramSubsystem

pytest.importorskip("fmpy")

from fmus import load_fmu  # noqa: E402
from fmus.driver_base import Driver  # noqa: E402
from fmus.export import export_fmu  # noqa: E402
from fmus.remote import RemoteDriver  # noqa: E402
from tests.fmu_builders import build_c_fmu  # noqa: E402

H = 1e-3


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("slot_fmus")
    out = {"c1": build_c_fmu("lim_m1", d), "c2": build_c_fmu("lim_m2", d)}
    for kind, ver in (("generated", "2.0"), ("generated3", "3.0")):
        for i, diagram in ((1, m1_diagram), (2, m2_diagram)):
            out[(kind, i)] = export_fmu(diagram(), d / f"{kind}_m{i}.fmu", ver, "cs",
                                        step=H / 10, model_name=f"m{i}")
    out["me2"] = export_fmu(m2_diagram(), d / "me_m2.fmu", "2.0", "me", model_name="m2me")
    return out


def _me_in_diagram(files):
    """M2 as a Model Exchange FMU block inside a native diagram (an opaque state)."""
    blk = load_fmu(files["me2"], name="plant", interface="ModelExchange")
    b = DiagramBuilder("m2")
    b.add(blk)
    b.export_input(blk.input("fc"), "fc")
    b.export_output(blk.output("x2"), "x2")
    b.export_output(blk.output("v2"), "v2")
    return DiagramSubsystem(b.build(), solver="rk4", dt=H / 10)


def _subs(kind, files):
    if kind == "native":
        return [DiagramSubsystem(m1_diagram(), solver="rk4", dt=H / 10),
                DiagramSubsystem(m2_diagram(), solver="rk4", dt=H / 10)]
    if kind == "me_in_diagram":
        return [DiagramSubsystem(m1_diagram(), solver="rk4", dt=H / 10), _me_in_diagram(files)]
    if kind == "c":  # C FMUs that interpolate their inputs
        return [load_fmu(files["c1"], name="m1"), load_fmu(files["c2"], name="m2")]
    if kind == "remote":
        return [load_fmu(files[("generated", i)], name=f"m{i}", out_of_process=True)
                for i in (1, 2)]
    return [load_fmu(files[(kind, i)], name=f"m{i}") for i in (1, 2)]


def _master(kind, files, coupling, step_control=None):
    return MasterScheduler(_subs(kind, files), CONNECTIONS, H, coupling=coupling,
                           extrapolation=1, compiled=False, step_control=step_control)


class StateCounts:
    """FMU states allocated (``get_state()``), saved into one held (``get_state(into)``)
    and freed, counted through the driver classes (in process and the proxy)."""

    def __init__(self, monkeypatch):
        self.new = self.into = self.freed = 0
        for cls in (Driver, RemoteDriver):
            get = getattr(cls, "get_state", None)
            free = cls.free_state
            if get is None:  # the proxy forwards it
                def get(drv, *a):
                    return drv._call("get_state", *a)
            monkeypatch.setattr(cls, "get_state", self._get(get), raising=False)
            monkeypatch.setattr(cls, "free_state", self._free(free))

    def _get(self, orig):
        def get_state(drv, *a):
            if a and a[0] is not None and getattr(drv, "states_in_place", True):
                self.into += 1
            else:
                self.new += 1
            return orig(drv, *a)
        return get_state

    def _free(self, orig):
        def free_state(drv, handle):
            self.freed += 1
            return orig(drv, handle)
        return free_state


COUPLINGS = {"fixed_point": lambda: (Iterative("fixed_point"), None),
             "newton": lambda: (Iterative("newton"), None),
             "richardson": lambda: (Jacobi(), StepController(
                 rtol=1e-4, atol=1e-6, h_min_s=2e-4, h_max_s=2e-3, grid_s=1e-4))}


@pytest.mark.parametrize("coupling", list(COUPLINGS))
@pytest.mark.parametrize("kind", ["c", "generated3", "remote"])
def test_one_fmu_state_per_instance_is_allocated_and_freed_at_the_end(files, monkeypatch,
                                                                      kind, coupling):
    """Before: every macro step (every attempt under step control) allocated a state per
    FMU and freed the one of the step before (100 and 99 per FMU in 0.1 s)."""
    counts = StateCounts(monkeypatch)
    master = _master(kind, files, *COUPLINGS[coupling]())
    try:
        res = master.run(0.1)
        assert counts.new == 2 and counts.freed == 2, vars(counts)  # the slot's, at the end
        steps = res.diagnostics["macro_steps"]
        if coupling == "richardson":
            assert counts.into >= 2 * (steps // 2 - 1), (vars(counts), steps)
        else:
            assert counts.into == 2 * (steps - 1), (vars(counts), steps)
        master.run(0.05)  # the next run: one state per FMU again
        assert counts.new == 4 and counts.freed == 4, vars(counts)
        if coupling == "richardson":
            return
        st = master.stepper()  # stepped by the caller: freed when it closes
        for _ in range(10):
            assert st.step()
        assert counts.new == 6 and counts.freed == 4, vars(counts)
        st.close()
        assert counts.freed == 6, vars(counts)
    finally:
        for s in master.subsystems:
            s.free()


def test_the_users_checkpoints_and_tokens_stay_valid_while_the_slot_is_reused(files):
    """The master overwrites only its own slot: a checkpoint from ``save()`` and a state
    token from ``save_state()`` restore the state they saved after 20 more steps."""
    master = _master("c", files, Iterative("fixed_point"))
    st = master.stepper()
    for _ in range(10):
        st.step()
    checkpoint = master.save()
    m2 = master.subsystems[1]
    token = m2.save_state()
    outs_saved = list(m2._outs[0])
    first = []
    for _ in range(20):
        st.step()
        first.append(dict(st.outputs()))
    m2.restore_state(token)  # the FMU itself says where it was
    assert m2.inst.drv.get(m2._out_keys[0]) == outs_saved
    master.restore(checkpoint)
    again = []
    for _ in range(20):
        st.step()
        again.append(dict(st.outputs()))
    assert again == first


def test_an_fmu_that_hands_back_a_new_state_is_asked_for_new_ones(fmu_files):
    """pythonfmu puts a new state where FMI asks it to overwrite the one given: the driver
    notices at the first reuse and allocates from then on (at most one state is lost);
    the results are those of fresh states at every step.  The compiled loop (which keeps
    one state per FMU in C, freeing one the FMU replaced) gives the same results."""
    def run(slots, compiled=False):
        m2 = load_fmu(fmu_files["LimMass2"], name="m2", parameters={"substeps": 1},
                      feedthrough={"x2": [], "v2": []})
        master = MasterScheduler([DiagramSubsystem(m1_diagram(), solver="rk4", dt=H / 10), m2],
                                 CONNECTIONS, H, coupling=Iterative("newton"),
                                 extrapolation={"*": 1, "m2.fc": 0}, compiled=compiled)
        if not slots:
            master.save = lambda slot=None, histories=True, save=master.save: save()
            master.restore = lambda snap, histories=True, restore=master.restore: \
                restore(snap)
        return master.run(0.05), m2

    (res, m2), (fresh, _) = run(True), run(False)
    assert m2.inst.drv.states_in_place is False
    np.testing.assert_array_equal(res["m2.x2"], fresh["m2.x2"])
    np.testing.assert_array_equal(res["m1.x1"], fresh["m1.x1"])
    compiled, _ = run(True, compiled=True)
    assert compiled.diagnostics["compiled"] is True
    np.testing.assert_allclose(compiled["m2.x2"], fresh["m2.x2"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(compiled["m1.x1"], fresh["m1.x1"], rtol=1e-12, atol=1e-15)


def _fresh_checkpoints(monkeypatch):
    """Every save a new checkpoint, every restore of the histories too (the master before
    the slot, and before iterative coupling left the histories out of its checkpoint)."""
    save, restore = MasterScheduler.save, MasterScheduler.restore
    monkeypatch.setattr(MasterScheduler, "save",
                        lambda self, slot=None, histories=True: save(self))
    monkeypatch.setattr(MasterScheduler, "restore",
                        lambda self, snap, histories=True: restore(self, snap))


@pytest.mark.parametrize("method", ["fixed_point", "aitken", "anderson", "broyden", "newton",
                                    "richardson"])
@pytest.mark.parametrize("kind", ["native", "me_in_diagram", "c", "generated", "generated3"])
def test_the_slot_changes_no_result_bit_for_bit(files, monkeypatch, kind, method):
    def run():
        if method == "richardson":
            coupling, ctl = COUPLINGS["richardson"]()
        else:
            coupling, ctl = Iterative(method), None
        res = _master(kind, files, coupling, ctl).run(0.1)
        return res, (res.diagnostics["iterations_per_step_mean"], res.diagnostics["rollbacks"])

    res, stats = run()
    with monkeypatch.context() as mp:
        _fresh_checkpoints(mp)
        ref, ref_stats = run()
    assert stats == ref_stats
    np.testing.assert_array_equal(res.time, ref.time)
    for name in ("m1.x1", "m1.fc", "m2.x2", "m2.v2"):
        np.testing.assert_array_equal(res[name], ref[name])


def _refreshes(master, monkeypatch):
    count = [0]
    for s in master.subsystems:
        orig = s.refresh_outputs

        def refresh(orig=orig):
            count[0] += 1
            orig()
        monkeypatch.setattr(s, "refresh_outputs", refresh)
    return count


@pytest.mark.parametrize("kind", ["native", "c"])
def test_iterative_coupling_settles_each_communication_point_once(files, monkeypatch, kind):
    """Each sweep ends by settling the feedthrough outputs at the step's end; the master
    settled them once more after the step (one refresh of M1 per sweep and one per step,
    now one per sweep), with the same result bit for bit (one pass in dependency order
    is exact)."""
    def run(skip):
        master = _master(kind, files, Iterative("newton"))
        with monkeypatch.context() as mp:
            if not skip:
                mp.setattr(Iterative, "settles_end_point", False, raising=False)
            count = _refreshes(master, mp)
            st = master.stepper()
            st.step()  # the first step computes the Jacobian (its own refreshes)
            refreshes, sweeps = count[0], master.counters.iteration_total
            for _ in range(50):
                st.step()
            assert [s.name for s in master.settler.subs] == ["m1"]  # fc reads x2, v2
            return st.results(), count[0] - refreshes, master.counters.iteration_total - sweeps

    (res, n, sweeps), (ref, n_ref, sweeps_ref) = run(True), run(False)
    assert sweeps == sweeps_ref >= 100
    assert n_ref == sweeps + 50 and n == sweeps
    for name in ("m1.x1", "m1.fc", "m2.x2"):
        np.testing.assert_array_equal(res[name], ref[name])


def test_a_loop_that_one_pass_cannot_settle_is_settled_again(monkeypatch):
    """Feedthrough both ways (tests/system/test_master_algebraic_loop.py): the loop solver
    iterates, its result is not idempotent to the bit, so the master settles again."""
    from tests.system.test_master_algebraic_loop import _a, _b, _sub

    def run(skip):
        master = MasterScheduler([_sub("A", _a), _sub("B", _b)], [("A.y", "B.u"), ("B.y", "A.u")],
                                 1e-3, coupling=Iterative("newton"), extrapolation=1,
                                 loop_solver="newton")
        with monkeypatch.context() as mp:
            if not skip:
                mp.setattr(Iterative, "settles_end_point", False, raising=False)
            count = _refreshes(master, mp)
            res = master.run(0.05)
        assert master.settler.once is False
        return res, count[0]

    (res, n), (ref, n_ref) = run(True), run(False)
    assert n == n_ref
    np.testing.assert_array_equal(res["A.y"], ref["A.y"])


def test_a_checkpoint_without_histories_refuses_to_restore_them(files):
    """Iterative coupling's slot leaves the signal histories out (its sweeps push every one
    at the step end again); restoring histories from such a checkpoint is an error, not a
    silent no-op."""
    master = _master("native", files, Iterative("newton"), None)
    master.run(0.01)
    snap = master.save(slot="mine", histories=False)
    assert snap["hist"] is None
    master.restore(snap, histories=False)  # the subsystems only: fine
    with pytest.raises(ContextError, match="histories=False"):
        master.restore(snap)
    full = master.save(slot="mine")  # the same slot with histories again
    assert full is snap and full["hist"] is not None
    master.restore(full)
