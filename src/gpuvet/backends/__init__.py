"""Where readings come from: a real machine (NVML, the host) or a simulated node. Every
backend returns the same typed readings; jobs never ask which one they talk to."""
