"""Issue 46 (R14A): the first WARN of a job's NCCL/RCCL log is the cause; the processes whose own lines show only
the error code climbing back through init (``init.cc:1876 -> 2``, ``group.cc:418 -> 2``: no WARN of their own)
failed because of it (NCCL's troubleshooting: the first WARN is the one to read). Their set-up failure is the same
fact, said once on the WARN's finding (its ``followed_by``), never a finding of its own at the communicator's
severity."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the log parser loads when a log is read (issue 43)
    from gpuvet.captures.nccl_log import LogFailure, LogLine

Groups = dict[tuple[str, str], list[tuple[str, "LogFailure"]]]
_FOLLOW = ("init",)  # the kinds a process's bare error-return trace is read as (nccl_log._unwarned)
_KEPT = 4  # follower places said on the cause's finding


def fold(groups: Groups) -> tuple[Groups, dict[tuple[str, str], list[str]]]:
    """The groups left once every trace-only set-up group of a file is folded into the group of the first WARN of
    its host in that file (a host with none keeps its own), and what each cause's group carries:
    'HOST GPU N: line L: text'."""
    firsts: dict[str, list[tuple[int, str | None, tuple[str, str]]]] = {}
    for key, items in groups.items():
        for label, f in items:
            if f.at.level != "INFO":
                firsts.setdefault(label, []).append((f.at.line, f.at.host, key))
    kept: Groups = {}
    said: dict[tuple[str, str], list[str]] = {}
    for key, items in groups.items():
        label, first = items[0]
        warns = sorted(w for w in firsts.get(label, []) if w[2] != key)
        traced = key[0] in _FOLLOW and all(f.at.level == "INFO" for _, f in items)
        cause = next((w[2] for w in warns if w[1] == first.at.host), None) if traced else None
        if cause is None:  # another host's WARN is no cause of this host's failure (REV67a #4)
            kept.setdefault(key, []).extend(items)
            continue
        said.setdefault(cause, []).append(f"{key[1]}: line {first.at.line}: {first.at.text}")
    return kept, {k: v[:_KEPT] for k, v in said.items() if k in kept}


# a framework's 'NCCL error in: …' quotes the library's last error on the lines under it (PyTorch's 'Last error:')
QUOTED_WITHIN = 3


def echoed(line: int, failed: list[LogLine]) -> bool:
    """The framework's line at ``line`` quotes, within QUOTED_WITHIN lines under it, a failure the library's log
    has: the same fact, whatever its family's cause (the job's configuration, an ECC error: REV67a #7, #8). A WARN
    elsewhere (an earlier run's, above) is no echo of this line (REV67a #3)."""
    return any(line < at.line <= line + QUOTED_WITHIN for at in failed)
