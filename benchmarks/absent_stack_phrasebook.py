"""Issue 46 (R7A): a host or container whose device files, kernel driver or user-space provider are not there, read
as a class: rocminfo's 'Unable to open /dev/kfd read-write: <strerror>', libhsakmt's render node, amdgpu's '<ASIC> not
supported in kfd', /dev/nvidia* missing with and without the module loaded, libibverbs' provider warnings and
ibv_devinfo's none found, NVML's DriverNotLoaded in Rust's panic and nvidia-smi's failure in a Python log.
benchmarks/data/absent_stack_phrasebook.json holds each message with its sources and the cause an engineer would name
(null for a healthy text). Each is framed bare, under a shell prompt, in a container's prompt and stamped as a
journal; a framing counts as class (the cause at warn or above), generic (another finding only), missed (read, no
finding) or refused (exit 2). A healthy text must give no finding at warn or above and no refusal.

    .venv/bin/python -m benchmarks.absent_stack_phrasebook [--show generic,missed,refused,false]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.support.phrasebook import run_families, shell_framings

DATA = Path(__file__).parent / "data" / "absent_stack_phrasebook.json"
COMMAND = {"rocr": "rocminfo", "nodes": "ls -l /dev/nvidia*", "verbs": "ibv_devinfo", "nvml": "./miner"}


def framings(family: str, text: str) -> dict[str, str]:
    """The message as each kind of capture shows it (the family's command at the prompts)."""
    return shell_framings(COMMAND[family], text)


def main(argv: list[str] | None = None) -> int:
    return run_families(__doc__, argv, DATA, framings)


if __name__ == "__main__":
    raise SystemExit(main())
