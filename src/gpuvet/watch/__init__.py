"""`gpuvet watch`: telemetry into the logbook, detectors that turn it into events, the
overheating forecast, hot-plug with admission checks, a Prometheus endpoint."""
