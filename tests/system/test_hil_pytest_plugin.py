"""The HIL pytest plugin (hil.pytest_plugin) in child pytest processes: the deliberately
wrong expectation fails with the signals at its failing instant, a run without --rig or the
hil marker is unchanged, real-time rigs' tests are timing tests, the entry point loads it."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.system.hil_pytest_run import ROOT, plugin_installed, run_pytest

WRONG = ("examples/hil_tests/test_acc_hil_measure.py::"
         "test_deliberately_wrong_expectation_fails_with_the_signals")


def test_the_wrong_expectation_fails_with_the_signals_at_the_failing_instant():
    out = run_pytest(WRONG, "--runxfail", "-q")
    assert out.returncode == 1, out.stdout[-3000:]
    text = out.stdout
    assert "CheckFailed: FAIL always gap >= 30 m during [0.000, 12.000] s: gap >= 30 m " \
           "failed at t = 10.000 s by 4.99" in text
    assert re.search(r"t \[s\]\s+gap \[m\]", text)  # the window, a table with units
    assert re.search(r">\s*10\.000\s+25\.0", text)  # the failing instant, marked
    assert "1 failed" in text
    out = run_pytest(WRONG, "-q")  # as make test runs it: an expected failure
    assert out.returncode == 0 and "1 xfailed" in out.stdout, out.stdout[-3000:]


PLAIN = '''
import pytest

@pytest.fixture
def rig():
    return "my own rig"

def test_own_rig_fixture(rig):
    assert rig == "my own rig"

def test_plain():
    assert 1 + 1 == 2
'''


def test_a_run_without_rig_or_marker_is_unchanged(tmp_path):
    (tmp_path / "test_plain.py").write_text(PLAIN)
    with_plugin = run_pytest("-q", "-rA", cwd=tmp_path)
    off = ["-p", "no:cosim_hil"] if plugin_installed() else []
    without = run_pytest("-q", "-rA", *off, cwd=tmp_path, plugin=False)
    assert with_plugin.returncode == without.returncode == 0, with_plugin.stdout
    lines = [ln for ln in with_plugin.stdout.splitlines() if ln.startswith("PASSED")]
    assert lines == [ln for ln in without.stdout.splitlines() if ln.startswith("PASSED")]
    assert len(lines) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["test_plain.py"]


def test_the_rig_fixture_without_a_rig_says_how_to_give_one(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x(rig):\n    pass\n")
    out = run_pytest("-q", cwd=tmp_path)
    assert out.returncode == 1
    assert "no rig: run with --rig NAME_OR_FILE or mark the test " \
           "@pytest.mark.hil(rig=\"virtual\")" in out.stdout
    out = run_pytest("-q", "--rig", "nowhere", cwd=tmp_path)
    assert "--rig nowhere: no rig file nowhere.toml in" in out.stdout


def test_tests_on_a_real_time_rig_are_timing_tests():
    args = ("examples/hil_tests", "--collect-only", "-q", "-m", "timing")
    rt = run_pytest(*args, "--rig", "realtime")
    virtual = run_pytest(*args, "--rig", "virtual")
    n = len([ln for ln in rt.stdout.splitlines() if "::test_" in ln])
    assert n >= 12, rt.stdout[-2000:]
    assert not [ln for ln in virtual.stdout.splitlines() if "::test_" in ln], virtual.stdout


def test_the_plugin_is_a_pytest11_entry_point(tmp_path):
    ep = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert ep["pytest11"] == {"cosim_hil": "hil.pytest_plugin"}
    if not plugin_installed():  # the checkout is not installed with it yet: a stand-in
        info = tmp_path / "cosim_hil_stand_in-0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cosim-hil-stand-in\n"
                                       "Version: 0\n")
        (info / "entry_points.txt").write_text("[pytest11]\ncosim_hil = hil.pytest_plugin\n")
    out = run_pytest("--help", plugin=False, path=[str(tmp_path)], cwd=tmp_path)
    assert "--rig=NAME_OR_FILE" in out.stdout and "--hil-report=DIR" in out.stdout
    out = run_pytest("--markers", plugin=False, path=[str(tmp_path)], cwd=tmp_path)
    assert "@pytest.mark.hil(rig=None, plant=None, controller=None)" in out.stdout


@pytest.mark.parametrize("marker", ["", '{"cut_in_s": 1e9}'])
def test_marker_arguments_reach_the_plant(tmp_path, marker):
    rigs = ROOT / "examples" / "hil_tests" / "rigs"
    mark = f"@pytest.mark.hil(rig={str(rigs / 'virtual.toml')!r}" + \
        (f", plant={marker})" if marker else ")")
    (tmp_path / "test_m.py").write_text(
        "import pytest\n\n"
        f"{mark}\n"
        "def test_m(rig):\n"
        "    rig.run(10.5)\n"
        f"    assert (rig.read('gap') < 30.0) == {not marker}\n")
    out = run_pytest("-q", cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-3000:]
