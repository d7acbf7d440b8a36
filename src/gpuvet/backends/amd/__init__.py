"""AMD Instinct: the backend, its one AMD SMI gateway (the only importer of amdsmi) and telemetry."""
