"""Issue 46 (R9C): runtimes' and fabrics' failure words beyond NVIDIA's, read as a class: oneAPI Unified Runtime names
(ur_api.h), HCCL's link-establishment lines (hccl_socket_manager.cc, the connect detector), and the healthy lines
of the same stacks that must stay clear (mlx5_core's commands refused for the caller's request, NVSentinel's health
monitors' JSON, a poster narrating a completion status). The lines (benchmarks/data/r9c_phrasebook.json, each
source named there) are set the ways a paste shows them: bare (dmesg-stamped for kernel lines), under the command
typed at a prompt, in a poster's fenced block with a sentence, and (faults) quoted in a poster's sentence. Faults
are counted right (cause and severity), severity (cause, other severity), generic (another loud finding), clear or
refused; healthy rows clean, false or refused.

    .venv/bin/python -m benchmarks.r9c_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import run_framed

DATA = Path(__file__).parent / "data" / "r9c_phrasebook.json"
PROMPT = {
    "ur": "$ python main.py --use-xpu",
    "hccl": "$ grep ERROR ~/ascend/log/debug/plog/plog-55694_*.log",
    "mlx5": "$ sudo dmesg | grep mlx5",
    "nvsentinel": "$ kubectl -n nvsentinel logs syslog-health-monitor-regular-ltjth -c syslog-health-monitor",
    "verbs": "$ ./charmrun +p4 ./hello",
}


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines."""
    lines: list[str] = case["lines"]
    body = [f"[5621799.{i:06d}] {ln}" for i, ln in enumerate(lines)] if case.get("stamped") else lines
    out = {
        "bare": "\n".join(body),
        "prompt": "\n".join([PROMPT[case["source"]], *body]),
        "fenced": "\n".join(["It prints this:", "```", *body, "```"]),
    }
    return out | ({"quoted": f"The job stops with `{lines[-1].strip()}` every time."} if "cause" in case else {})


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
