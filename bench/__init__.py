"""Benchmarks of the cosim engine against peer tools, measured in the same run.

Run ``python -m bench SUITE [--quick] [--json PATH] [--repeats N] [--markdown]`` from the
repository root; ``SUITE`` is a registered suite (``core``) or ``all``.  ``make bench``
runs every suite in full mode.

Modules
    harness   timing (median of repeats, fresh model each repeat), statuses, targets,
              environment record, suite registry, JSON and table/markdown output
    models    model definitions, reference solutions, block-count convention
    peers     the models in PathSim, bdsim and two reference floors (lazy imports)
    core      the ``core`` suite: models A (msd_pid), B (lag_chain), C (nl_chain),
              D (udb_chain)
    ours_core our engine's side of the ``core`` suite
"""
