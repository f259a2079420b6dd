"""MDF 4 files (hil.testing.mdf): written, then read back with asammdf itself (not only
with our reader): every signal, unit, comment and raw CAN frame exactly."""

import sys

import numpy as np
import pytest

from hil.testing import Capture, Trace, sig
from hil.testing.mdf import Frame, read_mdf, write_mdf

asammdf = pytest.importorskip("asammdf")


def _trace(seed=0, n=500):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(1e-4, 1e-2, n))
    gap = rng.normal(20, 3, n)
    gap[n // 2] = np.nan
    return Trace(t, {"gap": gap, "car.v": rng.normal(0, 1, n), "flag": rng.integers(0, 2, n)},
                 {"gap": "m", "car.v": "m/s"}, comments={"gap": "distance to the lead car"})


def _frames(seed=1, n=300):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        ext = bool(rng.integers(0, 2))
        ident = int(rng.integers(0, 0x1FFFFFFF if ext else 0x7FF))
        size = int(rng.choice([0, 1, 3, 8, 8, 12, 64]))
        out.append((0.001 * i + float(rng.uniform(0, 1e-4)), ident,
                    bytes(rng.integers(0, 256, size).astype(np.uint8)), ext,
                    int(rng.integers(0, 4))))
    return out


def test_a_trace_and_frames_read_back_exactly_with_asammdf(tmp_path):
    tr, frames = _trace(), _frames()
    path = write_mdf(tmp_path / "run.mf4", tr, frames=frames, comment="cut-in test")
    with asammdf.MDF(path) as mdf:
        for k in tr.names:
            s = mdf.get(k)
            assert np.array_equal(s.samples, tr[k], equal_nan=True)
            assert np.array_equal(s.timestamps, tr.t)
            assert s.unit == tr.units[k] and s.comment == tr.comments.get(k, "")
        groups = [g for g in mdf.groups if any(c.name == "CAN_DataFrame" for c in g.channels)]
        assert len(groups) == 1
        cg = groups[0].channel_group
        assert cg.acq_source.bus_type == asammdf.Source.BUS_TYPE_CAN
        assert cg.flags & 1 << 1  # FLAG_CG_BUS_EVENT
        ids = mdf.get("CAN_DataFrame.ID").samples
        payload = mdf.get("CAN_DataFrame.DataBytes").samples
        lengths = mdf.get("CAN_DataFrame.DataLength").samples
        stamps = mdf.get("CAN_DataFrame.ID").timestamps
    want = sorted(frames)
    assert [int(x) for x in ids] == [f[1] for f in want]
    assert list(stamps) == [f[0] for f in want]
    assert [bytes(payload[i][: lengths[i]]) for i in range(len(want))] == [f[2] for f in want]
    back = read_mdf(path)
    assert back.comment == "cut-in test"
    assert back.frames == [Frame(*f) for f in want]
    got = back.trace
    assert got.names == tr.names and got.units == tr.units and got.comments == tr.comments
    assert np.array_equal(got.t, tr.t)
    for k in tr.names:
        assert np.array_equal(got[k], tr[k], equal_nan=True)


def test_a_capture_and_python_can_messages(tmp_path):
    can = pytest.importorskip("can")
    t = np.arange(100) * 0.01
    cap = Capture(start=sig("v") > 0.5, pre=0.1, post=0.2).run(
        Trace(t, {"v": t.copy()}, {"v": "m/s"}))
    msgs = [can.Message(timestamp=0.5, arbitration_id=0x100, data=b"\x01\x02",
                        channel="vcan1", is_extended_id=False),
            can.Message(timestamp=0.6, arbitration_id=0x1ABCDEF, data=bytes(range(16)),
                        is_fd=True, channel=2, is_extended_id=True, is_rx=False)]
    path = write_mdf(tmp_path / "cap.mf4", {"capture": cap, "all": Trace(t, {"x": t})},
                     frames=msgs)
    back = read_mdf(path)
    assert set(back.traces) == {"capture", "all"}
    assert list(back.traces["capture"].t) == list(cap.t)
    assert back.frames == [Frame(0.5, 0x100, b"\x01\x02", False, 1),
                           Frame(0.6, 0x1ABCDEF, bytes(range(16)), True, 2)]
    with asammdf.MDF(path) as mdf:
        assert list(mdf.get("CAN_DataFrame.Dir").samples) == [0, 1]
        assert list(mdf.get("CAN_DataFrame.EDL").samples) == [0, 1]
        assert list(mdf.get("CAN_DataFrame.DLC").samples) == [2, 10]  # 16 bytes: DLC 10
    # python-can's own MF4 reader reads the frames too (its times from the file's start)
    seen = list(can.io.mf4.MF4Reader(path))
    assert [(m.arbitration_id, bytes(m.data), m.is_extended_id, m.channel, m.is_fd, m.is_rx)
            for m in seen] == [(0x100, b"\x01\x02", False, 1, False, True),
                               (0x1ABCDEF, bytes(range(16)), True, 2, True, False)]
    assert seen[1].timestamp - seen[0].timestamp == pytest.approx(0.1, abs=1e-6)
    with pytest.raises(Exception, match="pick one"):
        _ = back.trace


def test_bad_frames_are_refused(tmp_path):
    from hil.testing import TraceError
    for bad in [(0.0, 0x800, b"", False, 0), (0.0, 1, bytes(9), False, 0),
                (0.0, 1, b"", False, "vcan"), (0.0, 1, b"")]:
        with pytest.raises(TraceError):
            write_mdf(tmp_path / "x.mf4", frames=[bad])


def test_without_asammdf_the_error_names_the_install(tmp_path, monkeypatch):
    from hil.errors import DriverMissing
    monkeypatch.setitem(sys.modules, "asammdf", None)
    with pytest.raises(DriverMissing, match="pip install asammdf"):
        write_mdf(tmp_path / "x.mf4", _trace(n=3))
    with pytest.raises(ImportError, match="pip install asammdf"):
        read_mdf(tmp_path / "x.mf4")
