"""Diagrams as C: the code generator behind the compiled Simulator, the compiled master's
native twins and the FMU export (:mod:`fmus.export`).

* :mod:`cosim.codegen.model`: a block's C description (:class:`CModel`) and the registry of
  the descriptions of block classes (:func:`register_c_model`, by dotted class name, so the
  block modules need no import of this package);
* :mod:`cosim.codegen.blocks`: the descriptions of the core library's blocks;
* :mod:`cosim.codegen.pyfunc`: a ``FunctionBlock``'s Python function translated into C
  (:mod:`cosim.codegen.pyfunc_calls` its calls, :mod:`cosim.codegen.pysource` its source,
  :mod:`cosim.codegen.numba_form` a Numba cfunc called by address);
* :mod:`cosim.codegen.program`: a diagram and its context as straight-line C (evaluation
  order, fused linear groups, discrete updates per rate group, the integrator);
* :mod:`cosim.codegen.csource`: the model core's C text (the template
  ``templates/core.c`` with the generated parts);
* :mod:`cosim.codegen.tangent`: the diagram's Jacobian as a tangent program;
* :mod:`cosim.codegen.cache`: shared libraries compiled from generated C, cached by a hash of
  source, flags and compiler in a trusted folder.

Errors are :class:`CodegenError` (a :class:`~cosim.errors.BuildError`); the FMU export raises
them as its ``FMUExportError``.  What can be generated and the limits: :mod:`fmus.cgen`.
"""

from . import blocks as _blocks  # noqa: F401  (registers the core blocks' descriptions)
from . import pyfunc as _pyfunc  # noqa: F401  (registers FunctionBlock's)
from .model import (
    CArray,
    CContext,
    CModel,
    CMonitor,
    CodegenError,
    CZeroCrossing,
    c_float,
    find_c_model,
    linear_c_model,
    register_c_model,
    registered_types,
    why_no_c_form,
)

__all__ = ["CArray", "CContext", "CModel", "CMonitor", "CZeroCrossing", "CodegenError", "c_float",
           "find_c_model", "linear_c_model", "register_c_model", "registered_types",
           "why_no_c_form"]
