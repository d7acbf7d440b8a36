"""Issue 46 (R5C): runtimes' and frameworks' lines as posters paste them (benchmarks/data/r5c_phrasebook.json names
each source). Three classes:

- markdown over part of a line (``**bold**`` around the message, the whole line bold or in `code`): each CUDA error
  string in Caffe's CUDA_CHECK line must get the verdict the line gets bare ('same' / 'differs');
- a CANN error-manager code whose words say the SoC or build does not support what was asked ('EZ9903: … support
  for Ascend910 is not implemented'), bare, with its [PID] lead or after llama.cpp's 'CANN error: ': read, no
  finding at warn or above ('clean' / 'false' / 'refused'); a code that reports a failure in the same framings must
  still be found ('found' / 'missed' / 'refused');
- npu-smi info's header with no chip row (bare, after the prompt, in a fence, cut mid-header): read, no finding.

    .venv/bin/python -m benchmarks.r5c_phrasebook
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import LOUD, read

DATA = Path(__file__).parent / "data" / "r5c_phrasebook.json"
CAFFE = "F0311 10:02:11.000001  4242 common.cpp:152] Check failed: error == cudaSuccess ({} vs. 0)  {}"
LEAD = "[PID: 5150] 2025-03-01-09:00:00.000.001 "
NPU_HEAD = [
    "+------------------------------------------------------------------------------------------------+",
    "| npu-smi 24.1.rc2                 Version: 24.1.rc2                                              |",
    "+---------------------------+---------------+----------------------------------------------------+",
    "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
    "| Chip  Device              | Bus-Id        | AICore(%)   Memory-Usage(MB)                        |",
    "+===========================+===============+====================================================+",
]


def _verdict(found: list[dict[str, object]] | None) -> tuple[str, ...] | None:
    return None if found is None else tuple(sorted(f"{f['cause']}:{f['severity']}" for f in found))


def markdown(where: Path, errors: list[list[object]]) -> Counter[str]:
    """Each CUDA error line marked up three ways against the same line bare."""
    tally: Counter[str] = Counter()
    for code, words in errors:
        bare = CAFFE.format(code, words)
        want = _verdict(read(bare, where)[1])
        head, _, last = str(words).rpartition(" ")
        for marked in (
            CAFFE.format(code, f"**{words}**"),
            CAFFE.format(code, f"{head} **{last}**" if head else f"**{words}**"),
            f"**{bare}**",
            f"`{bare}`",
        ):
            tally["same" if _verdict(read(marked, where)[1]) == want else "differs"] += 1
    return tally


def cann(where: Path, rows: list[list[str]], healthy: bool) -> Counter[str]:
    """Each error-manager line in three framings, with llama.cpp's file line above and the Solution line under."""
    tally: Counter[str] = Counter()
    for code, words in rows:
        for line in (f"{code}: {words}", f"{code}: {LEAD}{words}", f"CANN error: {code}: {LEAD}{words}"):
            text = "/src/ggml/src/ggml-cann/ggml-cann.cpp:67: CANN error\n" + line
            text += "\n        Solution: In this scenario, collect the plog when the fault occurs."
            found = read(text, where)[1]
            loud = found is not None and any(f["severity"] in LOUD for f in found)
            if found is None:
                tally["refused"] += 1
            elif healthy:
                tally["false" if loud else "clean"] += 1
            else:
                tally["found" if loud else "missed"] += 1
    return tally


def npu_smi(where: Path) -> Counter[str]:
    """npu-smi info's header alone in four framings."""
    tally: Counter[str] = Counter()
    head = "\n".join(NPU_HEAD)
    for text in (head, "root@npu:/app# npu-smi info\n" + head, "```text\n" + head + "\n```", "\n".join(NPU_HEAD[:5])):
        found = read(text, where)[1]
        tally["refused" if found is None else "false" if any(f["severity"] in LOUD for f in found) else "clean"] += 1
    return tally


def main() -> None:
    data = json.loads(DATA.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        print("markdown over a CUDA error line, against it bare:", dict(markdown(where, data["cuda_errors"])))
        print("CANN 'not supported' codes (healthy):", dict(cann(where, data["unsupported"], healthy=True)))
        print("CANN failure codes, same framings:", dict(cann(where, data["failures"], healthy=False)))
        print("npu-smi info header, no chip row:", dict(npu_smi(where)))


if __name__ == "__main__":
    main()
