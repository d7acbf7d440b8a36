"""Expected values now live in the shared layer (``gpuvet.checks.expected``); this name stays for
importers of the old place."""

from gpuvet.checks.expected import Expectations

__all__ = ["Expectations"]
