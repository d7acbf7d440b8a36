"""Issue 46 (FX68F): a node whose GPU stack cannot start, and MIG's commands, read as classes: NVML's init with a
status nvidia-smi cannot name (WSL2's 'N/A'), the GPU operator's driver validation retrying, the container
runtime's GPU set-up failing (docker's device driver, nvidia-container-cli's driver errors), nvidia-smi's lost
handle of a GPU a VM guest's driver never started, and nvidia-smi mig's creations, listings and failures (a Kubernetes
MIG driver's too). benchmarks/data/stack_start_phrasebook.json holds each message with its sources and the cause an
engineer would name (null for a healthy text). Each is framed bare, under a shell prompt, in a container's prompt and
stamped as a journal; a framing counts as class (the cause at warn or above), generic (another finding only), missed
(read, no finding) or refused (exit 2). A healthy text must give no finding at warn or above and no refusal.

    .venv/bin/python -m benchmarks.stack_start_phrasebook [--show generic,missed,refused,false]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.support.phrasebook import run_families, shell_framings

DATA = Path(__file__).parent / "data" / "stack_start_phrasebook.json"
COMMAND = {"nvml": "nvidia-smi", "operator": "kubectl logs nvidia-operator-validator-x2x9q -c driver-validation",
           "container": "docker run --rm --gpus all nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi",
           "guest": "nvidia-smi", "mig": "sudo nvidia-smi mig -cgi 9 -C"}


def framings(family: str, text: str) -> dict[str, str]:
    """The message as each kind of capture shows it (the family's command at the prompts)."""
    return shell_framings(COMMAND[family], text)


def main(argv: list[str] | None = None) -> int:
    return run_families(__doc__, argv, DATA, framings)


if __name__ == "__main__":
    raise SystemExit(main())
