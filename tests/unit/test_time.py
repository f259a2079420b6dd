import pytest

from cosim.errors import RateError
from cosim.time import base_tick, format_time, hyperperiod, to_seconds, to_ticks


def test_to_ticks_accepts_grid_values():
    assert to_ticks(0.001) == 1_000_000
    assert to_ticks(1) == 1_000_000_000
    assert to_ticks(0.1 + 0.2) == 300_000_000  # float noise below 1e-6 ns is absorbed
    assert to_seconds(2_500_000) == pytest.approx(0.0025)


def test_off_grid_time_is_rejected_with_reason():
    with pytest.raises(RateError, match="whole number of nanoseconds"):
        to_ticks(1.5e-10, "block 'x' period")
    with pytest.raises(RateError, match="not finite"):
        to_ticks(float("nan"))


def test_base_tick_and_hyperperiod():
    assert base_tick([10_000_000, 25_000_000]) == 5_000_000
    assert hyperperiod([10_000_000, 25_000_000]) == 50_000_000
    assert format_time(1_000_000) == "1 ms"
