"""Every lazily imported driver of the HIL layer, missing: :class:`hil.errors.DriverMissing`
saying who needs which package and the two pip commands (the extra, the package alone).

The class: the import sites that go through :func:`hil.errors.require`; the extra named
(or cosim itself, for a core dependency) must install the package.  Each is called with
its module hidden (``sys.modules[name] = None`` makes ``import name`` fail), and the message
must name the site, the package, the module whose import failed and both commands.
"""

from __future__ import annotations

import sys

import pytest

from hil.errors import DriverMissing, require


def _sites():
    from hil.can import backend as can_backend
    from hil.can import dbc
    from hil.diag import client, server
    from hil.serial import backend as serial_backend
    from hil.testing import mdf
    from hil.xcp import can_port, master
    return [
        ("can", "python-can", None, "can backend", can_backend.import_can),
        ("cantools", "cantools", None, "CAN database", dbc._import_cantools),
        ("udsoncan.client", "udsoncan", "hil-test", "the UDS client", client.import_udsoncan),
        ("isotp", "can-isotp", "hil-test", "UDS on ISO-TP", server.import_isotp),
        ("serial", "pyserial", None, "serial backend", serial_backend._import_pyserial),
        ("asammdf", "asammdf", "hil-test", "measurement files (MDF 4)", mdf._asammdf),
        ("can", "python-can", None, "hil.xcp", lambda: can_port.open_bus("virtual", "x")),
        ("pyxcp", "pyxcp", "hil-test", "hil.xcp's master helpers", master._pyxcp),
    ]


@pytest.mark.parametrize("i", range(8))
def test_each_missing_driver_says_who_needs_what_and_how_to_install_it(i, monkeypatch):
    module, package, extra, who, call = _sites()[i]
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(DriverMissing) as ei:
        call()
    msg = str(ei.value)
    assert msg.startswith(f"{who}: {package} is not installed (import {module} failed: ")
    with_cosim = "cosim" if extra is None else f"'cosim[{extra}]'"
    assert f"pip install {with_cosim} (or pip install {package})" in msg
    assert isinstance(ei.value, ImportError)  # (generic code catching ImportError still works)
    assert package in _EXTRAS[extra], f"{with_cosim} must install {package}"


def _extras() -> dict:
    import tomllib
    from pathlib import Path
    doc = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())
    out = {k: " ".join(v) for k, v in doc["project"]["optional-dependencies"].items()}
    out[None] = " ".join(doc["project"]["dependencies"])  # (cosim itself)
    return out


_EXTRAS = _extras()


def test_require_returns_the_module_when_present():
    import json
    assert require("json", who="x", package="json") is json
    with pytest.raises(DriverMissing, match=r"^x: no-such-pkg is not installed \(import "
                                            r"no_such_module_4711 failed: .*\[hil\]"):
        require("no_such_module_4711", who="x", package="no-such-pkg", extra="hil")
