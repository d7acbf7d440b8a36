"""Issue 46 (R3D): a hardware encoder's own words that it does not offer what a program asked, which are no
failure of the GPU: ffmpeg's 'No NVENC capable devices found' (libavcodec/nvenc.c: no device of the machine passed
its check for the codec asked, a model without NVENC or one too old for this ffmpeg's API, Kepler's NVENC v1 under
a current ffmpeg) and OBS's NVENC encoders refusing a setting ('[NVENC Encoder: '…'] Failed to open NVENC encoder:
Invalid argument (-22)', obs-ffmpeg's av_err2str; '[jim-nvenc: '…'] nvEncInitializeEncoder failed: 8
(NV_ENC_ERR_INVALID_PARAM)', '[obs-nvenc: …] …'). Both are read and judged as the application's request (info);
OBS's other NVENC lines (creating, preset, destroying) are read, never refused. app_gpu_lines calls ``kind``."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy

ABSENT = "app_nvenc_absent"  # no NVENC the program can use for the codec it asked
SETTING = "app_nvenc_setting"  # the encoder refused the program's parameters
_ABSENT = lazy(
    r"No NVENC capable devices found|_nvenc @[^\]\n]{0,40}\] No capable devices found"
    r"|doesn't support required NVENC features"
)
_OBS = lazy(
    r"\[(?:NVENC Encoder|jim-nvenc|obs-nvenc|ffmpeg[-_ ]nvenc|texture-nvenc)\b[^\]\n]{0,80}\]"
    r"|\[Unified Encoder\][^\n]{0,40}\bNVENC\b",
    re.I,
)
_SETTING = lazy(
    r"Failed to open NVENC encoder: Invalid argument \(-22\)|\b(?:nvEnc)?\w{0,30}failed: 8 "
    r"\(NV_ENC_ERR_INVALID_PARAM\)|\bNV_ENC_ERR_(?:INVALID_PARAM|UNSUPPORTED_PARAM)\b"
)


def kind(text: str) -> str | None:
    """The kind of an encoder's line of this class ('' where it is OBS's NVENC line of no refusal: read), else
    None (not this class's: app_gpu_lines' other rules read it)."""
    if _ABSENT.search(text) is not None:
        return ABSENT
    if _OBS.search(text) is None:
        return None
    return SETTING if _SETTING.search(text) is not None else ""
