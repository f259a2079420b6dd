"""MasterRecord keeps a compiled loop's times as one block (no list of floats per step):
``time_array`` and ``n_times`` must read the mix of the Python loop's floats and such blocks
in order, and the per-macro-step diagnostics spread each compiled block over its steps."""

from __future__ import annotations

import numpy as np
import pytest

from cosim.master_results import MasterRecord


@pytest.mark.parametrize("layout", [[], ["f"], ["b"], ["f", "b"], ["b", "f"], ["f", "b", "f", "f"],
                                    ["b", "b"], ["f", "b", "f", "b"]])
def test_time_array_reads_floats_and_blocks_in_order(layout):
    rec = MasterRecord(master=None)
    want, t = [], 0.0
    for kind in layout:
        if kind == "f":
            t += 0.5
            rec.times.append(t)
            want.append(t)
        else:
            block = t + 0.25 * np.arange(1, 4)
            rec.times.append(block)
            want.extend(block.tolist())
            t = float(block[-1])
    assert rec.n_times == len(want)
    assert rec.time_array().tolist() == want
    assert rec.time_array().dtype == float
