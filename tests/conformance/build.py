"""Build the Modelica Reference FMUs (vendored in ``reference_fmus/``) with their own CMake.

The sources are the FMI project's conformance set (2-Clause BSD, ``reference_fmus/LICENSE.txt``),
upstream commit 1258711 (after tag v0.0.41).  :func:`build` runs upstream's CMake once per FMI
version into a folder of the caller's and returns ``{model: path of the .fmu}``; the archives are
exactly what upstream's build writes (Roberts with its duplicated ``extra`` entry included).

Used by the conformance tests (``tests/conformance``) and ``python -m bench fmi``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "reference_fmus"

#: The models upstream's CMake builds for each FMI version.
MODELS = {2: ("BouncingBall", "Dahlquist", "Feedthrough", "Resource", "Stair", "VanDerPol"),
          3: ("BouncingBall", "Clocks", "Dahlquist", "Feedthrough", "Resource", "Roberts",
              "Stair", "StateSpace", "VanDerPol")}


class BuildUnavailable(RuntimeError):
    """cmake or a C compiler is missing: the conformance cases cannot run here."""


def tools_missing() -> str | None:
    """Why the FMUs cannot be built here (``None``: they can)."""
    if shutil.which("cmake") is None:
        return "cmake is not installed (apt-get install cmake)"
    if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
        return "no C compiler (apt-get install gcc)"
    return None


def build(version: int, dest: str | os.PathLike) -> dict[str, Path]:
    """Configure and build the FMI ``version`` (2 or 3) FMUs in ``dest``; ``{model: .fmu}``.

    Raises :class:`BuildUnavailable` without cmake or a compiler, ``RuntimeError`` with the
    build's output when it fails.
    """
    why = tools_missing()
    if why:
        raise BuildUnavailable(why)
    dest = Path(dest)
    out = dest / "fmus"
    want = {m: out / f"{m}.fmu" for m in MODELS[version]}
    dest.mkdir(parents=True, exist_ok=True)
    # one build at a time (test processes run side by side: pytest -n); the others wait
    # for it and take its FMUs (an .fmu seen without the lock could be half written)
    with open(dest / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(p.exists() for p in want.values()):
            return want
        return _build(version, dest, want)


def _build(version: int, dest: Path, want: dict) -> dict[str, Path]:
    """The build itself, under :func:`build`'s lock."""
    out = dest / "fmus"
    # gcc 12 flags a strncpy in Resource's FMI 3 build; upstream builds with -Werror
    flags = "-Wno-error=stringop-truncation -Wno-stringop-truncation"
    cmds = [["cmake", "-S", str(SOURCES), "-B", str(dest), f"-DFMI_VERSION={version}",
             "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_C_FLAGS={flags}"],
            ["cmake", "--build", str(dest), "--parallel", str(os.cpu_count() or 2)]]
    for cmd in cmds:
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError(f"building the Reference FMUs (FMI {version}) failed: "
                               f"{' '.join(cmd)}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    missing = [m for m, p in want.items() if not p.exists()]
    if missing:
        raise RuntimeError(f"the Reference FMUs build (FMI {version}) made no "
                           f"{', '.join(missing)} in {out}")
    return want


def build_all(cache: str | os.PathLike) -> dict | None:
    """``{(fmi_version, model): .fmu}`` of every FMI version built under ``cache``
    (``fmi2/``, ``fmi3/``), or None where they cannot be built (no cmake or compiler)."""
    refs: dict = {}
    try:
        for v in MODELS:
            refs.update({(v, m): p for m, p in build(v, Path(cache) / f"fmi{v}").items()})
    except BuildUnavailable:
        return None
    return refs


def reference_csv(model: str) -> Path:
    """Upstream's ``<Model>_out.csv`` (a Co-Simulation result at the FMU's own fixed step)."""
    return SOURCES / model / f"{model}_out.csv"
