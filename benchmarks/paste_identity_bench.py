"""Issue 46 (R7D): never merge, never split. A paste of two machines (shell prompts or pdsh/clush prefixes naming
two hosts: an nvidia-smi table on one, an lspci of an NVIDIA GPU on the other) must never make one host's listing
"lack" the other's module (no module_missing), while one host's lspci and table are still cross-checked (the GPU
the table lacks is module_missing). One module printed by a -q block whose section names lost their indent must
stay one module. Framings and section names: benchmarks/data/paste_identity.json (sources named there).

    .venv/bin/python -m benchmarks.paste_identity_bench
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from benchmarks.support.phrasebook import doctor
from tests.support.helpers import smi_table

from gpuvet.captures.read import parse_text

DATA = json.loads((Path(__file__).parent / "data" / "paste_identity.json").read_text())
LSPCI = (
    "05:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 80GB] (rev a1)\n"
    "        Subsystem: NVIDIA Corporation Device 1463\n"
    "                LnkCap: Port #0, Speed 16GT/s, Width x16, ASPM not supported\n"
    "                LnkSta: Speed 16GT/s (ok), Width x16 (ok)\n"
    "        Kernel driver in use: nvidia\n"
)
TABLE = smi_table(("NVIDIA H100 80GB HBM3", 35), ("NVIDIA H100 80GB HBM3", 36))


def _missing(text: str, where: Path) -> bool:
    _, found = doctor(text, where)
    return any(f["cause"] == "module_missing" for f in found)


def main() -> None:
    tally = {
        "two hosts, no module_missing": [0, 0],
        "one host, module_missing kept": [0, 0],
        "-q flush-left section, one module": [0, 0],
    }
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "paste.txt"
        pairs = [(a, b, f"{a} nvidia-smi\n{TABLE}\n{b} lspci -vv\n{LSPCI}") for a, b in DATA["prompt_pairs"]]
        pairs.append(
            (
                "pdsh",
                "pdsh",
                "".join(f"gpu-node-8: {ln}\n" for ln in TABLE.splitlines())
                + "".join(f"gpu-node-9: {ln}\n" for ln in LSPCI.splitlines()),
            )
        )
        for _, _, text in pairs:
            tally["two hosts, no module_missing"][0] += not _missing(text, where)
            tally["two hosts, no module_missing"][1] += 1
        for a, b in DATA["one_host_pairs"]:
            tally["one host, module_missing kept"][0] += _missing(f"{a} nvidia-smi\n{TABLE}\n{b} lspci -vv\n{LSPCI}", where)
            tally["one host, module_missing kept"][1] += 1
    for section in [s for s in DATA["q_sections"] if s != "GPU Operation Mode"]:  # (twice: the next GPU's block)
        text = (
            "Persistence Mode : Disabled\nGPU UUID : GPU-01587ddd-0000-67aa-a07b-c5ec7105bd61\nGPU Operation Mode\n"
            f"    Current : N/A\n    Pending : N/A\nMinor Number : 2\n{section}\n    Current : N/A\n"
            "    Pending : N/A\nPCI\n    Bus Id : 00000000:86:00.0\n"
        )
        smi = parse_text(text, "q.txt").smi
        tally["-q flush-left section, one module"][0] += smi is not None and len(smi.modules) == 1
        tally["-q flush-left section, one module"][1] += 1
    for name, (right, total) in tally.items():
        print(f"{name:36} {right}/{total}")


if __name__ == "__main__":
    main()
