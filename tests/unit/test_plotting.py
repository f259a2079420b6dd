"""plot_results writes a PNG with one axis per unit."""

import pytest

from blocks.continuous import Integrator
from blocks.sources import Constant
from cosim import DiagramBuilder, Simulator
from cosim.errors import OutputError
from cosim.plotting import plot_results


def _res():
    b = DiagramBuilder("p")
    c = b.add(Constant("v", 2.0, unit="m/s"))
    i = b.add(Integrator("x", unit="m", input_unit="m/s"))
    b.connect(c.y, i.u)
    return Simulator(b.build(), solver="rk4", dt=0.1).run(1.0)


def test_png_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    path = plot_results(_res(), str(tmp_path / "p.png"), title="t")
    data = (tmp_path / "p.png").read_bytes()
    assert path.endswith("p.png") and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_unwritable_plot_path(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="cannot write plot"):
        plot_results(_res(), str(tmp_path / "f" / "p.png"))


def test_save_figure_writes_or_reports_without_raising(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from cosim.plotting import save_figure

    path = str(tmp_path / "a.png")
    assert save_figure(path, lambda fig, ax: ax.plot([0, 1], [1, 2])) == path
    assert (tmp_path / "a.png").stat().st_size > 0

    def broken(fig, ax):
        raise ValueError("bad data")

    assert save_figure(str(tmp_path / "b.png"), broken) is None
    assert "(no plot: bad data)" in capsys.readouterr().out
    assert not (tmp_path / "b.png").exists()
