r"""SSP (System Structure and Parameterization, 1.0 and 2.0) import and export.

An ``.ssp`` file is a ZIP archive holding ``SystemStructure.ssd`` (the components, their
connectors, the connections, parameter bindings, units, the default experiment) and the
FMUs, parameter sets (``.ssv``) and mappings (``.ssm``) under ``resources/``.

>>> system = read_ssp("drive.ssp")                          # doctest: +SKIP
>>> master = load_ssp("drive.ssp", coupling=GaussSeidel())   # doctest: +SKIP
>>> res = master.run()                    # to the DefaultExperiment stopTime; doctest: +SKIP
>>> export_ssp("pair.ssp", {"lag": "LoopA.fmu", "osc": "Oscillator.fmu"},
...            [("lag.y", "osc.F"), ("osc.x", "lag.u", (2.0, 0.0))],
...            parameters={"osc": {"k": 100.0}}, stop=2.0, step_s=1e-3)  # doctest: +SKIP

* :func:`read_ssp` extracts the archive safely (the rules of :mod:`fmus.archive`: no
  absolute paths, ``..``, links or devices, size and ratio limits), parses the SSD with
  a hardened parser (no DTD, no entities, no network), reads the systems nested in it
  (and SSDs referenced by components) and flattens them (:mod:`~fmus.ssp.flatten`:
  component ``c`` of system ``sc`` becomes ``"sc/c"``), resolves the parameter bindings
  (``.ssv`` by ``source`` or inline, ``.ssm`` mappings with their transformations,
  :mod:`~fmus.ssp.values`) and the parameter connectors, reads the step size and solver
  annotations (cosim's and OMSimulator's, :mod:`~fmus.ssp.annotations`), and checks it
  all against every component's model description: connectors must be variables of the
  FMU with the matching causality, type and unit, bound values must name variables that
  may be set before initialization.  The result is an :class:`SSPSystem`; what was read
  past (other tools' annotations and settings) is in its ``notes``.
* :func:`load_ssp` makes an :class:`SSPMaster` (a :class:`~cosim.master.MasterScheduler`):
  one Co-Simulation :class:`~fmus.subsystem.FMUSubsystem` per CS component, one
  :class:`~cosim.subsystem.DiagramSubsystem` of :class:`~fmus.fmu_block.FMUBlock` s per
  Model Exchange unit (:mod:`~fmus.ssp.me_units`: the ME components of one system, or of
  one OMSimulator solver, integrated together by a cosim solver), the bound values applied
  before initialization, the connections with their ``LinearTransformation``, and the
  macro step from the argument, an annotation, or the smallest Co-Simulation FMU
  ``DefaultExperiment/@stepSize``.  FMU inputs left unconnected keep their start value (or
  the bound value), fed by a constant source subsystem named after the system
  (``"<system>.<component>.<port>"``), which also carries the system's input connectors
  (constant: the bound value or ``load_ssp(inputs=...)``); system output connectors appear
  in the results as ``"<system>.<connector>"`` (in the connector's unit), the outputs of
  ME components as ``"<component>.<port>"``.  Result names use the cosim port names
  (``der(x)`` -> ``der_x``).
* :func:`export_ssp` writes an ``.ssp`` from FMUs and master-style connections;
  :func:`export_system` writes a system :func:`read_ssp` gave (flattened);
  :func:`export_master_ssp` writes one from a master built of FMU subsystems or made by
  :func:`load_ssp`.  Connectors are typed from the model descriptions (``Real`` with the
  FMU's unit, ``Integer``, ``Boolean``), units are defined in ``<ssd:Units>``, values go
  inline (``ssv:ParameterSet`` in the SSD) or into ``resources/<component>.ssv`` files;
  Model Exchange units, their solvers and the macro step go into a cosim annotation.  The
  files are valid against the SSP schemas (``tests/conformance/ssp_schemas``).

The package: :mod:`~fmus.ssp.model` (namespaces, errors, the dataclasses),
:mod:`~fmus.ssp.archive` (safe extraction), :mod:`~fmus.ssp.reading` (the SSD as a tree of
systems), :mod:`~fmus.ssp.values` (parameter sets, mappings, bindings),
:mod:`~fmus.ssp.annotations` (vendor annotations), :mod:`~fmus.ssp.flatten` (nested
systems, connections, parameter connectors, ME units), :mod:`~fmus.ssp.checking` (the
checks against the FMUs), :mod:`~fmus.ssp.me_units`, :mod:`~fmus.ssp.loading`
(:func:`load_ssp`) and :mod:`~fmus.ssp.writing` (the export).

Semantics
---------
SSP's ``start``/``end`` of a connection do not give the direction of data: the connector
kinds do.  A ``LinearTransformation`` gives ``target = factor * source + offset`` with the
source already converted to the end connector's unit (SSP: the transformation is applied
"in addition to" the unit conversion, after it); with ``suppressUnitConversion="true"`` it
replaces the conversion.  Parameter bindings follow SSP's precedence: within one element
later bindings win, a system's bindings (hierarchical names ``sub.component.var``, after
the binding's ``prefix``) win over those of the systems and components inside it.  A
mapping entry maps a (prefixed) parameter name to a target name with a linear, Boolean,
Integer or Enumeration transformation; a parameter that no entry names keeps its name (as
OMSimulator does).  Names that match no variable are ignored, as SSP says, with a
:class:`~fmus.errors.FMUWarning`.  A ``Real`` value with a ``unit`` is converted to the
variable's unit (definitions from the SSV's or the SSD's ``Units``, else cosim's unit
grammar).

Limitations (each refused with an :class:`SSPError` naming the element, file and line)
-------------------------------------------------------------------------------------
* Components are FMUs (FMI 2 or 3, Co-Simulation or Model Exchange) or SSDs in the SSP;
  ``application/x-ssp-package`` components (an SSP in the SSP) and Scheduled Execution are
  refused.
* Signal dictionaries (``SignalDictionaries``, ``SignalDictionaryReference``), array
  connectors (``Dimension``, ``startIndices``), ``inout`` connectors, Binary values and
  array values (``Value`` elements), ``sourceBase="component"`` (files inside an FMU),
  Boolean/Integer/Enumeration mapping transformations on signal connections (they work
  in parameter mappings) and parameter connections from a ``calculatedParameter``
  (a value the FMU computes at initialization).
* Connectors must carry their FMU variable's unit; ``suppressUnitConversion`` works
  between compatible units only (the master checks dimensions on every connection).
* System inputs are held constant (the bound value); a system input cannot be driven by a
  time signal.
* ``Enumerations`` of the SSD are not read (enumeration values are matched against the
  FMUs' own types); geometry and graphical elements are read past; the export writes none
  and writes the flattened system (components ``"sc/c"``, no nested systems).
* OMSimulator's cvode runs as cosim's ``bdf``; its variable-step master as cosim's step
  control (see :mod:`~fmus.ssp.annotations`).
* Bound values of non-parameters (a state's ``initial="exact"`` start, an input's, a
  local's) go to ``start=`` of :class:`~fmus.subsystem.FMUSubsystem` and
  :class:`~fmus.fmu_block.FMUBlock` (set before initialization).
"""

from __future__ import annotations

from .loading import SSPMaster, load_ssp
from .model import (
    SSPArchiveError,
    SSPComponent,
    SSPConnection,
    SSPConnector,
    SSPError,
    SSPSolver,
    SSPSystem,
)
from .reading import read_ssp
from .writing import export_master_ssp, export_ssp, export_system

__all__ = ["SSPArchiveError", "SSPComponent", "SSPConnection", "SSPConnector", "SSPError",
           "SSPMaster", "SSPSolver", "SSPSystem", "export_master_ssp", "export_ssp",
           "export_system", "load_ssp", "read_ssp"]
