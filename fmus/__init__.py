"""FMI import and export (FMI 2 and 3, Co-Simulation and Model Exchange).

Not built yet: the FMI issue fills this package (fmpy in the ``fmi`` extra,
imported lazily).  Importing it needs nothing beyond the core.
"""
