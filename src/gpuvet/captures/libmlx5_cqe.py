"""libmlx5's own print of a work completion with error, read in any program's log (issue 46, R14B).

rdma-core's mlx5 provider (providers/mlx5/cq.c) prints ``mlx5: <hostname>: got completion with error:`` on the
program's stderr, then the error CQE as four rows of 32-bit words (dump_cqe); the hostname is gethostname()'s, or
``host_unknown`` where that failed (a container). It prints so for every error completion except a flushed request
and a transport retry exceeded (and ODP page faults): the line alone says the request itself or the peer failed it
(a local length, protection or access error, a remote access/operation/invalid request, RNR, a bad response).

A paste often keeps the first line and loses the rows (a log cut where the poster stopped): the completion is still
one failed transfer on that host's mlx5 NIC, its status not in the capture (cqe_status.dumped decodes it where the
rows are there, blank lines a paste set between them skipped). A sentence that quotes the words (``the hex dump
following "got completion with error"``) is no print of the provider: only the provider's own line (``mlx5:
<host>: `` before the words, nothing after them) is read, at the start of a line or quoted at a sentence's end;
quoted after a sentence's words, only with its dump's rows under it (REV67a #10)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line

_HEAD = lazy(r"(?:^|\s)mlx5: (?P<host>[A-Za-z0-9][\w.-]{0,63}): got completion with error:?\s*$")
# a sentence's words before the quoted line ('Our logs used to show mlx5: …'): no log prefix ends in a lowercase
# word (a timestamp, '[1,0]<stderr>:', '[rank3]:', Ray's '(… ip=…)', a logger's '-- ' end in a sign or a digit)
_PROSE_BEFORE = lazy(r"(?:^|\s)[A-Za-z]{1,20}\s+[a-z]{2,20}\s*$")
_ROW = lazy(r"^\s*(?:[0-9a-fA-F]{8}\s+){3}[0-9a-fA-F]{8}\s*$")
UNKNOWN_HOST = "host_unknown"  # rdma-core providers/mlx5/mlx5.c: gethostname() failed
# what the line alone tells of the status (the rows, where there, tell which)
NOT_IN_ROWS = ("not in the capture (libmlx5 prints this line for every error but a flushed request and a transport "
               "retry exceeded: the request itself or the peer refused it)")


@dataclass(frozen=True)
class Headline:
    """libmlx5's 'got completion with error:' line and the rows of its dump the capture kept (0 to 4)."""

    line: int
    host: str | None  # the hostname libmlx5 printed; None for 'host_unknown'
    rows: tuple[Line, ...]
    text: str


def headline(lines: list[Line], i: int) -> Headline | None:
    """libmlx5's line at ``lines[i]`` with the dump rows under it that the capture kept; None for any other line."""
    ln = lines[i]
    if "got completion with error" not in ln.text or (m := _HEAD.search(ln.text)) is None:
        return None
    rows: list[Line] = []
    for nxt in lines[i + 1 : i + 9]:  # a paste may set a blank line between the rows (markdown's paragraphs)
        if len(rows) == 4 or (nxt.text.strip() and _ROW.match(nxt.text) is None):
            break
        rows += [nxt] if nxt.text.strip() else []
    if not rows and _PROSE_BEFORE.search(ln.text[max(0, m.start() - 60) : m.start() + 1]):
        return None  # REV67a #10: a sentence quoting the words, no dump under it: the poster's prose, no print
    host = m.group("host")
    return Headline(ln.no, None if host == UNKNOWN_HOST else host, tuple(rows), ln.text.strip()[:240])
