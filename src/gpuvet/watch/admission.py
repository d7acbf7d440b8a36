"""Admission now lives in the shared layer (``gpuvet.checks.admission``); this name stays for
importers of the old place."""

from gpuvet.checks.admission import MIN_PCT_OF_EXPECTED, Admission, admit

__all__ = ["MIN_PCT_OF_EXPECTED", "Admission", "admit"]
