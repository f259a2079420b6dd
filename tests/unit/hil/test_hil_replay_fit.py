"""``cosim replay --dbc`` checks that the log fits the DBC before decoding it (issue 30 item
4: after ``make demo`` the README's ``cosim replay out/demo/bus.asc --dbc acc --print``
decoded the flagship's actuator position frames as ``RADAR range=500 m``: the position
frame has the RADAR frame's id and length, and nothing said the log was another one's).

The class: logs written by each of several databases (the flagship's, the bundled ACC one,
generated ones with clashing and free ids, standard and extended, classic and FD lengths),
each read with each database: a log fits its own database and no other one that differs in
ids or lengths; the refusal names what does not fit and the DBC beside the log that does.
"""

import random

import pytest

can = pytest.importorskip("can")
pytest.importorskip("cantools")

from cosim.cli import main  # noqa: E402
from examples.flagship_hil import DBC as FLAGSHIP_DBC  # noqa: E402
from hil.can import ACC_DBC, CanDatabase, MessageLog  # noqa: E402
from hil.can.handshake import dbc_frame  # noqa: E402
from hil.can.log import log_fit  # noqa: E402
from hil.can.session import end_frame  # noqa: E402


def _generated_dbc(seed):
    """A DBC of 1-4 messages, ids drawn near the ACC/flagship ids (so that some clash),
    lengths 1-8 (and 12-64 as FD on odd seeds), some extended."""
    rnd = random.Random(seed)
    lines = [f'VERSION "generated {seed}"', "", "NS_ :", "", "BS_:", "", "BU_: A B", ""]
    used = set()
    for k in range(rnd.randint(1, 4)):
        ext = rnd.random() < 0.25
        fid = rnd.choice([0x80, 0x100, 0x101, 0x200, 0x300 + k, 0x1234567 + k])
        if fid > 0x7FF:
            ext = True
        if fid in used:
            continue
        used.add(fid)
        n = rnd.choice([1, 2, 4, 6, 8] + ([12, 16, 64] if seed % 2 else []))
        lines.append(f"BO_ {fid | (0x80000000 if ext else 0)} M{k}: {n} A")
        lines.append(f' SG_ s{k} : 0|8@1+ (1,0) [0|255] "" B')
        lines.append("")
    return "\n".join(lines) + "\n"


def _write_log(path, db, frames_per_message=5, handshake=True, end=True):
    """The log a node with ``db`` writes: every message a few times, its DBC check frame
    and its end-of-session frame (as acc_hil's plant writes them)."""
    t = 1000.0
    with MessageLog(path) as log:
        if handshake:
            m = dbc_frame(db, request=True)
            m.timestamp = t
            log.sent(m)
        for k in range(frames_per_message):
            for msg in db.db.messages:
                n = msg.length
                m = can.Message(timestamp=t + 1e-3 * k, arbitration_id=msg.frame_id,
                                is_extended_id=msg.is_extended_frame, data=bytes(n),
                                is_fd=n > 8)
                log(m)
        if end:
            m = end_frame(db)
            m.timestamp = t + 1.0
            log.sent(m)


def _dbs(tmp_path):
    out = {"acc": CanDatabase(ACC_DBC)}
    p = tmp_path / "flagship.dbc"
    p.write_text(FLAGSHIP_DBC)
    out["flagship"] = CanDatabase(p)
    for seed in range(6):
        p = tmp_path / f"gen{seed}.dbc"
        p.write_text(_generated_dbc(seed))
        out[f"gen{seed}"] = CanDatabase(p)
    return out


def _layout(db):
    return {(m.frame_id, bool(m.is_extended_frame), m.length) for m in db.db.messages}


def test_every_log_fits_its_own_dbc_and_no_other_that_differs(tmp_path):
    dbs = _dbs(tmp_path)
    for writer, wdb in dbs.items():
        path = tmp_path / f"{writer}.asc"
        _write_log(path, wdb)
        for reader, rdb in dbs.items():
            fit = log_fit(path, rdb)
            assert fit.frames == 5 * len(wdb.db.messages) + 2
            if reader == writer:
                assert fit.ok, (writer, fit.problems())
                assert fit.missing == [] and fit.fingerprints == {wdb.fingerprint: 1}
                continue
            # another database: its DBC check frame says so, whatever the ids
            assert not fit.ok, (writer, reader)
            assert any("fingerprint" in p for p in fit.problems())
            # and without the check frame, the ids and lengths alone tell it when they
            # differ (a log from a tool that does no DBC check)
            bare = tmp_path / f"{writer}_bare.asc"
            if not bare.exists():
                _write_log(bare, wdb, handshake=False)
            fit2 = log_fit(bare, rdb)
            assert fit2.ok == (_layout(wdb) <= _layout(rdb)), (writer, reader,
                                                               fit2.problems())


def test_the_demo_log_read_with_the_acc_dbc_is_refused_with_the_dbc_beside_it(
        tmp_path, capsys, monkeypatch):
    """The issue's case: the flagship's log (POS 0x100 with 8 bytes, as RADAR; CMD 0x080
    with 6, in no ACC message) and ``flagship.dbc`` beside it."""
    monkeypatch.chdir(tmp_path)
    demo = tmp_path / "out" / "demo"
    demo.mkdir(parents=True)
    (demo / "flagship.dbc").write_text(FLAGSHIP_DBC)
    _write_log(demo / "bus.asc", CanDatabase(demo / "flagship.dbc"), handshake=False,
               end=False)
    assert main(["replay", "out/demo/bus.asc", "--dbc", "acc", "--print"]) == 2
    cap = capsys.readouterr()
    assert "RADAR" not in cap.out and cap.out == ""  # nothing decoded, nothing printed
    err = " ".join(cap.err.split())
    assert "out/demo/bus.asc does not fit the DBC acc" in err
    assert "id 0x080 (5 frames of 6 bytes) is in no message of it" in err
    assert "--dbc out/demo/flagship.dbc" in err and "Traceback" not in err
    # the DBC it suggests decodes it
    assert main(["replay", "out/demo/bus.asc", "--dbc", "out/demo/flagship.dbc",
                 "--print"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [r.split()[1] for r in out[:2]] == ["POS", "CMD"]


def test_a_wrong_length_is_refused_even_with_unknown_ids_allowed(tmp_path, capsys):
    path = tmp_path / "short.asc"
    db = CanDatabase(ACC_DBC)
    with MessageLog(path) as log:
        log(can.Message(timestamp=1.0, arbitration_id=0x200, data=bytes(3),
                        is_extended_id=False))  # ACC_CMD has 4
    for extra in ([], ["--allow-unknown-ids"]):
        assert main(["replay", str(path), "--dbc", "acc", "--print", *extra]) == 2
        err = capsys.readouterr().err
        assert "ACC_CMD has 4 bytes in the DBC, the log's frames with its id have 3 bytes" \
            in " ".join(err.split())
    assert not log_fit(path, db).ok


def test_other_nodes_traffic_is_printed_raw_only_when_allowed(tmp_path, capsys):
    db = CanDatabase(ACC_DBC)
    path = tmp_path / "mixed.asc"
    with MessageLog(path) as log:
        log(db.encode("ACC_CMD", {"throttle": 0.25, "brake_torque": 100.0}, timestamp=1.0))
        log(can.Message(timestamp=1.001, arbitration_id=0x7FF, data=[1, 2],
                        is_extended_id=False))
    assert main(["replay", str(path), "--dbc", "acc", "--print"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "id 0x7FF (1 frames of 2 bytes)" in err and "--allow-unknown-ids" in err
    assert main(["replay", str(path), "--dbc", "acc", "--print",
                 "--allow-unknown-ids"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[1:] == ["ACC_CMD", "throttle=0.25", "brake_torque=100", "N*m"]
    assert lines[1].split()[1:] == ["0x7FF", "[2]", "01", "02"]
    assert main(["replay", str(path), "--print", "--allow-unknown-ids"]) == 2
    assert "--dbc" in capsys.readouterr().err
