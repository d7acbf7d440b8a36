"""Errors a user can act on.

Every error gpuvet raises for bad input says *what* is wrong, *where* (file, field path,
module), and *how to fix it*. The CLI prints `str(error)` as one paragraph and exits 2.
"""

from __future__ import annotations


class GpuvetError(Exception):
    """Base class: an error with a what / where / fix message."""

    def __init__(self, what: str, where: str | None = None, fix: str | None = None) -> None:
        self.what = what
        self.where = where
        self.fix = fix
        super().__init__(self.message)

    @property
    def message(self) -> str:
        what = f"{self.where}: {self.what}" if self.where else self.what
        if not self.fix:
            return what
        # "Fix:" starts a sentence of its own, even after a message that ends without a stop
        stop = "" if what.rstrip().endswith((".", "!", "?", ":", ";")) else "."
        return f"{what}{stop} Fix: {self.fix}"


class SpecError(GpuvetError):
    """A node spec (file or preset) is malformed or inconsistent."""


class CatalogError(GpuvetError):
    """A module model is not in the catalog."""


class CaptureError(GpuvetError):
    """A captured nvidia-smi output cannot be read."""


class BackendError(GpuvetError):
    """A backend could not produce a reading it was asked for."""
