"""The lazy backend registry: names, entry points, and no driver import on `import hil`."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import hil
from hil import registry
from hil.errors import BackendError, BackendNotFound, DriverMissing
from hil.serial import EmulatedSerialBackend, SerialBackend

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fake_entry_points(monkeypatch):
    eps = {}
    monkeypatch.setattr(registry, "_scan_entry_points", lambda: dict(eps))
    registry.refresh_entry_points()
    yield eps
    monkeypatch.undo()
    registry.refresh_entry_points()


def _ep(name, value):
    return EntryPoint(name=name, value=value, group=registry.ENTRY_POINT_GROUP)


def test_builtin_kinds():
    assert {"serial", "serial-emulator"} <= set(hil.available_backends())
    assert hil.backend_class("serial") is SerialBackend
    assert hil.backend_class("serial-emulator") is EmulatedSerialBackend
    b = hil.create_backend("serial", port="loop://", crc="crc8")
    assert isinstance(b, SerialBackend) and b.state is hil.BackendState.CLOSED


def test_unknown_name_lists_choices_and_a_close_match():
    with pytest.raises(BackendNotFound) as e:
        hil.create_backend("seriall", port="x")
    msg = str(e.value)
    names = ", ".join(sorted(hil.available_backends()))
    assert "serial, serial-emulator" in names
    assert msg.startswith(f"unknown HIL backend 'seriall'; available: {names}")
    assert "did you mean 'serial'?" in msg and "cosim.hil_backends" in msg
    assert isinstance(e.value, KeyError)


def test_bad_configuration_names_the_class():
    with pytest.raises(BackendError, match=r"create_backend\('serial'\): bad configuration for "
                                           r"SerialBackend: .*'port'"):
        hil.create_backend("serial", prot="loop://")
    with pytest.raises(BackendError, match=r"unknown option\(s\) \['party'\].*parity"):
        hil.create_backend("serial", port="loop://", party="E")


def test_entry_points_add_kinds(fake_entry_points):
    fake_entry_points["my-serial"] = _ep("my-serial", "hil.serial.backend:SerialBackend")
    fake_entry_points["not-a-backend"] = _ep("not-a-backend", "collections:OrderedDict")
    fake_entry_points["no-driver"] = _ep("no-driver", "no_such_driver_pkg_8:Bus")
    registry.refresh_entry_points()
    assert {"my-serial", "no-driver", "not-a-backend"} <= set(hil.available_backends())
    assert isinstance(hil.create_backend("my-serial", port="loop://"), SerialBackend)
    with pytest.raises(BackendError, match="OrderedDict.*not a subclass of hil.Backend"):
        hil.create_backend("not-a-backend")
    with pytest.raises(DriverMissing, match="'no-driver' cannot be imported .*pip install"):
        hil.create_backend("no-driver")


def test_register_backend_refuses_silent_rebinding():
    hil.register_backend("test-loop-8", "hil.serial.backend:SerialBackend")
    try:
        with pytest.raises(ValueError, match="already bound"):
            hil.register_backend("test-loop-8", "hil.serial.emulator:EmulatedSerialBackend")
        hil.register_backend("test-loop-8", EmulatedSerialBackend, replace=True)
        assert hil.backend_class("test-loop-8") is EmulatedSerialBackend
        with pytest.raises(TypeError, match="not a subclass"):
            hil.register_backend("test-bad-8", dict)
    finally:
        registry._registered.pop("test-loop-8", None)


def test_importing_hil_imports_no_driver():
    code = ("import sys, hil, hil.registry, hil.serial\n"
            "hil.available_backends()\n"
            "hil.create_backend('serial', port='loop://', framing='slip', crc='crc32')\n"
            "bad = sorted(m for m in ('serial', 'can', 'cantools') if m in sys.modules)\n"
            "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_missing_pyserial_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "serial", None)  # makes `import serial` fail
    b = SerialBackend("loop://")
    with pytest.raises(DriverMissing, match=r"pyserial is not installed .*pip install "
                                            r"cosim \(or pip install pyserial\)"):
        b.open()
    assert b.state is hil.BackendState.CLOSED
