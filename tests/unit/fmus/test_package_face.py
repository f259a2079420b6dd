"""No module of ``fmus`` is named as a name of the package's face: importing the module
would replace the lazily exported name (``fmus.fmu_info``, the function) with the module
on the package."""

import pathlib

import fmus

ROOT = pathlib.Path(fmus.__file__).resolve().parent


def test_no_submodule_shadows_a_name_the_package_exports():
    names = set(fmus._IMPORT) | set(fmus._EXPORT)
    modules = {p.stem for p in ROOT.glob("*.py")} | {p.name for p in ROOT.iterdir()
                                                      if (p / "__init__.py").exists()}
    assert not names & modules, f"fmus modules named as exported names: {names & modules}"


def test_the_exported_function_stays_a_function_after_every_module_is_imported():
    import importlib
    for p in ROOT.glob("*.py"):
        if p.stem not in ("__init__", "__main__"):
            importlib.import_module(f"fmus.{p.stem}")
    assert callable(fmus.fmu_info) and callable(fmus.load_fmu)
