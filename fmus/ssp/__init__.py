r"""SSP 1.0 (System Structure and Parameterization) import and export for systems of FMUs.

An ``.ssp`` file is a ZIP archive holding ``SystemStructure.ssd`` (the components, their
connectors, the connections, parameter bindings, units, the default experiment) and the
FMUs under ``resources/``.

>>> system = read_ssp("drive.ssp")                          # doctest: +SKIP
>>> master = load_ssp("drive.ssp", coupling=GaussSeidel())   # doctest: +SKIP
>>> res = master.run()                    # to the DefaultExperiment stopTime; doctest: +SKIP
>>> export_ssp("pair.ssp", {"lag": "LoopA.fmu", "osc": "Oscillator.fmu"},
...            [("lag.y", "osc.F"), ("osc.x", "lag.u", (2.0, 0.0))],
...            parameters={"osc": {"k": 100.0}}, stop=2.0, step_s=1e-3)  # doctest: +SKIP

* :func:`read_ssp` extracts the archive safely (the rules of :mod:`fmus.archive`: no
  absolute paths, ``..``, links or devices, size and ratio limits), parses the SSD with
  a hardened parser (no DTD, no entities, no network) and checks it against every
  component's model description: connectors must be variables of the FMU with the
  matching causality, type and unit, connections run from an output to an input,
  parameter bindings name variables that may be set before initialization.  The
  result is an :class:`SSPSystem`; equality compares the structure (not where it
  was extracted).
* :func:`load_ssp` makes an :class:`SSPMaster` (a :class:`~cosim.master.MasterScheduler`):
  one Co-Simulation :class:`~fmus.subsystem.FMUSubsystem` per component with the
  bound values applied before initialization, the connections with their
  ``LinearTransformation`` as the master's ``(factor, offset)``, and the macro step from
  the argument, the cosim annotation written by :func:`export_ssp`, or the smallest
  ``DefaultExperiment/@stepSize`` of the FMUs.  FMU inputs left unconnected keep their
  start value (or the bound value), fed by a constant source subsystem named after the
  system (``"<system>.<component>.<port>"``), which also carries the system's input
  connectors (constant: the bound value or ``load_ssp(inputs=...)``); system output
  connectors appear in the results as ``"<system>.<connector>"``.  Result names use the
  cosim port names (``der(x)`` -> ``der_x``).
* :func:`export_ssp` writes an ``.ssp`` from FMUs and master-style connections;
  :func:`export_master_ssp` writes one from a master built of FMU subsystems.
  Connectors are typed from the model descriptions (``Real`` with the FMU's unit,
  ``Integer``, ``Boolean``), units are defined in ``<ssd:Units>``, values go inline
  (``ssv:ParameterSet`` in the SSD) or into ``resources/<component>.ssv`` files.

The package: :mod:`~fmus.ssp.model` (namespaces, errors, the dataclasses),
:mod:`~fmus.ssp.archive` (safe extraction), :mod:`~fmus.ssp.reading` (SSD/SSV parsing),
:mod:`~fmus.ssp.checking` (the checks against the FMUs), :mod:`~fmus.ssp.loading`
(:func:`load_ssp`) and :mod:`~fmus.ssp.writing` (the export).

Semantics
---------
A ``LinearTransformation`` gives ``target = factor * source + offset`` in the start
connector's unit, converted to the end connector's unit afterwards (SSP: "in addition to
any unit conversions"); with ``suppressUnitConversion="true"`` the transformation
replaces the unit conversion.  Parameter bindings follow SSP's precedence: within one
element later bindings win, system-level bindings (hierarchical names ``component.var``,
after the binding's ``prefix``) win over component-level ones.  Names that match no
variable are ignored, as SSP says, with a :class:`~fmus.errors.FMUWarning`.  A ``Real``
value with a ``unit`` is converted to the variable's unit (definitions from the SSV's or
the SSD's ``Units``, else cosim's unit grammar).

Limitations (each refused with an :class:`SSPError` naming the element, never ignored)
-------------------------------------------------------------------------------------
* One flat system: nested ``<ssd:System>`` elements and components that reference
  other SSPs/SSDs are not supported (flatten the system first).
* Components are FMUs run through Co-Simulation (FMI 2 or 3); ``implementation=
  "ModelExchange"`` is refused (import the FMU with :func:`~fmus.importer.load_fmu` into
  a diagram instead).  The master's options (coupling, extrapolation) are not stored.
* Connectors must carry their FMU variable's unit; ``suppressUnitConversion`` works
  between compatible units only (the master checks dimensions on every connection).
* System connectors are inputs (held constant) or outputs; a system input cannot be
  driven by a time signal.
* Signal dictionaries (``SignalDictionaries``, ``SignalDictionaryReference``), parameter
  mappings (``.ssm``, ``ParameterMapping``), parameter bindings with
  ``sourceBase="component"`` or another ``type`` than a parameter set, ``Enumeration``
  and ``Binary`` parameter values, Boolean/Integer/Enumeration mapping transformations,
  ``inout`` connectors, connections of parameter connectors (parameter propagation) and
  array variables (FMI 3) as connectors.
* Geometry, graphical elements and annotations other than cosim's are read past; the
  export writes none.  ``Enumerations`` are not read.
* The macro step is not part of SSP 1.0: it is kept in a vendor annotation
  (``type="org.cosim.master"``) that other tools ignore.
* Setting start values of non-parameters (e.g. a state's ``initial="exact"`` start)
  goes through :attr:`FMUSubsystem.params <fmus.subsystem.FMUSubsystem>`, which is
  applied before initialization (:meth:`FMUSubsystem.set_parameter` refuses them).
"""

from __future__ import annotations

from .loading import SSPMaster, load_ssp
from .model import SSPArchiveError, SSPComponent, SSPConnection, SSPConnector, SSPError, SSPSystem
from .reading import read_ssp
from .writing import export_master_ssp, export_ssp

__all__ = ["SSPArchiveError", "SSPComponent", "SSPConnection", "SSPConnector", "SSPError",
           "SSPMaster", "SSPSystem", "export_master_ssp", "export_ssp", "load_ssp", "read_ssp"]
