"""Studies built on the models: the papers' headline claims re-measured
(:mod:`optsched.studies.reproduce`, one module per claim) and parameter sweeps
(:mod:`optsched.studies.sweep`)."""
