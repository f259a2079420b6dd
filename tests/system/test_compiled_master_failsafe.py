"""The compiled master loop fails safe (issue 34, "fail safe ... say the truth"): a missing
or failing C compiler falls back to the Python loop with one warning and the reason in the
diagnostics (``compiled=True`` raises with the compiler's message); ``CC`` may carry
arguments; a cached library needs no compiler and may sit in a read-only cache; the
diagnostics say what ran (a stepper included)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import cosim.codegen.cache as cosim_cache
from bench.lim import CONNECTIONS
from cosim import MasterScheduler
from cosim.errors import BuildError, CosimWarning, RateError

pytest.importorskip("fmpy")

import fmus.compiled_master as cm  # noqa: E402
from cosim.codegen.cache import library_name  # noqa: E402
from fmus import load_fmu  # noqa: E402
from tests.fmu_builders import build_c_fmu  # noqa: E402

H = 1e-3
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("failsafe_fmus")
    return build_c_fmu("lim_m1", d), build_c_fmu("lim_m2", d)


@pytest.fixture
def fresh(monkeypatch, private_cache):
    """A build as in a fresh process: no library loaded, an empty cache of our own."""
    monkeypatch.setattr(cosim_cache, "_loaded", {})
    return private_cache


def _master(files, **kw):
    return MasterScheduler([load_fmu(files[0], name="m1"), load_fmu(files[1], name="m2")],
                           CONNECTIONS, H, extrapolation=1, **kw)


def _python_rows(files):
    return _master(files, compiled=False).run(0.2)


@pytest.mark.parametrize("cc, said", [
    ("/bin/false", "exit status 1"),
    ("gcc -nostdinc", "stdint.h"),          # the libc headers missing
    ("no-such-compiler-cc", "not found"),
])
def test_a_missing_or_failing_compiler_falls_back_with_one_warning(files, fresh, monkeypatch,
                                                                    cc, said):
    monkeypatch.setenv("CC", cc)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = _master(files)
    ours = [w for w in caught if issubclass(w.category, CosimWarning)
            and "could not be built" in str(w.message)]
    assert len(ours) == 1 and said in str(ours[0].message), [str(w.message) for w in caught]
    res = m.run(0.2)
    assert isinstance(res.diagnostics["compiled"], str)
    assert said in res.diagnostics["compiled"]
    ref = _python_rows(files)
    for name in ("m1.x1", "m2.x2"):
        assert np.array_equal(res[name], ref[name])
    with pytest.raises(BuildError, match="could not be built") as exc:
        _master(files, compiled=True)
    assert said in str(exc.value)


def test_a_compiler_with_arguments_works(files, fresh, monkeypatch):
    monkeypatch.setenv("CC", "gcc -m64 -O1")
    res = _master(files, compiled=True).run(0.2)
    assert res.diagnostics["compiled"] is True
    # the cache also holds the FMI 2 log proxy and the FMU cache (fmus.fmu_cache)
    assert [p.name for p in fresh.glob("cosim-master-*")] == [
        library_name("cosim-master", cm.SOURCE, cm._CFLAGS)]


def test_a_cached_library_needs_no_compiler_and_no_write(files, fresh, monkeypatch):
    monkeypatch.delenv("CC", raising=False)
    assert _master(files, compiled=True).run(0.05).diagnostics["compiled"] is True
    (lib,) = fresh.glob("cosim-master-*")
    stamp = (lib.stat().st_mtime_ns, sorted(p.name for p in fresh.iterdir()))
    os.chmod(fresh, 0o555)
    try:
        code = textwrap.dedent(f"""
            import shutil, sys
            assert shutil.which("gcc") is None, shutil.which("gcc")
            from cosim import MasterScheduler
            from fmus import load_fmu
            from bench.lim import CONNECTIONS
            subs = [load_fmu({str(files[0])!r}, name="m1"), load_fmu({str(files[1])!r}, name="m2")]
            res = MasterScheduler(subs, CONNECTIONS, {H}, compiled=True).run(0.05)
            print(res.diagnostics["compiled"])
        """)
        env = dict(os.environ, PATH="/nonexistent", PYTHONPATH=ROOT)
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        os.chmod(fresh, 0o755)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "True"
    assert (lib.stat().st_mtime_ns, sorted(p.name for p in fresh.iterdir())) == stamp


def test_the_diagnostics_say_what_a_stepper_ran(files):
    m = _master(files)
    assert m.run(0.05).diagnostics["compiled"] is True
    for compiled in (None, True):  # the stepper runs the compiled loop too (issue 34)
        st = _master(files, compiled=compiled).stepper()
        for _ in range(10):
            st.step()
        assert st.results().diagnostics["compiled"] is True
    st = _master(files, compiled=False).stepper()
    st.step()
    said = st.results().diagnostics["compiled"]
    assert isinstance(said, str) and "stepper" in said and "compiled=False" in said


def test_the_diagnostics_say_when_no_step_was_left_for_the_loop(files):
    # a run that ends at its start: nothing ran compiled
    said = _master(files).run(0.0).diagnostics["compiled"]
    assert said is not True and "no macro step" in said


@pytest.fixture(scope="module")
def slow_files(tmp_path_factory):
    """The LIM pair exported with 2000 solver steps per macro step (about 0.1 ms of work
    per macro step: a 65,536-step call into C would last seconds)."""
    from bench.lim import m1_diagram, m2_diagram
    from fmus.export import export_fmu
    d = tmp_path_factory.mktemp("slow_fmus")
    return tuple(export_fmu(f(), d / f"slow_m{i}.fmu", "2.0", "cs", step=H / 2000,
                            model_name=f"m{i}") for i, f in ((1, m1_diagram), (2, m2_diagram)))


def _interrupted(call) -> tuple:
    """``call()`` with SIGINT sent to this process 0.5 s in: ``(latency from the signal to
    the KeyboardInterrupt, the exception)``."""
    import signal
    import threading
    import time

    sent: list[float] = []

    def interrupt():
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.5, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as exc:
            call()
        caught = time.perf_counter()
    finally:
        timer.cancel()
    return caught - sent[0], exc.value


@pytest.mark.timing  # the subject is a latency (judged on a quiet machine)
def test_ctrl_c_stops_the_compiled_loop_at_once_and_keeps_the_completed_steps(slow_files):
    from tests.timing_plugin import judge_figure

    m = _master(slow_files, compiled=True)
    latency, exc = _interrupted(lambda: m.run(1000.0))
    res = exc.results
    n = len(res.time) - 1
    assert n > 0 and m.t == round(n * H * 1e9) and res.time[-1] == m.t * 1e-9
    assert res.diagnostics["macro_steps"] == n
    # the kept steps are those of an uninterrupted run to the same time, bit for bit
    ref = _master(slow_files, compiled=True).run(m.t * 1e-9)
    for name in ("m1.x1", "m2.x2"):
        assert np.array_equal(res[name], ref[name])
    judge_figure(latency <= 0.1, f"Ctrl-C stopped the compiled loop {latency * 1e3:.1f} ms "
                                 "after the signal, at most 100 ms")


@pytest.mark.timing  # the subject is a latency (judged on a quiet machine)
def test_ctrl_c_stops_a_compiled_stepper_at_once_and_keeps_the_completed_steps(slow_files):
    """The stepper's advance_to_ticks over many macro steps: interrupted, it keeps every
    macro step C completed (its rows, its step count, master.t)."""
    from tests.timing_plugin import judge_figure

    st = _master(slow_files, compiled=True).stepper()
    st.start()
    latency, _ = _interrupted(lambda: st.advance_to_ticks(st.t + 1_000_000 * round(H * 1e9)))
    res = st.results()
    n = len(res.time) - 1
    assert n > 0 and st.steps == n and st.t == round(n * H * 1e9)
    assert res.diagnostics["compiled"] is True
    ref = _master(slow_files, compiled=True).run(st.t * 1e-9)
    for name in ("m1.x1", "m2.x2"):
        assert np.array_equal(res[name], ref[name])
    judge_figure(latency <= 0.1, f"Ctrl-C stopped the compiled stepper {latency * 1e3:.1f} "
                                 "ms after the signal, at most 100 ms")


def test_a_run_that_fails_before_its_first_point_carries_no_old_results(files):
    m = _master(files)
    m.run(0.01)
    with pytest.raises(RateError) as exc:
        m.run(float("nan"))  # refused before the first communication point
    assert not hasattr(exc.value, "results")


def test_a_library_planted_where_others_can_write_is_not_loaded(files, fresh, monkeypatch):
    """The cache is searched before any compiler and its libraries are loaded into the
    process: a library in a folder (or a file) others can write to, e.g. the shared temporary
    folder, is passed over and the loop is built in a folder of this user."""
    from fmus.compiled_master_c import SOURCE
    monkeypatch.delenv("CC", raising=False)
    fresh.mkdir(parents=True)
    planted = fresh / library_name("cosim-master", SOURCE, cm._CFLAGS)
    planted.write_bytes(b"not a library")  # loading it would fail: "invalid ELF header"
    for folder_mode, file_mode in ((0o777, 0o644), (0o755, 0o666)):
        monkeypatch.setattr(cosim_cache, "_loaded", {})
        os.chmod(fresh, folder_mode)
        os.chmod(planted, file_mode)
        res = _master(files, compiled=True).run(0.05)
        assert res.diagnostics["compiled"] is True
        assert planted.read_bytes() == b"not a library"
        built = list((fresh.parent / "home" / ".cache" / "cosim").glob("cosim-master-*"))
        assert [p.name for p in built] == [planted.name]
    os.chmod(fresh, 0o755)
