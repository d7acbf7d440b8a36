"""Issue 46 (AGX2): NVENC's status codes as the programs that call it print them. nvEncodeAPI.h's NVENCSTATUS (1
NV_ENC_ERR_NO_ENCODE_DEVICE … 25 NV_ENC_ERR_RESOURCE_NOT_MAPPED) comes back from an nvEnc* call, and each program
says it its own way:

    ffmpeg    [h264_nvenc @ 0x…] OpenEncodeSessionEx failed: out of memory (10)      (nvenc.c's nvenc_map_error)
    NVEncC    nvenc : Error on nvEncOpenEncodeSessionEx: 10 (NVENC indicates that the API call failed because …)
    OBS       [jim-nvenc: 'x'] init_session: nv.nvEncOpenEncodeSessionEx(…) failed: 10 (NV_ENC_ERR_OUT_OF_MEMORY)
    Sunshine  NvEnc: NvEncOpenEncodeSessionEx() failed: NV_ENC_ERR_UNSUPPORTED_DEVICE

The code, by name or number, says whose the failure is (NVIDIA Video Codec SDK, NVENCSTATUS): no encode-capable
device (1) or a device NVENC does not support (2) is a model without the encoder: the request the card does not
offer, the verdict of ffmpeg's 'No capable devices found' for the same condition (encoder_setting); a device that
no longer exists and must be reinitialised (5) is the driver's state (a reset, a GPU lost); the session refused
as out of memory when it opens (10: a consumer card's limit on simultaneous encode sessions, 3 before driver 530,
5 until 551, 8 since, or the card's memory full), an API newer than the driver (15), a setting the encoder refuses
as it is set up (8, 12: the program's request), any other code a call failing in the driver while it encodes.
app_gpu_lines calls ``kind`` on its encoder lines."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy

UNSUPPORTED = "app_nvenc_unsupported"
LOST = "app_nvenc_device_lost"
SESSIONS = "app_nvenc_sessions"
DRIVER_OLD = "app_nvenc_driver_old"
SETTING = "app_nvenc_setting"
FAILED = "app_nvenc_failed"
# NVENCSTATUS (nvEncodeAPI.h): its number, its name after NV_ENC_ERR_, ffmpeg's words for it (nvenc_map_error)
_CODES = (
    (1, "NO_ENCODE_DEVICE", "no encode device"),
    (2, "UNSUPPORTED_DEVICE", "unsupported device"),
    (3, "INVALID_ENCODERDEVICE", "invalid encoder device"),
    (4, "INVALID_DEVICE", "invalid device"),
    (5, "DEVICE_NOT_EXIST", "device does not exist"),
    (6, "INVALID_PTR", "invalid ptr"),
    (7, "INVALID_EVENT", "invalid event"),
    (8, "INVALID_PARAM", "invalid param"),
    (9, "INVALID_CALL", "invalid call"),
    (10, "OUT_OF_MEMORY", "out of memory"),
    (11, "ENCODER_NOT_INITIALIZED", "encoder not initialized"),
    (12, "UNSUPPORTED_PARAM", "unsupported param"),
    (13, "LOCK_BUSY", "lock busy"),
    (14, "NOT_ENOUGH_BUFFER", "not enough buffer"),
    (15, "INVALID_VERSION", "invalid version"),
    (16, "MAP_FAILED", "map failed"),
    (17, "NEED_MORE_INPUT", "need more input"),
    (18, "ENCODER_BUSY", "encoder busy"),
    (19, "EVENT_NOT_REGISTERD", "event not registered"),
    (20, "GENERIC", "generic error"),
    (21, "INCOMPATIBLE_CLIENT_KEY", "incompatible client key"),
    (22, "UNIMPLEMENTED", "unimplemented"),
    (23, "RESOURCE_REGISTER_FAILED", "resource register failed"),
    (24, "RESOURCE_NOT_REGISTERED", "resource not registered"),
    (25, "RESOURCE_NOT_MAPPED", "resource not mapped"),
)
_BY_NAME = {name: n for n, name, _ in _CODES}
_BY_WORDS = {words: n for n, _, words in _CODES}
_NOT_FAULTS = {17}  # NEED_MORE_INPUT: the encoder asks for the next frame (no failure)
# an nvEnc call (its name) and the status it returned: by number after the call ('…SessionEx: 10 (',
# '…) failed: 10 (', ffmpeg's 'failed: out of memory (10)') or by its NV_ENC_ERR_ name anywhere on the line
_CALL = lazy(
    r"\b(?:[Nn]v[Ee]nc|NvEncodeAPI|OpenEncodeSession|EncodePicture|LockBitstream|CreateInputBuffer|"
    r"CreateBitstreamBuffer|RegisterResource|MapInputResource|InitializeEncoder)\w{0,40}"
)
_NUMBER = lazy(r"(?:\([^\n]{0,80}?\))?(?: failed| returned| error)?\s?[:=]\s?(?:error\s)?(\d{1,2})\b(?!\.\d)")
_WORDS = lazy(
    r"(?:failed!?|buffer|[Ff]ailed [\w ]{1,40}): (" + "|".join(re.escape(w) for _, _, w in _CODES) + r") \((\d{1,2})\)"
)
_NAME = lazy(r"\bNV_ENC_ERR_([A-Z_]{3,30})\b")
_OPEN = ("OpenEncodeSession", "EncodeSessionEx")
# NVEncC's own explanation of a code it printed and its summary after one (read with it, no fact of their own);
# the programs' healthy lines of the class: NVEncC's banner, Sunshine's encoder found
_HINTS = lazy(
    r"This error might occur when shortage of memory|simultaneous encoding is limited|"
    r"No GPU found suitable for NVEnc Encoding|Failed to init encoder session for getting features|"
    r"\bNVEncC?(?:64)? \(x(?:64|86)\) [\d.]+ [^\n]{0,40}\bby rigaya\b|\bFound (?:H\.264|HEVC|AV1) encoder: \w+_nvenc\b"
)
WORDS = ("nvEnc", "NvEnc", "NV_ENC_ERR_", "EncodeSession", "NVEnc")  # a line holds one of them or is not searched


def kind(text: str) -> str | None:
    """The kind of an NVENC status line ('' where it is NVEncC's explanation of one: read, no fact of its own),
    else None (app_gpu_lines' other rules read it)."""
    code = _code(text) if any(w in text for w in WORDS) or "ailed" in text else None
    if code is None:
        return "" if ("ncod" in text or "NVEnc" in text) and _HINTS.search(text) is not None else None
    if code in _NOT_FAULTS:
        return ""
    opening = any(w in text for w in _OPEN)
    if code in (1, 2):
        return UNSUPPORTED
    if code == 5:
        return LOST
    if code == 10 and opening:
        return SESSIONS
    if code == 15:
        return DRIVER_OLD
    # a parameter refused when the encoder is set up is the program's request; mid-encode, the driver's failure
    return SETTING if code in (8, 12) and "Initialize" in text else FAILED


def _code(text: str) -> int | None:
    """The NVENCSTATUS the line reports: its NV_ENC_ERR_ name, ffmpeg's words and number, or a number after a
    call's name."""
    if (m := _NAME.search(text)) is not None and m.group(1) in _BY_NAME:
        return _BY_NAME[m.group(1)]
    if (w := _WORDS.search(text)) is not None and _BY_WORDS[w.group(1)] == int(w.group(2)):
        return int(w.group(2))
    for call in _CALL.finditer(text):
        if (n := _NUMBER.match(text, call.end())) is not None and 0 < int(n.group(1)) <= len(_CODES):
            return int(n.group(1))
    return None
