"""Out-of-process FMUs: a child process owns the instance, a watchdog times every call.

A third-party FMU can hang inside a step (a ``doStep`` cannot be interrupted
from Python) or crash the process (a segfault in its C code).
:class:`RemoteDriver` has the API of a driver (the protocol
:data:`fmus.driver.DRIVER_API`, from which its forwarding is derived), but every
call is sent through a pipe to a child process that holds the real driver.
The parent waits at most ``timeout_s`` for the answer; if none comes it kills
the child and raises :class:`~fmus.errors.FMUTimeoutError`; if the child dies
(segfault, ``abort``) it raises :class:`~fmus.errors.FMUCrashError` with the
signal.  The host never goes down with the FMU, and the block or subsystem
that owns the instance starts a fresh child for its next run.

The hot paths (:meth:`~fmus.driver_cs.CoSimulationDriver.cs_step`,
:meth:`~fmus.driver_me.ModelExchangeDriver.me_eval`) are one round trip each (measured: a CS step
costs about 0.15 ms instead of 0.0075 ms in process; ``python -m bench fmi``, case
``cs/out-of-process``), so the mode suits Co-Simulation FMUs well and Model Exchange FMUs only where
robustness matters more than speed.

The child is a fresh interpreter (``python -c``, about 0.3-1 s to start) that
talks over a socket pair: it inherits nothing from the host's state and, unlike
``multiprocessing``'s spawn, never re-imports the host's ``__main__``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from .driver import DRIVER_API, DriverSpec, open_driver
from .errors import FMUCallError, FMUCrashError, FMUError, FMUTimeoutError

__all__ = ["RemoteDriver"]

_FMI_NAMES = {"do_step": "doStep", "cs_step": "doStep (with set/get of inputs and outputs)",
              "me_eval": "setTime/setContinuousStates/getDerivatives/getEventIndicators",
              "instantiate": "instantiate", "enter_initialization": "enterInitializationMode",
              "exit_initialization": "exitInitializationMode", "event_iteration":
              "newDiscreteStates/updateDiscreteStates", "get_state": "getFMUstate",
              "set_state": "setFMUstate", "reset": "reset", "terminate": "terminate"}


_BOOT = ("import json, os, sys; sys.path[:0] = json.loads(os.environ['COSIM_FMU_SYS_PATH']); "
         "from fmus.remote import _child_main; _child_main(int(sys.argv[1]))")


def _child_main(fd: int) -> None:
    """Entry point of the child interpreter: receive the spec, then serve."""
    conn = Connection(fd)
    spec, log_calls = conn.recv()
    _serve(conn, spec, log_calls)


def _serve(conn: Any, spec: DriverSpec, log_calls: bool) -> None:
    """Child process: run a driver (:func:`~fmus.driver.open_driver`) on requests from
    ``conn`` until ``free``."""
    lines: list[str] = []
    try:
        drv = open_driver(spec, call_log=lines.append if log_calls else None)
    except Exception as exc:  # noqa: BLE001 - report and end
        conn.send(("err", exc, []))
        return
    conn.send(("ok", None, []))
    states: dict[int, Any] = {}
    next_id = 0
    while True:
        try:
            name, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if name == "get_state":  # into: the id of a state to overwrite (Driver.get_state)
                into = states.get(args[0]) if args and args[0] is not None else None
                handle = drv.get_state(into)
                if into is not None and handle is into:
                    result: Any = args[0]
                else:
                    next_id += 1
                    states[next_id] = handle
                    result = next_id
            elif name == "set_state":
                drv.set_state(states[args[0]])
                result = None
            elif name == "free_state":
                h = states.pop(args[0], None)
                if h is not None:
                    drv.free_state(h)
                result = None
            elif name == "serialize_state":
                result = drv.serialize_state(states[args[0]])
            elif name == "deserialize_state":
                next_id += 1
                states[next_id] = drv.deserialize_state(args[0])
                result = next_id
            else:
                result = getattr(drv, name)(*args)
            reply = ("ok", result, lines[:])
        except Exception as exc:  # noqa: BLE001 - sent to the parent
            reply = ("err", exc, lines[:])
        lines.clear()
        try:
            conn.send(reply)
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable exception
            conn.send(("err", FMUCallError(f"{type(exc).__name__}: {exc}"), []))
        if name == "free":
            return


class RemoteDriver:
    """A driver in a child process, with a watchdog per call.

    Every call of the driver protocol (:data:`fmus.driver.DRIVER_API`) is forwarded;
    the methods written out here also keep the time for messages or tolerate a dead
    child.

    Parameters
    ----------
    spec : DriverSpec
    timeout_s : float or None
        Longest wait for any one call (``None``: no watchdog).
    call_log : callable, optional
        Receives the child's FMI call log lines.
    startup_timeout_s : float
        Longest wait for the child to start and load the FMU.
    """

    def __init__(self, spec: DriverSpec, timeout_s: float | None = 10.0,
                 call_log: Callable[[str], Any] | None = None,
                 startup_timeout_s: float = 60.0) -> None:
        self.spec = spec
        self.timeout_s = timeout_s
        self.call_log = call_log
        self.label = f"FMU '{spec.label}' instance '{spec.instance_name}'"
        mine, theirs = socket.socketpair()
        env = dict(os.environ, COSIM_FMU_SYS_PATH=json.dumps([p for p in sys.path if p]))
        try:
            self._proc = subprocess.Popen([sys.executable, "-c", _BOOT, str(theirs.fileno())],
                                          pass_fds=[theirs.fileno()], env=env)
        finally:
            theirs.close()
        self._conn = Connection(mine.detach())
        self._dead = False
        self.time: float | None = None
        self._conn.send((spec, call_log is not None))
        self._wait("start", max(startup_timeout_s, timeout_s or 0.0))

    @property
    def pid(self) -> int | None:
        return self._proc.pid

    # ------------------------------------------------------------- plumbing
    def _kill(self) -> None:
        self._dead = True
        if self._proc.poll() is None:
            self._proc.kill()
        try:
            self._proc.wait(5.0)
        except subprocess.TimeoutExpired:
            pass
        try:
            self._conn.close()
        except OSError:
            pass

    def _crash(self, name: str) -> FMUCrashError:
        try:
            self._proc.wait(5.0)
        except subprocess.TimeoutExpired:
            pass
        code = self._proc.returncode
        how = f"exit code {code}"
        if code is not None and code < 0:
            try:
                how = f"signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"signal {-code}"
        self._kill()
        fname = _FMI_NAMES.get(name, name)
        return FMUCrashError(
            f"{self.label}: the process running the FMU died during {fname} ({how}); the "
            "host is unaffected; the run stops here and the next run starts a fresh "
            "instance (check the FMU's inputs and parameters, or report it to its supplier)",
            fname, "crash", self.time)

    def _wait(self, name: str, timeout: float | None) -> Any:
        try:
            ready = self._conn.poll(timeout)
        except (EOFError, OSError):
            raise self._crash(name) from None
        if not ready:
            pid = self._proc.pid
            self._kill()
            fname = _FMI_NAMES.get(name, name)
            when = f" at t = {self.time:.9g} s" if self.time is not None else ""
            raise FMUTimeoutError(
                f"{self.label}: {fname}{when} did not return within {timeout:g} s "
                f"(out-of-process watchdog); the FMU's process (pid {pid}) was killed; the "
                "run stops here and the next run starts a fresh instance (raise timeout_s "
                "if the FMU is only slow)", fname, "timeout", self.time)
        try:
            status, result, lines = self._conn.recv()
        except (EOFError, OSError):
            raise self._crash(name) from None
        if self.call_log is not None:
            for line in lines:
                self.call_log(line)
        if status == "err":
            if isinstance(result, FMUError):
                raise result
            raise FMUCallError(f"{self.label}: {name} failed in the FMU's process: "
                               f"{type(result).__name__}: {result}", name, "error", self.time)
        return result

    def _call(self, name: str, *args: Any) -> Any:
        if self._dead:
            raise FMUCrashError(f"{self.label}: the FMU's process is gone (killed or crashed "
                                "earlier); start a new run", name, "crash", self.time)
        try:
            self._conn.send((name, args))
        except (BrokenPipeError, EOFError, OSError):
            raise self._crash(name) from None
        return self._wait(name, self.timeout_s)

    # ------------------------------------------------------ the driver protocol
    def free(self) -> None:
        if self._dead:
            return
        try:
            self._call("free")
        except FMUError:
            pass
        self._kill()

    def enter_initialization(self, t0: float, tolerance: float | None = None,
                             stop: float | None = None) -> None:
        self.time = t0
        self._call("enter_initialization", t0, tolerance, stop)

    def do_step(self, t: float, h: float, no_set_prior: bool = True) -> tuple:
        self.time = t
        return self._call("do_step", t, h, no_set_prior)

    def cs_step(self, t: float, h: float, no_set_prior: bool, sets: list, derivs: list,
                out_keys: list, intermediate: tuple | None = None) -> tuple:
        self.time = t
        return self._call("cs_step", t, h, no_set_prior, sets, derivs, out_keys, intermediate)

    def me_eval(self, t: float | None, x: list | None, sets: list, derivatives: bool,
                indicators: bool, out_keys: list) -> tuple:
        if t is not None:
            self.time = t
        return self._call("me_eval", t, x, sets, derivatives, indicators, out_keys)

    def set_time(self, t: float) -> None:
        self.time = t
        self._call("set_time", t)

    def free_state(self, state: Any) -> None:
        if not self._dead:
            try:
                self._call("free_state", state)
            except FMUError:
                pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in _FORWARDED:
            raise AttributeError(name)

        def call(*args: Any) -> Any:
            return self._call(name, *args)
        call.__name__ = name
        return call


#: The calls forwarded to the child: the driver protocol, nothing more.
_FORWARDED = frozenset(DRIVER_API)
