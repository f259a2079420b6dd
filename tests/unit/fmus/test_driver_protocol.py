"""The driver protocol (``fmus.driver.DRIVER_CALLS``) is what the driver classes implement,
and the out-of-process proxy (``fmus.remote.RemoteDriver``) forwards exactly it: a call
added to the protocol is forwarded with no edit of ``fmus/remote.py``.

The proxy runs here over a real pipe against the real serving loop (``remote._serve``, in
a thread), with a recording driver in place of an FMU."""

import inspect
import multiprocessing
import pathlib
import subprocess
import sys
import textwrap
import threading

import pytest

import fmus.remote
from fmus.driver import DRIVER_API, DRIVER_CALLS, Driver
from fmus.errors import FMUConfigError
from fmus.fmi_calls import FmiCalls
from fmus.remote import RemoteDriver

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _public_methods(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}


def _driver_classes() -> dict[str, type]:
    """The driver classes by name: the shared one and every class beneath a layer."""
    out = {}
    for layer in Driver.layers.values():
        out.update({c.__name__: c for c in layer.__mro__ if issubclass(c, Driver)})
    return out


def test_the_protocol_is_what_the_driver_classes_implement():
    assert len(DRIVER_API) == len(set(DRIVER_API))
    assert set(Driver.layers) == {"ME", "CS", "SE"}
    classes = _driver_classes()
    assert set(DRIVER_CALLS) == set(classes)
    for name, cls in classes.items():
        assert _public_methods(cls) == set(DRIVER_CALLS[name]), name
    for layer in Driver.layers.values():  # no call overridden on the way down
        mine = [_public_methods(c) for c in layer.__mro__ if issubclass(c, Driver)]
        assert sum(map(len, mine)) == len(set().union(*mine)), layer.__name__
    assert set(FmiCalls._versions) == {2, 3}


def test_no_class_of_the_fmi_layer_has_more_than_25_methods():
    from fmus import fmi2_calls, fmi3_calls
    for cls in [*_driver_classes().values(), FmiCalls, fmi2_calls.Fmi2Calls,
                fmi3_calls.Fmi3Calls]:
        n = sum(1 for v in vars(cls).values() if inspect.isfunction(v)
                or isinstance(v, (classmethod, staticmethod)))
        assert n <= 25, (cls.__name__, n)


class _Recorder:
    """A driver that answers every call with its name and records it."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args):
            self.calls.append(name)
            return name
        return call


class _NoChild:
    pid = None
    returncode = 0

    def poll(self):
        return 0

    def wait(self, timeout=None):
        return 0


def _proxy(monkeypatch, driver) -> tuple[RemoteDriver, threading.Thread]:
    """A proxy over a pipe to ``remote._serve`` in a thread, serving ``driver``."""
    monkeypatch.setattr(fmus.remote, "open_driver", lambda spec, call_log=None: driver)
    parent, child = multiprocessing.Pipe()
    serving = threading.Thread(target=fmus.remote._serve, args=(child, None, False),
                               daemon=True)
    serving.start()
    proxy = object.__new__(RemoteDriver)
    proxy.__dict__.update(_conn=parent, _dead=False, time=None, timeout_s=10.0,
                          call_log=None, label="test", _proc=_NoChild())
    proxy._wait("start", 10.0)
    return proxy, serving


def _dummy_args(name: str) -> list:
    impl = next(getattr(c, name) for c in _driver_classes().values() if name in vars(c))
    params = list(inspect.signature(impl).parameters.values())[1:]
    return [0.0 for p in params if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]


@pytest.mark.timing  # a pipe and a serving thread (timeouts)
def test_the_proxy_forwards_exactly_the_protocol(monkeypatch):
    rec = _Recorder()
    proxy, serving = _proxy(monkeypatch, rec)
    # names the recording driver would answer, but outside the protocol: not forwarded
    for name in ("fmu", "calls", "component", "messages", "added_call", "_fail"):
        with pytest.raises(AttributeError):
            getattr(proxy, name)
    handles = {"set_state", "free_state", "serialize_state"}  # take a handle of get_state
    for name in DRIVER_API:
        if name == "free":
            continue
        args = [proxy.get_state()] if name in handles else _dummy_args(name)
        getattr(proxy, name)(*args)
    proxy.free()
    serving.join(10.0)
    assert not serving.is_alive()
    assert set(rec.calls) == set(DRIVER_API)
    assert set(fmus.remote._FORWARDED) == set(DRIVER_API)
    # the proxy's own public methods are calls of the protocol (and its child's pid)
    assert _public_methods(RemoteDriver) <= set(DRIVER_API)


def test_a_call_added_to_the_protocol_is_forwarded_without_editing_the_proxy():
    """As if ``fmus/driver.py`` listed a new call (and its driver had it): the proxy
    forwards it, ``fmus/remote.py`` unchanged."""
    script = textwrap.dedent("""
        import multiprocessing, threading
        import fmus.driver
        fmus.driver.DRIVER_API = fmus.driver.DRIVER_API + ("added_call",)
        import fmus.remote
        from tests.unit.fmus.test_driver_protocol import _NoChild

        class New:
            def added_call(self, a, b):
                return ("added", a, b)

            def free(self):
                pass
        fmus.remote.open_driver = lambda spec, call_log=None: New()
        parent, child = multiprocessing.Pipe()
        threading.Thread(target=fmus.remote._serve, args=(child, None, False),
                         daemon=True).start()
        proxy = object.__new__(fmus.remote.RemoteDriver)
        proxy.__dict__.update(_conn=parent, _dead=False, time=None, timeout_s=10.0,
                              call_log=None, label="test", _proc=_NoChild())
        proxy._wait("start", 10.0)
        print(proxy.added_call(1, 2))
        proxy.free()
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "('added', 1, 2)"


def test_an_fmi_version_or_interface_without_a_class_is_refused_clearly(tmp_path):
    from fmus.driver import DriverSpec, open_driver
    spec = DriverSpec(root=str(tmp_path), fmi_major=3, interface="XX", model_identifier="m",
                      token="t", instance_name="i", label="m.fmu")
    with pytest.raises(FMUConfigError, match="no driver for interface 'XX'"):
        open_driver(spec)
    spec.interface, spec.fmi_major = "CS", 1
    with pytest.raises(FMUConfigError, match=r"FMI 1 is not supported \(supported: FMI 2, 3"):
        open_driver(spec)
