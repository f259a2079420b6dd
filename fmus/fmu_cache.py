"""The FMU cache: an FMU file extracted once and its model description read once, found
again in every later process by the SHA-256 of the file.

Loading an FMU extracts its archive (:mod:`fmus.archive`) and reads its model description
(:mod:`fmus.description`: lxml, the FMI XML schema, fmpy's reader); in a fresh process
that is most of the time before the first step.  :func:`extract` keeps the extracted
files in a cache folder, under the file's hash, and :func:`description` keeps the
:class:`~fmus.model_info.FMUInfo` read from them (pickled) beside them, under a key of the
options it was read with and of the code that read it.  What is the same:

* the checks: the archive's (a cached entry was extracted by :func:`fmus.archive.
  extract_archive` under the same :class:`~fmus.archive.ArchiveLimits`: other limits,
  another entry) and the description's (its problems and notes are in the record, and
  :class:`~fmus.fmu_file.FMUFile` warns of them as after a fresh read); the warnings of
  the extraction are kept and given again;
* an FMU that changed: another hash, another entry;
* fmpy's ``ModelDescription`` (``FMUInfo.md``): read from the cached files when first
  asked for (the Scheduled Execution import and the SSP tools ask; the Co-Simulation and
  Model Exchange imports do not).

The folders are those of the compiled libraries (:func:`cosim.codegen.cache.cache_folders`:
``$COSIM_CACHE_DIR``, ``~/.cache/cosim``, ``cosim-cache`` in the temporary folder), under
``fmu/``.  An entry is used only if this user owns it and nobody else may write to it (the
FMU's binary is loaded from it), and only if every extracted file still has the size and
modification time it was extracted with (an FMU that writes into its own folder changes
them): otherwise that load extracts into a temporary folder of its own, as without the
cache.  An entry is written under a temporary name and renamed, so two processes never
read half of one; a folder that cannot be written is skipped, and with none writable the
FMU is extracted into a temporary folder.

After each new entry the least recently used ones beyond :data:`KEEP_ENTRIES` entries or
:data:`KEEP_BYTES` bytes are removed, but none used in the last :data:`IDLE_S` seconds.

Limitations: an entry is shared by every process that loads the FMU, so an FMU must not
rely on changes made to its folder by an earlier run (FMI asks FMUs to treat it as
read-only; one that changes a file gets a fresh folder each time, above); a process that
keeps an FMU loaded for more than :data:`IDLE_S` while others fill the cache may lose the
files it has not opened yet; ``rm -r ~/.cache/cosim/fmu`` is safe between runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import replace
from pathlib import Path

from cosim.codegen.cache import cache_folders

from .archive import DEFAULT_LIMITS, ArchiveLimits, ExtractedFMU, extract_fmu
from .description import read_description
from .errors import FMUWarning
from .model_info import FMUInfo

__all__ = ["description", "extract", "file_hash"]

_MANIFEST = "manifest.json"
_FILES = "files"
#: the pruning of the cache (:func:`_prune`, after each new entry): at most this many
#: entries and bytes are kept, the most recently used first ...
KEEP_ENTRIES = 256
KEEP_BYTES = 2 << 30
#: ... and no entry used in the last hour is removed
IDLE_S = 3600.0


def file_hash(path: str | os.PathLike) -> str:
    """The SHA-256 of the file at ``path`` (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _entry_name(digest: str, limits: ArchiveLimits) -> str:
    if limits == DEFAULT_LIMITS:
        return digest[:40]
    tag = hashlib.sha256(repr(limits).encode()).hexdigest()[:8]
    return f"{digest[:40]}-{tag}"


def _trusted(folder: Path) -> bool:
    """Whether ``folder`` is this user's and writable by nobody else (POSIX)."""
    if os.name != "posix":
        return True
    try:
        st = folder.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _valid(entry: Path) -> dict | None:
    """The manifest of a complete, unchanged, trusted ``entry`` (else None)."""
    if not _trusted(entry):
        return None
    try:
        manifest = json.loads((entry / _MANIFEST).read_text())
        root = entry / _FILES
        for rel, (size, mtime) in manifest["files"].items():
            st = os.stat(root / rel)
            if st.st_size != size or st.st_mtime_ns != mtime:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return manifest


def _used(entry: Path) -> None:
    """Mark ``entry`` used now (its modification time orders the pruning)."""
    try:
        os.utime(entry)
    except OSError:
        pass  # a read-only cache


def _prune(fmu_dir: Path) -> None:
    """Remove the least recently used entries beyond :data:`KEEP_ENTRIES` or
    :data:`KEEP_BYTES`, and what stopped processes left half made, but nothing used in
    the last :data:`IDLE_S` seconds (another process may be running it)."""
    now = time.time()
    entries = []
    for p in fmu_dir.iterdir():
        try:
            mtime = p.stat().st_mtime
        except OSError:
            continue
        if p.name.startswith("."):
            if now - mtime > IDLE_S:
                shutil.rmtree(p, ignore_errors=True)
        else:
            entries.append((mtime, p))
    entries.sort(reverse=True)
    total = 0
    for i, (mtime, p) in enumerate(entries):
        try:
            total += json.loads((p / _MANIFEST).read_text()).get("bytes", 0)
        except (OSError, ValueError, AttributeError):
            pass
        if (i >= KEEP_ENTRIES or total > KEEP_BYTES) and now - mtime > IDLE_S:
            trash = fmu_dir / f".removed-{p.name}-{os.getpid()}"
            try:
                p.rename(trash)  # out of sight at once, then deleted
            except OSError:
                continue
            shutil.rmtree(trash, ignore_errors=True)


def _warn_again(manifest: dict) -> None:
    for text in manifest.get("warnings", []):
        warnings.warn(text, FMUWarning, stacklevel=4)


def _folders() -> list[Path]:
    """The cache folders (:func:`cosim.codegen.cache.cache_folders`), absolute (an FMU gets the
    URI of its resources folder)."""
    return [Path(os.path.abspath(f)) for f in cache_folders()]


def _writable_fmu_folder() -> Path | None:
    for folder in _folders():
        fmu_dir = folder / "fmu"
        try:
            fmu_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError:
            continue
        if os.access(fmu_dir, os.W_OK) and _trusted(fmu_dir):
            return fmu_dir
    return None


def extract(path: str | os.PathLike, limits: ArchiveLimits | None = None) -> ExtractedFMU:
    """The FMU at ``path`` extracted: from the cache, else extracted into it (module
    docstring); a directory (an extracted FMU) is used as is, as by
    :func:`fmus.archive.extract_fmu`.  ``archive.cached`` says which folder it is in."""
    path = Path(path)
    if not path.is_file():
        return extract_fmu(path, limits=limits)  # a folder, or the error for a missing file
    limits = limits or DEFAULT_LIMITS
    name = _entry_name(file_hash(path), limits)
    stale = False
    for folder in _folders():
        entry = folder / "fmu" / name
        if entry.is_dir():
            manifest = _valid(entry)
            if manifest is not None:
                _used(entry)
                _warn_again(manifest)
                return _cached(entry, path)
            stale = True
    target = None if stale else _writable_fmu_folder()
    if target is None:  # a changed entry, or nowhere to write: a folder of this load's own
        return extract_fmu(path, limits=limits)
    return _extract_into(target, name, path, limits)


def _cached(entry: Path, source: Path) -> ExtractedFMU:
    archive = ExtractedFMU(entry / _FILES, source, owned=False)
    archive.cached = entry
    return archive


def _extract_into(target: Path, name: str, path: Path, limits: ArchiveLimits) -> ExtractedFMU:
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            extract_fmu(path, tmp / _FILES, limits=limits)
        said = [str(w.message) for w in caught if issubclass(w.category, FMUWarning)]
        for w in caught:  # the extraction's warnings, given as it gave them
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        files = {}
        for dirpath, _, names in os.walk(tmp / _FILES):
            for n in names:
                full = os.path.join(dirpath, n)
                st = os.stat(full)
                files[os.path.relpath(full, tmp / _FILES)] = [st.st_size, st.st_mtime_ns]
        (tmp / _MANIFEST).write_text(json.dumps({
            "source": str(path), "files": files, "warnings": said,
            "bytes": sum(size for size, _ in files.values())}))
        try:
            tmp.rename(target / name)
        except OSError:  # another process made the entry first: use that one
            shutil.rmtree(tmp, ignore_errors=True)
            if _valid(target / name) is None:
                return extract_fmu(path, limits=limits)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _prune(target)
    return _cached(target / name, path)


# ------------------------------------------------------------ the model description
_READER: list = []


def _reader_stamp() -> str:
    """A hash of what reads a description: the modules that build the record, the
    versions of fmpy and lxml, Python's (a change of any makes a new record)."""
    if not _READER:
        from cosim import units
        from cosim.versions import installed_versions

        from . import description as d
        from . import description_rules, fmi_units, model_info
        h = hashlib.sha256(sys.version.encode())
        for mod in (d, description_rules, fmi_units, model_info, units, sys.modules[__name__]):
            with open(mod.__file__, "rb") as fh:
                h.update(fh.read())
        h.update(repr(sorted(installed_versions(("fmpy", "lxml")).items())).encode())
        _READER.append(h.hexdigest())
    return _READER[0]


def _info_file(entry: Path, label: str, validate: str, units: dict | None,
               port_names: dict | None) -> Path:
    key = repr((label, validate, sorted((units or {}).items()),
                sorted((port_names or {}).items()), _reader_stamp()))
    return entry / f"info-{hashlib.sha256(key.encode()).hexdigest()[:24]}.pickle"


def description(archive: ExtractedFMU, label: str, validate: str = "warn",
                units: dict | None = None, port_names: dict | None = None) -> FMUInfo:
    """:func:`fmus.description.read_description` of ``archive``, read once per FMU and
    options when ``archive`` is a cache entry (module docstring)."""
    entry = getattr(archive, "cached", None)
    if entry is None:
        return read_description(archive.root, label, validate, units, port_names)
    file = _info_file(entry, label, validate, units, port_names)
    try:
        with open(file, "rb") as fh:
            info = pickle.load(fh)
        if isinstance(info, FMUInfo):
            return info
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError,
            TypeError, ValueError):
        pass  # none yet, or one an older version wrote: read it
    info = read_description(archive.root, label, validate, units, port_names)
    record = replace(info, _md=None, md_root=str(archive.root))
    try:
        fd, part = tempfile.mkstemp(prefix=f".{file.name}.", dir=entry)
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(record, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(part, file)
    except OSError:
        pass  # a read-only cache: the next process reads it again
    return info
