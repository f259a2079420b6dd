"""ValveControlledCylinder calls its Numba kernel's compiled entry point (issue 30): the
same rates as Numba's dispatcher, bit for bit, whatever the types of the inputs."""

from __future__ import annotations

import numpy as np
import pytest

from blocks.hydraulics import LIM_OIL, ValveControlledCylinder
from blocks.hydraulics.fast import HAVE_NUMBA, chamber_rates, direct_call


def _block(a_chamber=2, lap=-1.0):
    return ValveControlledCylinder(
        "v", supply_pressure_pa=7.6e6, tank_pressure_pa=1e5, area_max_m2=5e-4, lap=lap,
        a_chamber=a_chamber, fluid=LIM_OIL, area_1_m2=65e-4, area_2_m2=40e-4, stroke_m=0.442,
        dead_volume_1_m3=1e-5, dead_volume_2_m3=1e-5, p1_0_pa=3e6, p2_0_pa=4e6,
        leakage_m3_s_pa=1e-12)


def test_direct_call_skips_the_dispatcher():
    if not HAVE_NUMBA:
        pytest.skip("Numba not installed")
    blk = _block()
    assert blk._rates is not chamber_rates  # the compiled entry point
    fn = direct_call(chamber_rates, 0.0, 3e6, 4e6, 0.2, 0.0, blk._kernel_args)
    assert fn is not chamber_rates and callable(fn)


@pytest.mark.parametrize("a_chamber, lap", [(1, 0.0), (2, -1.0), (1, 0.2)])
def test_entry_point_equals_the_dispatcher_for_every_input_type(a_chamber, lap):
    blk = _block(a_chamber, lap)
    rng = np.random.default_rng(a_chamber)
    kinds = (float, np.float64, lambda v: int(round(v)), lambda v: bool(v > 0))
    for i in range(300):
        u = rng.uniform(-1.2, 1.2)
        p1, p2 = (float(p) for p in rng.uniform(500.0, 8e6, size=2))
        x, v = rng.uniform(0.0, 0.442), rng.uniform(-0.5, 0.5)
        cast = kinds[i % len(kinds)]
        args = (cast(u), p1, p2, np.float64(x), cast(v), blk._kernel_args)
        assert blk._rates(*args) == chamber_rates(*args)


def test_block_derivatives_use_the_entry_point():
    from cosim.testing import BlockHarness
    blk = _block()
    calls = []
    rates = blk._rates
    blk._rates = lambda *a: calls.append(a) or rates(*a)
    h = BlockHarness(blk)
    h.set_inputs(u=0.3, x=0.2, v=0.05)
    d = h.derivatives()
    assert calls and tuple(d) == chamber_rates(*calls[0])[:2]


def test_pressure_source_is_read_inline_and_follows_parameter_changes():
    import linecache

    from blocks.hydraulics import PressureSource
    from cosim import DiagramBuilder, FunctionBlock, Simulator
    b = DiagramBuilder("src")
    src = b.add(PressureSource("supply", 2e6))
    f = b.add(FunctionBlock("half", lambda p: 0.5 * p, inputs=[("p", "Pa")],
                            outputs=[("y", "Pa")]))
    b.connect(src.p, f.in_ports[0])
    sim = Simulator(b.build(), solver="rk4", dt=1e-3, record=["half.y", "supply.p"])
    sim.advance_to(0.01)
    code = "".join(linecache.getlines(sim.program.outputs.__code__.co_filename))
    assert "ctx.params[" in code
    sim.ctx.set_param("supply.pressure", 3e6)
    sim.advance_to(0.02)
    res = sim.finish()
    assert res["supply.p"][0] == 2e6 and res["supply.p"][-1] == 3e6
    assert res["half.y"][-1] == 1.5e6
