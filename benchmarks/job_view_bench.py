"""Issue 46 (R3A): a job's or container's own GPU view, read as a class: enroot's NVIDIA hook without
nvidia-container-cli (bare or in pyxis' slurmstepd relay), a cgroup.conf that does not constrain devices beside a GPU
job, srun tasks listing their own 'GPU 0' on one node (--label's 'N: ', an echoed task variable), one task or a
cgroup-filtered view printing 'No devices were found', and CUDA's error 46 on the one GPU CUDA_VISIBLE_DEVICES gives
a job. benchmarks/data/job_view_bench.json holds each case in the tools' own forms with its sources and the causes an
engineer would name ([] for a healthy view). Each is framed as pastes show it (bare, in a markdown fence, '> '
quoted, after a poster's sentence) and read by ``gpuvet doctor --from`` in-process: right (an expected cause, on the
expected module where one is named), generic (another finding only), missed (read, no finding), refused (exit 2);
a healthy case must give no finding at warn or above and no refusal.

    .venv/bin/python -m benchmarks.job_view_bench [--show generic,missed,refused,false]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from collections import Counter
from pathlib import Path

from gpuvet.cli.app import main as gpuvet

DATA = Path(__file__).parent / "data" / "job_view_bench.json"


def framings(lines: list[str]) -> dict[str, str]:
    text = "\n".join(lines)
    return {
        "bare": text + "\n",
        "fenced": f"```\n{text}\n```\n",
        "quoted": "".join(f"> {ln}\n" for ln in lines),
        "after_sentence": f"On our Slurm cluster the job fails, this is what I see:\n\n{text}\n",
    }


def doctor(text: str, where: Path) -> tuple[int, list[dict]]:
    path = where / "capture.txt"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = gpuvet(["doctor", "--from", str(path), "--json"])
    if code == 2:
        return 2, []
    return code, json.loads(out.getvalue())["findings"]


def verdict(case: dict, code: int, found: list[dict]) -> str:
    loud = [f for f in found if f["severity"] in ("warn", "critical")]
    if code == 2:
        return "refused"
    if not case["causes"]:
        return "false" if loud else "clear"
    want = set(case["causes"])
    right = [f for f in loud if f["cause"] in want and f.get("module", "node") == case.get("module", "node")]
    return "right" if right else "generic" if loud else "missed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", default="", help="verdicts to print the cases of (generic,missed,refused,false)")
    args = parser.parse_args()
    cases = json.loads(DATA.read_text())["cases"]
    faults, healthy = Counter[str](), Counter[str]()
    shown = set(filter(None, args.show.split(",")))
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            for framing, text in framings(case["lines"]).items():
                code, found = doctor(text, Path(tmp))
                v = verdict(case, code, found)
                (faults if case["causes"] else healthy)[v] += 1
                if v in shown:
                    print(f"{v}: {case['name']} [{framing}]: {[(f['cause'], f['severity']) for f in found]}")
    n_f, n_h = sum(faults.values()), sum(healthy.values())
    print(
        f"fault framings {n_f}: right {faults['right']}, generic {faults['generic']}, missed {faults['missed']}, "
        f"refused {faults['refused']}"
    )
    print(f"healthy framings {n_h}: clear {healthy['clear']}, false {healthy['false']}, refused {healthy['refused']}")


if __name__ == "__main__":
    main()
