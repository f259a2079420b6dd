"""Shared fixtures and small model blocks for the test suite."""

from __future__ import annotations

import numpy as np
import pytest

from cosim import Block

#: the ``timing`` marker's verdict helpers and its terminal summary (tests/timing_plugin.py)
pytest_plugins = ("tests.timing_plugin",)


class Ball(Block):
    """Bouncing ball: x = [h, v], h' = v, v' = -g; at h = 0 falling, v <- -e v.

    Ports
    -----
    out  h   [m]  state only
    """

    def __init__(self, name: str, h0: float = 10.0, e: float = 0.8, g: float = 9.81) -> None:
        super().__init__(name)
        self.g, self.e = g, e
        self.impacts: list[float] = []
        self.x = self.declare_continuous_state("x", [h0, 0.0])
        self.h = self.declare_output("h", lambda ctx: float(ctx.state(self.x)[0]), unit="m",
                                     depends_on=())
        self.declare_zero_crossing(lambda ctx: ctx.state(self.x)[0], self._bounce,
                                   direction=-1, name="impact")

    def derivatives(self, ctx):
        return np.array([ctx.state(self.x)[1], -self.g])

    def _bounce(self, ctx):
        self.impacts.append(ctx.time)
        _, v = ctx.state(self.x)
        ctx.set_state(self.x, [0.0, -self.e * v])


@pytest.fixture
def ball_cls():
    return Ball


@pytest.fixture
def private_cache(monkeypatch, tmp_path):
    """An empty cache of compiled libraries of this test's own (``COSIM_CACHE_DIR``, and a
    home and temporary folder of its own, so no library of another test or process is
    found): the folder."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("COSIM_CACHE_DIR", str(folder))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return folder
