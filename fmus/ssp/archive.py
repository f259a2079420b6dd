"""Safe extraction of an ``.ssp`` archive (the rules of :mod:`fmus.archive`).

No absolute paths, ``..``, links, devices or encrypted entries, no duplicate names,
``SystemStructure.ssd`` at the root, and the size, count and ratio limits of
:class:`~fmus.archive.ArchiveLimits` counted while copying.  The messages name the
``.ssp`` and the entry, and the error is an :class:`~fmus.ssp.SSPArchiveError`.
"""

from __future__ import annotations

from pathlib import Path

from ..archive import ArchiveLimits, ExtractedFMU, extract_archive
from .model import SSD_NAME, SSPArchiveError


def _arch_fail(path: Path, what: str, hint: str = "") -> SSPArchiveError:
    return SSPArchiveError(f"SSP '{path}': {what}" + (f"; {hint}" if hint else ""))


def extract_ssp(path: Path, limits: ArchiveLimits) -> ExtractedFMU:
    """Extract the ``.ssp`` at ``path`` into a temporary directory (fmus.archive's rules)."""
    return extract_archive(path, None, limits, root_file=SSD_NAME, fail=_arch_fail,
                           not_zip_hint=f"an .ssp is a ZIP file with {SSD_NAME} at its root (a "
                           "directory holding SystemStructure.ssd can be given instead)",
                           prefix="cosim_ssp_", what="an SSP")
