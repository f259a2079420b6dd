"""What a co-simulation master counts over a run, in one place.

The couplings, the step controller and the compiled loops add to these; the results'
diagnostics and the marks of the record (:class:`~cosim.master_results.MasterRecord`)
read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class MasterCounters:
    """The counters of one master (module docstring).

    Attributes
    ----------
    exchanges : int
        Macro steps done, including redone ones and Richardson's checks.
    rollbacks, rejections : int
        Restores of a checkpoint; steps the step controller rejected.
    iteration_total : int
        Coupling iterations (sweeps, loop evaluations) in the run.
    iterations : list of int
        The iterations of each macro step of an iterative coupling.
    last_residual : float
        The last step's residual (iterative coupling) or scaled error (step control).
    energy_total, last_energy : float
        Energy the power bonds' coupling created, in the run and in the last step [J].
    wall, steps : dict
        Per subsystem: wall time in its steps [s], steps taken.  A compiled loop may keep
        counts of its own and add them when these are read (:attr:`flush`).
    step_sizes : list of float
        The controlled steps [s] (step control).
    unrecoverable, over_tol_at_min : int
        Step control: steps failed at the smallest step; steps accepted over the
        tolerance there.
    """

    subsystems: list = field(default_factory=list)
    exchanges: int = 0
    rollbacks: int = 0
    rejections: int = 0
    iteration_total: int = 0
    iterations: list = field(default_factory=list)
    last_residual: float = 0.0
    energy_total: float = 0.0
    last_energy: float = 0.0
    _wall: dict = field(default_factory=dict, repr=False)
    _steps: dict = field(default_factory=dict, repr=False)
    step_sizes: list = field(default_factory=list)
    unrecoverable: int = 0
    over_tol_at_min: int = 0
    #: called before :attr:`wall` or :attr:`steps` is read: a compiled loop's counts since
    #: its last call added (:class:`~cosim.native_session.NativeSession`: counting after
    #: every call into C took 2.7 % of the flagship's real-time frame, sampled once)
    flush: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._wall = {name: 0.0 for name in self.subsystems}
        self._steps = {name: 0 for name in self.subsystems}

    @property
    def wall(self) -> dict:
        if self.flush is not None:
            self.flush()
        return self._wall

    @property
    def steps(self) -> dict:
        if self.flush is not None:
            self.flush()
        return self._steps

    def names(self, energy: bool) -> list[str]:
        """The cumulative counters a mark keeps (:meth:`values`), in order; ``energy``:
        with the power bonds' energy."""
        return (["iteration_total", "last_residual", "rejections"]
                + (["energy_total"] if energy else [])
                + [f"wall/{name}" for name in self.wall])

    def values(self, energy: bool) -> tuple:
        """The values of :meth:`names` now."""
        fixed = (self.iteration_total, self.last_residual, self.rejections)
        return fixed + ((self.energy_total,) if energy else ()) + tuple(self.wall.values())
