"""fmus.archive: safe extraction of untrusted FMU archives, and the platform binary lookup."""

from __future__ import annotations

import gc
import stat
import tempfile
import zipfile
from pathlib import Path

import pytest

from fmus.archive import ArchiveLimits, extract_fmu, platform_binary, platform_names
from fmus.errors import FMUArchiveError, FMUBinaryError, FMUWarning

MD = b'<?xml version="1.0"?><fmiModelDescription fmiVersion="2.0"/>'


def _zip(path, entries, symlink=None):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink[0])
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, symlink[1])
    return path


def test_a_good_archive_is_extracted_and_removed_with_its_handle(tmp_path):
    p = _zip(tmp_path / "ok.fmu", {"modelDescription.xml": MD, "resources/a/b.txt": b"x" * 10,
                                   "binaries/linux64/M.so": b"\x7fELF"})
    ext = extract_fmu(p)
    root = ext.root
    assert (root / "modelDescription.xml").read_bytes() == MD
    assert (root / "resources" / "a" / "b.txt").read_bytes() == b"x" * 10
    del ext
    gc.collect()
    assert not root.exists()


def test_an_extracted_directory_is_used_in_place(tmp_path):
    (tmp_path / "modelDescription.xml").write_bytes(MD)
    ext = extract_fmu(tmp_path)
    assert ext.root == tmp_path
    ext.cleanup()
    assert tmp_path.exists()


@pytest.mark.parametrize("data, match", [
    (b"this is not a zip file at all", "is not a ZIP archive"),
    (b"", "is not a ZIP archive"),
])
def test_a_file_that_is_not_a_zip_is_refused(tmp_path, data, match):
    p = tmp_path / "bad.fmu"
    p.write_bytes(data)
    with pytest.raises(FMUArchiveError, match=match) as exc:
        extract_fmu(p)
    assert "bad.fmu" in str(exc.value) and "corrupt, truncated or not an FMU" in str(exc.value)


def test_a_truncated_archive_is_refused(tmp_path):
    p = _zip(tmp_path / "t.fmu", {"modelDescription.xml": MD,
                                  "resources/big.bin": bytes(range(256)) * 4000})
    raw = p.read_bytes()
    p.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(FMUArchiveError, match="t.fmu"):
        extract_fmu(p)


def test_corrupt_entry_data_is_refused_and_nothing_is_left(tmp_path):
    p = _zip(tmp_path / "c.fmu", {"modelDescription.xml": MD,
                                  "resources/r.bin": bytes(range(256)) * 100})
    raw = bytearray(p.read_bytes())
    i = raw.index(b"resources/r.bin") + len("resources/r.bin") + 20
    raw[i:i + 50] = b"\x00" * 50  # damage the compressed data of the entry
    p.write_bytes(bytes(raw))
    tmp = Path(tempfile.gettempdir())
    before = set(tmp.glob("cosim_fmu_c_*"))
    with pytest.raises(FMUArchiveError, match="corrupt"):
        extract_fmu(p)
    assert set(tmp.glob("cosim_fmu_c_*")) == before  # the partial extraction is removed


@pytest.mark.parametrize("name, rule", [
    ("../evil.txt", "path traversal"),
    ("resources/../../evil.txt", "path traversal"),
    ("/etc/evil", "absolute path"),
    ("C:/evil.dll", "absolute path"),
    ("..\\evil.txt", "path traversal"),
])
def test_unsafe_paths_are_refused_with_the_entry_and_the_rule(tmp_path, name, rule):
    p = _zip(tmp_path / "evil.fmu", {"modelDescription.xml": MD, name: b"boom"})
    with pytest.raises(FMUArchiveError, match=rule) as exc:
        extract_fmu(p, dest=tmp_path / "out")
    assert repr(name) in str(exc.value)
    assert not (tmp_path / "evil.txt").exists()


def test_symlinks_are_refused(tmp_path):
    p = _zip(tmp_path / "link.fmu", {"modelDescription.xml": MD},
             symlink=("resources/passwd", "/etc/passwd"))
    with pytest.raises(FMUArchiveError, match="symbolic link"):
        extract_fmu(p)


def _zip_twice(path, name, first, second):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("modelDescription.xml", MD)
        zf.writestr("extra/", b"")
        zf.writestr(name, first)
        with pytest.warns(UserWarning):  # zipfile's own "Duplicate name"
            zf.writestr("extra/", b"")
            zf.writestr(name, second)
    return path


def test_duplicated_entries_of_identical_content_load_with_a_warning(tmp_path):
    # upstream's Reference FMU Roberts.fmu (FMI 3) holds its extra/ folder twice
    p = _zip_twice(tmp_path / "dup.fmu", "extra/ref.csv", b"t,x\n0,1\n", b"t,x\n0,1\n")
    with pytest.warns(FMUWarning, match="'extra/ref.csv' twice with identical content"):
        ext = extract_fmu(p)
    assert (ext.root / "extra" / "ref.csv").read_bytes() == b"t,x\n0,1\n"


@pytest.mark.parametrize("second", [b"t,x\n0,2\n",        # same size, other bytes
                                    b"t,x\n0,1\n1,2\n"])   # other size
def test_duplicated_entries_of_different_content_are_refused_by_name(tmp_path, second):
    p = _zip_twice(tmp_path / "dup.fmu", "extra/ref.csv", b"t,x\n0,1\n", second)
    with pytest.raises(FMUArchiveError, match="two entries named 'extra/ref.csv' with "
                                              "different content"):
        extract_fmu(p)


def _crc_twin(data: bytes, prefix: bytes) -> bytes:
    """``prefix`` + 4 bytes with the CRC-32 and length of ``data`` (CRC-32 is affine over
    GF(2) for a fixed length: solve for the 4 bytes by Gaussian elimination)."""
    import zlib
    assert len(prefix) == len(data) - 4
    base = zlib.crc32(prefix + bytes(4))
    cols = []  # (crc change of one bit, the bit as an int)
    for bit in range(32):
        x = (1 << bit).to_bytes(4, "little")
        cols.append((zlib.crc32(prefix + x) ^ base, 1 << bit))
    want, pivots = zlib.crc32(data) ^ base, []
    for row in range(32):
        i = next((k for k in range(len(cols)) if cols[k][0] >> row & 1), None)
        if i is None:
            continue
        piv = cols.pop(i)
        cols = [(c ^ piv[0], b ^ piv[1]) if c >> row & 1 else (c, b) for c, b in cols]
        pivots = [(c ^ piv[0], b ^ piv[1]) if c >> row & 1 else (c, b) for c, b in pivots]
        pivots.append(piv)
    x = 0
    for c, b in pivots:  # reduced: each pivot column has one leading row
        if want & (c & -c):
            want ^= c
            x ^= b
    assert want == 0
    out = prefix + x.to_bytes(4, "little")
    assert zlib.crc32(out) == zlib.crc32(data) and out != data
    return out


def test_duplicated_entries_of_equal_crc_and_size_are_compared_byte_for_byte(tmp_path):
    first = b"time,x\n0,1\n"
    second = _crc_twin(first, b"time,y\n")  # same size and CRC-32, other bytes
    p = _zip_twice(tmp_path / "dup.fmu", "extra/ref.csv", first, second)
    with pytest.raises(FMUArchiveError, match="'extra/ref.csv' with different content"):
        extract_fmu(p)


def test_missing_model_description_says_where_it_is(tmp_path):
    p = _zip(tmp_path / "nested.fmu", {"Model/modelDescription.xml": MD})
    with pytest.raises(FMUArchiveError, match="no modelDescription.xml at its root.*zipped "
                                              "with its folder"):
        extract_fmu(p)


@pytest.mark.parametrize("limits, match", [
    (ArchiveLimits(max_total_bytes=100_000), "expands to more than 100000 bytes"),
    (ArchiveLimits(max_file_bytes=50_000), "declares 2000000 bytes"),
    (ArchiveLimits(max_ratio=10.0), "compression ratio above 10"),
    (ArchiveLimits(max_files=1), "has 2 entries, more than the limit of 1"),
])
def test_size_limits_stop_zip_bombs(tmp_path, limits, match):
    p = _zip(tmp_path / "bomb.fmu", {"modelDescription.xml": MD,
                                     "resources/zeros.bin": bytes(2_000_000)})
    with pytest.raises(FMUArchiveError, match=match):
        extract_fmu(p, limits=limits)


def test_missing_platform_binary_lists_the_platforms_present(tmp_path):
    (tmp_path / "binaries" / "win64").mkdir(parents=True)
    (tmp_path / "binaries" / "darwin64").mkdir(parents=True)
    folder, ext = platform_names(2)
    with pytest.raises(FMUBinaryError, match=f"no binary for this platform \\(binaries/"
                                             f"{folder}/Model{ext}\\); it has binaries for: "
                                             "darwin64, win64; ask the FMU's supplier"):
        platform_binary(tmp_path, 2, "Model", "m.fmu")
    (tmp_path / "sources").mkdir()
    with pytest.raises(FMUBinaryError, match="it ships sources: compile them"):
        platform_binary(tmp_path, 2, "Model", "m.fmu")
    (tmp_path / "binaries" / folder).mkdir()
    (tmp_path / "binaries" / folder / "Other.so").write_bytes(b"")
    with pytest.raises(FMUBinaryError, match="but no Model.so in it \\(found: Other.so\\)"):
        platform_binary(tmp_path, 2, "Model", "m.fmu")
    lib = tmp_path / "binaries" / folder / f"Model{ext}"
    lib.write_bytes(b"")
    assert platform_binary(tmp_path, 2, "Model") == lib
    assert platform_names(3)[0].endswith("-linux") or platform_names(3)[0].count("-") == 1
