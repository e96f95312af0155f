"""Parameter sweeps: a grid of solve cells (model x method x instance size x seed) and
simulation cells (policy x trace x load factor or arrival rate x seed), run in parallel,
resumable, written as one tidy table. The config format, the cells' keys and instances,
the engines and the table's columns are described in ``docs/sweeps.md``.

Modules: :mod:`~optsched.studies.sweep.config` (the config, checked when read),
:mod:`~optsched.studies.sweep.cells` (the grid, keys, seeds and instances),
:mod:`~optsched.studies.sweep.run` (a cell into its row; the sweep on local processes
or Dask, resumably) and :mod:`~optsched.studies.sweep.table` (columns, CSV, JSON lines,
Parquet, plots). Every name is importable from this package.
"""

from __future__ import annotations

from optsched.studies.sweep.cells import (
    Cell,
    SimCell,
    build_instance,
    build_sim_instance,
    cell_key,
    cells_of,
    check_seeds,
)
from optsched.studies.sweep.config import GENERATORS, SIM_KEYS, SweepConfig, load_config
from optsched.studies.sweep.run import ENGINES, run_cell, run_sweep
from optsched.studies.sweep.table import (
    COLUMNS,
    FORMATS,
    TIMING,
    default_x,
    load_table,
    plot_sweep,
    write_table,
)

__all__ = ["SweepConfig", "Cell", "SimCell", "load_config", "cells_of", "cell_key",
           "run_cell", "run_sweep", "load_table", "write_table", "plot_sweep", "default_x",
           "build_sim_instance", "check_seeds", "COLUMNS", "FORMATS",
           "build_instance", "ENGINES", "GENERATORS", "SIM_KEYS", "TIMING"]
