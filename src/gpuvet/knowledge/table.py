"""The knowledge base as Markdown: ``python -m gpuvet.knowledge.table`` prints the fault kinds,
the thresholds and every Xid (docs/knowledge.md begins with it; tests/support/one_verdict.py adds the command matrix)."""

from __future__ import annotations

import sys

from gpuvet.knowledge import Fault, faults, thresholds, xid_source, xids


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def _meaning(f: Fault) -> str:
    """The meaning, led by the short title doctor heads a finding with where the fault has one."""
    return f"**{f.short}**: {f.meaning}" if f.short else f.meaning


def faults_markdown() -> str:
    lines = ["## Fault kinds", "", "From `src/gpuvet/knowledge/faults.yaml`.", "",
             "| kind | subject | severity | meaning | doctor | health | watch |", "|---|---|---|---|---|---|---|"]
    for f in faults().values():
        lines.append(f"| `{f.kind}` | {f.subject} | {f.severity} | {_cell(_meaning(f))} | {', '.join(f.doctor)} | "
                     f"{', '.join(f.health)} | {', '.join(f.watch)} |")
    return "\n".join(lines) + "\n"


def thresholds_markdown() -> str:
    lines = ["## Thresholds", "", "From `src/gpuvet/knowledge/faults.yaml`: the figures health and doctor judge by "
             "(`knowledge.threshold(name)`; tests/test_architecture.py keeps bare numbers out of the jobs).", "",
             "| name | value | unit | why |", "|---|---|---|---|"]
    lines += [f"| `{t.name}` | {t.value:g} | {t.unit} | {_cell(t.meaning)} |" for t in thresholds().values()]
    return "\n".join(lines) + "\n"


def xids_markdown() -> str:
    lines = ["## Xids", "", f"Every Xid of NVIDIA's catalog ({xid_source()}), from `src/gpuvet/knowledge/xids.yaml`: "
             "NVIDIA's resolution bucket (immediate action) and the severity gpuvet gives it in every command.", "",
             "| Xid | bucket | severity | meaning |", "|---|---|---|---|"]
    lines += [f"| {x.code} | {x.bucket} | {x.severity} | {_cell(x.meaning)} |" for x in xids().values()]
    return "\n".join(lines) + "\n"


def knowledge_markdown() -> str:
    head = ("# gpuvet's knowledge base\n\nOne severity and one action per fault, read by health, validate, doctor, "
            "watch, fleet and the Prometheus rules (issue 42). Do not edit by hand: regenerate it.\n\n")
    return head + faults_markdown() + "\n" + thresholds_markdown() + "\n" + xids_markdown()


if __name__ == "__main__":
    sys.stdout.write(knowledge_markdown())
