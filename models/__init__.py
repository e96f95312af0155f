"""Workload catalog data shipped with optsched (installed as ``optsched.catalog_data``).

Data files only: measured throughputs, traces, cluster specs and published figures from
Gavel, Synergy, Tiresias and Salus, each with its source and license (see README.md and
LICENSES/). Read them through :mod:`optsched.catalog`.
"""
