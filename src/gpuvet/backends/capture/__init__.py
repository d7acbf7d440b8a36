"""A node read back from captured files (doctor --from): readings from what the tools printed."""
