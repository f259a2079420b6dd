"""Safe extraction of an ``.ssp`` archive (the rules of :mod:`fmus.archive`).

No absolute paths, ``..``, links, devices or encrypted entries, no duplicate names,
``SystemStructure.ssd`` at the root, and the size, count and ratio limits of
:class:`~fmus.archive.ArchiveLimits` counted while copying.  The messages name the
``.ssp`` and the entry, and the error is an :class:`~fmus.ssp.SSPArchiveError`.
"""

from __future__ import annotations

import os
import stat
import tempfile
import zipfile
import zlib
from pathlib import Path

from ..archive import ArchiveLimits, ExtractedFMU
from .model import SSD_NAME, SSPArchiveError


def _arch_fail(path: Path, what: str, hint: str = "") -> SSPArchiveError:
    return SSPArchiveError(f"SSP '{path}': {what}" + (f"; {hint}" if hint else ""))


def _entry_name(path: Path, info: zipfile.ZipInfo) -> str:
    """The entry's relative POSIX path, or an error naming the broken rule."""
    raw = info.filename
    name = raw.replace("\\", "/")
    if "\x00" in raw or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise _arch_fail(path, f"archive entry {raw!r} has an absolute or invalid path "
                               "(unsafe: it would be written outside the extraction directory)")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _arch_fail(path, f"archive entry {raw!r} contains '..' (path traversal: it would "
                               "be written outside the extraction directory)",
                         "refusing to extract it; ask the supplier for a clean archive")
    mode = info.external_attr >> 16
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise _arch_fail(path, f"archive entry {raw!r} is a symbolic link, device, FIFO or "
                               "socket, not a file")
    if info.flag_bits & 0x1:
        raise _arch_fail(path, f"archive entry {raw!r} is encrypted")
    return "/".join(parts)


def extract_ssp(path: Path, limits: ArchiveLimits) -> ExtractedFMU:
    """Extract the ``.ssp`` at ``path`` into a temporary directory (fmus.archive's rules)."""
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise _arch_fail(path, f"is not a ZIP archive ({exc})",
                         f"an .ssp is a ZIP file with {SSD_NAME} at its root (a directory "
                         "holding SystemStructure.ssd can be given instead)") from None
    except OSError as exc:
        raise _arch_fail(path, f"cannot be read ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_files:
            raise _arch_fail(path, f"has {len(infos)} entries, more than the limit of "
                                   f"{limits.max_files}", "raise ArchiveLimits.max_files")
        names: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            rel = _entry_name(path, info)
            if rel in names:
                raise _arch_fail(path, f"archive has two entries named {rel!r} (ambiguous)")
            if rel:
                names[rel] = info
        if SSD_NAME not in names:
            nested = [n for n in names if n.endswith("/" + SSD_NAME)]
            raise _arch_fail(path, f"archive has no {SSD_NAME} at its root",
                             f"it is in {nested[0]!r}: zip the folder's contents instead"
                             if nested else "this is not an SSP")
        root = Path(tempfile.mkdtemp(prefix=f"cosim_ssp_{path.stem[:40]}_"))
        result = ExtractedFMU(root, path, owned=True)
        real_root = os.path.realpath(root)
        total = 0
        try:
            for rel, info in names.items():
                target = os.path.realpath(os.path.join(real_root, *rel.split("/")))
                if os.path.commonpath([real_root, target]) != real_root:
                    raise _arch_fail(path, f"archive entry {info.filename!r} resolves outside "
                                           "the extraction directory")
                if info.is_dir():
                    os.makedirs(target, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                written = 0
                with zf.open(info) as src, open(target, "wb") as out:
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        total += len(chunk)
                        if written > min(limits.max_file_bytes, info.file_size):
                            raise _arch_fail(path, f"archive entry {rel!r} expands beyond its "
                                                   "declared or allowed size (zip bomb?)")
                        if total > limits.max_total_bytes:
                            raise _arch_fail(path, "archive expands to more than "
                                                   f"{limits.max_total_bytes} bytes (zip bomb?)")
                        if written > (1 << 20) and written > limits.max_ratio * max(
                                1, info.compress_size):
                            raise _arch_fail(path, f"archive entry {rel!r} has a compression "
                                                   f"ratio above {limits.max_ratio:g} (zip bomb?)")
                        out.write(chunk)
        except SSPArchiveError:
            result.cleanup()
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
            result.cleanup()
            raise _arch_fail(path, f"archive is corrupt ({type(exc).__name__}: {exc})") from None
    return result
