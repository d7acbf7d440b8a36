"""perftest's failure lines beyond the connection and QP words perftest.py reads (issue 46, R14B), each as perftest
prints it (linux-rdma/perftest, src/perftest_communication.c, perftest_parameters.c, perftest_resources.h):

- the two ends' parameters disagree (perftest_parameters.c compare(): `` size mismatch: local=65536, remote=2``,
  `` connection_type mismatch: local=RC, remote=UD``), the negotiation itself failing (``Failed to exchange
  negotiation parameters between server and client``, ``… Cache Line Size data …``);
- the side channel's reads and writes (``ethernet_read_keys: Couldn't read remote address``, ``Couldn't send local
  address``, ``ethernet_read_data: Couldn't read reports``, ``Couldn't listen to port 18515``, ``Failed to bind
  socket``);
- a work request (``Couldn't post send my QP number 12``, ``Couldn't post send``, `` Completion with wc_flags
  mismatch at client``), the device (``Failed to query device attributes``).

Without perftest's header only the words no other program prints count ('between server and client', perftest's
ethernet_read_* function names, its 'my QP number'); a compared parameter's 'size mismatch: local=…, remote=…'
counts under the header or beside those words only (REV67a #2: an uploader's Go code prints the same words)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuvet.captures.lazy_re import lazy

if TYPE_CHECKING:
    from gpuvet.captures.text import Line

# the parameters perftest_communication.c compares (COMPARE(compare, <name>, …))
_COMPARED = ("test_method", "connection_type", "verb", "tst", "atomicType", "test_type", "report_fmt", "size", "iters",
             "aes_xts", "num_of_qps", "duration", "use_rdma_cm", "use_write_with_imm", "no_enhanced_reorder",
             "sig_offload", "data_validation")
_MISMATCH = lazy(r"(?:^|\s)(?:" + "|".join(_COMPARED) + r") mismatch: local=\S{1,40}, remote=\S{1,40}\s*$")
_OWN = lazy(r"Failed to exchange [\w ]{1,60}between server and clients?\b"
            r"|\bethernet_read_\w{1,20}: Couldn't read\b|\bCouldn't post send my QP number\b"
            r"|Completion with wc_flags mismatch at (?:client|server)\b")
_WITH_HEADER = lazy(r"Couldn't (?:send local address|listen to port \d{1,5}|post send\b|read reports|get SRQ number)"
                    r"|Failed to (?:bind socket|query device (?:attributes|capabilities)|set source address)"
                    r"|Unexpected compare type \w{1,10} for \w{1,30}")
MARKS = ("mismatch: local=", "between server and client", "ethernet_read_", "post send", "wc_flags mismatch")
_HINTS = ("mismatch", "between server", "ethernet_read_", "Couldn't", "Failed to", "Unexpected compare")


def failed(text: str, headed: bool) -> bool:
    """Whether ``text`` is one of these perftest failure lines; ``headed``: perftest's header is above it."""
    if not any(h in text for h in _HINTS):
        return False
    return _OWN.search(text) is not None or \
        (headed and (_MISMATCH.search(text) is not None or _WITH_HEADER.search(text) is not None))


_NEAR = 3  # perftest prints the parameter that disagrees right before 'Failed to exchange … between server and client'


def beside_own(lines: list[Line]) -> set[int]:
    """The numbers of the lines within _NEAR lines of one in perftest's own words: there a compared parameter's
    mismatch is perftest's even without its header."""
    own = [i for i, ln in enumerate(lines) if any(h in ln.text for h in _HINTS) and _OWN.search(ln.text)]
    return {lines[j].no for i in own for j in range(max(0, i - _NEAR), min(len(lines), i + _NEAR + 1))}
