"""The pytest plugin of HIL test cases: the ``rig`` fixture, ``--rig``, the ``hil`` marker
and the HTML report (registered as ``cosim_hil`` through the ``pytest11`` entry point).

::

    pytest examples/hil_tests --rig virtual        # lock-step, no wall clock (CI)
    pytest examples/hil_tests --rig realtime       # two processes in real time
    pytest examples/hil_tests --rig path/to/bench.toml --hil-report out/report

``--rig NAME_OR_FILE``: a rig file, or ``rigs/NAME.toml`` in the test's folder or a folder
above it (:func:`hil.testing.rigfile.find_rig`).  Without ``--rig`` a test marked
``@pytest.mark.hil(rig="virtual")`` uses that rig.  The marker's ``plant={...}`` and
``controller={...}`` give this test's plant (and in-process controller) arguments on top of
the rig file's.  Tests on a real-time rig get the ``timing`` marker (the project runs those
alone, on a quiet machine).

The ``rig`` fixture is a started :class:`hil.testing.rig.Rig`, closed after the test.
``--hil-report DIR`` writes, per test that used the rig, its record, the plots of its
checks and its measurement file (MF4), and at the end ``DIR/index.html``
(:mod:`hil.testing.report`); JUnit XML is pytest's own ``--junitxml``.

A run that uses neither ``--rig`` nor the ``hil`` marker is not changed: the plugin only
adds its options, its marker and the ``rig`` fixture (a test's own ``rig`` fixture wins).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

__all__ = ["rig"]

_RIG = pytest.StashKey[Any]()
_CALL = pytest.StashKey[Any]()
_SPECS: dict = {}


def pytest_addoption(parser: Any) -> None:
    g = parser.getgroup("hil", "HIL test cases on a rig (cosim's hil.testing)")
    g.addoption("--rig", default=None, metavar="NAME_OR_FILE",
                help="the rig the HIL tests run on: a rig file (.toml, .yaml) or NAME for "
                     "rigs/NAME.toml beside the tests (e.g. virtual, realtime)")
    g.addoption("--hil-report", default=None, metavar="DIR",
                help="write an HTML report of the HIL tests (verdicts, steps, plots of the "
                     "checks, telemetry, MF4 files) to DIR/index.html")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "hil(rig=None, plant=None, controller=None): a HIL test case on the rig "
        "fixture; rig: the rig without --rig; plant, controller: this test's model arguments")


def _hil_kwargs(item: Any) -> dict:
    """The ``hil`` markers' arguments, the closest (the function's) winning."""
    kw: dict = {}
    for m in reversed(list(item.iter_markers("hil"))):
        kw.update(m.kwargs)
    return kw


def _rig_name(config: Any, item: Any) -> str | None:
    return config.getoption("rig", None) or _hil_kwargs(item).get("rig")


def _spec(config: Any, item: Any) -> Any:
    from hil.testing.rigfile import find_rig, load_rig
    name = _rig_name(config, item)
    if name is None:
        raise pytest.UsageError(f"{item.nodeid}: no rig: run with --rig NAME_OR_FILE or mark "
                                "the test @pytest.mark.hil(rig=\"virtual\")")
    path = find_rig(name, Path(str(item.path)).parent, Path(str(config.rootpath)))
    key = str(Path(path).resolve())
    if key not in _SPECS:
        _SPECS[key] = load_rig(path)
    return _SPECS[key]


def pytest_collection_modifyitems(config: Any, items: list) -> None:
    """Tests on a real-time rig are ``timing`` tests."""
    for item in items:
        if item.get_closest_marker("hil") is None:
            continue
        try:
            spec = _spec(config, item)
        except Exception:  # noqa: BLE001 - the fixture reports it when the test runs
            continue
        if spec.mode == "realtime":
            item.add_marker(pytest.mark.timing)


@pytest.fixture
def rig(request: Any) -> Any:
    """A started :class:`hil.testing.rig.Rig` from ``--rig`` or the ``hil`` marker."""
    import copy

    from hil.testing.rig import Rig
    spec = _spec(request.config, request.node)
    kw = _hil_kwargs(request.node)
    if kw.get("controller"):
        spec = copy.deepcopy(spec)
        spec.controller["args"] = {**spec.controller.get("args", {}), **kw["controller"]}
    r = Rig(spec, plant_args=kw.get("plant")).start()
    request.node.stash[_RIG] = r
    try:
        yield r
    finally:
        r.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    folder = item.config.getoption("hil_report", None)
    if not folder:
        return
    rep = outcome.get_result()
    if rep.when == "call" or (rep.when == "setup" and not rep.passed):
        item.stash[_CALL] = rep
    if rep.when != "teardown":
        return
    r = item.stash.get(_RIG, None)
    if r is None and item.get_closest_marker("hil") is None:
        return
    from hil.testing.report import write_test
    call_rep = item.stash.get(_CALL, rep)
    xfail = hasattr(call_rep, "wasxfail")
    word = ("xfailed" if call_rep.skipped else "xpassed") if xfail else call_rep.outcome
    msg = str(call_rep.longrepr) if call_rep.failed or (xfail and call_rep.skipped) else ""
    if xfail and call_rep.skipped:
        msg = f"expected to fail ({call_rep.wasxfail}):\n{msg}"
    elif call_rep.skipped and isinstance(call_rep.longrepr, tuple):
        why = str(call_rep.longrepr[2])  # (file, line, reason)
        msg = "skipped: " + why.removeprefix("Skipped: ")
    write_test(folder, item.nodeid, word, float(getattr(call_rep, "duration", 0.0)), r,
               msg[-6000:])


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    folder = session.config.getoption("hil_report", None)
    if not folder or hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller assembles the index
    from hil.testing.report import write_index
    if (Path(folder) / "tests").is_dir():
        write_index(folder)
