"""Run pytest in a child process with the HIL plugin (hil.pytest_plugin): through its
``pytest11`` entry point when the installed cosim has it, else with ``-p``."""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def plugin_installed() -> bool:
    return any(e.name == "cosim_hil" for e in importlib.metadata.entry_points(group="pytest11"))


def plugin_args() -> list[str]:
    return [] if plugin_installed() else ["-p", "hil.pytest_plugin"]


def run_pytest(*args: str, cwd: pathlib.Path = ROOT, plugin: bool = True,
               path: list[str] = (), timeout: float = 600.0) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([*path, str(ROOT), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
           *(plugin_args() if plugin else []), *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
