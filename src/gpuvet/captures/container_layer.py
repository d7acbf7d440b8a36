"""The container layer's own error lines, each by what it relays (issue 46, GEN2): nvidia-container-cli prints one
line per failed stage, '<stage> error: <what failed>' (libnvidia-container src/cli/configure.c), and what failed
decides the cause, not the stage: NVML's 'driver not loaded' is the host's driver, 'load library failed:
libnvidia-ml.so.1' its missing user-space, 'insufficient permissions' the device files, 'gpu is lost' a module off
the bus, an RPC to the driver timing out or failing the driver's state, while 'unknown device' (a device asked for
that the host does not list), an image carrying the driver's files ('file creation failed: … file exists'), cgroup
and ldconfig set-up errors are the runtime's configuration. The NVIDIA Container Toolkit's hook run without its
runtime, a runtime named 'nvidia' that containerd or docker does not know, are configuration too.

app_errors reads these as kinds of its own (KINDS, tried before its generic container_no_gpu); what each means is
doctor's (doctor/capture_errors.KIND_CAUSES).

IGC: the GPUs as a container sees them. Where the text shows the command ran in a container (docker run/exec,
compose, podman, kubectl exec, --gpus, the nvidia runtime), NVML's 'Failed to initialize NVML: Unknown Error' is
the container's device access (the NVIDIA Container Toolkit's known loss of the cgroup device rules after a
systemd daemon-reload, or the runtime's device set-up), 'NVIDIA-SMI has failed because it couldn't communicate
with the NVIDIA driver' and an nvidia-smi that prints nothing are a container given no device nodes or driver
libraries: each the container's, not the module's (framed). The CLI's
'nvml error: driver not loaded' is the host's kernel driver (said with its finding)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures import wsl_signs
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.lines import block
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.app_errors import AppErrorsParse
    from gpuvet.captures.marks import Marks

_CLI = r"nvidia-container-cli(?:\.real)?: "
# kind -> pattern (case-insensitive), in the order tried
KINDS: dict[str, str] = {
    "container_cli_host_driver": _CLI + r"\w+ error: nvml error: driver not loaded",
    "container_cli_no_nvml_lib": _CLI + r"\w+ error: load library failed: libnvidia-ml\.so",
    "container_cli_permissions": _CLI + r"\w+ error: nvml error: insufficient permissions",
    "container_cli_lost": _CLI + r"\w+ error: nvml error: gpu is lost",
    # NVML's other errors ('unknown error', 'timeout', 'gpu requires reset'), the CLI's RPC to its driver process
    # (src/rpc.c: 'driver rpc error: timed out', 'driver error: failed to process request')
    "container_cli_driver": _CLI + r"\w+ error: (?:nvml error: (?!driver not loaded|driver/library)|driver rpc error:|"
                                   r"driver error:)",
    # a device asked for that the host does not list (src/cli/common.c select_devices), the image's own copy of a
    # driver file, the cgroup, ldconfig and capability set-up (configure.c's other stages)
    "container_cli_config": _CLI + r"(?:device error: \S+: unknown device|mount error: (?:file creation failed|"
                                   r"failed to add device rules|mount operation failed)|container error:|"
                                   r"ldcache error:|permission error:|initialization error: open failed: "
                                   r"/proc/sys/kernel/overflow)",
    # the toolkit's hook called without its runtime (cmd/nvidia-container-runtime-hook/hook_config.go), its CLI not
    # installed (main.go), a runtime 'nvidia' the engine was never given (containerd CRI, dockerd)
    "container_runtime_config": r"invoking the NVIDIA Container Runtime Hook directly|couldn't find binary "
                                r"nvidia-container-cli in PATH|no runtime for \\?\"?nvidia\\?\"? is configured|"
                                r"unknown or invalid runtime name: nvidia",
}
# the words app_errors' search finds these lines by (lower case)
KEY_WORDS = ("nvidia-container-cli", "runtime hook directly", "no runtime for", "invalid runtime name")

# the text shows the command ran in a container: the engine's command, the GPU request, the runtime, a poster's words
_CONTAINER = lazy(r"\b(?:docker|nerdctl|podman)(?:-compose| compose)? (?:run|exec|start)\b|\bkubectl exec\b|"
                  r"--gpus[ =]|--runtime[= ]nvidia\b|\bruntime: nvidia\b|NVIDIA_VISIBLE_DEVICES|"
                  r"\b(?:inside|in) (?:the |a |my |this )?(?:docker |podman |plex |\w+ )?container\b|"
                  # AGX1: a poster's 'the container does not have access', 'the container cannot see the GPUs'
                  r"\b(?:the|this|my|our) container\b[^.\n]{0,20}?\b(?:does(?:n't| not) (?:have|see)|has no|can't|cannot)\b|"
                  r"\b(?:toolbox|distrobox) (?:images?|containers?|enter|create|run)\b|"  # R5A: Fedora's toolbox, distrobox
                  # R14D: a pod's log (kubectl logs), and a root shell named by a container id (docker's default
                  # hostname); a root shell at / is none (review 67b F10: a host's root shell can sit there too)
                  r"\bkubectl logs\b|^\s*root@[0-9a-f]{12}:",
                  re.I)
# a word every _CONTAINER match holds, and one every line framed reads holds, in some casing (lower case): a line
# holding none is not searched
_CONTAINER_WORDS = ("docker", "nerdctl", "podman", "kubectl", "--gpus", "runtime", "nvidia_visible_devices", "container",
                    "toolbox", "root@")
_MESSAGE_WORDS = ("nvml", "nvidia-smi")
_BLOCK = 8192  # lines searched at a time
# NVML's unknown error as printed; a line cut before its status is not read as one (review 67b F10)
_NVML_UNKNOWN = lazy(r"Failed to initiali[sz]e NVML: Unknown Error", re.I)
_SMI_NO_DRIVER = lazy(r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")
_SAID = lazy(r"^\s*(?:\S+@\S+:[^#$\s]*\s?[#$]\s*)?(?:Failed to initiali[sz]e NVML|NVIDIA-SMI has failed)", re.I)
_PROMPT = lazy(r"^\s*(?:\S+@\S+:[^#$\s]*\s?[#$]|[#$])\s*(?P<command>.*)$")  # 'root@plex:/# …', '$ …', '# …'
ACCESS = {  # kind -> what the line means where the text shows a container
    "container_nvml_unknown": "NVML answered 'Unknown Error' inside a container: the container's access to the GPU "
                              "device files (its cgroup device rules: lost after a systemctl daemon-reload, or rewritten "
                              "by kubelet's static CPU manager policy), not the module",
    "container_smi_no_driver": "nvidia-smi in a container could not reach the driver: the container got no GPU "
                               "device nodes or driver libraries from its runtime",
    "container_no_device": "the program in a container found no GPU or no NVIDIA driver (torch's 'Found no NVIDIA "
                           "driver', 'no CUDA-capable device'): the container's access to the host's GPUs, not the node",
    "container_smi_empty": "nvidia-smi printed nothing in the container: the container got no working GPU device "
                           "nodes or driver libraries (the image's own nvidia-smi, or no device request)",
    # R5A: ROCm's tools and HIP in a container (amd-smi's 'Unable to detect any GPU devices', 'No HIP GPUs are
    # available'): the container was given no /dev/kfd and /dev/dri, or its user is not in their groups
    "container_rocm_no_device": "amd-smi or HIP in a container found no AMD GPU: the container's access to the host's "
                                "/dev/kfd and /dev/dri (its --device flags, the video/render groups), not the node",
}
MEANING = {  # kind -> what the CLI's line means, said with its finding
    "container_cli_host_driver": "the host's NVIDIA kernel driver is not loaded: nvidia-container-cli's NVML found no "
                                 "driver, so no container gets a GPU (the container and the toolkit are not the cause)",
}
_RELABEL = {"nvml_unknown": "container_nvml_unknown", "smi_no_driver": "container_smi_no_driver",
            "no_device": "container_no_device", "rocm_no_driver": "container_rocm_no_device",
            "hip_no_device": "container_rocm_no_device"}


def framed(out: AppErrorsParse, lines: list[Line], claimed: set[int], marks: Marks | None = None) -> set[int]:
    """Where the text shows a container (app_errors on its lines; formats.read_leads after every reader, a poster's
    sentences too), NVML's unknown error and nvidia-smi's lost driver read as the container's device access, a
    sentence quoting them read as the poster's report, and an nvidia-smi that printed nothing at a shell prompt
    said. The lines read. ``marks``: the whole text's (a word no casing of which is in it is not searched)."""
    wsl_signs.in_wsl(out, lines)  # FX68F: the CLI's driver error inside WSL2 (a container shown or not)
    if not any(_CONTAINER.search(lines[i].text) for i in _holding(lines, _CONTAINER_WORDS, marks)):
        return set()
    out.errors = [replace(e, kind=_RELABEL[e.kind], meaning=ACCESS[_RELABEL[e.kind]]) if e.kind in _RELABEL else e
                  for e in out.errors]
    kinds, read = {e.kind for e in out.errors}, set()
    for i in _holding(lines, _MESSAGE_WORDS, marks):
        ln = lines[i]
        kind = ("container_nvml_unknown" if _NVML_UNKNOWN.search(ln.text) else
                "container_smi_no_driver" if _SMI_NO_DRIVER.search(ln.text) else
                "container_smi_empty" if _printed_nothing(lines, i) else None)
        if kind is None or kind in kinds or ln.no in claimed and kind != "container_smi_empty":
            continue
        said = kind != "container_smi_empty" and _SAID.match(ln.text) is None  # a sentence around the message
        out.errors.append(AppError(kind, ln.no, ln.text.strip()[:300], tool="nvidia-smi", quoted=said,
                                   meaning=ACCESS[kind]))
        kinds.add(kind)
        read.add(ln.no)
    out.claimed |= read
    return read


def _holding(lines: list[Line], words: tuple[str, ...], marks: Marks | None) -> Iterator[int]:
    """The positions, in order, of the lines holding one of ``words`` in some casing: a word no casing of which the
    whole text's marks hold is not searched (an ASCII text's: re.I's casings are lower()'s there), the others found
    in the lowered text a block of lines at a time, or by a case-blind pattern of them where a block is not ASCII.
    A case-blind regex on each of a 20 MB report's lines cost ~2 s (issue 43)."""
    present = [w for w in words if marks is None or not marks.ascii or marks.any_case(w)]
    caseless = re.compile("|".join(re.escape(w) for w in words), re.I)
    last = -1
    for first in range(0, len(lines), _BLOCK) if present else ():
        text = block(lines, first, min(first + _BLOCK, len(lines)))
        if text.isascii():
            low = text.lower()
            hits = sorted(at for w in present for at in _finds(low, w))
        else:
            hits = [m.start() for m in caseless.finditer(text)]
        line, counted = first, 0
        for at in hits:
            line, counted = line + text.count("\n", counted, at), at
            if line != last:
                last = line
                yield line


def _finds(text: str, word: str) -> list[int]:
    found, at = [], text.find(word)
    while at != -1:
        found.append(at)
        at = text.find(word, at + 1)
    return found


def _printed_nothing(lines: list[Line], i: int) -> bool:
    """Whether line ``i`` is a shell prompt running nvidia-smi (no options; alone, or as the command docker run,
    docker exec or kubectl exec start) whose next line is the next prompt."""
    if "nvidia-smi" not in lines[i].text or (m := _PROMPT.match(lines[i].text)) is None:
        return False
    if not m["command"].strip().endswith("nvidia-smi"):
        return False
    nxt = next((ln for ln in lines[i + 1 : i + 4] if ln.text.strip()), None)  # blank lines a paste keeps
    after = _PROMPT.match(nxt.text) if nxt is not None else None
    return after is not None and after["command"].strip() in ("", "exit")


def excerpt(kind: str, text: str) -> str:
    """The line as kept for its finding: a container kind's words where the outer tool's error (docker's daemon
    response, a pod event) sets them past what a finding quotes."""
    text = text.strip()
    if kind in KINDS and (at := text.find("nvidia-container-cli")) > 120:
        return "… " + text[at:][:298]
    return text[:300]
