"""Rig files (hil.testing.rigfile): the ACC rig files and the documented real-device rig
file parse; every mistake is named with its file, key and fix; rigs are found by name."""

from __future__ import annotations

import pathlib
import re
import tomllib

import pytest

from hil.testing.rigfile import RigFileError, find_rig, load_rig, parse_rig

ROOT = pathlib.Path(__file__).resolve().parents[3]
RIGS = ROOT / "examples" / "hil_tests" / "rigs"


def _minimal(**over):
    d = {"rig": {"mode": "virtual", "period_s": 0.008},
         "buses": {"can": {"interface": "virtual", "dbc": "acc"}},
         "plant": {"model": "examples.hil_tests.acc_rig:plant"},
         "controller": {"kind": "in-process", "model": "examples.hil_tests.acc_rig:controller",
                        "period_s": 0.016},
         "signals": {"v": "plant:car.v", "thr": "can:ACC_CMD.throttle"}}
    for k, v in over.items():
        d[k] = v
    return d


def test_the_acc_rig_files_parse():
    v, r = load_rig(RIGS / "virtual.toml"), load_rig(RIGS / "realtime.toml")
    assert (v.mode, r.mode) == ("virtual", "realtime")
    assert v.signals["acc_throttle"].address == "can:ACC_CMD.throttle"
    assert v.signals["ego_speed"].source == "plant" and v.buses["can"].dbc == "acc"
    assert r.controller["kind"] == "process" and "{bus.can.channel}" in r.controller["command"]
    # the same test names on both rigs (but the controller's, reached in-process only)
    assert set(r.signals) == set(v.signals) - {"ecu_inputs_fresh", "ecu_accel_request"}
    # UDS and XCP on both: the same clients; the virtual rig's ECU serves them in-process,
    # the real-time rig's ECU process by its command
    assert v.uds["client"] == r.uds["client"] == "hil.testing.clients:uds_client"
    assert v.uds["args"]["config"] == r.uds["args"]["config"] == "hil.diag.acc:client_config"
    assert v.xcp["client"] == r.xcp["client"] == "hil.testing.clients:xcp_client"
    assert v.xcp["args"]["a2l"] == r.xcp["args"]["a2l"] == "{work_dir}/acc_ecu.a2l"
    assert v.controller["services"] == ["examples.hil_tests.acc_rig:uds_server",
                                        "examples.hil_tests.acc_rig:xcp_slave"]
    cmd = r.controller["command"]
    assert "--xcp" in cmd and cmd[cmd.index("--a2l") + 1] == v.xcp["args"]["a2l"]


def _doc_rig() -> str:
    text = (ROOT / "docs" / "guides" / "hil-tests.md").read_text()
    block = re.search(r"```toml\n(# rig: bench.toml\n.*?)```", text, re.S)
    assert block, "the real-device rig file is not in docs/guides/hil-tests.md"
    return block.group(1)


def test_the_documented_real_device_rig_file_parses(tmp_path):
    spec = parse_rig(tomllib.loads(_doc_rig()), "bench.toml")
    assert spec.mode == "realtime" and spec.buses["can"].interface == "pcan"
    assert spec.buses["can"].options == {"bitrate": 500000}
    assert spec.serial["gnss"]["port"] == "/dev/ttyUSB0"
    assert spec.daq["pedal"]["channels"] == ["ai0", "ai1"]
    assert spec.controller["kind"] == "device"
    assert spec.signals["pedal_position"].source == "daq"
    assert spec.budgets == {"lateness_p99_us": 1000}
    from hil.testing.rig import Rig
    with pytest.raises(RigFileError, match=r"\[serial\], \[daq\]: .*not supported yet"):
        Rig(spec)  # declared, refused when built


@pytest.mark.parametrize("over, match", [
    ({"rigg": {}}, r"\[rigg\]: unknown section.*did you mean \[rig\]"),
    ({"rig": {"mode": "fast", "period_s": 0.008}}, r"mode: must be one of virtual, realtime"),
    ({"rig": {"mode": "virtual", "period_s": 0}}, r"period_s: must be a number of seconds > 0"),
    ({"plant": None}, r"\[plant\]: missing"),
    ({"plant": {"model": "acc_rig.plant"}}, r"model: must be 'module:function'"),
    ({"signals": {"v": "plant:car"}}, r"signals.v: 'plant:car' is not '<source>:<owner>.<item>'"),
    ({"signals": {"v": "cann:ACC_CMD.throttle"}}, r"unknown source 'cann'.*did you mean 'can'"),
    ({"signals": {"1v": "plant:car.v"}}, r"signals.1v: a test name must be an identifier"),
    ({"budgets": {"overrun": 1}}, r"\[budgets\]: .*overrun"),
    ({"controller": {"kind": "process", "command": "python ecu.py"}},
     r"controller.command: must be a list of strings"),
    ({"xcp": {"client": "hil.xcp"}}, r"\[xcp\]: client: must be 'module:function'"),
    ({"controller": {"kind": "in-process", "model": "m:f", "period_s": 0.016,
                     "services": "m:f"}}, r"controller.services: must be a list"),
    ({"controller": {"kind": "in-process", "model": "m:f", "period_s": 0.016,
                     "services": ["m.f"]}}, r"services: 0: must be 'module:function'"),
    ({"controller": {"kind": "process", "command": ["ecu"], "services": ["m:f"]}},
     r"controller.services: only for an in-process controller"),
    ({"buses": {"plant": {"interface": "virtual", "dbc": "acc"}}},
     r"buses.plant: 'plant' is a signal source's name"),
])
def test_mistakes_are_named_with_their_key_and_fix(over, match):
    d = _minimal(**over)
    if over.get("plant", 0) is None:
        del d["plant"]
    with pytest.raises(RigFileError, match=match):
        parse_rig(d, "x.toml")


def test_yaml_and_toml_give_the_same_rig(tmp_path):
    yaml = pytest.importorskip("yaml")
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(_minimal()))
    t = load_rig(RIGS / "virtual.toml")
    y = load_rig(tmp_path / "a.yaml")
    assert y.signals["thr"] == parse_rig(_minimal()).signals["thr"] and t.mode == y.mode
    (tmp_path / "b.json").write_text("{}")
    with pytest.raises(RigFileError, match=r"give a .toml \(or .yaml\) file"):
        load_rig(tmp_path / "b.json")
    (tmp_path / "c.toml").write_text("[rig\n")
    with pytest.raises(RigFileError, match=r"c.toml: not valid TOML"):
        load_rig(tmp_path / "c.toml")


def test_a_rig_is_found_by_name_in_a_rigs_folder_above_the_tests(tmp_path):
    (tmp_path / "rigs").mkdir()
    (tmp_path / "rigs" / "bench.toml").write_text("")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_rig("bench", deep, tmp_path) == tmp_path / "rigs" / "bench.toml"
    with pytest.raises(RigFileError, match=r"no rig file other.toml in .*a/b/rigs"):
        find_rig("other", deep, tmp_path)
    with pytest.raises(RigFileError, match=r"no such file"):
        find_rig("missing.toml", deep, tmp_path)
