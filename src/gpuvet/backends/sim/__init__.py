"""The simulated node: its backend, engine, physics, NICs and telemetry, all from the node spec."""
