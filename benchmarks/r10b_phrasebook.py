"""Issue 46 (R10B): the runtimes' refusals R10B reads as a class: Habana Synapse's synDeviceAlreadyAcquired in the
call's and the PyTorch bridge's framings, nccl-tests' 'Test CUDA failure' by cudaGetErrorString's words, Ascend
DSMI failing to count the NPUs; and the healthy lines that must stay clear and never be refused (the Neuron
runtime's infodump header, a PyTorch traceback cut before its error, a Synapse success, nccl-tests' summary). The
lines (benchmarks/data/r10b_phrasebook.json, each source named there) are set bare, under the command typed at a
prompt, in a poster's fenced block with a sentence, and (faults) quoted in a poster's sentence. Faults are counted
right (cause and severity), severity, generic, clear or refused; healthy rows clean, false or refused.

    .venv/bin/python -m benchmarks.r10b_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import run_framed

DATA = Path(__file__).parent / "data" / "r10b_phrasebook.json"
PROMPT = {
    "synapse": "$ docker run --runtime=habana -e HABANA_VISIBLE_DEVICES=all tgi_gaudi --model-id $model",
    "nccltests": "$ mpirun -np 8 ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 1",
    "neuron": "$ python run_t5.py --tensor_parallel_size 8",
    "ascend": "$ lmdeploy check_env",
    "torch": "$ python train.py",
}


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines."""
    lines: list[str] = case["lines"]
    out = {
        "bare": "\n".join(lines),
        "prompt": "\n".join([PROMPT[case["source"]], *lines]),
        "fenced": "\n".join(["It prints this:", "```", *lines, "```"]),
    }
    return out | ({"quoted": f"The job stops with `{lines[0].strip()}` every time."} if "cause" in case else {})


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
