"""Issue 31 item 1 on the Scheduled Execution path: an input whose source runs after the
block's first output gets its start value in Initialization Mode, then (the initial check)
its source's value; never the zero of an empty signal slot.  Scripted stand-in FMU of
``test_scheduled.py`` (it logs every set with the FMU's mode).
"""

from __future__ import annotations

from blocks.sources import Constant
from tests.unit.fmus.test_scheduled import block, clock, fake, model, run  # noqa: F401

TEXT = model(clock("p", 1, "constant", 'intervalDecimal="1"'),
             '  <Float64 name="u" valueReference="11" causality="input" '
             'variability="discrete" clocks="1" start="7"/>\n'
             '  <Float64 name="y" valueReference="12" causality="output" '
             'variability="discrete" clocks="1" start="-1"/>',
             '  <Output valueReference="12" dependencies="1"/>')


def test_an_input_set_in_initialization_mode_is_its_start_or_its_source(tmp_path, fake):  # noqa: F811
    blk = block(tmp_path, TEXT)
    run(blk, 2.0, (Constant("c", 3.0), "u"))  # the block is added first: it runs first
    init_sets = [e[2] for drv in fake for e in drv.log
                 if e[0] == "set" and e[1] == "u" and e[3] == "initialization"]
    assert init_sets and 0.0 not in init_sets, init_sets
    assert init_sets[-1] == 3.0  # the last initialization had the source's value
    assert set(init_sets) <= {7.0, 3.0}
