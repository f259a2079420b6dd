"""Which modules a Python FMU bundles (fmus.pybundle.local_modules): the model's own, found
on the path without importing them; never the standard library or installed packages."""

from __future__ import annotations

import sys
import textwrap

import pytest

from cosim.errors import BuildError
from fmus.pybundle import ModelRef, find_model, local_modules


def _tree(root, files: dict) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def _bundle(ref: ModelRef) -> set[str]:
    """The bundle's paths of ``ref``, which has no compiled local modules."""
    files, compiled = local_modules(ref)
    assert not compiled
    return set(files)


def test_a_model_file_bundles_its_siblings_through_every_kind_of_import(tmp_path):
    _tree(tmp_path, {
        "model.py": """
            import json                      # standard library: not bundled
            import numpy as np               # installed: not bundled
            import a_mod
            from b_pkg import sub            # a submodule through 'from'
            from c_mod import VALUE
            from cosim import DiagramBuilder  # installed (cosim itself)
            try:
                import optional_not_there    # missing and optional: skipped
            except ImportError:
                pass

            def build():
                import d_lazy                # inside a function
                return None
            """,
        "a_mod.py": "import e_deep\n",       # reached only through a_mod
        "e_deep.py": "X = 1\n",
        "b_pkg/__init__.py": "",
        "b_pkg/sub.py": "from . import rel\nfrom .inner import thing\n",
        "b_pkg/rel.py": "",
        "b_pkg/inner/__init__.py": "thing = 1\n",
        "c_mod.py": "VALUE = 2\n",
        "d_lazy.py": "",
        "unused.py": "raise RuntimeError('never imported, never bundled')\n",
    })
    got = _bundle(find_model(str(tmp_path / "model.py")))
    assert got == {"model.py", "a_mod.py", "e_deep.py", "b_pkg/__init__.py", "b_pkg/sub.py",
                   "b_pkg/rel.py", "b_pkg/inner/__init__.py", "c_mod.py", "d_lazy.py"}


def test_a_package_module_bundles_its_packages_and_relative_imports(tmp_path, monkeypatch):
    _tree(tmp_path, {
        "proj/__init__.py": "",
        "proj/common.py": "",
        "proj/models/__init__.py": "",
        "proj/models/car.py": "from ..common import x\nfrom . import tyres\n",
        "proj/models/tyres.py": "import proj.common\n",
        "proj/other.py": "",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    got = _bundle(find_model("proj.models.car:build"))
    assert got == {"proj/__init__.py", "proj/common.py", "proj/models/__init__.py",
                   "proj/models/car.py", "proj/models/tyres.py"}


def test_the_bundle_is_found_on_the_path_not_in_sys_modules(tmp_path, monkeypatch):
    """Another module of the same name already imported (e.g. by an earlier export in
    this process) is not the model's."""
    _tree(tmp_path, {"m/model.py": "import helper\n", "m/helper.py": "",
                     "elsewhere/helper.py": ""})
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    import helper  # noqa: F401
    monkeypatch.delitem(sys.modules, "helper")
    files, _ = local_modules(find_model(str(tmp_path / "m" / "model.py")))
    assert files["helper.py"] == tmp_path / "m" / "helper.py"


def test_model_references_are_checked(tmp_path):
    with pytest.raises(BuildError, match="not found"):
        find_model(str(tmp_path / "nope.py"))
    with pytest.raises(BuildError, match="package.module:function"):
        find_model("just.a.module")
    with pytest.raises(BuildError, match="disagree"):
        find_model("pkg.mod:build", "other")
