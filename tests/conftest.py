"""Shared pytest fixtures, markers and the Hypothesis profiles.

Profiles (``OPTSCHED_HYPOTHESIS_PROFILE``):

* ``default``: the README's test command; seeds derandomised, so a run is reproducible;
* ``long``: CI's second step; 10x the examples of every property test and fresh random
  seeds each run (a failure prints the seed and the shrunk example to reproduce it).

Per-test example counts are written as ``examples(n)`` (tests/strategies.py), which
scales ``n`` by the active profile's ``max_examples`` over the default's, so that the
long profile scales them too (tests/test_structure.py refuses a bare count).

Markers: ``slow`` (documentation build, the quick reproduction) is left out of the
default run and run by CI's second step; ``property`` is set on every Hypothesis test,
for ``pytest -m property``.

The test tree mirrors the package (tests/core, tests/solvers, tests/sim, one folder per
paper, ...); shared helpers sit at the top: ``strategies`` (Hypothesis strategies),
``lp_problems`` (standard LP/MILP problems and optimality checks), ``paths``,
``registry_state`` (the registry restored around code that registers its own methods,
policies or backends); ``own_code/`` holds a researcher's modules outside optsched (an
own heuristic and policies, an installed plugin) for the ``own_code`` and
``plugin_dist`` fixtures.
"""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings
from registry_state import registry_kept
from strategies import BASE_EXAMPLES

settings.register_profile("default", deadline=None, max_examples=BASE_EXAMPLES,
                          derandomize=True, database=None)
settings.register_profile("long", deadline=None, max_examples=10 * BASE_EXAMPLES,
                          derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("OPTSCHED_HYPOTHESIS_PROFILE", "default"))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.property)


@pytest.fixture(params=["highs", "pyomo", "cvxpy"])
def backend(request):
    """Each solver backend in turn (skipped where it is not installed)."""
    from optsched.solvers import available_backends

    if not available_backends()[request.param]:
        pytest.skip(f"backend {request.param} not available")
    return request.param


#: A researcher's modules outside optsched: an own heuristic and own policies
#: (ownsched), an installed package's plugin (ownplugin) and a broken one.
OWN_CODE = Path(__file__).resolve().parent / "own_code"


@pytest.fixture
def own_code(monkeypatch):
    """``tests/own_code`` on ``sys.path``; afterwards the registry as it was
    (:func:`registry_kept`) and the modules forgotten."""
    monkeypatch.syspath_prepend(str(OWN_CODE))
    with registry_kept():
        yield OWN_CODE
    for mod in ("ownsched", "ownplugin", "ownplugin_broken"):
        sys.modules.pop(mod, None)


@pytest.fixture
def plugin_dist(own_code, tmp_path, monkeypatch):
    """An installed distribution declaring two entry points of the group
    ``optsched.plugins`` (``ownplugin``, which registers ``allox`` method ``lpt`` and
    policy ``plug.fifo``, and ``ownplugin_broken:setup``, which raises), loaded."""
    from optsched.extend import PluginWarning, load_plugins

    info = tmp_path / "site" / "ownplugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ownplugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[optsched.plugins]\nown = ownplugin\nbroken = ownplugin_broken:setup\n")
    monkeypatch.syspath_prepend(str(info.parent))
    with pytest.warns(PluginWarning, match="broken"):
        load_plugins(reload=True)
    return info.parent
