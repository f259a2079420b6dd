"""The ``timing`` marker (issue 30): every test that depends on wall-clock time carries it
(read from the sources, :mod:`tests.timing_marks`), and a real-time verdict that needs a
quiet machine is judged honestly (:mod:`tests.timing_plugin`): PASS, FAIL, or "overloaded:
not judged" when the runner's own figures put the failure down to other work."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hil.telemetry import Telemetry
from hil.verdict import TIMING_CHECKS, Budget, overload, runner_verdict
from tests import timing_plugin
from tests.timing_marks import Reader, unmarked
from tests.timing_plugin import NOT_JUDGED, assert_honest, judge_timing

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def test_every_test_that_depends_on_timing_is_marked(request):
    """The list that ``pytest --collect-only -m timing -q`` prints holds every test whose
    body, helpers or fixtures run on the wall clock (tests/timing_marks.py)."""
    missing = unmarked(TESTS)
    assert not missing, ("tests that depend on timing without @pytest.mark.timing (mark "
                         "them, see tests/timing_plugin.py):\n  " + "\n  ".join(missing))
    # where this session collected them, pytest sees the marks the sources say
    survey = Reader(TESTS).survey()
    for item in request.session.items:
        key = item.nodeid.split("[")[0]
        if key in survey:
            assert (item.get_closest_marker("timing") is not None) == survey[key][0], key


# ------------------------------------------------------------- the source reader
HEAD = "import time\nimport pytest\nfrom hil.runner import RealTimeRunner, VirtualClock\n" \
       "from tests.unit.hil.busy import busy\n"

#: one source per kind of timing use: ``(name, source, uses timing)``
CORPUS = [
    ("sleep", "def test_a():\n    time.sleep(0.1)\n", True),
    ("perf_counter", "def test_a():\n    t = time.perf_counter()\n    assert t\n", True),
    ("from time import", "from time import monotonic\ndef test_a():\n    monotonic()\n",
     True),
    ("wall-clock runner", "def test_a(sim):\n    RealTimeRunner(sim, 1e-3).run(1.0)\n", True),
    ("virtual runner", "def test_a(sim):\n    RealTimeRunner(sim, 1e-3, "
                       "clock=VirtualClock()).run(1.0)\n", False),
    ("refused runner", "def test_a(sim):\n    with pytest.raises(ValueError):\n"
                       "        RealTimeRunner(sim, 1e-3, cpus=[999])\n", False),
    ("monotonic clock", "from hil.runner import MonotonicClock\ndef test_a(sim):\n"
                        "    RealTimeRunner(sim, 1e-3, clock=MonotonicClock()).run(1)\n",
     True),
    ("busy", "def test_a():\n    with busy():\n        pass\n", True),
    ("timeout", "def test_a(b):\n    b.read(timeout=0.5)\n", True),
    ("no wait", "def test_a(b):\n    b.open(timeout=0.0)\n", False),
    ("hang guard", "import subprocess\ndef test_a():\n    subprocess.run(['x'], "
                   "timeout=120)\n", False),
    ("join", "def test_a(t):\n    t.join(2.0)\n", True),
    ("wait_received", "def test_a(em):\n    assert em.wait_received(1)\n", True),
    ("hil run", "def test_a():\n    main(['hil', 'run', 'x.py'])\n", True),
    ("example", "import subprocess\ndef test_a():\n    subprocess.run(['python', "
                "'examples/flagship.py'])\n", True),
    ("run_hil", "from examples.acc_hil import run_hil\ndef test_a(tmp_path):\n"
                "    run_hil(tmp_path)\n", True),
    ("flagship main", "from examples.flagship import main\ndef test_a():\n    main([])\n",
     True),
    ("helper", "def _h():\n    time.sleep(0.1)\ndef test_a():\n    _h()\n", True),
    ("helper of a helper", "def _g():\n    busy()\ndef _h():\n    _g()\ndef test_a():\n"
                           "    _h()\n", True),
    ("fixture", "@pytest.fixture\ndef f():\n    time.sleep(0)\ndef test_a(f):\n    pass\n",
     True),
    ("autouse fixture", "@pytest.fixture(autouse=True)\ndef f():\n    with busy():\n"
                        "        yield\ndef test_a():\n    pass\n", True),
    ("pragma", "def test_a():\n    t = time.perf_counter()  # not timing: printed\n", False),
    ("nothing", "def test_a():\n    assert 1 + 1 == 2\n", False),
]


@pytest.mark.parametrize("name, source, timing", CORPUS, ids=[c[0] for c in CORPUS])
@pytest.mark.parametrize("mark", ["none", "decorator", "pytestmark", "pytestmark list",
                                  "class"])
def test_the_reader_finds_each_kind_of_timing_use(tmp_path, name, source, timing, mark):
    src = HEAD + source
    if mark == "decorator":
        src = src.replace("def test_a", "@pytest.mark.timing\ndef test_a")
    elif mark == "pytestmark":
        src += "pytestmark = pytest.mark.timing\n"
    elif mark == "pytestmark list":
        src += "pytestmark = [pytest.mark.slow, pytest.mark.timing]\n"
    elif mark == "class":
        body = src.split("def test_a", 1)
        src = (body[0] + "@pytest.mark.timing\nclass TestA:\n    def test_a"
               + textwrap.indent(body[1], "    ").replace("    (", "(", 1))
    path = tmp_path / "tests" / "test_x.py"
    path.parent.mkdir()
    path.write_text(src)
    found = unmarked(tmp_path / "tests")
    assert (len(found) == 1) == (timing and mark == "none"), (src, found)
    survey = Reader(tmp_path / "tests").survey()
    assert len(survey) == 1
    (marked, uses), = survey.values()
    assert bool(uses) == timing and marked == (mark != "none"), (src, survey)


def test_a_conftest_fixture_is_followed(tmp_path):
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "conftest.py").write_text(
        HEAD + "@pytest.fixture\ndef loaded():\n    with busy():\n        yield\n"
               "@pytest.fixture(autouse=True)\ndef calm():\n    yield\n")
    (tmp_path / "tests" / "sub" / "test_y.py").write_text(
        "def test_b(loaded):\n    pass\ndef test_c():\n    pass\n")
    assert [u.split(":")[2] for u in unmarked(tmp_path / "tests")] == ["test_b"]


# ------------------------------------------------------------------ the judge
P = 1_000_000  # a 1 ms frame


def _tel(cpu_ns, over, lateness=0):
    """A telemetry of 1000 frames: ``cpu_ns(k)`` of work each, ``over(k)``: overran."""
    t = Telemetry(P)
    for k in range(1000):
        c = cpu_ns(k)
        late = lateness if over(k) else 0
        t.record(k * 1e-3, late, c + late, 0, over(k), cpu=c)
    return t


def _verdict(tel, io=None):
    return runner_verdict("rt", tel, Budget(), io or {}, error=None, terminated=None,
                          setup={"applied": {"priority": 10}, "refused": []},
                          frames_due=tel.frames)


#: a run for each cause the diagnosis tells apart, with the words it says
CAUSES = {
    "own work": (lambda: _tel(lambda k: 900_000, lambda k: k % 10 == 0),
                 timing_plugin.OWN_WORK),
    "spikes": (lambda: _tel(lambda k: 1_500_000 if k % 100 == 0 else 200_000,
                            lambda k: k % 100 == 0), timing_plugin.SPIKES),
    "stalls": (lambda: _tel(lambda k: 200_000, lambda k: k % 50 == 0, lateness=2_000_000),
               timing_plugin.OTHER_WORK),
}


@pytest.mark.parametrize("cause", CAUSES)
def test_the_diagnosis_says_the_words_the_judge_reads(cause):
    make, words = CAUSES[cause]
    v = _verdict(make())
    assert not v.passed and v.overload and words in v.overload, v.line()
    assert set(c.name for c in v.failed) <= set(TIMING_CHECKS)
    assert words in overload(make(), None, None, ["overruns"])


def _busy(monkeypatch, busy):
    monkeypatch.setattr(timing_plugin, "machine_busy", lambda: (busy, "figure"))


@pytest.mark.parametrize("busy", [False, True], ids=["quiet", "busy"])
def test_other_work_is_not_judged_the_models_own_work_fails(monkeypatch, busy):
    _busy(monkeypatch, busy)
    v = _verdict(CAUSES["stalls"][0]())
    with pytest.raises(pytest.skip.Exception, match=f"^{NOT_JUDGED}: timing failed"):
        judge_timing(v)
    with pytest.raises(pytest.fail.Exception, match="own work does not fit its frame"):
        judge_timing(_verdict(CAUSES["own work"][0]()))
    assert_honest(_verdict(CAUSES["own work"][0]()))  # not timing: honest all the same


def test_work_spikes_are_not_judged_on_a_busy_machine_only(monkeypatch):
    v = _verdict(CAUSES["spikes"][0]())
    _busy(monkeypatch, True)
    with pytest.raises(pytest.skip.Exception, match=f"^{NOT_JUDGED}: .*the machine was busy"):
        judge_timing(v.as_dict())
    _busy(monkeypatch, False)
    with pytest.raises(pytest.fail.Exception, match="work spikes on a quiet machine"):
        judge_timing(v)


def test_a_pass_is_returned_and_other_failures_fail(monkeypatch):
    _busy(monkeypatch, True)
    ok = _verdict(_tel(lambda k: 100_000, lambda k: False))
    assert judge_timing(ok)["passed"] and assert_honest(ok)["passed"]  # not timing: made up
    stale = _verdict(CAUSES["stalls"][0](), io={"stale_episodes": 1})
    for check in (judge_timing, assert_honest):
        with pytest.raises(AssertionError, match=r"other than timing \['stale_episodes'\]"):
            check(stale)
    d = _verdict(CAUSES["stalls"][0]()).as_dict()
    d["overload"] = None  # a timing failure without its diagnosis is not honest
    with pytest.raises(AssertionError, match="without the runner's diagnosis"):
        judge_timing(d)


def test_a_combined_verdict_is_read_by_its_checks_names(monkeypatch):
    from hil.verdict import Verdict
    _busy(monkeypatch, False)
    both = Verdict.combine("loop", [_verdict(CAUSES["stalls"][0]()),
                                    _verdict(_tel(lambda k: 100_000, lambda k: False))])
    assert "rt: overruns" in both.as_dict()["failed"]
    with pytest.raises(pytest.skip.Exception, match=NOT_JUDGED):
        judge_timing(both)


def test_the_cpu_pressure_of_the_test_is_measured():
    busy, figure = timing_plugin.machine_busy()
    assert isinstance(busy, bool) and ("CPU pressure" in figure or "load average" in figure)


def test_the_summary_counts_the_timing_tests_not_judged(tmp_path):
    """A session with a judged, a not judged and an unmarked test: the summary says 2 timing
    tests ran, 1 of them not judged, with its diagnosis."""
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    timing: t\n")
    (tmp_path / "test_s.py").write_text(textwrap.dedent("""\
        import pytest
        from tests.timing_plugin import judge_timing
        from tests.unit.test_timing_marks import CAUSES, _tel, _verdict

        @pytest.mark.timing
        def test_loaded():
            judge_timing(_verdict(CAUSES["stalls"][0]()))

        @pytest.mark.timing
        def test_fine():
            judge_timing(_verdict(_tel(lambda k: 100_000, lambda k: False)))

        def test_other():
            pass
        """))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.timing_plugin", "-q",
                        "-p", "no:cacheprovider", str(tmp_path / "test_s.py")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 timing tests ran, 1 of them overloaded: not judged" in r.stdout, r.stdout
    assert "test_s.py::test_loaded: overloaded: not judged: timing failed (" in r.stdout
    assert "2 passed, 1 skipped" in r.stdout


def test_a_peer_s_diagnosis_and_the_overload_s_consequences(monkeypatch):
    """A loop of two processes: the ECU's verdict comes back from its summary (a dict, its
    diagnosis beside it); a stale input is the overload's consequence only beside a failed
    timing check."""
    from hil.verdict import Verdict
    _busy(monkeypatch, False)
    ecu = _verdict(CAUSES["stalls"][0]()).as_dict()
    plant = _verdict(_tel(lambda k: 100_000, lambda k: False), io={"stale_episodes": 1})
    loop = Verdict.combine("loop", [plant, Verdict.from_dict(ecu, "ecu")])
    assert "ecu: overruns" in loop.as_dict()["failed"]
    stale = ("*: stale_episodes",)
    with pytest.raises(AssertionError, match=r"other than timing \['rt: stale_episodes'\]"):
        judge_timing(loop, parts=[ecu])
    if loop.overload is None:  # the ECU's diagnosis stayed in its summary
        with pytest.raises(AssertionError, match="without the runner's diagnosis"):
            judge_timing(loop, consequences=stale)
    with pytest.raises(pytest.skip.Exception,
                       match=f"^{NOT_JUDGED}: .*other work.*in turn: rt: stale_episodes"):
        judge_timing(loop, parts=[ecu], consequences=stale)
    # a stale input without an overload is the loop's own failure, not the machine's
    alone = Verdict.combine("loop", [plant])
    with pytest.raises(AssertionError, match="other than timing"):
        judge_timing(alone, consequences=stale)


def test_a_speed_figure_is_judged_by_the_machine_or_by_the_run_s_own_figures(monkeypatch):
    from tests.timing_plugin import judge_figure
    judge_figure(True, "fast enough")  # not timing: a made-up figure, nothing to judge
    _busy(monkeypatch, True)
    with pytest.raises(pytest.skip.Exception, match=f"^{NOT_JUDGED}: 3 s, at most 2 s "
                                                    r"\(the machine was busy: figure\)"):
        judge_figure(False, "3 s, at most 2 s")
    with pytest.raises(pytest.fail.Exception, match="no other work that explains it"):
        judge_figure(False, "lost at t = 3 s", other_work="")  # the run says: no stall
    _busy(monkeypatch, False)
    with pytest.raises(pytest.fail.Exception, match="3 s, at most 2 s, on a quiet machine"):
        judge_figure(False, "3 s, at most 2 s")
    with pytest.raises(pytest.skip.Exception, match=f"^{NOT_JUDGED}: lost .*stalled 2 times"):
        judge_figure(False, "lost at t = 3 s", other_work="the plant stalled 2 times")
