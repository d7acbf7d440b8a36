"""Issue 46 (R12D): the amdgpu driver's power-management messages that say the SMU (the module's power firmware) did
not act on a message, read as one fact: kernel_messages.yaml's amd_smu_no_answer (warn, module_firmware_unresponsive).

Each pattern is the printf format of its source (torvalds/linux, drivers/gpu/drm/amd, v6.12):
- pm/swsmu/smu_cmn.c (smu_cmn_send_msg_without_waiting, __smu_cmn_send_msg) and smu11/smu_v11_0.c before 5.10:
  'Msg issuing pre-check failed(0x%x) and SMU may be not in the right state!' (older without '(0x%x)'): the SMU
  had not answered the message before it;
- pm/swsmu/amdgpu_smu.c (smu_dpm_set_vcn_enable, smu_dpm_set_jpeg_enable, smu_dpm_set_vpe_enable): 'Failed to power
  gate VCN!', 'Failed to power ungate JPEG!' and the like: the SMU refused or did not answer a power-gating message;
- pm/amdgpu_dpm.c (amdgpu_dpm_enable_uvd, amdgpu_dpm_enable_vce, amdgpu_dpm_enable_jpeg): 'Dpm disable uvd failed,
  ret = -5.': the same message through the dpm layer;
- amdgpu/amdgpu_gfx.c (amdgpu_gfx_off_ctrl, amdgpu_gfx_off_ctrl_immediate): 'failed to enable gfxoff', 'Failed to
  disable gfxoff!' (dev_err/DRM_ERROR spellings): the SMU's gfxoff message failed;
Powerplay's 'failed to send message %x ret is 0' (smu7) stays kernel.py's amd_recovery_failed (batch p's row repeats
it every two seconds on a module that never came back) and smu9's 'Failed to send message: 0x26, ret value: 0x0' a
lead (driver_error_unnamed, warn: batch x's strict table holds that cause for its row).
Each one alone leaves the module running (a video decoder not power-gated, gfxoff not entered): warn, never
critical; where the driver then gave the module up a line of its own (a reset failed, init failed) says so."""

from __future__ import annotations

import re

from gpuvet.captures.text import Line

_SMU = (
    r"\bMsg issuing pre-check failed\b|\bSMU may be not in the right state\b|"
    r"\bFailed to power (?:un)?gate\b|"
    r"\bDpm (?:en|dis)able (?:uvd|vce|jpeg|vcn) failed, ret = -?\d+|"
    r"\bfailed to (?:en|dis)able gfxoff\b"
)
# (kind, pattern): kernel_phrases makes them its KernelMessage records (it imports this module, not the reverse)
AMD: tuple[tuple[str, re.Pattern[str]], ...] = (("amd_smu_no_answer", re.compile(_SMU, re.I)),)
_FAMILY = re.compile(_SMU, re.I)
_WORDS = ("Msg issuing", "Failed to", "failed to", "*ERROR*")  # a line the copy may have cut inside the family's words
_OWN = re.compile(r"^\s*(?:\[\s*\d+\.\d+\]|\w{3} [ \d]\d |\d{4}-\d\d-\d\d)|\b(?:amdgpu|kernel):")  # a line of its own


def joined(lines: list[Line], worded: list[tuple[int, Line]]) -> tuple[list[Line], list[tuple[int, Line]]]:
    """``lines`` and ``worded`` with each amdgpu line a copy wrapped inside one of the family's messages ('amdgpu:
    Msg issuing' above 'pre-check failed and SMU may be not in the right state!', '*ERROR* Dpm' above 'disable uvd
    failed, ret = -5.') joined to the line that ends it, so the message meets its driver and its module; only
    where the joined text is the family's and the line alone is not."""
    cut = [
        i
        for i, ln in worded
        if any(w in ln.text for w in _WORDS)
        and i + 1 < len(lines)
        and "amdgpu" in ln.text
        and _FAMILY.search(ln.text) is None
        and _OWN.search(lines[i + 1].text) is None
        and _FAMILY.search(ln.text.rstrip() + " " + lines[i + 1].text.strip()) is not None
    ]
    if not cut:
        return lines, worded
    lines = list(lines)
    for i in cut:
        lines[i] = Line(lines[i].no, lines[i].text.rstrip() + " " + lines[i + 1].text.strip())
    return lines, [(i, lines[i]) for i, _ in worded]
