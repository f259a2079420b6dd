"""Stream recorded signals to disk in chunks: the results writers, gathered.

* :class:`~cosim.stream_writer.StreamWriter`: the base (chunks, decimation, the writer
  thread of the real-time runner, what a kill loses);
* :class:`~cosim.csv_results.CsvWriter` / :func:`~cosim.csv_results.read_csv`: plain CSV
  whose header is the signal names (``pandas.read_csv(path)["car.zs"]``), with a JSON
  sidecar for the units, the provenance and the status; :func:`~cosim.csv_results.write_csv`
  writes a Results object the same way;
* :func:`~cosim.csv_results.read_dataframe`: a CSV or HDF5 results file as a pandas
  DataFrame with the units in ``df.attrs["units"]``;
* :class:`~cosim.hdf5_results.Hdf5Writer` / :func:`~cosim.hdf5_results.read_hdf5`: HDF5
  (SWMR, valid after a kill).
"""

from __future__ import annotations

from .csv_results import CsvWriter, read_csv, read_dataframe, sidecar_path, write_csv
from .hdf5_results import Hdf5Writer, read_hdf5
from .stream_writer import StreamWriter

__all__ = ["CsvWriter", "Hdf5Writer", "StreamWriter", "read_csv", "read_dataframe",
           "read_hdf5", "sidecar_path", "write_csv"]
