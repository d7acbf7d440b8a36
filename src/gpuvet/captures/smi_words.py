"""NVML's words for a module's state, as nvidia-smi and other programs print them (issue 46, AX1): the words
nvmlErrorString gives each nvmlReturn_t (NVIDIA/DCGM sdk/nvidia/nvml/nvml_error_strings.h) say which state a module
NVML could not open is in: lost from the bus, needing a reset, short of its external power, its infoROM corrupted,
an interrupt fault, or the caller refused. Kept apart from the readers (no imports) so the kernel reader's handle
lines, nvidia-smi's other lines (captures/smi_messages.py) and app_errors' program lines read one table."""

from __future__ import annotations

import re

# nvidia-smi's 'Unable to determine the device handle for GPU <bus>: <words>' (and '… the PCI bus id for the target
# device: <words>') by NVML's words: the kind each is (captures/kernel_messages.yaml gives its cause). Every other word
# (Unknown Error, GPU is lost, Timeout …) is a module the driver no longer reaches (smi_no_handle); 'Not Found' one
# the driver lists but never initialised (smi_handle_not_found, kernel_echoes)
HANDLE_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r":\s*GPU requires (?:reset|restart)\b", re.I), "smi_handle_reset"),  # NVML_ERROR_RESET_REQUIRED
    # NVML_ERROR_INSUFFICIENT_POWER, and nvidia-smi's own longer words for it
    (
        re.compile(
            r":\s*(?:Insufficient External Power\b|Unable to communicate with GPU because it is insufficiently "
            r"powered)",
            re.I,
        ),
        "smi_handle_power",
    ),
    (re.compile(r":\s*Corrupted infoROM\b", re.I), "smi_handle_inforom"),  # NVML_ERROR_CORRUPTED_INFOROM
    (re.compile(r":\s*Interrupt Request Issue\b", re.I), "smi_handle_irq"),  # NVML_ERROR_IRQ_ISSUE
    # NVML_ERROR_NO_PERMISSION, NVML_ERROR_OPERATING_SYSTEM: the caller was refused, the module is not judged
    (
        re.compile(r":\s*(?:Insufficient Permissions|GPU access blocked by the operating system)\b", re.I),
        "smi_handle_permissions",
    ),
)
HANDLE_KINDS = tuple(kind for _, kind in HANDLE_WORDS)
LOST = "smi_no_handle"


def handle_words_kind(text: str) -> str:
    """The kind of nvidia-smi's line for a module NVML could not open, by NVML's words after it."""
    return next((kind for pattern, kind in HANDLE_WORDS if pattern.search(text)), LOST)


# NVML's return codes that put a module in a state of its own, as a program prints them: the enum's name
# (NVML_ERROR_…; nvidia-ml-py's exception NVMLError_<CamelCase>; go-nvml's ERROR_… after NVML's context) or
# nvmlErrorString's words after NVML's context on the line (read by app_errors before the API table's classes:
# knowledge/api_errors.yaml's judged_by names them)
_NVML = r"(?:\bNVML\b|\bnvml\w*)[^\n]{0,160}?[:(\-]\s*"
NVML_KINDS: dict[str, str] = {
    "nvml_reset_required": r"\bNVML_ERROR_RESET_REQUIRED\b|\bNVMLError_ResetRequired\b|"
    + _NVML
    + r"(?:GPU requires reset|ERROR_RESET_REQUIRED)\b",
    "nvml_inforom": r"\bNVML_ERROR_CORRUPTED_INFOROM\b|\bNVMLError_CorruptedInforom\b|"
    + _NVML
    + r"(?:Corrupted infoROM|ERROR_CORRUPTED_INFOROM)\b",
    "nvml_power": r"\bNVML_ERROR_INSUFFICIENT_POWER\b|\bNVMLError_InsufficientPower\b|"
    + _NVML
    + r"(?:Insufficient External Power|ERROR_INSUFFICIENT_POWER)\b",
    # issue 46 (NOTE): NVML's init found no GPU the installed driver supports (nvidia-smi then 'Unable to determine
    # the number of GPUs', exit 255): a model the release dropped or one newer than it, or none bound to nvidia
    "nvml_no_supported_gpus": r"\bFailed to initiali[sz]e NVML: No supported GPUs were found\b|"
    + _NVML
    + r"No supported GPUs were found\b",
}
