"""Issue 46 (ASC): the markers of the Ascend readers formats.py runs on first need (captures/ascend_codes.py,
captures/hccn_tool.py), kept apart so formats names them without importing the readers (issue 43)."""

from __future__ import annotations

# the error-manager codes' first three characters, as knowledge/ascend_codes.yaml lists them ('EE1002', 'EL0004')
EM_OPENINGS = ("EE1", "EE2", "EE4", "EH0", "EK0", "EK9", "EL0", "EZ2", "EZ9", "WE0")  # EZ9: R5C's unsupported
# a return code in its printed context ('NPU function error: …, error code is N', 'errorCode = N', 'runtime result =
# N', 'aclrtSetDevice(deviceId) failed: N', '… failed, ret = N'), torch_npu's labels, an error-manager code
CODES = ("error code is", "errorCode", "runtime result", "error code:", "error code =", "ret =", "ret=", "ret:",
         "retCode", ") fail", "UCE ERROR", "ECC ERROR", "MEM ERROR", "LINK ERROR", "REMOTE ERROR", "FORCE STOP",
         "RETRY FAILED", "CANN error:", *EM_OPENINGS)  # llama.cpp's ggml-cann prefix
# hccn_tool's command line, or one of its answers pasted without it
HCCN = ("hccn_tool", "link status:", "net health status:", "optical info:", "link up count")
