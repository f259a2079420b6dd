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


def test_units_that_differ_by_scale_share_a_panel_converted():
    """rpm and rad/s on one panel (in the first signal's unit), m on another, the unitless
    signal on its own; every axis labelled."""
    import math

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from cosim.observers import Results
    from cosim.plotting import panels
    t = np.linspace(0.0, 1.0, 5)
    res = Results(t, {"w.rad": np.full(5, 1.0), "w.rpm": np.full(5, 60.0 / (2 * math.pi)),
                      "x": t.copy(), "n": t * 2},
                  {"w.rad": "rad/s", "w.rpm": "rpm", "x": "m", "n": ""})
    groups = panels(res)
    assert [u for u, _ in groups] == ["rad/s", "m", "-"]
    (_, scale, bias), = [g for g in groups[0][1] if g[0] == "w.rpm"]
    assert 60.0 / (2 * math.pi) * scale + bias == pytest.approx(1.0)
    fig = res.plot()
    try:
        axes = fig.axes
        assert len(axes) == 3 and [a.get_ylabel() for a in axes] == ["[rad/s]", "[m]", "[-]"]
        assert axes[-1].get_xlabel() == "time [s]"
        lines = axes[0].get_lines()
        assert np.allclose(lines[1].get_ydata(), 1.0)  # the rpm signal, in rad/s
        assert lines[1].get_label() == "w.rpm (from rpm)"
    finally:
        plt.close(fig)


def test_results_repr_reads_the_time_span():
    import numpy as np

    from cosim.observers import Results
    res = Results(np.linspace(0.0, 0.6, 7), {"a": np.zeros(7)}, {"a": ""})
    assert repr(res) == "<Results 7 samples, t = 0 .. 0.6 s, 1 signals>"
