"""Detectors now live in the shared layer (``gpuvet.checks.detectors``); this name stays for the
watch modules that import it from here."""

from gpuvet.checks.detectors import (
    FATAL_XIDS,
    THROTTLE_BITS,
    ClockFlappingDetector,
    Detector,
    EccDetector,
    NvlinkDetector,
    PcieLinkDetector,
    ThrottleDetector,
    XidDetector,
    default_detectors,
    run_all,
)

__all__ = ["FATAL_XIDS", "THROTTLE_BITS", "ClockFlappingDetector", "Detector", "EccDetector", "NvlinkDetector",
           "PcieLinkDetector", "ThrottleDetector", "XidDetector", "default_detectors", "run_all"]
