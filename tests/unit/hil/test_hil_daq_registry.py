"""The "daq-sim" registry entry: a Backend adapter around SimulatedDaq."""

from __future__ import annotations

import pytest

import hil
from hil.daq import ChannelRangeError, ChannelSpec, SimulatedDaq
from hil.daq.backend import SimulatedDaqBackend


def test_create_daq_sim_backend():
    assert "daq-sim" in hil.available_backends()
    assert hil.backend_class("daq-sim") is SimulatedDaqBackend
    b = hil.create_backend("daq-sim", name="rig",
                           channels=[ChannelSpec("ao0", "ao", (-10, 10), "V", 16),
                                     ChannelSpec("ai0", "ai", (-10, 10), "V", 16)],
                           wiring={"ao0": "ai0"}, seed=1)
    assert isinstance(b.device, SimulatedDaq) and b.state is hil.BackendState.CLOSED
    with b:
        b.write({"ao0": 1.0})
        assert b.read() == {"ai0": pytest.approx(0.9999237048905165, abs=1e-12)}
        # a bad value raises before any I/O and does not fault the backend
        with pytest.raises(ChannelRangeError):
            b.write({"ao0": 11.0})
        assert b.state is hil.BackendState.OPEN
        assert b.counters.frames_out == 1 and b.counters.frames_in == 1
    assert not b.device.is_open


def test_bad_configuration_is_a_backend_error():
    with pytest.raises(hil.BackendError, match="bad configuration for SimulatedDaqBackend"):
        hil.create_backend("daq-sim", channels=[ChannelSpec("ai0", "ai", (0, 1))], wirring={})
