"""Tests of the node layer: backends, catalog, simulator, telemetry, the performance model."""
