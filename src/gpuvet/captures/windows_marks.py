"""What marks a text as holding Windows' records of a GPU (issue 46, WIN): the words of the event log's records
(captures/windows.py), the bug checks (windows_bugcheck.py), Device Manager's problem codes (windows_devices.py),
WHEA-Logger's hardware error records (whea.py) and a program's or nvidia-smi's Windows messages. Kept apart from the
readers so formats.py can name them without importing the readers (issue 43: a text holding none never loads them)."""

WINDOWS = "Windows adapter listing"  # dxdiag's Display Devices, Win32_VideoController's fields (captures/windows.py)
EVENTS = "Windows event log or WSL lines"  # the kind a file holding the display drivers' records is read as
WHEA = "WHEA-Logger hardware error records"  # the kind of a file holding WHEA's records (captures/whea.py)
WHEA_MARKS = ("hardware error has occurred",)  # every record's first line (whea._HEAD)
LIST_MARKS = ("Card name", "DriverVersion", "VideoProcessor", "-Driver Version")  # not -q's 'Driver Version :'
MARKS = (
    "nvlddmkm",
    "amdkm",
    "amdwddmg",
    "atikm",
    "igfx",
    "igdkmd",
    "Display driver",
    "TDR occurred",
    "LKD_0x",
    "LiveKernelEvent",
    "ugcheck",
    "ugCheck",
    "UGCHECK",
    "ug Check",
    "Stop code",
    "VIDEO_",
    "_TIMEOUT_DETECTED",
    "THREAD_STUCK_IN_DEVICE_DRIVER",
    "WHEA_UNCORRECTABLE",
    "PAGE_FAULT_IN_NONPAGED_AREA",
    "SYSTEM_SERVICE_EXCEPTION",
    "IRQL_NOT_LESS_OR_EQUAL",
    "EXCEPTION_NOT_HANDLED",
    "DPC_WATCHDOG_VIOLATION",
    "MEMORY_MANAGEMENT",
    "dxg",
    "GPU access blocked",
    "initialize NVML: N/A",  # FX68F: NVML's init with a status nvidia-smi cannot name (WSL2's)
    "/usr/lib/wsl/lib/",
    "CUDA Version: ERR!",
    "Time-Out limit",
    "DXGI_ERROR_",
    "887A00",
    "887a00",
    "driver timeout",
    "WattMan",
    "Event ID",
    "EventID",
    "ProviderName",
    *(f"{c}ode {n}" for c in "Cc" for n in (10, 12, 22, 28, 31, 37, 39, 43, 45, 48, 52)),
    "ErrorCode",
    "CM_PROB_",
    "working properly",
    "is not recognized as an internal",
    "Set driver model",
)
