"""Rig files: what a HIL test runs against, in TOML (or YAML with pyyaml), read into a
:class:`RigSpec` that :class:`hil.testing.rig.Rig` builds.

A rig file names the buses (a python-can interface, its channel, the DBC), serial ports
and DAQ channels, the plant model (``"module:function"``), the controller (an in-process
model, a process command, or a real device), the budgets of the real-time verdict, and
the **signal map** (ASAM XIL's framework variables): the names a test uses, each mapped
to one rig signal, so a test does not change when a signal is renamed or moves::

    [rig]
    name = "acc-virtual"
    mode = "virtual"            # virtual: lock-step, no wall clock; realtime: paced
    period_s = 0.008            # the plant's frame

    [buses.can]
    interface = "virtual"       # python-can interface
    channel = "auto"            # auto: a channel (a multicast group) of the rig's own
    dbc = "acc"                 # "acc": the bundled ACC database; else a path

    [plant]
    model = "examples.hil_tests.acc_rig:plant"   # function(io, **args) -> diagram
    args = { cut_in_s = 10.0 }

    [controller]
    kind = "in-process"         # in-process | process | device
    model = "examples.hil_tests.acc_rig:controller"
    period_s = 0.016

    [signals]
    ego_speed = "plant:car.v"               # a plant output port, or a parameter
    acc_throttle = "can:ACC_CMD.throttle"   # a DBC signal on the bus named can
    ecu_accel = "ecu:acc.accel_request"     # the in-process controller's port

Signal addresses: ``plant:<block>.<port or parameter>``, ``ecu:<block>.<port>`` (an
in-process controller only), ``<bus>:<MESSAGE>.<signal>``, ``serial:<port>.<field>`` and
``daq:<device>.<channel>`` (parsed, refused when a rig is built: not supported yet).

Diagnostics and calibration: ``[uds]`` and ``[xcp]`` name the client a test gets as
``rig.uds`` / ``rig.xcp`` (``client = "module:function"``, ``args``; ``{work_dir}``,
``{rig_dir}`` and ``{bus.<name>.*}`` filled in), e.g. :func:`hil.testing.clients.uds_client`
and :func:`hil.testing.clients.xcp_client`.  The controller serves them: a process by its
own command (``examples/acc_ecu.py --xcp``), an in-process controller by its
``[controller] services`` (:mod:`hil.testing.rig_loop`)::

    [controller]
    kind = "in-process"
    model = "examples.hil_tests.acc_rig:controller"
    period_s = 0.016
    services = ["examples.hil_tests.acc_rig:uds_server", "examples.hil_tests.acc_rig:xcp_slave"]

    [uds]
    client = "hil.testing.clients:uds_client"
    args = { config = "hil.diag.acc:client_config" }

    [xcp]
    client = "hil.testing.clients:xcp_client"
    args = { a2l = "{work_dir}/acc_ecu.a2l" }
Paths relative in the file (a DBC, a command's script) are relative to the file's folder;
``{python}``, ``{rig_dir}`` and ``{bus.<name>.channel}`` / ``{bus.<name>.interface}`` in
a command are filled in when the rig starts.

Every mistake is reported with the file, the key and what to write instead
(:class:`RigFileError`).  Limitations: one DBC per bus; YAML needs pyyaml; serial ports,
DAQ channels are read and checked but a rig with them is refused ("not supported yet");
a device controller is only parsed.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HILError

__all__ = ["RigFileError", "RigSpec", "BusSpec", "SignalRef", "load_rig", "parse_rig",
           "find_rig", "MODES"]

MODES = ("virtual", "realtime")
CONTROLLER_KINDS = ("in-process", "process", "device")
SOURCES = ("plant", "ecu", "serial", "daq")
_TOP = ("rig", "buses", "serial", "daq", "plant", "controller", "budgets", "signals",
        "uds", "xcp")


class RigFileError(HILError, ValueError):
    """A rig file that cannot be used: the message names the file, the key and the fix."""


@dataclass(frozen=True)
class SignalRef:
    """One mapped signal: ``source`` (plant, ecu, a bus name, serial, daq), the
    ``owner`` (block, message, port, device) and the ``item`` in it."""

    name: str
    source: str
    owner: str
    item: str

    @property
    def address(self) -> str:
        return f"{self.source}:{self.owner}.{self.item}"


@dataclass
class BusSpec:
    name: str
    interface: str
    channel: str
    dbc: str
    options: dict = field(default_factory=dict)


@dataclass
class RigSpec:
    """A rig file, checked (module docstring)."""

    name: str
    mode: str
    period_s: float
    path: Path | None
    buses: dict[str, BusSpec]
    plant: dict
    controller: dict
    budgets: dict
    signals: dict[str, SignalRef]
    serial: dict = field(default_factory=dict)
    daq: dict = field(default_factory=dict)
    uds: dict | None = None
    xcp: dict | None = None
    description: str = ""

    @property
    def folder(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()


def _err(where: str, key: str, msg: str) -> RigFileError:
    return RigFileError(f"rig file {where}: {key}: {msg}")


def _table(d: dict, key: str, where: str, required: bool = True) -> dict:
    v = d.get(key)
    if v is None:
        if required:
            raise _err(where, f"[{key}]", "missing; every rig file has one (see "
                       "docs/guides/hil-tests.md)")
        return {}
    if not isinstance(v, dict):
        raise _err(where, key, f"must be a table, got {type(v).__name__}")
    return v


def _str(d: dict, key: str, where: str, default: Any = ..., choices: tuple = ()) -> Any:
    v = d.get(key, default)
    if v is ...:
        raise _err(where, key, "missing")
    if v is not None and not isinstance(v, str):
        raise _err(where, key, f"must be a string, got {v!r}")
    if choices and v not in choices:
        raise _err(where, key, f"must be one of {', '.join(choices)}, got {v!r}")
    return v


def _positive(d: dict, key: str, where: str, default: Any = ...) -> Any:
    v = d.get(key, default)
    if v is ...:
        raise _err(where, key, "missing: a time in seconds > 0")
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
        raise _err(where, key, f"must be a number of seconds > 0, got {v!r}")
    return float(v)


def _module_fn(d: Any, key: Any, where: str) -> str:
    v = d[key] if isinstance(d, list) else _str(d, key, where)
    if not isinstance(v, str):
        raise _err(where, str(key), f"must be a string 'module:function', got {v!r}")
    mod, _, fn = v.partition(":")
    if not mod or not fn or not all(p.isidentifier() for p in mod.split(".") + [fn]):
        raise _err(where, key, f"must be 'module:function' (e.g. "
                   f"'examples.hil_tests.acc_rig:plant'), got {v!r}")
    return v


def parse_signal(name: str, text: Any, buses: dict, where: str) -> SignalRef:
    """``"plant:car.v"`` -> :class:`SignalRef` (module docstring)."""
    key = f"signals.{name}"
    if not name.isidentifier():
        raise _err(where, key, "a test name must be an identifier (letters, digits, _)")
    if not isinstance(text, str):
        raise _err(where, key, f"must be a string such as \"plant:car.v\", got {text!r}")
    source, sep, rest = text.partition(":")
    owner, dot, item = rest.rpartition(".")
    if not sep or not dot or not owner or not item:
        raise _err(where, key, f"{text!r} is not '<source>:<owner>.<item>' (e.g. "
                   "\"plant:car.v\", \"can:ACC_CMD.throttle\")")
    if source not in SOURCES and source not in buses:
        known = list(SOURCES) + list(buses)
        close = difflib.get_close_matches(source, known, n=1)
        raise _err(where, key, f"unknown source {source!r} in {text!r}: give one of "
                   f"{', '.join(known)} (a bus is declared under [buses.<name>])"
                   + (f"; did you mean {close[0]!r}?" if close else ""))
    return SignalRef(name, source, owner, item)


def _bus(name: str, d: Any, where: str) -> BusSpec:
    w = f"buses.{name}"
    if not isinstance(d, dict):
        raise _err(where, w, "must be a table with interface, channel and dbc")
    iface = _str(d, "interface", where + f" [{w}]")
    ch = d.get("channel", "auto")
    if not isinstance(ch, str | int):
        raise _err(where, f"{w}.channel", f"must be a string or a number, got {ch!r}")
    dbc = _str(d, "dbc", where + f" [{w}]")
    opts = {k: v for k, v in d.items() if k not in ("interface", "channel", "dbc")}
    return BusSpec(name, iface, str(ch), dbc, opts)


def _controller(d: dict, where: str) -> dict:
    kind = _str(d, "kind", where + " [controller]", choices=CONTROLLER_KINDS)
    out = dict(d)
    if kind == "in-process":
        out["model"] = _module_fn(d, "model", where + " [controller]")
        _positive(d, "period_s", where + " [controller]")
        services = d.get("services", [])
        if not isinstance(services, list):
            raise _err(where, "controller.services", "must be a list of 'module:function' "
                       f"(e.g. [\"examples.hil_tests.acc_rig:uds_server\"]), got {services!r}")
        for k in range(len(services)):
            _module_fn(services, k, where + " [controller] services")
    elif "services" in d:
        raise _err(where, "controller.services", "only for an in-process controller (a "
                   "process or a device serves UDS and XCP itself)")
    elif kind == "process":
        cmd = d.get("command")
        if not (isinstance(cmd, list) and cmd and all(isinstance(c, str) for c in cmd)):
            raise _err(where, "controller.command", f"must be a list of strings (the "
                       f"process's argv, e.g. [\"{{python}}\", \"acc_ecu.py\"]), got {cmd!r}")
        _str(d, "ready", where + " [controller]", default="READY")
    else:
        _str(d, "name", where + " [controller]", default="")
    return out


def parse_rig(data: dict, where: str = "<dict>", path: Path | None = None) -> RigSpec:
    """Check a rig file's contents (a dict as TOML gives it); see the module docstring."""
    unknown = [k for k in data if k not in _TOP]
    if unknown:
        close = difflib.get_close_matches(unknown[0], _TOP, n=1)
        raise _err(where, f"[{unknown[0]}]", f"unknown section; sections: {', '.join(_TOP)}"
                   + (f"; did you mean [{close[0]}]?" if close else ""))
    rig = _table(data, "rig", where)
    mode = _str(rig, "mode", where + " [rig]", choices=MODES)
    period = _positive(rig, "period_s", where + " [rig]")
    buses = {n: _bus(n, d, where) for n, d in _table(data, "buses", where, False).items()}
    for n in buses:
        if n in SOURCES:
            raise _err(where, f"buses.{n}", f"{n!r} is a signal source's name; name the bus "
                       "otherwise (e.g. can, can1)")
    plant = _table(data, "plant", where)
    _module_fn(plant, "model", where + " [plant]")
    args = plant.get("args", {})
    if not isinstance(args, dict):
        raise _err(where, "plant.args", f"must be a table of keyword arguments, got {args!r}")
    _str(plant, "solver", where + " [plant]", default="ab3")
    _positive(plant, "dt", where + " [plant]", default=None)
    controller = _controller(_table(data, "controller", where), where)
    budgets = _table(data, "budgets", where, False)
    if budgets:
        from ..verdict import Budget
        try:
            Budget(**budgets)
        except TypeError as e:
            raise _err(where, "[budgets]", f"{e}; the keys are hil.verdict.Budget's "
                       "(overruns, lateness_p99_us, stale_episodes, ...)") from None
        except ValueError as e:
            raise _err(where, "[budgets]", str(e)) from None
    sigs = _table(data, "signals", where)
    signals = {n: parse_signal(n, t, buses, where) for n, t in sigs.items()}
    serial = _table(data, "serial", where, False)
    for n, d in serial.items():
        if not isinstance(d, dict):
            raise _err(where, f"serial.{n}", "must be a table (port, baudrate, layout)")
        _str(d, "port", where + f" [serial.{n}]")
    for part in ("uds", "xcp"):
        if part in data:
            d = _table(data, part, where, False)
            _module_fn(d, "client", where + f" [{part}]")
            if not isinstance(d.get("args", {}), dict):
                raise _err(where, f"{part}.args", "must be a table of keyword arguments")
    daq = _table(data, "daq", where, False)
    for n, d in daq.items():
        if not isinstance(d, dict):
            raise _err(where, f"daq.{n}", "must be a table (driver, device, channels)")
        _str(d, "driver", where + f" [daq.{n}]")
    return RigSpec(name=_str(rig, "name", where + " [rig]", default=path.stem if path else
                             "rig"), mode=mode, period_s=period, path=path, buses=buses,
                   plant=plant, controller=controller, budgets=budgets, signals=signals,
                   serial=serial, daq=daq, uds=data.get("uds"), xcp=data.get("xcp"),
                   description=_str(rig, "description", where, default=""))


def load_rig(path: str | os.PathLike) -> RigSpec:
    """Read and check a rig file (``.toml``; ``.yaml``/``.yml`` with pyyaml)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise RigFileError(f"rig file {p}: cannot read it: {e}") from None
    if p.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise RigFileError(f"rig file {p}: YAML needs pyyaml (pip install pyyaml), or "
                               "write the rig file in TOML") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise RigFileError(f"rig file {p}: not valid YAML: {e}") from None
    elif p.suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise RigFileError(f"rig file {p}: not valid TOML: {e}") from None
    else:
        raise RigFileError(f"rig file {p}: give a .toml (or .yaml) file")
    if not isinstance(data, dict):
        raise RigFileError(f"rig file {p}: the file holds no table")
    return parse_rig(data, str(p), p.resolve())


def find_rig(name: str, start: Path, stop: Path | None = None) -> Path:
    """``name`` as a file, else ``rigs/<name>.toml`` (``.yaml``, ``.yml``) in ``start``
    or a folder above it (up to ``stop``)."""
    p = Path(name)
    if p.suffix in (".toml", ".yaml", ".yml") or os.sep in name:
        if p.is_file():
            return p
        raise RigFileError(f"--rig {name}: no such file")
    looked = []
    folder = start.resolve()
    while True:
        for ext in (".toml", ".yaml", ".yml"):
            cand = folder / "rigs" / f"{name}{ext}"
            if cand.is_file():
                return cand
        looked.append(str(folder / "rigs"))
        if stop is not None and folder == stop.resolve() or folder.parent == folder:
            break
        folder = folder.parent
    raise RigFileError(f"--rig {name}: no rig file {name}.toml in {', '.join(looked)}; "
                       "give a path to a rig file or put it in a rigs/ folder beside the "
                       "tests")
