"""The segmented strip in the wall gap as a block (:mod:`blocks.vortex.spaghetti`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim.block import Block
from cosim.errors import ParameterError
from cosim.params import NON_NEGATIVE, refuse

from .beam import SegmentedBeam


# --------------------------------------------------------------------------- the block
class SpaghettiBeam(Block):
    """The segmented beam in the wall gap as a block (:mod:`blocks.vortex.spaghetti`).

    Parameters
    ----------
    name : str
    beam : SegmentedBeam
        The model (material, segments, fluid, gap and guide).
    initial_state : array, optional
        ``[X0, y0, φ..., ẏ0, φ̇...]``; default: :meth:`SegmentedBeam.initial_state` with
        ``wetted_length_m`` and ``tip_impulse``.
    drive_acceleration : bool
        Declare the input ``acceleration`` [m/s²], the drive's Ẍ0 (e.g. a run-up); it acts
        on every segment as the body force -m Ẍ0 along X.  Without it the drive speed is
        taken as piecewise constant.
    """

    argument_checks = {"wetted_length_m": NON_NEGATIVE}

    def __init__(self, name: str, beam: SegmentedBeam, wetted_length_m: float = 0.125,
                 tip_impulse: float = 0.0, initial_state: Any = None,
                 drive_acceleration: bool = False) -> None:
        super().__init__(name)
        self.beam = beam
        n = beam.n
        if initial_state is None and wetted_length_m > beam.length_m:
            raise refuse(self, "wetted_length_m", wetted_length_m,
                         f"a length in [0, {beam.length_m:g}] m, the beam's length")
        x = (beam.initial_state(wetted_length_m, tip_impulse) if initial_state is None
             else np.asarray(initial_state, float))
        if x.shape != (2 * n + 3,):
            raise ParameterError(f"SpaghettiBeam '{name}': initial_state needs {2 * n + 3} "
                                 f"values, got shape {x.shape}")
        self.speed = self.declare_input("speed", unit="m/s",
                                        description="drive speed along +X (> 0 draws out)")
        self.acceleration = (self.declare_input("acceleration", unit="m/s^2",
                                                description="drive acceleration along +X")
                             if drive_acceleration else None)
        self.x = self.declare_continuous_state("x", x)
        st = ()
        self.declare_output("tip", lambda c: self._nodes(c)[-1], shape=(2,), unit="m",
                            depends_on=st)
        self.declare_output("tip_y", lambda c: float(self._nodes(c)[-1, 1]), unit="m",
                            depends_on=st)
        self.declare_output("tip_deflection",
                            lambda c: self.beam.tip_deflection(np.asarray(c.state(self.x))),
                            unit="m", depends_on=st)
        self.declare_output("nodes", self._nodes, shape=(n + 1, 2), unit="m", depends_on=st)
        self.declare_output("angles", lambda c: np.array(c.state(self.x)[2:n + 2]),
                            shape=(n,), unit="rad", depends_on=st)
        self.declare_output("wetted_length", self._wetted, unit="m", depends_on=st)
        self.declare_outputs(
            [dict(name="contact_force", shape=(2,), unit="N/m"),
             dict(name="fluid_force", shape=(2,), unit="N/m")], self._forces,
            depends_on=("speed",))

    def _nodes(self, ctx: Any) -> np.ndarray:
        x = np.asarray(ctx.state(self.x))
        _, q, _ = self.beam.split(x)
        xs, ys = self.beam.nodes(x[0], q)
        return np.column_stack((xs, ys))

    def _wetted(self, ctx: Any) -> float:
        xs = self._nodes(ctx)[:, 0]
        s0 = self.beam.wetted_start(xs)
        return 0.0 if s0 is None else self.beam.length_m - s0

    def _forces(self, ctx: Any):
        ev = self.beam.evaluate(np.asarray(ctx.state(self.x)), float(ctx.input(self.speed)))
        c, f = ev["contact"], ev["fluid"]
        return np.array([c.real, c.imag]), np.array([f.real, f.imag])

    def derivatives(self, ctx: Any) -> np.ndarray:
        acc = 0.0 if self.acceleration is None else float(ctx.input(self.acceleration))
        return self.beam.rhs(np.asarray(ctx.state(self.x)), float(ctx.input(self.speed)), acc)

