"""The registry kept as it was around code that registers methods, policies, backends
or plugins of its own (the tests of optsched.extend, the docs' examples)."""

import contextlib

__all__ = ["registry_kept"]


@contextlib.contextmanager
def registry_kept():
    """Within the block, papers, methods, policies, solver backends, plugins and
    module:name references may be registered; afterwards the registry is as it was."""
    from optsched import extend, registry, solvers

    papers = dict(registry._PAPERS)
    methods = {n: s.methods for n, s in papers.items()}
    policies, plugins = dict(registry._POLICIES), extend._plugins
    referenced, backends = dict(extend._referenced), dict(solvers._REGISTERED)
    try:
        yield
    finally:
        registry._PAPERS.clear()
        registry._PAPERS.update(papers)
        for name, spec in papers.items():
            object.__setattr__(spec, "methods", methods[name])
        registry._POLICIES.clear()
        registry._POLICIES.update(policies)
        extend._plugins = plugins
        extend._referenced.clear()
        extend._referenced.update(referenced)
        solvers._REGISTERED.clear()
        solvers._REGISTERED.update(backends)
