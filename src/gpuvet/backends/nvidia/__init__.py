"""NVIDIA: the backend, its one NVML gateway (the only importer of pynvml), telemetry and Xid reading."""
