"""The development set-up's import hook: a clone's packages found as an installed copy is.

``make venv`` installs the project editable (setuptools), and setuptools finds an editable
project's packages through an import hook that Python asks *after* its own search of
``sys.path``.  That search takes a folder without ``__init__.py`` as a namespace package
when no regular package of that name is on ``sys.path``, so a user's ``fmus/`` folder of
FMU files beside a script hid the package (``cannot import name 'load_fmu' from 'fmus'
(unknown location)``, issue 31).  An installed copy lives on ``sys.path``
(``site-packages``), where a regular package beats a namespace folder.

:func:`install` (run at start-up by the ``_cosim_checkout.pth`` file the Makefile writes
into the venv) puts a :class:`CheckoutFinder` first in ``sys.meta_path`` that resolves the
distribution's top-level packages to the clone as an installed copy would be: a regular
module or package of that name earlier on ``sys.path`` (the user's own, with an
``__init__.py``) still wins; a namespace folder does not.  Only the distribution's packages
are resolved (``bench``, ``examples`` and ``tests`` stay out of reach outside the clone,
as for a user of the installed package).  Not part of the installed package's API.
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path

PACKAGES = ("cosim", "blocks", "fmus", "hil")  # pyproject's [tool.setuptools.packages.find]


class CheckoutFinder:
    """A meta path finder for ``names``, found in ``root`` unless a regular module or package
    of that name comes first on ``sys.path``."""

    def __init__(self, root: str | Path, names: tuple = PACKAGES) -> None:
        self.root = str(Path(root).resolve())
        self.names = frozenset(names)

    def find_spec(self, name: str, path: object = None,
                  target: object = None) -> ModuleSpec | None:
        if path is not None or name not in self.names:
            return None  # submodules: found through their package's __path__
        first = PathFinder.find_spec(name, sys.path)
        if first is not None and first.origin is not None:
            return None  # a regular module or package on sys.path: it wins, as installed
        return PathFinder.find_spec(name, [self.root])

    def __repr__(self) -> str:
        return f"CheckoutFinder({self.root!r})"


def install(root: str | Path) -> None:
    """Put a :class:`CheckoutFinder` for ``root`` first in ``sys.meta_path`` (once)."""
    if not any(isinstance(f, CheckoutFinder) or type(f).__name__ == "CheckoutFinder"
               for f in sys.meta_path):
        sys.meta_path.insert(0, CheckoutFinder(root))
