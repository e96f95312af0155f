"""optsched: formal models for scheduling deep-learning training jobs on GPU clusters."""

__version__ = "0.1.0"
