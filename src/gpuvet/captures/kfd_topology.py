"""Issue 46 (R4A): ROCm compute brought up or not, as KFD's sysfs shows it. amdkfd (drivers/gpu/drm/amd/amdkfd:
kfd_topology.c) publishes /sys/class/kfd/kfd/topology/nodes/N, one node per CPU socket (from the ACPI CRAT table, or
a 'Virtual CRAT table created for CPU' where the firmware has none: normal) and one per GPU it took ('kfd kfd: amdgpu:
added device 1002:744c'). A listing that shows no /sys/class/kfd at all ('tree … [error opening dir]', 'ls: cannot
access …: No such file or directory') is amdgpu without KFD (a kernel built without CONFIG_HSA_AMD, KFD refusing the
GPU); one whose nodes directory holds the CPU's node alone is a KFD with no GPU registered: either way ROCm, HIP and
OpenCL see no device while amdgpu (graphics) may work. Two nodes and more: read, nothing judged."""

from __future__ import annotations

import re

from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

NO_GPU_NODE = "rocr_kfd_no_gpu_node"  # doctor/capture_errors: framework_sees_no_module, the fix in vendor_tools
NO_KFD = "rocr_no_kfd"  # rocr_status' kind: /dev/kfd (here /sys/class/kfd) absent
ASIC = "rocr_kfd_unsupported_asic"  # rocr_status' kind: 'kfd not supported on this ASIC', said already
MARKS = ("/sys/class/kfd", "/dev/kfd'")  # formats' _HIP_MARKS: a text holding one is read by hip_errors
# the listing tools' words for a path that is not there: tree's '[error opening dir]', ls/cat/stat's ENOENT
_ABSENT = re.compile(r"['\"]?/(?:sys/class/kfd\S*|dev/kfd)['\"]?(?::\s*No such file or directory|\s+\[error opening dir\])")
# ls -lR's heading of the nodes directory ('/sys/class/kfd/kfd/topology/nodes:'), or the command that lists it
_NODES_HEAD = re.compile(r"/sys/class/kfd/kfd/topology/nodes/?:\s*$")
_NODES_CMD = re.compile(r"\bls(?:\s+-\w+)*\s+/sys/class/kfd/kfd/topology/nodes/?\s*$")
# kfd_device.c / kfd_topology.c: KFD refused a GPU it found (kgd2kfd_device_init failed, PCIe atomics the GPU needs not
# routed to it, an APU's IOMMUv2 not up) or built no topology: amdgpu drives the GPU, ROCm has no device on it
_NOT_ADDED = re.compile(
    r"\bdevice \S+ NOT added due to errors\b|\bskipped device \S+, PCI rejects atomics\b|"
    r"\bFailed to create KFD topology\b|\bError initializing iommuv2\b|"
    r"\bkfd not supported on this ASIC\b|\bnot supported in kfd\b"  # where no bus id lets rocr_status place it
)
_NAMES = re.compile(r"^\d{1,3}(?:\s+\d{1,3})*$")  # plain ls: the node numbers on one line
_ENTRY = re.compile(r"^\s*(?:[d-][rwx-]{9}\S*\s+\d+\s+\S+\s+\S+\s+\d+\s+\w{3}\s+\d{1,2}\s+[\d:]{4,5}\s+)?(\d{1,3})\s*$")


def judged(lines: list[Line], errors: list[AppError]) -> tuple[list[AppError], set[int]]:
    """``errors`` with KFD's absence (NO_KFD) or a topology of the CPU's node alone (NO_GPU_NODE) added, where the
    text shows either and no error of rocr_status says it already; and the listing's lines read (claimed)."""
    if any(e.kind in (NO_KFD, ASIC) for e in errors) or not any("kfd" in ln.text or "KFD" in ln.text for ln in lines):
        return errors, set()
    refused = next((ln for ln in lines if ("kfd" in ln.text or "KFD" in ln.text) and _NOT_ADDED.search(ln.text)), None)
    if refused is not None:
        return [*errors, AppError(NO_GPU_NODE, refused.no, refused.text.strip()[:300], None, "amdgpu/KFD")], {refused.no}
    absent = next((ln for ln in lines if "kfd" in ln.text and _ABSENT.search(ln.text)), None)
    if absent is not None:
        return [*errors, AppError(NO_KFD, absent.no, absent.text.strip()[:300], None, "KFD sysfs")], {absent.no}
    listed = _listing(lines)
    if listed is None:
        return errors, set()
    head, nodes, read = listed
    if len(nodes) == 1:
        errors = [*errors, AppError(NO_GPU_NODE, head.no, head.text.strip()[:300], None, "KFD sysfs")]
    return errors, read


def _listing(lines: list[Line]) -> tuple[Line, list[str], set[int]] | None:
    """The first listing of KFD's nodes directory: its heading (or command), the nodes it names, the lines read."""
    for i, ln in enumerate(lines):
        if "topology/nodes" not in ln.text or not (_NODES_HEAD.search(ln.text) or _NODES_CMD.search(ln.text)):
            continue
        nodes: list[str] = []
        read = {ln.no}
        for nxt in lines[i + 1 : i + 40]:
            text = nxt.text.strip()
            if not text or text.startswith("/") or "$" in text or "#" in text[:2]:
                break
            if not text.startswith("total "):
                m = _ENTRY.match(text)
                if m is not None:
                    nodes.append(m.group(1))
                elif _NAMES.match(text):
                    nodes += text.split()
                else:
                    nodes = []
                    break
            read.add(nxt.no)
        if nodes:
            return ln, nodes, read
    return None
