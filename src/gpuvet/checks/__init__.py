"""The judging pieces several jobs share, below the jobs: checks and verdicts, expected values
from the design, benchmark records turned into checks, software compatibility, events and
detectors, admission of a new module, and the telemetry window."""
