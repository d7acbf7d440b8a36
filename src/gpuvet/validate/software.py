"""Software and settings checks now live in the shared layer (``gpuvet.checks.software``); this
name stays for importers of the old place."""

from gpuvet.checks.software import cuda_compatibility, host_load_check, software_checks

__all__ = ["cuda_compatibility", "host_load_check", "software_checks"]
