"""Which model a study runs, and how a worker builds it once and reuses it.

A :class:`ModelSpec` names the model by a file path (``"examples/msd.py"``) or an
importable module (``"examples.msd"``) and its diagram function (``build`` by default).
Workers receive the spec (it pickles), import the model once, and cache one compiled
diagram per distinct set of build arguments (:func:`diagram_for`); the runs then differ
only in their contexts (many contexts, one compiled diagram).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass
from typing import Any

from ..errors import CosimError

DEFAULT_FUNCTIONS = ("build", "diagram", "make_diagram")


@dataclass(frozen=True)
class ModelSpec:
    """A model file or module and its diagram function (``None``: build/diagram/...)."""

    source: str
    function: str | None = None

    def load_module(self) -> Any:
        return _load_module(self.source)

    def build_function(self) -> Any:
        mod = self.load_module()
        funcs = {k: v for k, v in vars(mod).items()
                 if inspect.isfunction(v) and v.__module__ == mod.__name__}
        name = self.function or next((f for f in DEFAULT_FUNCTIONS if f in funcs), None)
        if name not in funcs:
            raise CosimError(f"{self.source}: no diagram function "
                             f"{name or ' or '.join(DEFAULT_FUNCTIONS)!r}; functions there: "
                             f"{', '.join(funcs) or '(none)'}")
        return funcs[name]

    def attribute(self, name: str, default: Any = None) -> Any:
        return getattr(self.load_module(), name, default)


_MODULES: dict[str, Any] = {}
_DIAGRAMS: dict[tuple, Any] = {}


def _load_module(source: str) -> Any:
    if source in _MODULES:
        return _MODULES[source]
    if source.endswith(".py") or os.sep in source:
        path = os.path.abspath(source)
        if not os.path.isfile(path):
            raise CosimError(f"model file {source!r} not found")
        name = "cosim_study_" + os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        folder = os.path.dirname(path)
        if folder not in sys.path:       # stays: the model's functions may import siblings
            sys.path.append(folder)      # when a worker calls them
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop(name, None)
            raise
    else:
        mod = importlib.import_module(source)
    _MODULES[source] = mod
    return mod


def diagram_for(spec: ModelSpec, build_args: dict) -> Any:
    """The diagram for ``build_args`` (built and compiled once per process)."""
    key = (spec, tuple(sorted(build_args.items())))
    d = _DIAGRAMS.get(key)
    if d is None:
        from ..diagram import Diagram, DiagramBuilder

        d = spec.build_function()(**build_args)
        if not isinstance(d, Diagram):
            got = (f"the DiagramBuilder '{d.name}', not a Diagram (call build() first: "
                   "return builder.build())" if isinstance(d, DiagramBuilder)
                   else f"{type(d).__name__}, not a Diagram")
            raise CosimError(f"{spec.source}: the diagram function returned {got}")
        d.compile()
        _DIAGRAMS[key] = d
    return d
