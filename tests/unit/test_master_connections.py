"""Master connections with a linear transformation (SSP ``LinearTransformation``)."""

import pytest

from blocks.continuous import Integrator
from blocks.sources import Constant
from cosim import DiagramBuilder, MasterScheduler
from cosim.errors import BuildError
from cosim.subsystem import DiagramSubsystem


def _source(value=2.0, unit="m"):
    b = DiagramBuilder("src")
    c = b.add(Constant("c", value, unit=unit))
    b.export_output(c.y, "y")
    return DiagramSubsystem(b.build(), solver="euler", dt=1e-3)


def _integrator(unit="m"):
    b = DiagramBuilder("acc")
    i = b.add(Integrator("i", 0.0))
    b.export_input(i.u, "u")
    b.export_output(i.y, "x")
    return DiagramSubsystem(b.build(), solver="euler", dt=1e-3)


def test_factor_and_offset_apply_to_the_source_value():
    res = MasterScheduler([_source(), _integrator()], [("src.y", "acc.u", (3.0, 1.0))],
                          0.01).run(1.0)
    # x' = 3 * 2 + 1 = 7
    assert res["acc.x"][-1] == pytest.approx(7.0, rel=1e-12)


def test_a_malformed_connection_is_reported():
    with pytest.raises(BuildError, match="must be \\(src, dst\\)"):
        MasterScheduler([_source(), _integrator()], [("src.y",)], 0.01)


def test_a_master_streams_its_results_to_csv_and_hdf5(tmp_path):
    from cosim.writers import CsvWriter, Hdf5Writer, read_csv, read_hdf5
    csv, h5 = tmp_path / "m.csv", tmp_path / "m.h5"
    m = MasterScheduler([_source(), _integrator()], [("src.y", "acc.u")], 0.01,
                        writers=[CsvWriter(csv, chunk=7), Hdf5Writer(h5, ["acc.x"], chunk=7)])
    res = m.run(1.0)
    back = read_csv(csv)
    assert back.diagnostics["status"] == "complete"
    assert list(back.signals) == ["src.y", "acc.x"] and back.units["src.y"] == "m"
    assert (back.time == res.time).all() and (back["acc.x"] == res["acc.x"]).all()
    hb = read_hdf5(h5)
    assert list(hb.signals) == ["acc.x"] and (hb["acc.x"] == res["acc.x"]).all()
    assert back.provenance["master"]["H_s"] == 0.01


def test_a_failing_master_run_keeps_what_was_streamed(tmp_path):
    from cosim.errors import StepError
    from cosim.writers import CsvWriter, read_csv

    class Failing(DiagramSubsystem):
        def do_step(self, t0, h):
            if t0 >= 500_000_000:  # 0.5 s
                raise StepError("subsystem 'acc': broken at 0.5 s")
            super().do_step(t0, h)

    b = DiagramBuilder("acc")
    i = b.add(Integrator("i", 0.0))
    b.export_input(i.u, "u")
    b.export_output(i.y, "x")
    csv = tmp_path / "m.csv"
    m = MasterScheduler([_source(), Failing(b.build(), solver="euler", dt=1e-3)],
                        [("src.y", "acc.u")], 0.01, writers=[CsvWriter(csv, chunk=10)])
    with pytest.raises(StepError, match="broken at 0.5 s"):
        m.run(1.0)
    back = read_csv(csv)
    assert back.diagnostics["status"].startswith("error: StepError")
    assert back.time[-1] == pytest.approx(0.5) and back["acc.x"][-1] == pytest.approx(1.0)


def test_a_writer_asking_for_an_unknown_signal_is_told_the_choices(tmp_path):
    from cosim.errors import OutputError
    from cosim.writers import CsvWriter
    m = MasterScheduler([_source(), _integrator()], [("src.y", "acc.u")], 0.01,
                        writers=[CsvWriter(tmp_path / "m.csv", ["acc.xx"])])
    with pytest.raises(OutputError, match="no signal 'acc.xx'.*Did you mean 'acc.x'"):
        m.run(0.1)
