"""Events now live in the shared layer (``gpuvet.checks.events``); this name stays for the
watch modules and faces that import it from here."""

from gpuvet.checks.events import Event, Severity

__all__ = ["Event", "Severity"]
