"""Safe extraction of FMU archives and the platform binary lookup.

An FMU is a ZIP file; it comes from a tool we did not write, so it is treated
as untrusted input.  :func:`extract_fmu` refuses, with the entry name and the
rule in the message:

* a file that is not a ZIP archive, or a truncated/corrupt one (CRC errors);
* entries with absolute paths, drive letters, ``..`` components, NUL bytes,
  symbolic links, device files or encryption;
* two entries of one name with different content (ambiguous: tools may extract
  either).  Two entries of one name with *identical* content (upstream's
  Reference FMU ``Roberts.fmu`` has its ``extra/`` folder twice) are extracted
  once, with an :class:`~fmus.errors.FMUWarning` (fmpy extracts them silently);
  "identical" is compared byte for byte, not trusted from the CRC;
* more than ``max_files`` entries, an entry larger than ``max_file_bytes``, more
  than ``max_total_bytes`` in all, or a compression ratio above ``max_ratio``
  (zip bombs).  Sizes are counted while copying, never trusted from the
  headers;
* an archive without ``modelDescription.xml`` at its root.

Every extracted path is checked to resolve inside the destination directory.
The directory is removed when the returned :class:`ExtractedFMU` is garbage
collected (or on :meth:`ExtractedFMU.cleanup`).

:func:`platform_binary` finds the shared library for this platform (FMI 2
``binaries/linux64/<id>.so``, FMI 3 ``binaries/x86_64-linux/<id>.so``) and says
which platforms the FMU has when ours is missing.  :func:`check_binary` then
reads it without loading it (no code of the FMU runs): on Linux, an ELF shared
library of this machine's word size and architecture that exports every FMI
function fmpy binds for the interface; and whether the instantiation token
appears in it (then a token mismatch is ruled out without instantiating).

Limitations: the symbol and architecture checks are ELF only (on Windows and
macOS only the file's presence is checked); a library whose section headers
are stripped is not checked for symbols; missing libraries the binary depends
on are found only when it is loaded.
"""

from __future__ import annotations

import os
import platform
import shutil
import stat
import struct
import sys
import tempfile
import warnings
import weakref
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import FMUArchiveError, FMUBinaryError, FMUError, FMUWarning

__all__ = ["ArchiveLimits", "BinaryFacts", "ExtractedFMU", "check_binary", "extract_archive",
           "extract_fmu", "platform_binary", "platform_names"]


@dataclass(frozen=True)
class ArchiveLimits:
    """Limits checked while extracting (defaults suit real FMUs with large resources)."""

    max_files: int = 20_000
    max_file_bytes: int = 1 << 30          # 1 GiB per entry
    max_total_bytes: int = 2 << 30         # 2 GiB in all
    max_ratio: float = 1000.0              # uncompressed / compressed, entries > 1 MiB


DEFAULT_LIMITS = ArchiveLimits()


class ExtractedFMU:
    """A directory holding an extracted FMU; removed when this object dies (``owned``).
    ``cached``: the entry of the FMU cache it is in (:mod:`fmus.fmu_cache`), or None."""

    def __init__(self, root: Path, source: Path, owned: bool) -> None:
        self.root = Path(root)
        self.source = Path(source)
        self.cached: Path | None = None
        self._finalizer = (weakref.finalize(self, shutil.rmtree, str(self.root), True)
                           if owned else None)

    def cleanup(self) -> None:
        """Remove the directory now (instances loaded from it must be freed first)."""
        if self._finalizer is not None:
            self._finalizer()

    def __fspath__(self) -> str:
        return str(self.root)

    def __repr__(self) -> str:
        return f"<ExtractedFMU {self.source.name} in {self.root}>"


def _fail(path: Path, what: str, hint: str = "") -> FMUArchiveError:
    msg = f"FMU '{path}': {what}"
    return FMUArchiveError(msg + (f"; {hint}" if hint else ""))


def _check_name(path: Path, info: zipfile.ZipInfo, _fail: Any = _fail) -> str:
    """The entry's relative POSIX path, or an error naming the broken rule."""
    raw = info.filename
    if "\x00" in raw:
        raise _fail(path, f"archive entry {raw!r} contains a NUL byte (unsafe path)")
    name = raw.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or name.startswith("//"):
        raise _fail(path, f"archive entry {raw!r} has an absolute path (unsafe: it would be "
                          "written outside the extraction directory)",
                    "an FMU's entries are relative to its root")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise _fail(path, f"archive entry {raw!r} contains '..' (path traversal: it would be "
                          "written outside the extraction directory)",
                    "refusing to extract it; ask the FMU's supplier for a clean archive")
    mode = info.external_attr >> 16
    if mode and stat.S_ISLNK(mode):
        raise _fail(path, f"archive entry {raw!r} is a symbolic link (unsafe: it may point "
                          "outside the extraction directory)")
    if mode and (stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)
                 or stat.S_ISSOCK(mode)):
        raise _fail(path, f"archive entry {raw!r} is a device, FIFO or socket, not a file")
    if info.flag_bits & 0x1:
        raise _fail(path, f"archive entry {raw!r} is encrypted", "archives cannot be encrypted")
    return "/".join(parts)


def extract_fmu(path: str | os.PathLike, dest: str | os.PathLike | None = None,
                limits: ArchiveLimits | None = None) -> ExtractedFMU:
    """Extract the FMU at ``path`` safely (see the module docstring).

    Parameters
    ----------
    path : path-like
        The ``.fmu`` file, or an already extracted FMU directory (used as is).
    dest : path-like, optional
        An empty directory to extract into (default: a new temporary directory,
        removed with the returned object).
    limits : ArchiveLimits, optional
    """
    path = Path(path)
    if path.is_dir():
        if not (path / "modelDescription.xml").is_file():
            raise _fail(path, "directory has no modelDescription.xml",
                        "give the .fmu file or the directory it was extracted to")
        return ExtractedFMU(path, path, owned=False)
    if not path.exists():
        raise FMUArchiveError(f"FMU '{path}': no such file")
    if not path.is_file():
        raise _fail(path, "is not a regular file")
    return extract_archive(path, dest, limits, root_file="modelDescription.xml", fail=_fail,
                           not_zip_hint="an FMU is a ZIP file with modelDescription.xml at its "
                           "root; the file is corrupt, truncated or not an FMU",
                           prefix="cosim_fmu_", what="an FMU")


def _same_content(zf: zipfile.ZipFile, a: zipfile.ZipInfo, b: zipfile.ZipInfo,
                  limits: ArchiveLimits) -> bool:
    """Whether two entries hold the same bytes (sizes and CRCs first, then the data)."""
    if a.is_dir() or b.is_dir():
        return a.is_dir() and b.is_dir()
    if a.file_size != b.file_size or a.CRC != b.CRC:
        return False
    if a.file_size > limits.max_file_bytes:
        return False  # refused as too large when extracted anyway
    with zf.open(a) as fa, zf.open(b) as fb:
        while True:
            ca, cb = fa.read(1 << 20), fb.read(1 << 20)
            if ca != cb:
                return False
            if not ca:
                return True


def extract_archive(path: Path, dest: str | os.PathLike | None, limits: ArchiveLimits | None,
                    *, root_file: str, fail: Any, not_zip_hint: str, prefix: str,
                    what: str, warning: type[Warning] = FMUWarning) -> ExtractedFMU:
    """Extract the ZIP archive ``path`` by the rules of the module docstring, requiring
    ``root_file`` at its root; errors are made by ``fail(path, what, hint)`` (the
    FMU and the SSP extraction share this), duplicated entries of identical content are
    reported as a ``warning``."""
    _fail = fail
    limits = limits or DEFAULT_LIMITS
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise _fail(path, f"is not a ZIP archive ({exc})", not_zip_hint) from None
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_files:
            raise _fail(path, f"has {len(infos)} entries, more than the limit of "
                              f"{limits.max_files}", "raise ArchiveLimits.max_files if it is "
                              "genuine")
        names: dict[str, zipfile.ZipInfo] = {}
        twice: list[str] = []
        for info in infos:
            rel = _check_name(path, info, _fail)
            if not rel:
                continue
            if rel in names:
                try:
                    same = _same_content(zf, names[rel], info, limits)
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
                    raise _fail(path, f"archive is corrupt ({type(exc).__name__}: {exc})",
                                "the file is truncated or damaged; get a fresh copy") from None
                if not same:
                    raise _fail(path, f"archive has two entries named {rel!r} with different "
                                      "content (ambiguous: tools may extract either)",
                                "ask the FMU's supplier for an archive with one entry per name")
                if not info.is_dir():
                    twice.append(rel)
                continue
            names[rel] = info
        if twice:
            more = f" and {len(twice) - 3} more" if len(twice) > 3 else ""
            warnings.warn(f"{what.split()[-1]} '{path.name}': the archive holds "
                          f"{', '.join(repr(n) for n in twice[:3])}{more} twice with identical "
                          "content (a packaging slip of the exporting tool); one copy is "
                          "extracted", warning, stacklevel=4)
        if root_file not in names:
            top = sorted({n.split("/")[0] for n in names})[:8]
            hint = ""
            nested = [n for n in names if n.endswith("/" + root_file)]
            if nested:
                hint = (f"it is in {nested[0]!r}: the archive was zipped with its folder; zip "
                        "the folder's contents instead")
            raise _fail(path, f"archive has no {root_file} at its root (top-level "
                              f"entries: {', '.join(top) or 'none'})", hint or
                        f"this is not {what}")
        owned = dest is None
        root = Path(tempfile.mkdtemp(prefix=f"{prefix}{path.stem[:40]}_")) if owned \
            else Path(dest)
        root.mkdir(parents=True, exist_ok=True)
        result = ExtractedFMU(root, path, owned=owned)
        real_root = os.path.realpath(root)
        total = 0
        try:
            for rel, info in names.items():
                target = os.path.realpath(os.path.join(real_root, *rel.split("/")))
                if os.path.commonpath([real_root, target]) != real_root:
                    raise _fail(path, f"archive entry {info.filename!r} resolves outside the "
                                      "extraction directory")
                if info.is_dir():
                    os.makedirs(target, exist_ok=True)
                    continue
                if info.file_size > limits.max_file_bytes:
                    raise _fail(path, f"archive entry {rel!r} declares {info.file_size} "
                                      f"bytes, more than the limit of {limits.max_file_bytes}")
                os.makedirs(os.path.dirname(target), exist_ok=True)
                written = 0
                with zf.open(info) as src, open(target, "wb") as out:
                    while True:
                        chunk = src.read(1 << 20)
                        if not chunk:
                            break
                        written += len(chunk)
                        total += len(chunk)
                        if written > limits.max_file_bytes or written > info.file_size:
                            raise _fail(path, f"archive entry {rel!r} expands beyond its "
                                              "declared or allowed size (zip bomb?)")
                        if total > limits.max_total_bytes:
                            raise _fail(path, f"archive expands to more than "
                                              f"{limits.max_total_bytes} bytes (zip bomb?)",
                                        "raise ArchiveLimits.max_total_bytes if genuine")
                        if (written > (1 << 20) and written
                                > limits.max_ratio * max(1, info.compress_size)):
                            raise _fail(path, f"archive entry {rel!r} has a compression "
                                              f"ratio above {limits.max_ratio:g} (zip bomb?)")
                        out.write(chunk)
                mode = (info.external_attr >> 16) & 0o777
                if mode:
                    os.chmod(target, (mode | 0o600) & 0o755)
        except FMUError:
            result.cleanup()
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
            result.cleanup()
            raise _fail(path, f"archive is corrupt ({type(exc).__name__}: {exc})",
                        "the file is truncated or damaged; get a fresh copy") from None
    return result


def platform_names(fmi_major: int) -> tuple[str, str]:
    """``(binaries folder, library suffix)`` for this machine and FMI version."""
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64",
            "aarch64": "aarch64", "i386": "x86", "i686": "x86", "x86": "x86"}.get(machine,
                                                                                 machine)
    bits64 = sys.maxsize > 2 ** 32
    if sys.platform.startswith("win"):
        system, short, ext = "windows", "win", ".dll"
    elif sys.platform.startswith("darwin"):
        system, short, ext = "darwin", "darwin", ".dylib"
    else:
        system, short, ext = "linux", "linux", ".so"
    if fmi_major >= 3:
        return f"{arch}-{system}", ext
    if arch == "aarch64":
        return f"{short}64", ext
    return f"{short}{64 if bits64 else 32}", ext


def platform_binary(root: str | os.PathLike, fmi_major: int, model_identifier: str,
                    fmu_name: str = "") -> Path:
    """Path of the FMU's shared library for this platform, or a clear error."""
    root = Path(root)
    folder, ext = platform_names(fmi_major)
    lib = root / "binaries" / folder / f"{model_identifier}{ext}"
    if lib.is_file():
        return lib
    label = fmu_name or root.name
    have = sorted(p.name for p in (root / "binaries").iterdir() if p.is_dir()) \
        if (root / "binaries").is_dir() else []
    where = f"binaries/{folder}/{model_identifier}{ext}"
    if (root / "binaries" / folder).is_dir():
        found = sorted(p.name for p in (root / "binaries" / folder).iterdir())
        what = (f"has binaries/{folder}/ but no {model_identifier}{ext} in it (found: "
                f"{', '.join(found) or 'nothing'})")
    else:
        what = (f"has no binary for this platform ({where}); it has binaries for: "
                f"{', '.join(have) or 'no platform'}")
    hint = "ask the FMU's supplier for a build for this platform"
    if (root / "sources").is_dir():
        hint = ("it ships sources: compile them for this platform (e.g. `fmpy compile "
                f"{label}`) and import the result")
    return _raise_binary(label, what, hint)


def _raise_binary(label: str, what: str, hint: str) -> Path:
    raise FMUBinaryError(f"FMU '{label}' {what}; {hint}")


# ------------------------------------------------------------ the binary, unloaded
_ELF_MACHINES = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183, "i386": 3,
                 "i686": 3, "x86": 3, "armv7l": 40, "riscv64": 243, "ppc64le": 21,
                 "s390x": 22}


@dataclass(frozen=True)
class BinaryFacts:
    """What :func:`check_binary` learned: ``symbols`` exported (None: not readable) and
    whether the instantiation token occurs in the file."""

    symbols: frozenset | None
    has_token: bool


def fmi_functions(fmi_major: int, interface: str) -> list[str]:
    """The FMI functions the import binds for ``interface`` (all must be exported): FMI 2's
    (:data:`fmus.fmi2_binary.FUNCTIONS`, fmpy's list), FMI 3's as fmpy binds them."""
    if fmi_major == 2:
        from .fmi2_binary import FUNCTIONS
        return list(FUNCTIONS[interface])
    import inspect

    from fmpy import fmi3
    cls = {(3, "ModelExchange"): fmi3.FMU3Model, (3, "CoSimulation"): fmi3.FMU3Slave,
           (3, "ScheduledExecution"): fmi3.FMU3ScheduledExecution}[(fmi_major, interface)]
    prefix = f"fmi{fmi_major}"
    return sorted(n for n, _ in inspect.getmembers(cls) if n.startswith(prefix))


def _elf_symbols(data: Any, bits64: bool, endian: str) -> frozenset | None:
    """Defined global/weak symbols of an ELF file's ``.dynsym`` (None if unreadable)."""
    try:
        if bits64:
            shoff, = struct.unpack_from(endian + "Q", data, 0x28)
            shentsize, shnum = struct.unpack_from(endian + "HH", data, 0x3A)
            sh_fmt, sym_fmt, sym_size = endian + "IIQQQQIIQQ", endian + "IBBHQQ", 24
        else:
            shoff, = struct.unpack_from(endian + "I", data, 0x20)
            shentsize, shnum = struct.unpack_from(endian + "HH", data, 0x2E)
            sh_fmt, sym_fmt, sym_size = endian + "IIIIIIIIII", endian + "IIIBBH", 16
        if not shoff or not shnum:
            return None
        secs = [struct.unpack_from(sh_fmt, data, shoff + i * shentsize) for i in range(shnum)]
        names = set()
        for sec in secs:
            if sec[1] != 11:  # SHT_DYNSYM
                continue
            off, size, link = sec[4], sec[5], sec[6]
            str_off = secs[link][4]
            for k in range(size // sym_size):
                f = struct.unpack_from(sym_fmt, data, off + k * sym_size)
                if bits64:
                    st_name, st_info, st_shndx = f[0], f[1], f[3]
                else:
                    st_name, st_info, st_shndx = f[0], f[3], f[5]
                if st_shndx == 0 or (st_info >> 4) not in (1, 2):
                    continue  # undefined, or local
                end = data.find(b"\0", str_off + st_name)
                names.add(bytes(data[str_off + st_name:end]).decode("ascii", "replace"))
        return frozenset(names)
    except (struct.error, IndexError, ValueError):
        return None


def check_binary(lib: str | os.PathLike, fmi_major: int, interface: str, token: str = "",
                 fmu_name: str = "") -> BinaryFacts:
    """Check the FMU's shared library ``lib`` without loading it (module docstring).

    Raises :class:`~fmus.errors.FMUBinaryError` for a file that is no shared library of
    this platform or lacks an FMI function; returns the :class:`BinaryFacts`.
    """
    import mmap
    lib = Path(lib)
    label = fmu_name or lib.name
    rel = "/".join(lib.parts[-3:])
    with open(lib, "rb") as fh:
        try:
            data: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file
            data = b""
        try:
            has_token = bool(token) and data.find(token.encode()) >= 0
            if not sys.platform.startswith("linux"):
                return BinaryFacts(None, has_token)
            if data[:4] != b"\x7fELF":
                raise FMUBinaryError(
                    f"FMU '{label}': cannot load its binary {rel}: it is not an ELF shared "
                    "library (the file is damaged, or built for another system); ask the "
                    "FMU's supplier for a Linux build")
            bits64, endian = data[4] == 2, "<" if data[5] == 1 else ">"
            e_type, e_machine = struct.unpack_from(endian + "HH", data, 16)
            want_bits = sys.maxsize > 2 ** 32
            want_machine = _ELF_MACHINES.get(platform.machine().lower())
            if bits64 != want_bits or (want_machine and e_machine != want_machine):
                raise FMUBinaryError(
                    f"FMU '{label}': cannot load its binary {rel}: it is built for "
                    f"{'64' if bits64 else '32'}-bit ELF machine {e_machine}, this is "
                    f"{'64' if want_bits else '32'}-bit {platform.machine()} (machine "
                    f"{want_machine}); ask the FMU's supplier for a build for this platform")
            if e_type != 3:  # ET_DYN
                raise FMUBinaryError(f"FMU '{label}': cannot load its binary {rel}: it is an "
                                     "ELF file but not a shared library")
            symbols = _elf_symbols(data, bits64, endian)
        finally:
            if isinstance(data, mmap.mmap):
                data.close()
    if symbols is not None:
        missing = [f for f in fmi_functions(fmi_major, interface) if f not in symbols]
        if missing:
            more = f" and {len(missing) - 6} more" if len(missing) > 6 else ""
            raise FMUBinaryError(
                f"FMU '{label}': its binary {rel} does not export {', '.join(missing[:6])}"
                f"{more} (FMI {fmi_major} {interface}); every FMI function must be exported, "
                "even unsupported ones: ask the FMU's supplier for a complete build")
    return BinaryFacts(symbols, has_token)
