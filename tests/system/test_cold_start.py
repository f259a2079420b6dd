"""Cold start (issue 34, item 6): what the first run in a fresh process does is only what it
needs.  An FMI 2 co-simulation on a warm cache imports neither fmpy nor lxml nor
``importlib.metadata`` (checked in a fresh interpreter); the FMU cache (fmus.fmu_cache)
is reused, gives the record a fresh read gives (a corpus of FMUs and options), follows the
FMU file, the archive limits and changes to the extracted files, and is pruned; the FMI 2
binding without fmpy binds what fmpy binds and formats the FMU's messages; the provenance's
versions equal ``importlib.metadata``'s.  (The time is measured by ``bench master``:
``cold_start/...``.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from dataclasses import fields

import pytest

pytest.importorskip("fmpy")

import fmus.fmu_cache as fc  # noqa: E402
from cosim import MasterScheduler  # noqa: E402
from fmus import load_fmu  # noqa: E402
from fmus.archive import ArchiveLimits  # noqa: E402
from fmus.errors import FMUArchiveError, FMUCallError, FMUWarning  # noqa: E402
from fmus.importer import FMU  # noqa: E402
from tests.fmu_builders import build_c_fmu, rewrite_fmu  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: what a warm cold start of FMUs alone must not import (fmus.cgen and fmus.native_twin: the C
#: generator of native twins, 13 ms, imported only for a master with a native subsystem)
HEAVY = ("fmpy", "lxml", "attr", "attrs", "importlib.metadata", "fmus.cgen", "fmus.native_twin")


@pytest.fixture
def cache(private_cache):
    """An empty cache of our own (no entry of another test or process is found)."""
    return private_cache


@pytest.fixture(scope="module")
def lim(tmp_path_factory):
    d = tmp_path_factory.mktemp("cold_lim")
    return build_c_fmu("lim_m1", d), build_c_fmu("lim_m2", d)


# ------------------------------------------------------------- a fresh process
def test_a_warm_cold_start_imports_no_fmpy_lxml_or_metadata(lim, tmp_path):
    code = textwrap.dedent(f"""
        import json, sys
        from cosim import MasterScheduler
        from fmus import load_fmu
        subs = [load_fmu({str(lim[0])!r}, name="m1"), load_fmu({str(lim[1])!r}, name="m2")]
        conns = [("m1.fc", "m2.fc"), ("m2.x2", "m1.x2"), ("m2.v2", "m1.v2")]
        res = MasterScheduler(subs, conns, 1e-3, extrapolation=0).run(0.5)
        print(json.dumps({{"compiled": res.diagnostics["compiled"],
                          "x2": float(res["m2.x2"][-1]),
                          "binary": type(subs[0].inst.drv.fmu).__name__,
                          "heavy": sorted(m for m in sys.modules if m.split(".")[0] in
                                          {HEAVY!r} or m in {HEAVY!r}
                                          or m.startswith("fmus.cgen."))}}))
    """)
    env = dict(os.environ, COSIM_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)
    said = []
    for _ in range(2):  # the first fills the caches, the second is the cold start
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        said.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    first, warm = said
    assert warm["heavy"] == [], "a warm cold start imported " + ", ".join(warm["heavy"])
    assert warm["compiled"] is True and warm["binary"] == "Fmi2Slave"
    assert warm["x2"] == first["x2"]  # the same run from the cache as from the files


def test_the_run_from_the_cache_equals_the_run_through_fmpy(lim, cache, monkeypatch):
    """The binding without fmpy against fmpy's (a call log loads through fmpy): the same
    rows, bit for bit, in the Python loop."""
    def run(**kw):
        subs = [load_fmu(lim[0], name="m1", **kw), load_fmu(lim[1], name="m2", **kw)]
        m = MasterScheduler(subs, [("m1.fc", "m2.fc"), ("m2.x2", "m1.x2"), ("m2.v2", "m1.v2")],
                            1e-3, extrapolation=1, compiled=False)
        return m.run(0.3), subs
    ours, subs = run()
    assert type(subs[0].inst.drv.fmu).__name__ == "Fmi2Slave"
    theirs, subs = run(call_log=[].append)
    assert type(subs[0].inst.drv.fmu).__module__.startswith("fmpy")
    for sig in ("m1.x1", "m2.x2", "m1.fc"):
        assert ours[sig].tolist() == theirs[sig].tolist(), sig


# ------------------------------------------------------------- the FMU cache
def _fields(info) -> dict:
    out = {}
    for f in fields(info):
        if f.name in ("_md", "md_root", "path"):
            continue
        v = getattr(info, f.name)
        if f.name in ("variables", "problems"):
            v = [repr(x) for x in v]
        elif f.name in ("states", "derivatives"):
            v = [x.name for x in v]
        out[f.name] = v
    return out


def _loaded(path, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fmu = FMU(path, **kw)
    return fmu, [str(w.message) for w in caught if issubclass(w.category, FMUWarning)]


@pytest.fixture(scope="module")
def corpus(fmu_files, tmp_path_factory):
    """FMUs of every kind the import reads: FMI 2 ME + CS (C), events, an algebraic loop, a
    pythonfmu FMU, FMI 3, and FMI 2 FMUs that break a rule (warned) and hold an entry twice
    (warned at extraction)."""
    d = tmp_path_factory.mktemp("cold_corpus")
    loop = fmu_files["LoopA"]
    import zipfile
    with zipfile.ZipFile(loop) as z:
        md = z.read("modelDescription.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile: "Duplicate name"
        twice = rewrite_fmu(loop, d / "Twice.fmu", add={"modelDescription.xml": md})
    broken = rewrite_fmu(loop, d / "Broken.fmu", replace={"modelDescription.xml": (
        'causality="input"><Real start="0"/>', 'causality="input"><Real start="7" max="1"/>')})
    return [fmu_files[n] for n in ("Oscillator", "BouncingBall", "LoopA", "Faulty",
                                   "LimMass2", "Oscillator3", "BouncingBall3")] + [twice, broken]


@pytest.mark.parametrize("options", [{}, {"validate": "none"},
                                     {"units": {"x": "mm"}, "port_names": {"x": "pos"}}],
                         ids=["warn", "none", "overrides"])
def test_a_cached_record_is_the_record_a_fresh_read_gives(corpus, cache, options):
    for path in corpus:
        opts = {k: v for k, v in options.items()
                if k == "validate" or path.stem in ("Oscillator", "Oscillator3")}
        fresh, said = _loaded(path, **opts)
        assert fresh.archive.cached is not None, path.name  # extracted into the cache
        again, said_again = _loaded(path, **opts)
        assert again.archive.root == fresh.archive.root, path.name  # reused
        assert _fields(again.info) == _fields(fresh.info), path.name
        assert said_again == said, path.name  # the same warnings, extraction's too
        if path.stem in ("Twice", "Broken"):
            assert said, path.name
        names = [v.name for v in fresh.info.md.modelVariables]  # fmpy's, read lazily
        assert [v.name for v in again.info.md.modelVariables] == names, path.name


def test_the_description_is_read_once_per_fmu_and_options(fmu_files, cache, monkeypatch):
    reads = []
    read = fc.read_description
    monkeypatch.setattr(fc, "read_description", lambda *a, **k: reads.append(a) or read(*a, **k))
    path = fmu_files["Oscillator"]
    for _ in range(3):
        FMU(path)
    assert len(reads) == 1
    FMU(path, validate="strict")  # other options: another record
    FMU(path, validate="strict")
    assert len(reads) == 2
    assert FMU(path, port_names={"x": "pos"}).info.variable("x").port == "pos"
    assert FMU(path, port_names={"x": "pos"}).info.variable("x").port == "pos"
    assert FMU(path).info.variable("x").port == "x"
    assert len(reads) == 3


def test_the_cache_follows_the_file_the_limits_and_the_extracted_files(fmu_files, cache,
                                                                       tmp_path):
    src = tmp_path / "Osc.fmu"
    src.write_bytes(fmu_files["Oscillator"].read_bytes())
    first = FMU(src)
    assert first.archive.cached is not None
    # another file at that path (one entry more): another entry, read afresh
    rewrite_fmu(fmu_files["Oscillator"], src, add={"extra/note.txt": b"v2"})
    second = FMU(src)
    assert second.archive.cached not in (None, first.archive.cached)
    assert (second.root / "extra" / "note.txt").read_bytes() == b"v2"
    # other limits: another entry, checked by them
    assert FMU(src, limits=ArchiveLimits(max_files=50)).archive.cached not in (
        None, second.archive.cached)
    with pytest.raises(FMUArchiveError, match="more than the limit of 2"):
        FMU(src, limits=ArchiveLimits(max_files=2))
    # an extracted file changed (an FMU writing into its folder): not used, extracted afresh
    with open(second.root / "modelDescription.xml", "ab") as fh:
        fh.write(b"\n")
    third = FMU(src)
    assert third.archive.cached is None and third.root != second.root
    assert _fields(third.info) == _fields(second.info)


def test_the_cache_is_pruned_least_recently_used_first(fmu_files, cache, monkeypatch,
                                                       tmp_path):
    monkeypatch.setattr(fc, "KEEP_ENTRIES", 2)
    monkeypatch.setattr(fc, "IDLE_S", 0.0)
    paths = []
    for i in range(3):
        p = tmp_path / f"Osc{i}.fmu"
        rewrite_fmu(fmu_files["Oscillator"], p, add={"extra/i.txt": str(i).encode()})
        paths.append(p)
    entries = [FMU(p).archive.cached for p in paths[:2]]
    os.utime(entries[1], (1.0, 1.0))  # the second: least recently used
    os.utime(entries[0], (2.0, 2.0))
    left = cache / "fmu" / ".left-by-a-stopped-process"
    left.mkdir()
    os.utime(left, (1.0, 1.0))
    third = FMU(paths[2]).archive.cached
    assert sorted(p.name for p in (cache / "fmu").iterdir()) == sorted(
        [entries[0].name, third.name])


# ------------------------------------------------------------- the FMI 2 binding
def test_the_fmi2_binding_binds_what_fmpy_binds():
    import ctypes
    import inspect
    import types
    import typing

    from fmpy import fmi2

    from fmus.fmi2_binary import FUNCTIONS, SIGNATURES

    def same(a, b):
        if a is b:
            return True
        if hasattr(a, "_type_") and hasattr(b, "_type_") and hasattr(a._type_, "_fields_"):
            return [f[0] for f in a._type_._fields_] == [f[0] for f in b._type_._fields_]
        return False
    for itf, cls in (("ModelExchange", fmi2.FMU2Model), ("CoSimulation", fmi2.FMU2Slave)):
        theirs = sorted(n for n, _ in inspect.getmembers(cls) if n.startswith("fmi2"))
        assert list(FUNCTIONS[itf]) == theirs
        for name in theirs:
            sig = inspect.signature(getattr(cls, name))
            args = [typing.get_args(p.annotation)[0]
                    if isinstance(p.annotation, types.UnionType) else p.annotation
                    for p in list(sig.parameters.values())[1:]]
            res = {bytes: ctypes.c_char_p, int: ctypes.c_int}.get(sig.return_annotation,
                                                                   sig.return_annotation)
            restype, argtypes = SIGNATURES[name]
            assert restype is res or (res is None and restype is None), name
            assert len(argtypes) == len(args) and all(map(same, argtypes, args)), name


def test_the_fmus_messages_are_formatted_without_fmpy(fmu_files, cache):
    s = load_fmu(fmu_files["Faulty"], name="f", interface="cs", parameters={"mode": 1},
                 logging_on=True)
    m = MasterScheduler([s], [], 0.01)
    with pytest.raises(FMUCallError, match=r"fault injected at t = 0.05 s \(mode 1\)"):
        m.run(0.1)
    assert type(s.inst.drv.fmu).__name__ == "Fmi2Slave"


# ------------------------------------------------------------- the versions
def test_the_versions_are_importlib_metadatas():
    import platform
    from importlib.metadata import PackageNotFoundError, version

    from cosim.versions import installed_version, platform_text
    for name in ("cosim", "numpy", "fmpy", "lxml", "typing-extensions", "PyYAML",
                 "no-such-distribution-here"):
        try:
            want = version(name)
        except PackageNotFoundError:
            want = None
        assert installed_version(name) == want, name
    if platform.processor() in ("", platform.machine()):  # see cosim.versions
        assert platform_text() == platform.platform()
