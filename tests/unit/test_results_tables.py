"""Results as tables (issue 30, item 7): the columns are the signal names, the units are in
``df.attrs["units"]`` and in the CSV's sidecar, for every kind of results and every way
they reach a table.

The corpus: results of the simulator (fixed and variable step, decimated), of the
co-simulation master, read back from CSV and HDF5, and written by :func:`write_csv`;
signals scalar and array ((2,) and (2, 3)), float and integer, with units, without
(``""``) and inside a subdiagram (``sub/s2.y``).  Each is checked against the same
oracle: the Results object it came from.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import cosim
from blocks.continuous import Integrator
from blocks.sources import Constant, Sine
from cosim import DiagramBuilder, MasterScheduler, Simulator
from cosim.errors import OutputError
from cosim.observers import column_names
from cosim.subsystem import DiagramSubsystem
from cosim.writers import CsvWriter, Hdf5Writer, read_csv, read_dataframe, read_hdf5, write_csv


def model() -> cosim.Diagram:
    sb = DiagramBuilder("sub")
    s2 = sb.add(Sine("s2", frequency_hz=3.0))
    i2 = sb.add(Integrator("i2", unit="m"))
    sb.connect(s2.y, i2.u)
    b = DiagramBuilder("model")
    s = b.add(Sine("s", unit="m/s"))
    x = b.add(Integrator("x", unit="m"))
    b.connect(s.y, x.u)
    b.add(cosim.FunctionBlock("vec", lambda u: np.array([u, -u]), inputs=[("u", "m")],
                              outputs=[{"name": "y", "shape": 2, "unit": "N"}]))
    b.add(cosim.FunctionBlock("mat", lambda u: np.outer([1.0, 2.0], [u, 2 * u, 3 * u]),
                              inputs=[("u", "m")],
                              outputs=[{"name": "R", "shape": (2, 3), "unit": "N*m"}]))
    b.add(cosim.FunctionBlock("count", lambda u: np.int64(round(10 * u)),
                              inputs=[("u", "m")],
                              outputs=[{"name": "n", "dtype": np.int64}]))
    b.add(sb.build())
    for blk in ("vec", "mat", "count"):
        b.connect(x.y, f"{blk}.u")
    return b.build()


def master() -> MasterScheduler:
    sb = DiagramBuilder("src")
    c = sb.add(Constant("c", 2.0, unit="m/s"))
    sb.export_output(c.y, "v")
    ab = DiagramBuilder("acc")
    i = ab.add(Integrator("i", 0.0, unit="m"))
    ab.export_input(i.u, "u")
    ab.export_output(i.y, "x")
    return [DiagramSubsystem(sb.build(), solver="euler", dt=1e-3),
            DiagramSubsystem(ab.build(), solver="euler", dt=1e-3)], [("src.v", "acc.u")]


def results_corpus(tmp_path) -> dict[str, tuple[cosim.Results, object]]:
    """``{case: (results, csv path or None)}``."""
    out = {}
    csv = CsvWriter(tmp_path / "sim.csv")
    h5 = Hdf5Writer(tmp_path / "sim.h5") if _has_h5py() else None
    sim = Simulator(model(), solver="rk4", dt=0.01, observers=[csv, *([h5] if h5 else [])])
    out["simulator"] = (sim.run(0.5), csv.path)
    out["simulator decimated"] = (Simulator(model(), solver="rk4", dt=0.01,
                                            record_every=7).run(0.5), None)
    out["simulator variable step"] = (Simulator(model(), solver="rk45", dt=0.05).run(0.5),
                                      None)
    out["read_csv"] = (read_csv(csv.path), csv.path)
    if h5:
        out["read_hdf5"] = (read_hdf5(h5.path), None)
    subs, conns = master()
    mcsv = CsvWriter(tmp_path / "master.csv", chunk=7)
    out["master"] = (MasterScheduler(subs, conns, 0.01, writers=[mcsv]).run(0.3), mcsv.path)
    out["write_csv"] = (read_csv(write_csv(tmp_path / "w.csv", out["simulator"][0])),
                        tmp_path / "w.csv")
    return out


def _has_h5py() -> bool:
    try:
        import h5py  # noqa: F401
    except ImportError:
        return False
    return True


def check_frame(df: pd.DataFrame, res: cosim.Results, case: str) -> None:
    """``df`` against the Results it came from."""
    assert df.index.name == "time", case
    np.testing.assert_array_equal(df.index.to_numpy(), res.time, err_msg=case)
    units = df.attrs["units"]
    assert units["time"] == "s", case
    expected = []
    for k, v in res.signals.items():
        names = column_names(k, v.shape[1:])
        expected += names
        flat = v.reshape(len(v), -1)
        for j, name in enumerate(names):
            np.testing.assert_array_equal(df[name].to_numpy(), flat[:, j], err_msg=name)
            assert units[name] == res.units[k], (case, name)
        if v.ndim == 1:
            assert df[k].dtype == v.dtype, (case, k)
    assert list(df.columns) == expected, case
    assert set(units) == {"time", *expected}, case
    assert not any(" [" in c for c in df.columns), case


def test_every_results_kind_to_pandas_has_signal_columns_and_units(tmp_path):
    corpus = results_corpus(tmp_path)
    for case, (res, _) in corpus.items():
        df = res.to_pandas()
        check_frame(df, res, case)
        assert df.attrs["provenance"] == res.provenance
    sim = corpus["simulator"][0]
    df = sim.to_pandas()
    assert df["x.y"].iloc[-1] == sim["x.y"][-1]  # issue 30: df["car.zs"] was a KeyError
    assert df.attrs["units"]["x.y"] == "m" and df.attrs["units"]["vec.y[1]"] == "N"
    assert [c for c in df.columns if c.startswith("mat.R")] == [f"mat.R[{j}]"
                                                                  for j in range(6)]
    assert df.attrs["units"]["sub/s2.y"] == ""
    assert df["count.n"].dtype == np.int64
    assert df[["x.y"]].attrs["units"]["x.y"] == "m"  # pandas keeps attrs on a selection
    assert corpus["master"][0].to_pandas().attrs["units"] == {"time": "s", "src.v": "m/s",
                                                              "acc.x": "m"}


def test_every_csv_opens_in_pandas_by_signal_name_and_reads_back_with_units(tmp_path):
    for case, (res, path) in results_corpus(tmp_path).items():
        if path is None:
            continue
        plain = pd.read_csv(path)
        names = [n for k, v in res.signals.items() for n in column_names(k, v.shape[1:])]
        assert list(plain.columns) == ["time", *names], case
        for k, v in res.signals.items():
            if v.ndim == 1:  # the CSV holds the shortest exact text: equal, not close
                np.testing.assert_array_equal(plain[k].to_numpy(), v, err_msg=(case, k))
        df = read_dataframe(path)
        check_frame(df, res, case)
        assert df.attrs["status"] == "complete", case
        side = json.loads(path.with_name(path.name + ".json").read_text())
        assert side["format"] == "cosim results 3"
        assert side["units"] == df.attrs["units"], case


def test_read_dataframe_of_hdf5(tmp_path):
    pytest.importorskip("h5py")
    w = Hdf5Writer(tmp_path / "r.h5")
    Simulator(model(), solver="rk4", dt=0.01, observers=[w]).run(0.2)
    df = read_dataframe(w.path)
    check_frame(df, read_hdf5(w.path), "hdf5")
    assert df.attrs["status"] == "complete"


def test_older_csv_formats_and_other_tools_csv_are_read(tmp_path):
    old = tmp_path / "old.csv"  # format 2: units in the header
    old.write_text("time [s],a.y [m],v.y[0] [N],v.y[1] [N],b.y\n0.0,1.0,2.0,3.0,4.0\n")
    (tmp_path / "old.csv.json").write_text(json.dumps(
        {"format": "cosim results 2", "provenance": {"model": "m"}, "status": "complete"}))
    res = read_csv(old)
    assert res.units == {"a.y": "m", "v.y": "N", "b.y": ""}
    assert res["v.y"].tolist() == [[2.0, 3.0]]
    df = read_dataframe(old)
    assert list(df.columns) == ["a.y", "v.y[0]", "v.y[1]", "b.y"]
    assert df.attrs["units"] == {"time": "s", "a.y": "m", "v.y[0]": "N", "v.y[1]": "N",
                                 "b.y": ""}
    other = tmp_path / "fmpy.csv"  # another tool's: names only, no sidecar
    other.write_text('"time","h","v"\n0,1,0\n0.1,0.95,-0.98\n')
    df = read_dataframe(other)
    assert list(df.columns) == ["h", "v"] and df.attrs["units"] == {"time": "s", "h": "",
                                                                     "v": ""}
    assert df.attrs["status"] == "running"  # nothing says the run finished


def test_a_signal_named_time_is_refused(tmp_path):
    res = cosim.Results(np.array([0.0]), {"time": np.array([1.0])}, {"time": "s"})
    with pytest.raises(OutputError, match="would be read as the time column"):
        write_csv(tmp_path / "t.csv", res)


def test_write_csv_checks_lengths(tmp_path):
    res = cosim.Results(np.array([0.0, 1.0]), {"a.y": np.array([1.0])}, {"a.y": "m"})
    with pytest.raises(OutputError, match="signal 'a.y' has \\(1,\\) samples, the time has 2"):
        write_csv(tmp_path / "t.csv", res)


def test_a_shadow_recording_from_a_dataframe_keeps_the_units():
    """hil.shadow reads machine data from a DataFrame: its units come from attrs."""
    from hil.shadow import Recording
    res = Simulator(model(), solver="rk4", dt=0.01, record=["x.y", "s.y"]).run(0.2)
    rec = Recording.load(res.to_pandas())
    assert rec.units == {"x.y": "m", "s.y": "m/s"}
    np.testing.assert_array_equal(rec.t, res.time)


STUDY_MODEL = """
from blocks.continuous import Integrator
from blocks.sources import Constant
from cosim import DiagramBuilder


def build(gain=1.0):
    b = DiagramBuilder("push")
    f = b.add(Constant("f", 2.0 * gain, unit="N"))
    v = b.add(Integrator("v", unit="N*s"))
    b.connect(f.y, v.u)
    return b.build()
"""


@pytest.mark.parametrize("table", ["parquet", "csv"])
def test_a_study_table_has_parameter_and_metric_columns_with_units(tmp_path, monkeypatch,
                                                                    table):
    """The sweep's table: parameter and metric names as columns, units in attrs, on disk
    in Parquet's metadata or in the CSV table's sidecar."""
    import sys

    from cosim.studies import SerialExecutor, Study, grid
    from cosim.studies.store import ResultStore
    if table == "csv":
        monkeypatch.setitem(sys.modules, "pyarrow", None)  # as without the dist extra
    else:
        pytest.importorskip("pyarrow")
    model_file = tmp_path / "push.py"
    model_file.write_text(STUDY_MODEL)
    out = tmp_path / "study"
    design = grid(gain=[1.0, 2.0], **{"f.value": [3.0]})
    df = Study(str(model_file), design, t_end=0.1, solver="rk4", dt=1e-2,
               record=["f.y", "v.y"]).run(str(out), SerialExecutor(), progress=False)
    monkeypatch.undo()  # pandas 3 reads CSV strings through pyarrow when it has it
    assert list(df.status) == ["ok", "ok"]
    units = df.attrs["units"]
    assert units == {"gain": "", "f.value": "N", "final:f.y": "N", "final:v.y": "N*s",
                     "wall_s": "s"}
    assert units == ResultStore(str(out)).dataframe().attrs["units"]
    assert df["final:v.y"].iloc[0] == pytest.approx(0.3)  # the names, no units in them
    if table == "parquet":
        assert pd.read_parquet(out / "results.parquet").attrs["units"] == units
    else:
        assert pd.read_csv(out / "results.csv")["final:v.y"].iloc[0] == pytest.approx(0.3)
        assert json.loads((out / "results.csv.json").read_text())["units"] == units
