"""Shared libraries compiled from generated C, cached by what made them.

:func:`shared_library` returns the path of the library built from a C source with given
flags.  The library's name holds a hash of the source, the flags and the compiler command
as given (``$CC``, default ``gcc``; with its arguments: ``CC="gcc -m64"`` as make and
setuptools take it), so a cached library is used

* without a compiler on ``PATH`` (the hash does not need it);
* from a read-only cache (it is only read);

and built on a miss into the first writable cache folder: ``$COSIM_CACHE_DIR``, else
``~/.cache/cosim``, else ``cosim-cache`` in the temporary folder.  The cache folders are
searched in that order; a file is written under a temporary name and renamed, so two
processes building the same library at once do not read half a file.

A library is loaded into the process, so a cache folder and a cached file are used only when
they are :func:`trusted`: owned by this user (or root) and writable by nobody else; another
local user cannot plant a library in the shared temporary folder (an untrusted folder is
passed over, for reading and for writing).

A missing compiler, a compiler that fails (its message kept) and no writable folder on a
miss raise :class:`~cosim.errors.BuildError`; the caller decides whether that falls back
to Python (the co-simulation master with ``compiled=None``) or stops the run.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shlex
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import BuildError

#: the flags of the generated C's libraries (``-ffp-contract=off``: no fused multiply-add,
#: so the arithmetic is NumPy's)
CFLAGS = ("-shared", "-fPIC", "-O2", "-std=c99", "-ffp-contract=off", "-Wall")


def compiler_command() -> list[str]:
    """``$CC`` split as a shell would (default ``["gcc"]``)."""
    cc = os.environ.get("CC") or "gcc"
    try:
        argv = shlex.split(cc)
    except ValueError as exc:
        raise BuildError(f"CC={cc!r} cannot be read as a command ({exc}); set CC to a "
                         "compiler with its arguments, e.g. CC='gcc -m64'") from None
    if not argv:
        raise BuildError("CC is set but empty; unset it (gcc) or name a C compiler")
    return argv


def cache_folders() -> list[Path]:
    """The cache folders, in the order they are searched."""
    env = os.environ.get("COSIM_CACHE_DIR")
    out = [Path(env)] if env else []
    return out + [Path.home() / ".cache" / "cosim", Path(tempfile.gettempdir()) / "cosim-cache"]


def library_name(stem: str, source: str, flags: tuple) -> str:
    """The cached file's name: ``stem``, then the hash of source, flags and compiler."""
    key = "\0".join([source, " ".join(flags), " ".join(compiler_command())])
    return f"{stem}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.so"


def shared_library(stem: str, source: str, flags: tuple, who: str) -> Path:
    """The library of ``source`` compiled with ``flags``: found in a cache folder, else
    compiled into the first writable one (module docstring); ``who`` names the caller in
    errors."""
    name = library_name(stem, source, flags)
    for folder in cache_folders():
        if (folder / name).is_file() and trusted(folder) and trusted(folder / name):
            return folder / name
    argv = compiler_command()
    exe = shutil.which(argv[0])
    if exe is None:
        raise BuildError(f"{who}: C compiler {argv[0]!r} not found (CC={' '.join(argv)!r}); "
                         "install gcc or set CC, or run the Python loop")
    folder = _writable_folder(who)
    import subprocess  # only on a miss: a cached library costs no process machinery
    with tempfile.TemporaryDirectory() as td:
        src = Path(td) / f"{stem}.c"
        src.write_text(source)
        tmp = Path(td) / name
        cmd = [exe, *argv[1:], *flags, str(src), "-o", str(tmp)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as exc:
            raise BuildError(f"{who}: the C compiler could not run ({' '.join(argv)}): "
                             f"{exc}") from None
        if proc.returncode != 0 or not tmp.is_file():
            said = (proc.stderr or proc.stdout).strip()[:2000] or "(no message)"
            raise BuildError(f"{who}: the C compiler failed ({' '.join(argv)}, exit status "
                             f"{proc.returncode}):\n{said}")
        part = folder / f"{name}.{os.getpid()}.part"
        shutil.copyfile(tmp, part)
        part.replace(folder / name)
    return folder / name


def trusted(path: Path) -> bool:
    """Owned by this user or root and not writable by group or others."""
    try:
        st = path.stat()
    except OSError:
        return False
    return st.st_uid in (os.getuid(), 0) and not st.st_mode & 0o022


def _writable_folder(who: str) -> Path:
    for folder in cache_folders():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK) and trusted(folder):
            return folder
    raise BuildError(f"{who}: no writable cache folder of this user for the compiled library "
                     "(tried " + ", ".join(str(f) for f in cache_folders()) + "; a folder "
                     "others can write to is not used); set COSIM_CACHE_DIR")


_loaded: dict = {}  #: ``(stem, $CC)`` -> the loaded library, or the BuildError of building it


def loaded_library(stem: str, source: str, flags: tuple, who: str,
                   setup: Callable[[Any], None]) -> Any:
    """The :func:`shared_library` of ``source`` loaded with ctypes (``setup(lib)`` declares
    its functions' types), once per ``$CC``; a :class:`BuildError` if it cannot be built or
    loaded (kept: the compiler runs once)."""
    key = (stem, os.environ.get("CC"))
    got = _loaded.get(key)
    if got is None:
        try:
            got = ctypes.CDLL(str(shared_library(stem, source, flags, who)))
        except BuildError as exc:
            got = exc
        except OSError as exc:  # a library that does not load (another platform's)
            got = BuildError(f"{who}: the compiled library does not load: {exc}")
        else:
            setup(got)
        _loaded[key] = got
    if isinstance(got, BuildError):
        raise got
    return got
