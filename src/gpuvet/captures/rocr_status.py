"""Issue 46 (FRW): what HSA_STATUS_ERROR_OUT_OF_RESOURCES means where ROCr returns it from hsa_init. rocminfo's
first call is hsa_init (rocminfo.cc: RET_IF_HSA_ERR prints 'hsa api call failure at: …rocminfo.cc:N' and 'Call
returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. …'), and ROCr's
runtime load returns that status when it cannot open /dev/kfd or finds no GPU agent it supports (ROCR-Runtime
runtime.cpp: a failed amd::Load is OUT_OF_RESOURCES). So from rocminfo, or a line naming hsa_init, it is no usable
GPU, never an application asking for too much memory: the user's access to /dev/kfd and /dev/dri/renderD* (the
'render'/'video' group) where the same file shows rocminfo working as root or rocminfo's own 'Unable to open /dev/kfd
read-write: Permission denied'; /dev/kfd absent where rocminfo says it has no such file (amdgpu loaded without its
KFD); a GPU ROCm does not support where the file names one (gfx8: Polaris RX 460-590, Fiji,
Tonga); else no GPU agent, the reason not in the capture. The same status from a HIP program's allocation
(hipMalloc, a kernel launch) stays an out of memory (hip_errors' kind)."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

NO_AGENT, USER_DENIED, UNSUPPORTED = "rocr_no_agent", "rocr_user_denied", "rocr_unsupported_gpu"
NO_KFD = "rocr_no_kfd"
# R3B: /dev/kfd there but its open failing ENOMEM (kfd_open: no process context), and amdgpu's KFD refusing the ASIC
KFD_ENOMEM, KFD_ASIC = "rocr_kfd_enomem", "rocr_kfd_unsupported_asic"
# R7A: /dev/kfd's open failing with another errno (rocminfo prints strerror: 'Invalid argument', 'No such device' …)
KFD_OPEN = "rocr_kfd_open_failed"
_INIT_CALL = re.compile(r"hsa api call failure at(?:: \S*rocminfo\.cc:\d+| line \d+, file: \S*rocminfo\.cc)|\bhsa_init\b")
_STATUS = re.compile(r"HSA_STATUS_ERROR_OUT_OF_RESOURCES|\bCall returned 4104\b")  # R8C: ROCm 2's number
# rocminfo's report of the same ROCr working: its system attributes and agent list (run as root, or another time)
_WORKED = re.compile(r"^\s*(?:HSA System Attributes|HSA Agents)\s*$|^\s*Runtime Version:\s+\d")
# rocminfo's CheckInitialState words for /dev/kfd the user cannot open, and for a user outside the DRM group
_DENIED = re.compile(
    r"Unable to open /dev/kfd read-write: (?:Permission denied|Operation not permitted)"
    r"|\bis not member of \"(?:render|video)\" group|/dev/kfd: Permission denied"
)
# rocminfo's words for /dev/kfd absent: amdgpu is loaded (rocminfo says 'ROCk module is loaded') but brought up no KFD
_NO_KFD = re.compile(r"Unable to open /dev/kfd read-write: No such file or directory|/dev/kfd: No such file or directory")
# rocminfo's (and strace's) words for the open of /dev/kfd failing ENOMEM
_ENOMEM = re.compile(r"Unable to open /dev/kfd read-write: Cannot allocate memory|\"/dev/kfd\".{0,40}= -1 ENOMEM")
# R7A: any other errno rocminfo's strerror prints for the open of /dev/kfd (EINVAL in a container, ENODEV, EBUSY …)
_OPEN_OTHER = re.compile(r"Unable to open /dev/kfd read-write: (?!Permission denied|Operation not permitted|No such "
                         r"file or directory|Cannot allocate memory)([A-Z][\w ,/-]{2,40})")
# amdgpu's kgd2kfd_probe (amdkfd/kfd_device.c): 'kfd not supported on this ASIC' (before 5.x), then 'GC IP %06x %s not
# supported in kfd' / 'asic … not supported in kfd'; the bus id is dev_info's prefix ('amdgpu 0000:02:00.0: ')
_ASIC = re.compile(r"\b([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):.{0,40}?(?:kfd not supported on this ASIC"
                   r"|not supported in kfd)|(?:kfd not supported on this ASIC|not supported in kfd)")
# R7A: an lspci line of an AMD GPU: the module an ASIC line without a bus id ('kfd kfd: amdgpu: PITCAIRN  not
# supported in kfd') names, where the file lists one AMD GPU only
_AMD_GPU = re.compile(r"^\s*((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(?:VGA compatible|Display|3D) "
                      r"controller.{0,20}?:\s*(?:Advanced Micro Devices|ATI Technologies|AMD)")
# a GPU ROCm's runtime has no support for in the file: the gfx8 targets and their marketing names
_GFX8 = re.compile(
    r"\bgfx80[0-3]\b|\bPolaris\b|\bFiji\b|\bTonga\b|\bEllesmere\b|\bBaffin\b|\bLexa\b"
    r"|\bRX\s?(?:4[6-8]0|5[5-9]0)X?\b|\bR9 (?:Fury|Nano|3[89]0X?)\b"
)


def judge(lines: list[Line], errors: list[AppError]) -> list[AppError]:
    """``errors`` (hip_errors' records) with an OUT_OF_RESOURCES from hsa_init re-kinded by what the file shows,
    and rocminfo's own 'cannot open /dev/kfd' read as the user denied (once)."""
    texts = [ln.text for ln in lines]
    denied = next((ln for ln in lines if ("kfd" in ln.text or "group" in ln.text) and _DENIED.search(ln.text)), None)
    no_kfd = next((ln for ln in lines if "kfd" in ln.text and _NO_KFD.search(ln.text)), None)
    worked = any(_WORKED.match(t) for t in texts)
    gfx8 = next((m.group(0) for t in texts if (m := _GFX8.search(t)) is not None), None)
    enomem = next((ln for ln in lines if "kfd" in ln.text and _ENOMEM.search(ln.text)), None)
    asic = next(((ln, m.group(1) or _only_amd_gpu(lines)) for ln in lines if "kfd" in ln.text
                 and (m := _ASIC.search(ln.text))), None)
    other = next((ln for ln in lines if "kfd" in ln.text and _OPEN_OTHER.search(ln.text)), None)
    out: list[AppError] = []
    for e in errors:
        if e.kind == "hip_out_of_memory" and _from_init(lines, e.line):
            kind = (
                USER_DENIED
                if denied is not None or worked
                else KFD_ASIC
                if asic is not None
                else NO_KFD
                if no_kfd is not None
                else UNSUPPORTED
                if gfx8
                else NO_AGENT
            )
            module = f"AMD GPU ({gfx8})" if kind == UNSUPPORTED else asic[1] if asic and kind == KFD_ASIC else e.module
            e = replace(e, kind=kind, module=module, tool="rocminfo/ROCr")
            if kind == KFD_ASIC and asic is not None:  # R7A: amdgpu's own line says why, the status only that it failed
                e = replace(e, line=asic[0].no, text=asic[0].text.strip()[:300])
        out.append(e)
    own = (USER_DENIED, NO_KFD, KFD_ASIC, KFD_ENOMEM, KFD_OPEN)
    found = (USER_DENIED, denied), (NO_KFD, no_kfd), (KFD_ASIC, asic and asic[0]), (KFD_ENOMEM, enomem), (KFD_OPEN, other)
    for kind, said in found:
        if said is not None and all(e.kind not in own for e in out):
            out.append(AppError(kind, said.no, said.text.strip()[:300], asic[1] if asic and kind == KFD_ASIC else None,
                                "rocminfo/ROCr"))
    return out


def _only_amd_gpu(lines: list[Line]) -> str | None:
    """The bus id of the one AMD GPU lspci lists in the file (none where it lists none or several)."""
    found = {m.group(1) for ln in lines if "controller" in ln.text and (m := _AMD_GPU.match(ln.text))}
    bus = next(iter(found)) if len(found) == 1 else None
    return bus if bus is None or bus.count(":") == 2 else f"0000:{bus}"


def _from_init(lines: list[Line], no: int) -> bool:
    """The status line at ``no`` is hsa_init's: it names hsa_init, or rocminfo's call-failure line is just above."""
    at = next((i for i, ln in enumerate(lines) if ln.no == no), None)
    if at is None or not _STATUS.search(lines[at].text):
        return False
    return any(_INIT_CALL.search(lines[i].text) for i in range(max(0, at - 2), at + 1))
