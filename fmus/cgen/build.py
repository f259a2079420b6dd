"""Compile the generated sources with gcc and pack the FMU archive.

The FMI headers come from ``fmus/cgen/include`` (copied from the FMI
standard, 2-clause BSD; fmpy ships the same files), so exporting needs a C
compiler but not fmpy.  The binary is built as one translation unit::

    gcc -shared -fPIC -O2 -std=c99 -ffp-contract=off -I<include> -I<sources> \\
        sources/model.c -o binaries/<platform>/<modelIdentifier>.so -lm

``-ffp-contract=off`` keeps the arithmetic the same as NumPy's (no fused
multiply-add), ``-lm`` is needed by hosts that do not already have libm loaded.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import zipfile
from pathlib import Path

from .model import FMUExportError

INCLUDE = Path(__file__).parent / "include"
TEMPLATES = Path(__file__).parent / "templates"  #: the FMI wrappers (fmi2.c, fmi3.c)
CFLAGS = ("-shared", "-fPIC", "-O2", "-std=c99", "-ffp-contract=off", "-Wall")


def platform_dir(fmi_version: str) -> tuple[str, str]:
    """``(binaries/<dir>, extension)`` for this machine, or raise for unsupported ones."""
    system, machine = platform.system(), platform.machine().lower()
    if system == "Linux" and machine in ("x86_64", "amd64"):
        return ("linux64" if fmi_version.startswith("2") else "x86_64-linux"), ".so"
    if system == "Linux" and machine in ("aarch64", "arm64") and fmi_version.startswith("3"):
        return "aarch64-linux", ".so"
    raise FMUExportError(
        f"export_fmu(): compiling a binary is supported on Linux x86_64 (FMI 2 and 3) and "
        f"aarch64 (FMI 3), not on {system} {machine}; export with compile=False for a source "
        "FMU and compile it with the importing tool (e.g. 'fmpy compile')")


def find_compiler(cc: str | None) -> str:
    cc = cc or os.environ.get("CC") or "gcc"
    path = shutil.which(cc)
    if path is None:
        raise FMUExportError(f"export_fmu(): C compiler {cc!r} not found; install gcc, set CC, "
                             "or export with compile=False (a source FMU)")
    return path


def compile_binary(root: Path, model_identifier: str, fmi_version: str, *, cc: str | None = None,
                   extra_flags: tuple[str, ...] = ()) -> Path:
    """Compile ``root/sources/model.c`` into ``root/binaries/<platform>/<id>.so``."""
    pdir, ext = platform_dir(fmi_version)
    out = root / "binaries" / pdir / f"{model_identifier}{ext}"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [find_compiler(cc), *CFLAGS, *extra_flags, f"-I{INCLUDE}", f"-I{root / 'sources'}",
           str(root / "sources" / "model.c"), "-o", str(out), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise FMUExportError(
            f"export_fmu(): compiling the generated C failed ({' '.join(cmd)}):\n"
            f"{proc.stderr.strip()[:4000]}\nIf a block's own C description is at fault, fix its "
            "c_model(); otherwise please report this with the sources (compile=False keeps "
            "them).")
    return out


def pack(root: Path, path: Path) -> Path:
    """Zip the directory ``root`` into the FMU ``path`` (forward slashes, sorted)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(root).as_posix())
    tmp.replace(path)
    return path
