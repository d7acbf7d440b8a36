"""Issue 46 (AX1): nvidia-smi's and the CUDA runtime's own messages about a module's state, read as a class.
benchmarks/data/smi_phrasebook.json holds what nvidia-smi prints about a module it cannot open ('Unable to determine
the device handle for GPU <bus>: <nvmlErrorString's words>'), its warnings ('WARNING: infoROM is corrupted at gpu
<bus>'), its node-wide failures ('No devices were found', 'Failed to initialize NVML: …'), `nvidia-smi -r`'s answers,
its notices that are no fault (persistence mode disabled, a mode set), -q's reset, retirement and remap fields, NVML's
words as other programs print them (pynvml, slurmstepd), and the CUDA runtime's errors that name a module's state
beside what a tool says of the modules (gpu-burn's 'No CUDA devices' or deviceQuery's with nvidia-smi -L listing the
modules, error 46 beside a module in Exclusive_Process, cudaErrorNvlinkUncorrectable). Each with its source.

Each message is set in the framings real captures show (bare, after its command's prompt, beside nvidia-smi's table of
the other modules, a health script's journal line, a Python traceback, quoted by a poster) and read by ``gpuvet doctor
--from`` (in-process). A framing is counted right (the cause at its severity on the right module: its bus id, nvidia-smi's
index, or none where the text names none), severity or subject (the cause, at another severity or on another subject),
generic (another finding only), clear (read, no finding) or refused (exit 2); a healthy one clean, false (a finding at
warn or above) or refused.

    .venv/bin/python -m benchmarks.smi_phrasebook [--show severity,subject,generic,clear,refused,false]
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.support.phrasebook import healthy_said, print_faults, run, shown

DATA = Path(__file__).parent / "data" / "smi_phrasebook.json"
BUS = "0000:3B:00.0"
_PROMPT = "user@gpu-node-07:~$ "
_TABLE_HEAD = """+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
"""
_OTHER = """|   1  NVIDIA A100-SXM4-80GB          On  | 00000000:1A:00.0 Off |                    0 |
| N/A   31C    P0              61W / 400W |      4MiB / 81920MiB |      0%      Default |
|                                         |                      |             Disabled |
+-----------------------------------------+----------------------+----------------------+
"""
_NO_PROCS = """
+---------------------------------------------------------------------------------------+
| Processes:                                                                            |
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |
|        ID   ID                                                             Usage      |
|=======================================================================================|
|  No running processes found                                                           |
+---------------------------------------------------------------------------------------+"""
# the table with GPU 0 (0000:3B:00.0) in Exclusive_Process mode and a process holding it, GPU 1 in Default
_EXCLUSIVE = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla V100-PCIE...  On   | 00000000:3B:00.0 Off |                    0 |
| N/A   35C    P0    38W / 250W |    312MiB / 16160MiB |      0%   E. Process |
+-------------------------------+----------------------+----------------------+
|   1  Tesla V100-PCIE...  On   | 00000000:D8:00.0 Off |                    0 |
| N/A   33C    P0    36W / 250W |      0MiB / 16160MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|        ID   ID                                                   Usage      |
|=============================================================================|
|    0   N/A  N/A      4121      C   python3                           308MiB |
+-----------------------------------------------------------------------------+"""
_LISTING = "\n".join(f"GPU {i}: NVIDIA A100-SXM4-80GB (UUID: GPU-{i:08x}-3273-c6e2-90f0-39d86b34e76d)" for i in range(8))
_Q_HEAD = f"""
==============NVSMI LOG==============

Timestamp                                 : Tue Mar  3 10:14:03 2026
Driver Version                            : 535.104.05
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 0000{BUS}
    Product Name                          : NVIDIA A100-SXM4-80GB
"""


@dataclass(frozen=True)
class Message:
    source: str
    printed: str
    frame: str
    want: str | None  # a cause, or None (no fault)
    severity: str | None
    subject: str  # bus (BUS), gpu0 (nvidia-smi's index 0), node (no module named), any
    command: str | None


def _quoted(first: str) -> str:
    return f'Since this morning nvidia-smi on this node prints "{first}" and our jobs fail.'


def _smi(m: Message) -> dict[str, tuple[str, str]]:
    """A line of nvidia-smi's own (a module, or the node)."""
    first = m.printed.splitlines()[0]
    out = {
        "bare": (m.printed, m.subject),
        "after its command": (f"{_PROMPT}{m.command or 'nvidia-smi'}\n{m.printed}", m.subject),
        "a script's journal": (
            "\n".join(f"Mar 03 10:14:03 gpu-node-07 gpu-check[2211]: {t}" for t in m.printed.splitlines()),
            m.subject,
        ),
        "quoted": (_quoted(first), m.subject),
    }
    if m.frame == "smi_line":  # nvidia-smi prints the lost module's line, then the table of the others
        out["beside the others' table"] = (f"{_PROMPT}nvidia-smi\n{m.printed}\n{_TABLE_HEAD}{_OTHER}{_NO_PROCS}", m.subject)
    if m.frame == "smi_node":
        out["in a container"] = (f"root@3f2a9c1d7e44:/workspace# nvidia-smi\n{m.printed}", m.subject)
    if m.frame == "smi_line_index":  # the index is said by the command only
        out["bare"] = (m.printed, "node")
        out["a script's journal"] = (out["a script's journal"][0], "node")
        out["quoted"] = (f"Every time I run {m.command} it prints '{first}' and I have to reboot.", m.subject)
    return out


def _block(m: Message) -> dict[str, tuple[str, str]]:
    """nvidia-smi's answer to a command that sets or resets something."""
    return {
        "after its command": (f"{_PROMPT}sudo {m.command}\n{m.printed}", m.subject),
        "bare": (m.printed, m.subject),
        "in a fence": (f"I ran it as root:\n```\n$ sudo {m.command}\n{m.printed}\n```\nIs that expected?", m.subject),
    }


def _query(m: Message) -> dict[str, tuple[str, str]]:
    return {
        "-q": (_Q_HEAD + m.printed, m.subject),
        "-q -d, after its command": (
            f"{_PROMPT}nvidia-smi -q -d PAGE_RETIREMENT,ROW_REMAPPER,RESET_STATUS\n{_Q_HEAD}{m.printed}",
            m.subject,
        ),
    }


def _program(m: Message) -> dict[str, tuple[str, str]]:
    """NVML's or the CUDA runtime's words as a program prints them."""
    shown = (
        f"CUDA error: {m.printed}"
        if m.frame == "cuda_text"
        else (f"cudaMemcpyAsync failed: {m.printed}" if m.frame == "cuda_name" else m.printed)
    )
    out = {
        "bare": (shown, m.subject),
        "traceback": (
            'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    step()\n'
            + (shown if shown.startswith("pynvml") else f"RuntimeError: {shown}"),
            m.subject,
        ),
        "journal": (
            f"Mar 03 10:14:03 gpu-node-07 {'slurmstepd[2211]' if 'slurm' in shown else 'python3[2211]'}: "
            f"{shown.removeprefix('slurmstepd: ')}",
            m.subject,
        ),
        "quoted": (f"After two days the job dies with '{shown}' on this node.", m.subject),
    }
    if m.frame == "cuda_text":
        out["terminate"] = ("terminate called after throwing an instance of 'c10::Error'\n  what():  " + shown, m.subject)
    return out


def _beside(m: Message) -> dict[str, tuple[str, str]]:
    """A runtime's error beside what a tool in the same capture says of the modules."""
    if m.frame == "with_listing":
        return {
            "then nvidia-smi -L": (f"{m.printed}\n{_LISTING}", m.subject),
            "nvidia-smi -L first": (f"{_PROMPT}nvidia-smi -L\n{_LISTING}\n{_PROMPT}./gpu_burn 60\n{m.printed}", m.subject),
        }
    if m.frame == "after_lost":
        return {
            "after nvidia-smi -r": (
                f"~]$ nvidia-smi -r -i 0\nUnable to determine the PCI bus id for the target device: "
                f"GPU is lost\n\n{m.printed}",
                m.subject,
            ),
            "after the handle line": (
                f"{_PROMPT}nvidia-smi\nUnable to determine the device handle for GPU {BUS}: GPU "
                f"is lost.  Reboot the system to recover this GPU\n\n{m.printed}",
                "bus",
            ),
        }
    return {
        "then the table": (f"{m.printed}\n\nOutputs from nvidia-smi:\n{_EXCLUSIVE}", m.subject),
        "table first": (f"{_EXCLUSIVE}\n\n{_PROMPT}python train.py --gpu 0\n{m.printed}", m.subject),
    }


def framings(m: Message) -> dict[str, tuple[str, str]]:
    """The message as captures show it: each framing's text and the module a right finding names."""
    if m.frame in ("smi_line", "smi_line_index", "smi_node"):
        return _smi(m)
    if m.frame == "smi_block":
        return _block(m)
    if m.frame == "smi_q":
        return _query(m)
    if m.frame in ("with_listing", "after_lost", "with_exclusive"):
        return _beside(m)
    return _program(m)


def _named(module: str, subject: str) -> bool:
    low = module.lower()
    if subject == "bus":
        return "3b:00.0" in low
    if subject == "gpu0":
        return re.search(r"\bGPU ?0\b", module) is not None
    if subject == "node":
        return low in ("", "node") or "not in the log" in low
    return True


def verdict(m: Message, subject: str, code: int, found: list[dict[str, str]], quoted: bool = False) -> str:
    loud = [f for f in found if f["severity"] in ("warn", "critical")]
    if m.want is None:
        return "refused" if code == 2 else "false" if loud else "clean"
    mine = [f for f in found if f["cause"] == m.want]
    want = "warn" if quoted and m.severity == "critical" else m.severity  # a poster's sentence: a lead, at most warn
    if any(f["severity"] == want and _named(f["module"], subject) for f in mine):
        return "right"
    if mine:
        return "severity" if not any(f["severity"] == want for f in mine) else "subject"
    return "generic" if found else "refused" if code == 2 else "clear"


GROUPS = {
    "smi_line": "a module unopened",
    "smi_line_index": "a module unopened",
    "smi_node": "the node",
    "smi_q": "-q state fields",
    "nvml_prog": "NVML in programs",
    "cuda_text": "CUDA module state",
    "cuda_name": "CUDA module state",
    "with_listing": "CUDA module state",
    "after_lost": "CUDA module state",
    "with_exclusive": "CUDA module state",
}


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    messages = [
        Message(r["source"], r["printed"], r["frame"], r["want"], r["severity"], r["subject"], r["command"])
        for r in data["messages"]
    ]
    faults: dict[str, Counter[str]] = {}
    healthy = Counter[str]()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for m in messages:
            for frame, (text, subject) in framings(m).items():
                code, found = run(text, where)
                v = verdict(m, subject, code, found, quoted=frame.startswith("quoted"))
                (healthy if m.want is None else faults.setdefault(GROUPS.get(m.frame, m.frame), Counter()))[v] += 1
                if v in show:
                    print(
                        f"{v:9} {frame:26} {m.printed.splitlines()[0][:64]!r} -> "
                        f"{[(f['cause'], f['severity'], f['module']) for f in found]} (want {m.want} {m.severity})"
                    )
    print(f"{len(messages)} messages ({'; '.join(data['sources'])})")
    print_faults("class", 20, faults)
    print(healthy_said(healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
