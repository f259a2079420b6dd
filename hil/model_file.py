"""Loading a ``cosim hil run`` model file: import it, call its build function.

The convention (``build(io)``, ``HIL``, ``SIMULATION``, ``finish(run)``) is told in the
module docstring of :mod:`hil.cli`.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import traceback
from typing import TYPE_CHECKING, Any

from cosim.errors import CosimError

if TYPE_CHECKING:
    from .interfaces import Interfaces

__all__ = ["ModelError", "UsageError", "load_model", "call_build", "DEFAULT_FUNCTIONS",
           "HIL_KEYS"]

DEFAULT_FUNCTIONS = ("build", "diagram", "make_diagram")
HIL_KEYS = ("period_s", "duration_s", "overrun", "max_overruns", "max_catch_up",
            "degrade_after", "recover_after", "max_degrade", "spin_s", "priority", "cpus",
            "gc_mode", "timer_slack_ns", "realtime", "budget")


class ModelError(CosimError):
    """The model file cannot be loaded or its build function failed."""


class UsageError(CosimError):
    """Bad input before the run: exit status 2."""


def call_build(fn: Any, io: Any, path: str, name: str) -> Any:
    """Call the build function with the interfaces where it takes them (module docstring)."""
    params = list(inspect.signature(fn).parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.name == "io" for p in params):
        io_p = next(p for p in params if p.name == "io")
        return fn(io) if io_p.kind in positional and params[0] is io_p else fn(io=io)
    required = [p for p in params if p.default is p.empty and p.kind in positional]
    if not required:
        return fn()
    if len(required) == 1 and params[0] is required[0]:
        return fn(io)
    raise ModelError(f"{path}: {name}() has {len(required)} parameters without defaults "
                     f"({', '.join(p.name for p in required)}); a build function takes the "
                     "interfaces as 'io' (or nothing): def build(io): ...")


def _frame_in(exc: BaseException, path: str) -> str:
    """``path:line`` of the deepest traceback frame in the model file, else ``path``."""
    target = os.path.abspath(path)
    where = path
    for fs in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(fs.filename) == target:
            where = f"{path}:{fs.lineno}"
    return where


def _import_file(path: str) -> Any:
    if not os.path.isfile(path):
        raise ModelError(f"model file {path!r} not found; give the path of a .py file that "
                         "defines build(io)")
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(f"cosim_hil_model_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:
        sys.modules.pop(spec.name, None)
        raise ModelError(f"{_frame_in(exc, path)}: importing the model file failed: "
                         f"{type(exc).__name__}: {exc}; fix the file") from exc
    except BaseException:
        sys.modules.pop(spec.name, None)
        raise
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return mod


def load_model(path: str, function: str | None,
               io: Interfaces) -> tuple[Any, dict, dict, Any]:
    """Import the model file and call its build function: (Diagram or Simulator, HIL,
    SIMULATION, its ``finish`` function or None)."""
    mod = _import_file(path)
    funcs = {k: v for k, v in vars(mod).items()
             if inspect.isfunction(v) and v.__module__ == mod.__name__}
    if function is None:
        function = next((f for f in DEFAULT_FUNCTIONS if f in funcs), None)
    if function not in funcs:
        raise ModelError(f"{path}: no function {function or ' or '.join(DEFAULT_FUNCTIONS)!r}; "
                         f"functions in the file: {', '.join(funcs) or '(none)'}; define "
                         "build(io) or pass --function")
    hil = getattr(mod, "HIL", {})
    sim_defaults = getattr(mod, "SIMULATION", {})
    for name, d in (("HIL", hil), ("SIMULATION", sim_defaults)):
        if not isinstance(d, dict):
            raise ModelError(f"{path}: {name} must be a dict, not {type(d).__name__}")
    bad = [k for k in hil if k not in HIL_KEYS]
    if bad:
        raise ModelError(f"{path}: HIL has unknown key {bad[0]!r}; valid keys: "
                         f"{', '.join(HIL_KEYS)}")
    finish = funcs.get("finish")
    if finish is not None and len([p for p in inspect.signature(finish).parameters.values()
                                   if p.default is p.empty]) != 1:
        raise ModelError(f"{path}: finish() takes the run's end as its one parameter: "
                         "def finish(run): ...")
    fn = funcs[function]
    try:
        built = call_build(fn, io, path, function)
    except ModelError:
        raise
    except CosimError as exc:
        raise ModelError(f"{_frame_in(exc, path)}: {function}(): {exc}") from exc
    except Exception as exc:
        raise ModelError(f"{_frame_in(exc, path)}: {function}() failed: {type(exc).__name__}: "
                         f"{exc}; fix the model file (--traceback shows the traceback)") from exc
    from cosim.diagram import Diagram
    from cosim.simulator import Simulator
    if not isinstance(built, Diagram | Simulator):
        raise ModelError(f"{path}: {function}() returned {type(built).__name__}, not a Diagram "
                         "or a Simulator (return builder.build())")
    return built, dict(hil), dict(sim_defaults), finish
