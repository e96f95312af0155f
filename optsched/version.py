"""The version of optsched (one place, read by the package, the CLI and reports)."""

__version__ = "0.1.0"
