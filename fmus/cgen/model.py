"""The C descriptions of blocks (:mod:`cosim.codegen.model`, where the code generator lives
since the Simulator runs diagrams in C too), and the FMU export's error.

``fmus.cgen.model`` stays an import path: it is the same module as
:mod:`cosim.codegen.model` but for :class:`FMUExportError`, which the FMU export raises (a
:class:`~cosim.codegen.model.CodegenError` and an :class:`~fmus.errors.FMUError`).
"""

from __future__ import annotations

from cosim.codegen.model import (  # noqa: F401  (the public names, re-exported)
    CArray,
    CContext,
    CModel,
    CodegenError,
    CZeroCrossing,
    affine,
    c_float,
    c_string,
    find_c_model,
    linear_c_model,
    register_c_model,
    registered_types,
)

from ..errors import FMUError


class FMUExportError(FMUError, CodegenError):
    """A block or diagram cannot be exported as an FMU (what, where, what to do)."""
