"""Tests of cosim.writers: chunked CSV/HDF5 streaming, crash and kill safety."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import cosim
from blocks.continuous import Integrator
from blocks.sources import Sine
from cosim.errors import NonFiniteError, OutputError, StepError
from cosim.observers import Observer
from cosim.writers import CsvWriter, Hdf5Writer, StreamWriter, read_csv, read_hdf5

FORMATS = {"csv": (CsvWriter, read_csv), "hdf5": (Hdf5Writer, read_hdf5)}


def make_model(fail_at: float | None = None, nan_at: float | None = None) -> cosim.Diagram:
    """Sine -> integrator, a vector path, a unitless subdiagram; optional failure."""
    sb = cosim.DiagramBuilder("sub")
    s2 = sb.add(Sine("s2", frequency_hz=3.0))
    i2 = sb.add(Integrator("i2", unit="m"))
    sb.connect(s2.y, i2.u)
    sub = sb.build()

    def fn(t: float, u: float) -> float:
        if fail_at is not None and t >= fail_at:
            raise RuntimeError("boom")
        return math.nan if nan_at is not None and t >= nan_at else 2.0 * u

    b = cosim.DiagramBuilder("model")
    s = b.add(Sine("s", unit="m/s"))
    g = b.add(cosim.FunctionBlock("g", fn, inputs=[("u", "m/s")], outputs=[("y", "m/s")],
                                  needs_time=True))
    i = b.add(Integrator("i", unit="m"))
    v = b.add(Integrator("v", x0=[1.0, 2.0], unit="m"))
    b.add(cosim.FunctionBlock("f", lambda u: np.array([u, -u]),
                                  outputs=[{"name": "y", "shape": 2, "unit": "m/s"}]))
    b.add(sub)
    b.connect(s.y, g.input("u"))
    b.connect(g.output("y"), i.u)
    b.connect(s.y, "f.u")
    b.connect("f.y", v.u)
    return b.build()


def reference(t_end: float = 1.0, dt: float = 0.001, every: int = 1) -> cosim.Results:
    return cosim.Simulator(make_model(), solver="rk4", dt=dt, record_every=every).run(t_end)


def assert_same(got: cosim.Results, ref: cosim.Results, n: int | None = None) -> None:
    n = len(ref.time) if n is None else n
    np.testing.assert_array_equal(got.time, ref.time[:n])
    assert list(got.signals) == list(ref.signals)
    assert got.units == ref.units
    for k, v in ref.signals.items():
        assert got[k].shape == v[:n].shape, k
        np.testing.assert_array_equal(got[k], v[:n], err_msg=k)


class Probe(Observer):
    """Placed after a writer: notes the writer's progress at every sample."""

    def __init__(self, writer: StreamWriter) -> None:
        self.writer = writer
        self.seen: list[tuple[int, int, int]] = []

    def on_sample(self, sim) -> None:
        self.seen.append((self.writer.chunks_written, self.writer.samples_written,
                          os.path.getsize(self.writer.path)))


# ------------------------------------------------------------------ round trip
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("record", ["all", False])
def test_round_trip_equals_recorder(tmp_path, fmt, record):
    cls, read = FORMATS[fmt]
    w = cls(tmp_path / "out" / f"r.{fmt}", chunk=37)
    sim = cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w], record=record)
    res = sim.run(1.0)
    ref = res if record else reference(dt=0.01)
    got = read(w.path)
    assert_same(got, ref)
    assert got["v.y"].shape == (101, 2)
    assert got.units["i.y"] == "m" and got.units["sub/s2.y"] == ""
    assert got.provenance == ref.provenance
    assert got.provenance["solver"]["solver"] == "rk4"
    assert got.diagnostics["status"] == "complete"
    assert w.samples_written == 101


def test_csv_layout(tmp_path):
    """Plain CSV (header of signal names, rows) that pandas opens as it is; the units,
    the provenance and the status in the sidecar results.csv.json."""
    import json

    import pandas as pd
    w = CsvWriter(tmp_path / "r.csv", ports=["i.y", "v.y"], chunk=10)
    res = cosim.Simulator(make_model(), solver="rk4", dt=0.1, observers=[w]).run(0.3)
    lines = w.path.read_text().splitlines()
    assert lines[0] == "time,i.y,v.y[0],v.y[1]"
    assert lines[1].startswith("0.0,0.0,1.0,2.0") and len(lines) == 5
    assert not any(ln.startswith("#") for ln in lines)
    df = pd.read_csv(w.path)
    assert list(df.columns) == ["time", "i.y", "v.y[0]", "v.y[1]"]
    np.testing.assert_array_equal(df["i.y"].to_numpy(), res["i.y"])
    side = json.loads((tmp_path / "r.csv.json").read_text())
    assert side["format"] == "cosim results 3" and side["status"] == "complete"
    assert side["units"] == {"time": "s", "i.y": "m", "v.y[0]": "m", "v.y[1]": "m"}
    assert side["provenance"]["model"] == "model" and side["provenance"]["model_hash"]
    assert side["provenance"]["solver"]["solver"] == "rk4"


def test_csv_of_the_earlier_format_is_still_read(tmp_path):
    p = tmp_path / "old.csv"
    p.write_text("# cosim results\n# model: m\ntime [s],a.y [m]\n0.0,1.0\n0.5,2.0\n"
                 "# status: complete\n")
    res = read_csv(p)
    assert res.time.tolist() == [0.0, 0.5] and res["a.y"].tolist() == [1.0, 2.0]
    assert res.provenance == {"model": "m"} and res.diagnostics["status"] == "complete"


def test_a_bad_cell_is_named_by_line_and_column(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("time [s],a.y [m],b.y\n0.0,1.0,2.0\n0.5,x1,3.0\n")
    with pytest.raises(OutputError, match="line 3 \\(sample 2\\), column 'a.y \\[m\\]': 'x1' "
                                          "is not a number"):
        read_csv(p)
    p.write_text("time [s],a.y [m],b.y\n0.0,1.0,2.0\n0.5,3.0\n")
    with pytest.raises(OutputError, match="line 3: 2 cells, the header has 3 columns"):
        read_csv(p)


def test_a_truncated_hdf5_file_is_a_clear_error_not_a_hang(tmp_path):
    pytest.importorskip("h5py")
    w = Hdf5Writer(tmp_path / "r.h5", chunk=10)
    cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w]).run(0.5)
    size = w.path.stat().st_size
    with open(w.path, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(OutputError, match="the file is truncated"):
        read_hdf5(w.path)  # was: SWMR retries for minutes


def test_hdf5_layout(tmp_path):
    h5py = pytest.importorskip("h5py")
    w = Hdf5Writer(tmp_path / "r.h5", chunk=10)
    cosim.Simulator(make_model(), solver="rk4", dt=0.1, observers=[w]).run(0.3)
    with h5py.File(w.path, "r") as f:
        ds = f["signals/sub/i2.y"]
        assert ds.attrs["unit"] == "m" and ds.attrs["path"] == "sub/i2.y"
        assert ds.maxshape == (None,) and ds.chunks is not None
        assert f["signals/v.y"].shape == (4, 2)
        assert f["time"].attrs["unit"] == "s"
        assert f.attrs["status"] == "complete"
        assert '"model": "model"' in f.attrs["provenance"]


# -------------------------------------------------------------------- chunking
@pytest.mark.parametrize("fmt", FORMATS)
def test_file_grows_in_chunks(tmp_path, fmt):
    cls, read = FORMATS[fmt]
    calls = []

    class Spy(cls):
        def _write_chunk(self, times, rows):
            calls.append(len(times))
            super()._write_chunk(times, rows)

    w = Spy(tmp_path / f"r.{fmt}", chunk=100)
    probe = Probe(w)
    cosim.Simulator(make_model(), solver="rk4", dt=0.001, observers=[w, probe]).run(0.999)
    assert calls == [100] * 10  # 1000 samples: ten chunks, nothing left at the end
    for k, (chunks, samples, _size) in enumerate(probe.seen):
        assert chunks == (k + 1) // 100 and samples == 100 * chunks
    sizes = [s for _, _, s in probe.seen]
    assert all(a <= b for a, b in zip(sizes, sizes[1:], strict=False))
    if fmt == "csv":  # the header, then every chunk reaches the file while the run goes on
        assert len(set(sizes)) == 11
        assert sizes[0] == sizes[98] < sizes[99] == sizes[198] < sizes[199]
    assert len(read(w.path).time) == 1000


@pytest.mark.parametrize("fmt", FORMATS)
def test_decimation(tmp_path, fmt):
    cls, read = FORMATS[fmt]
    w = cls(tmp_path / f"r.{fmt}", every=3, chunk=100)
    res = cosim.Simulator(make_model(), solver="rk4", dt=0.001, observers=[w],
                          record_every=3).run(0.999)
    assert len(res.time) == 334
    assert w.chunks_written == 4  # three full chunks and the rest at the end
    assert_same(read(w.path), res)
    np.testing.assert_array_equal(read(w.path).time, reference(0.999).time[::3])


def test_invalid_arguments(tmp_path):
    with pytest.raises(ValueError, match="every"):
        CsvWriter(tmp_path / "r.csv", every=0)
    with pytest.raises(ValueError, match="chunk"):
        CsvWriter(tmp_path / "r.csv", chunk=0)


def test_writer_records_one_run(tmp_path):
    w = CsvWriter(tmp_path / "r.csv")
    sim = cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w])
    sim.run(0.5)
    with pytest.raises(OutputError, match="records one run"):
        sim.run(1.0)


# ----------------------------------------------------------------- crash safety
@pytest.mark.parametrize("fmt", FORMATS)
def test_exception_keeps_written_samples(tmp_path, fmt):
    cls, read = FORMATS[fmt]
    w = cls(tmp_path / f"r.{fmt}", chunk=128)
    sim = cosim.Simulator(make_model(fail_at=0.5), solver="rk4", dt=0.001, observers=[w])
    with pytest.raises(StepError, match="boom") as info:
        sim.run(1.0)
    partial = info.value.results
    assert len(partial.time) == 500  # t = 0 .. 0.499 s
    got = read(w.path)
    assert len(got.time) >= 384  # at least every full chunk; in fact everything
    assert_same(got, partial)
    assert got.diagnostics["status"].startswith("error: StepError:")
    assert "boom" in got.diagnostics["status"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_non_finite_state_keeps_written_samples(tmp_path, fmt):
    cls, read = FORMATS[fmt]
    w = cls(tmp_path / f"r.{fmt}", chunk=64)
    sim = cosim.Simulator(make_model(nan_at=0.5), solver="rk4", dt=0.001, observers=[w])
    with pytest.raises(NonFiniteError) as info:
        sim.run(1.0)
    got = read(w.path)
    assert_same(got, info.value.results)
    # the last RK4 stage of the step to 0.5 s reads the NaN: 0.499 s is the last sample
    assert len(got.time) == 500 and got.time[-1] == pytest.approx(0.499)
    assert np.isfinite(got["i.y"]).all()
    assert "NonFiniteError" in got.diagnostics["status"]
    if fmt == "hdf5":
        import h5py
        with h5py.File(w.path, "r") as f:
            assert "NonFiniteError" in f.attrs["status"]
            assert "'i.x'" in f.attrs["status"]


# ------------------------------------------------------------------ kill safety
KILL_SCRIPT = """
import os, signal, sys
sys.path.insert(0, {here!r})
import cosim
from cosim.observers import Observer
from cosim.writers import CsvWriter, Hdf5Writer
from test_writers import make_model

class Kill(Observer):
    def on_sample(self, sim):
        if sim.ctx.time >= 0.7 - 1e-12:
            os.kill(os.getpid(), signal.SIGKILL)

writers = [CsvWriter({csv!r}, chunk=50), Hdf5Writer({h5!r}, chunk=50)]
cosim.Simulator(make_model(), solver="rk4", dt=0.001, record=False,
                observers=writers + [Kill()]).run(1.0)
print("not killed")
"""


def test_sigkill_keeps_written_chunks(tmp_path):
    pytest.importorskip("h5py")
    csv_path, h5_path = tmp_path / "k.csv", tmp_path / "k.h5"
    script = textwrap.dedent(KILL_SCRIPT).format(
        here=str(Path(__file__).parent), csv=str(csv_path), h5=str(h5_path))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, err
    assert "not killed" not in out
    ref = reference(1.0)
    # samples t = 0 .. 0.7 s were taken (701); the 14 full chunks of 50 reached the disk
    for read, path in ((read_csv, csv_path), (read_hdf5, h5_path)):
        got = read(path)
        assert 700 <= len(got.time) <= 701, path
        assert got.time[-1] <= 0.7 + 1e-12
        assert_same(got, ref, n=len(got.time))
        assert got.diagnostics["status"] == "running"
        assert got.provenance["model"] == "model"


def test_killed_hdf5_needs_swmr_to_open(tmp_path):
    """Documented limitation: a plain open of a killed writer's file fails."""
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "k.h5"
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import cosim
        from cosim.writers import Hdf5Writer
        from test_writers import make_model
        w = Hdf5Writer({str(path)!r}, chunk=10)
        sim = cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w])
        sim.advance_to(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert subprocess.run([sys.executable, "-c", script], timeout=120).returncode == -9
    with pytest.raises(OSError, match="already open"):
        h5py.File(path, "r")
    with h5py.File(path, "r", swmr=True) as f:
        assert f["time"].shape == (50,)
    assert len(read_hdf5(path).time) == 50


def test_torn_csv_line_is_ignored(tmp_path):
    import json
    w = CsvWriter(tmp_path / "r.csv", chunk=10)
    res = cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w]).run(0.2)
    w.path.write_text(w.path.read_text() + "0.21,0.1,0.")  # a kill in the middle of a write
    side = tmp_path / "r.csv.json"  # and its status, as the writer left it while running
    side.write_text(json.dumps({**json.loads(side.read_text()), "status": "running"}))
    got = read_csv(w.path)
    assert_same(got, res)
    assert got.diagnostics["status"] == "running"


# ------------------------------------------------------------ output location
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sub", ["r", "deeper/r"])
def test_unwritable_folder(tmp_path, fmt, sub):
    cls, _ = FORMATS[fmt]
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    path = blocker / f"{sub}.{fmt}"
    w = cls(path)
    with pytest.raises(OutputError) as info:
        cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w]).run(0.1)
    msg = str(info.value)
    assert str(path) in msg
    assert "NotADirectoryError" in msg
    assert "choose another --out folder or fix permissions" in msg
    assert isinstance(info.value, OSError)
    assert blocker.read_text() == "not a folder"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="permissions do not stop root")
def test_read_only_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="fix permissions"):
            cosim.Simulator(make_model(), solver="rk4", dt=0.01,
                            observers=[CsvWriter(folder / "r.csv")]).run(0.1)
    finally:
        folder.chmod(0o700)


def test_folder_is_created(tmp_path):
    w = CsvWriter(tmp_path / "a" / "b" / "r.csv")
    cosim.Simulator(make_model(), solver="rk4", dt=0.1, observers=[w]).run(0.2)
    assert len(read_csv(w.path).time) == 3


def test_missing_h5py_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"pip install 'cosim\[hdf5\]'"):
        Hdf5Writer(tmp_path / "r.h5")


# ----------------------------------------------------------------- writer thread
class Gate(CsvWriter):
    """A CSV writer whose writer thread blocks before chunk ``block_at`` (0-based) until
    ``gate`` is set, sleeps ``slow_s`` per chunk, or fails at chunk ``fail_at``."""

    def __init__(self, *args, block_at=None, slow_s=0.0, fail_at=None, **kw):
        super().__init__(*args, **kw)
        self.block_at, self.slow_s, self.fail_at = block_at, slow_s, fail_at
        self.gate, self.failed = threading.Event(), threading.Event()
        self.taken = 0

    def _write_chunk(self, times, rows):
        k, self.taken = self.taken, self.taken + 1
        if self.block_at is not None and k >= self.block_at:
            self.gate.wait()
        if self.fail_at is not None and k == self.fail_at:
            self.failed.set()
            raise OSError(28, "No space left on device")
        time.sleep(self.slow_s)
        super()._write_chunk(times, rows)


@pytest.mark.parametrize("fmt", FORMATS)
def test_writer_thread_round_trip_equals_recorder(tmp_path, fmt):
    cls, read = FORMATS[fmt]
    w = cls(tmp_path / f"r.{fmt}", chunk=37)
    w.use_writer_thread()
    sim = cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w])
    res = sim.run(1.0)
    got = read(w.path)
    assert_same(got, res)
    assert got.diagnostics["status"] == "complete"
    st = w.stats()
    assert st["mode"] == "thread" and st["chunks_written"] == st["chunks_queued"] == 3
    assert st["samples_written"] == 101 and st["chunks_dropped"] == 0 and st["pending"] == 0
    assert not w._thread.thread.is_alive()  # on_finish ended it


def test_a_blocked_writer_thread_never_holds_up_the_caller(tmp_path):
    """The thread blocks on its first chunk: the run goes on, three chunks wait in the
    queue, the other six full chunks are dropped and counted; finish writes the three and
    the last partial chunk and says in the file's status what is missing."""
    w = Gate(tmp_path / "r.csv", chunk=10, queue_chunks=3, block_at=0)
    w.use_writer_thread()
    sim = cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w])
    sim.advance_to(0.94)  # 95 samples: 9 full chunks and 5 samples buffered
    assert not w.gate.is_set() and w.chunks_written == 0  # returned while the thread waits
    st = w.stats()
    assert st["chunks_queued"] == 3 and st["max_queued"] == 3 and st["pending"] == 3
    assert st["chunks_dropped"] == 6 and st["samples_dropped"] == 60
    w.gate.set()
    res = sim.finish()
    got = read_csv(w.path)
    # chunks 0-2 (t = 0 .. 0.29 s) and the 5 samples handed over at the end
    keep = np.r_[0:30, 90:95]
    np.testing.assert_array_equal(got.time, res.time[keep])
    np.testing.assert_array_equal(got["i.y"], res["i.y"][keep])
    assert got.diagnostics["status"] == ("incomplete: 60 samples in 6 chunks dropped from "
                                         "t = 0.3 s: the writer queue (3 chunks) was full")
    assert w.stats()["chunks_written"] == 4 and w.stats()["pending"] == 0


def test_a_slow_writer_thread_loses_nothing_when_the_queue_has_room(tmp_path):
    """50 ms per chunk, a chunk every 10 samples: the queue fills up to many chunks and
    finish waits until all are written."""
    w = Gate(tmp_path / "r.csv", chunk=10, slow_s=0.05)
    w.use_writer_thread()
    sim = cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w])
    res = sim.run(1.0)
    assert_same(read_csv(w.path), res)
    st = w.stats()
    assert st["chunks_dropped"] == 0 and st["chunks_written"] == 11 and st["max_queued"] > 1
    assert st["write_ms"]["max"] >= 50.0


@pytest.mark.timing
def test_the_writer_threads_error_surfaces_at_the_next_sample(tmp_path):
    """The second chunk fails on the thread; the next sample after the failure raises it,
    with the original message and the file, and the file says what happened.  The thread
    is held before that chunk until t = 0.5 s, so the failure's time is the test's, not
    the scheduler's (unheld, a busy or fast machine failed it at 0.2-0.5 s)."""
    w = Gate(tmp_path / "r.csv", chunk=10, block_at=1, fail_at=1)

    class WaitForFailure(Observer):
        def on_sample(self, sim):
            if round(sim.ctx.time, 9) == 0.5:  # let the thread fail now, wait until it has
                from tests.timing_plugin import GENEROUS_S, wait_for
                assert not w.failed.is_set()
                w.gate.set()
                assert w.failed.wait(GENEROUS_S)
                # the thread keeps its error just after the event (a sleep raced it)
                wait_for(lambda: w.stats()["error"] is not None, "the writer thread's error")

    w.use_writer_thread()
    sim = cosim.Simulator(make_model(), solver="rk4", dt=0.01,
                          observers=[w, WaitForFailure()])
    with pytest.raises(OutputError) as info:
        sim.run(1.0)
    msg = str(info.value)
    assert str(w.path) in msg and "writer thread" in msg
    assert "OSError" in msg and "No space left on device" in msg
    assert isinstance(info.value.__cause__, OSError)
    assert len(info.value.results.time) == 52  # t = 0 .. 0.51 s: raised at 0.51 s
    got = read_csv(w.path)
    assert len(got.time) == 10  # the first chunk; nothing after the failure
    assert got.diagnostics["status"].startswith("error: OutputError: cannot write results")
    assert "No space left on device" in got.diagnostics["status"]


def test_the_writer_threads_error_surfaces_at_finish(tmp_path):
    """The last chunk, handed over by on_finish, fails: run() raises it."""
    w = Gate(tmp_path / "r.csv", chunk=1000, fail_at=0)
    w.use_writer_thread()
    with pytest.raises(OutputError, match="No space left on device") as info:
        cosim.Simulator(make_model(), solver="rk4", dt=0.01, observers=[w]).run(0.5)
    assert str(w.path) in str(info.value)
    assert "No space left" in read_csv(w.path).diagnostics["status"]


def test_use_writer_thread_refuses_a_closed_writer(tmp_path):
    w = CsvWriter(tmp_path / "r.csv")
    cosim.Simulator(make_model(), solver="rk4", dt=0.1, observers=[w]).run(0.2)
    with pytest.raises(OutputError, match="records one run"):
        w.use_writer_thread()
    with pytest.raises(ValueError, match="queue_chunks"):
        CsvWriter(tmp_path / "s.csv").use_writer_thread(queue_chunks=0)
    assert w.stats()["mode"] == "inline"


KILL_THREAD_SCRIPT = """
import os, signal, sys, threading, json
sys.path.insert(0, {here!r})
import cosim
from cosim.observers import Observer
from cosim.writers import CsvWriter
from test_writers import make_model

class Stuck(CsvWriter):
    # the writer thread writes chunks 0-2, then blocks (a disk that stopped answering)
    n = 0
    def _write_chunk(self, times, rows):
        Stuck.n += 1
        if Stuck.n > 3:
            threading.Event().wait()
        super()._write_chunk(times, rows)

w = Stuck({csv!r}, chunk=50, queue_chunks=8)
w.use_writer_thread()

class Kill(Observer):
    def on_sample(self, sim):
        if sim.ctx.time >= 0.7 - 1e-12:
            while w.chunks_written < 3:  # let the thread write what it can
                pass
            print(json.dumps(w.stats()), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

cosim.Simulator(make_model(), solver="rk4", dt=0.001, record=False,
                observers=[w, Kill()]).run(1.0)
"""


def test_sigkill_with_a_writer_thread_loses_at_most_the_queued_chunks(tmp_path):
    """Killed at t = 0.7 s (701 samples taken: 14 full chunks of 50 and 1 sample) while
    the thread is stuck on its fourth chunk: the file holds the three written chunks;
    lost are the chunks queued or being written (at most 8, the queue's depth), the
    chunks dropped because it was full (counted) and the partial chunk, no more."""
    import json
    path = tmp_path / "k.csv"
    script = textwrap.dedent(KILL_THREAD_SCRIPT).format(
        here=str(Path(__file__).parent), csv=str(path))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    st = json.loads(proc.stdout)
    got = read_csv(path)
    assert len(got.time) == 150 == st["samples_written"]
    assert_same(got, reference(1.0), n=150)
    assert got.diagnostics["status"] == "running"
    lost = 701 - len(got.time)
    # how many were queued depends on when the thread got stuck; the loss does not
    assert 1 <= st["pending"] <= 8 and st["chunks_dropped"] == 11 - st["pending"]
    assert lost == st["pending"] * 50 + st["samples_dropped"] + 1  # + the partial chunk
    assert lost - st["samples_dropped"] <= 8 * 50 + 49


def test_integer_signals_are_written_and_read_back_exactly(tmp_path):
    """Int64/UInt64 extremes (an FMU's integer outputs) survive the CSV exactly, from a
    Simulator and from a co-simulation master; floats keep their shortest exact text."""
    import numpy as np

    from blocks.sources import Constant
    from cosim import DiagramBuilder, MasterScheduler, Simulator
    from cosim.subsystem import DiagramSubsystem
    from cosim.writers import CsvWriter, read_csv
    big, low = 18446744073709551615, -9223372036854775808

    def diagram():
        b = DiagramBuilder("ints")
        u = b.add(Constant("u", big, dtype=np.uint64))
        i = b.add(Constant("i", low, dtype=np.int64))
        f = b.add(Constant("f", 0.1))
        for blk in (u, i, f):
            b.export_output(blk.y, blk.name)
        return b.build()

    path = tmp_path / "sim.csv"
    Simulator(diagram(), solver="euler", dt=0.5,
              observers=[CsvWriter(path, ["u.y", "i.y", "f.y"])]).run(1.0)
    res = read_csv(path)
    assert res["u.y"].tolist() == [big] * 3 and res["i.y"].tolist() == [low] * 3
    assert res["f.y"].tolist() == [0.1] * 3
    path = tmp_path / "master.csv"
    MasterScheduler([DiagramSubsystem(diagram(), solver="euler", dt=0.5)], [], 0.5,
                    writers=[CsvWriter(path)]).run(1.0)
    res = read_csv(path)
    assert res["ints.u"].tolist() == [big] * 3 and res["ints.i"].tolist() == [low] * 3
