"""The versions of installed packages and the platform, for the provenance of results.

Read cheaply, because every first run in a process records them: importing
``importlib.metadata`` and searching with it costs 10-30 ms, and ``platform.platform()``
runs ``uname -p`` in a child process on Linux (~13 ms), both more than a compiled
co-simulation of 10 000 macro steps.

:func:`installed_version` takes the version from the name of the distribution's
``<name>-<version>.dist-info`` folder (the wheel format writes it there, as in its
``METADATA``), searching ``sys.path`` in order as ``importlib.metadata`` does; from an
``.egg-info`` folder (a source checkout installed in development mode) it reads the
``Version:`` header of its ``PKG-INFO``.  :func:`platform_text` is ``platform.platform()`` without
the processor on Linux (``uname -p`` says ``unknown`` or the machine there, which
``platform.platform()`` leaves out too), ``platform.platform()`` elsewhere.
"""

from __future__ import annotations

import os
import re
import sys

__all__ = ["installed_version", "installed_versions", "package_versions", "platform_text"]

_SEP = re.compile(r"[-_.]+")


def _normalized(name: str) -> str:
    return _SEP.sub("_", name).lower()


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name`` (None: not installed)."""
    return installed_versions((name,))[name]


_READ: dict = {}  # (names, sys.path) -> (the folders' modification times, the versions)


def _stamp(entry: str) -> int | None:
    try:
        return os.stat(entry or ".").st_mtime_ns
    except OSError:
        return None


def installed_versions(names: tuple) -> dict:
    """``{name: installed_version(name)}``, reading each folder of ``sys.path`` once; read
    again only when ``sys.path`` or one of its folders changed since (an installation adds
    or renames a metadata folder, which changes the folder's modification time)."""
    key = (tuple(names), tuple(sys.path))
    stamp = tuple(_stamp(e) for e in sys.path)
    kept = _READ.get(key)
    if kept is not None and kept[0] == stamp:
        return dict(kept[1])
    out = _read_versions(names)
    _READ[key] = (stamp, dict(out))
    return out


def _read_versions(names: tuple) -> dict:
    want: dict = {}
    for n in names:
        want.setdefault(_normalized(n), []).append(n)
    out: dict = dict.fromkeys(names)
    for entry in sys.path:
        if not want:
            break
        try:
            folders = os.listdir(entry or ".")
        except OSError:  # a zip file, a path hook, a missing folder
            continue
        for folder in folders:
            stem, dot, kind = folder.rpartition(".")
            if kind not in ("dist-info", "egg-info") or not dot:
                continue
            dist, _, version = stem.partition("-")
            asked = want.pop(_normalized(dist), None)
            if asked is None:
                continue  # not asked for, or found in an earlier folder
            found = version if kind == "dist-info" and version else \
                _header_version(os.path.join(entry or ".", folder))
            out.update(dict.fromkeys(asked, found))
    return out


def _header_version(folder: str) -> str | None:
    """The ``Version:`` header of a metadata folder's ``METADATA`` or ``PKG-INFO``."""
    for file in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(folder, file), encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        break  # the headers end at the first empty line
                    if line.startswith("Version:"):
                        return line[len("Version:"):].strip()
        except OSError:
            continue
    return None


def platform_text() -> str:
    """``platform.platform()``, without its child process on Linux (module docstring)."""
    import platform
    if not sys.platform.startswith("linux"):
        return platform.platform()
    u = os.uname()
    libc, libc_version = platform.libc_ver()  # os.confstr: no file read, no process
    text = "-".join(x.strip() for x in (u.sysname, u.release, u.machine, "with",
                                        libc + libc_version) if x)
    for bad in ' /\\:;"()':
        text = text.replace(bad, "_" if bad == " " else "-")
    text = text.replace("unknown", "")
    while "--" in text:
        text = text.replace("--", "-")
    return text.rstrip("-")


def package_versions(names: tuple = ("cosim", "numpy", "scipy")) -> dict:
    """``python``, ``platform`` and the version of each distribution in ``names``."""
    return {"python": sys.version.split()[0], "platform": platform_text(),
            **installed_versions(tuple(names))}
