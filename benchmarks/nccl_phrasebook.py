"""Issue 46: NCCL's and RCCL's own WARN messages (and the INFO lines a healthy run prints), read as doctor reads them.

benchmarks/data/nccl_phrasebook.json holds every WARN and INFO format string of NCCL's and RCCL's sources at the
tags it names (benchmarks/nccl_phrasebook_source.py extracts them). Each WARN string, its printf arguments filled
as the library would (an address where it names a peer, strerror where a call failed, a CUDA error's text where a
'Cuda failure' quotes one: that format is read once per CUDA error of CUDA_ERRORS), is set in the framings real
logs show, and ``gpuvet doctor --from`` (in-process) reads each:

- nccl: a process's NCCL_DEBUG=INFO lines (version, bootstrap, NET/IB, its communicator), the WARN in NCCL's prefix
  ('host:pid:tid [dev] file.cc:N NCCL WARN …'), then the error-return trace NCCL prints after it;
- stamped: the same with NCCL 2.26+'s default WARN prefix ('[2025-06-11 10:14:03] host:pid:tid [dev] file:N (fn)');
- warn_only: the WARN line alone (NCCL_DEBUG=WARN);
- srun: the nccl framing under srun --label ('3: ' before each line);
- torchrun: the nccl framing under torchrun's '[rank3]:' prefix;
- exception: PyTorch's DistBackendError as a traceback shows it ('NCCL error in: …ProcessGroupNCCL.cpp:N, <the
  ncclGetErrorString of the result the WARN returns>, NCCL version …' then 'Last error:' and the WARN's text).

What a string says is judged from its own words (MEANINGS: an IB completion error, a socket connect that failed, a
peer that closed its connection, /dev/shm, P2P/IPC, a CUDA error …), not from gpuvet's patterns, each with the
causes (faults.yaml) or NCCL families (knowledge/nccl_warns.yaml) a right reading names. A string is read right (a
finding at warn or above whose cause or family is one of those), generic (findings, none of them), clear (no finding
at warn or above), or refused (doctor read nothing). 'other' strings (an argument check, an internal error) count
right when read at all; 'goes_on' strings (NCCL says it carries on: a fallback, a setting ignored) are not judged.
Healthy lines: every INFO string a run prints without anything wrong, each set in a healthy run's log, must give no
finding at warn or above (false). Scenarios: the INFO lines that say a path was lost or a transport fell back, in the
logs where they matter (two nodes, one node), each with its expected cause.

    .venv/bin/python benchmarks/nccl_phrasebook.py [--show generic,clear,refused,false] [--meaning M] [--framing F]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.support.phrasebook import LOUD, read

sys.path.insert(0, str(Path(__file__).parent))
from nccl_phrasebook_source import filled  # noqa: E402  (the sibling that extracts the strings fills them)

DATA = Path(__file__).parent / "data" / "nccl_phrasebook.json"
HOST, PID, TID, DEV = "gpu-node07", 2714903, 2715071, 3
Want = frozenset[str]
INIT_FAIL, RUN_FAIL = "collective_init_failed", "collective_runtime_error"
# (meaning, its words, the causes or families a right reading names); first match wins, specific ones first. 'usage'
# is NCCL's own checks of its arguments and state (a NULL socket, an invalid config value, an internal mismatch): a
# failure no node's part names, right when read at all, as 'other' is
_USAGE = (
    r"pass NULL|\bNULL (?:request|socket)|socket (?:is )?invalid|invalid socket|wrong socket state|not ready$|"
    r"unexpected socket state|Invalid config|out of bounds|\bmust (?:be|pass)\b|Unknown command|descriptor is not|"
    r"\bMSCCL\b|internal|should not be called|already|twice|without a matching|not aligned|Proxy append|opId|"
    r"Attempting to dequeue|List loop|Inactive op|pool of op|expected a '\w+' request|Name too large|"
    r"handles and parent|non-NULL|reqSize is|respSize is|symmetric registration check|is not a member|"
    r"abort state|test called with|wc->opcode =="
)
MEANINGS: tuple[tuple[str, re.Pattern[str], Want], ...] = (
    (
        "goes_on",
        re.compile(
            r"fall(?:ing)? ?back|ignor|defaulting|not using it|using (?:internal|default)|"
            r"will be (?:used|disabled)|\bcontinu|\bskipp|\bdisabl(?:e|ed|ing)\b(?!.*fail)|"
            r"non-fatal async event|GID table changed|Missing \W?(?:iommu|HSA_)|NUMA auto balancing|"
            r"\bsetting (?:it |\w+ )?to\b|\bUnsetting\b",
            re.I,
        ),
        frozenset(),
    ),
    ("usage", re.compile(_USAGE, re.I), frozenset()),
    ("ib_completion", re.compile(r"Got completion from peer|CQE with error", re.I), frozenset({"nccl_ib_completion"})),
    (
        "ib_async_event",
        re.compile(r"async (?:fatal )?event", re.I),
        frozenset({"nccl_ib_async_event", "nic_port_down", "nic_driver_failed"}),
    ),
    ("ib_qp", re.compile(r"ibv_modify_qp|create_qp|create QP", re.I), frozenset({"nccl_ib_qp", "nccl_ib_resource_failed"})),
    ("ib_work", re.compile(r"ibv_(?:post_send|post_recv|poll_cq)", re.I), frozenset({"nccl_ib_post", "nccl_ib_completion"})),
    (
        "ib_device",
        re.compile(
            r"\bibv_\w+|\bmlx5dv_\w+|Unable to (?:open|query) (?:device|port)|"
            r"ncclIbRoceGetVersionNum|device is incompatible|incompatible devices|"
            r"failed devices|Device \S+ marked as failed|no functional device",
            re.I,
        ),
        frozenset(
            {
                "nccl_ib_resource_failed",
                "nccl_ib_memory_registration_failed",
                "nccl_ib_device_failed",
                "nccl_ib_qp",
                "nccl_ib_completion",
                "nccl_ib_link_types",
                "nccl_ib_post",
            }
        ),
    ),
    (
        "gdr",
        re.compile(r"GPU ?Direct|\bGDR|\bgdr_\w+|peer_?mem|dma-?buf|nv_peer", re.I),
        frozenset({"nccl_gdr", "nccl_ib_memory_registration_failed", "peer_memory_missing"}),
    ),
    (
        "peer_closed",
        re.compile(r"closed by (?:remote )?peer|reset by peer|remote process exited|Broken pipe", re.I),
        frozenset({"nccl_peer_closed"}),
    ),
    (
        "message_mismatch",
        re.compile(r"message truncated : receiving|collective mismatch|posted incorrect receive", re.I),
        frozenset({"nccl_message_truncated"}),
    ),
    (
        "version_mismatch",
        re.compile(r"version mismatch|Mismatched NCCL version", re.I),
        frozenset({"nccl_bootstrap", "nccl_version_mismatch"}),
    ),
    (
        "shm",
        re.compile(
            r"/dev/shm|shm_?(?:open|unlink)|posix_fallocate|shared memory (?:file|segment)|"
            r"failed to extend|Could not map \S+ size|ShmObject::Open|shm (?:close|unlink) failed",
            re.I,
        ),
        frozenset({"nccl_shm", "nccl_shm_cuda"}),
    ),
    (
        "interface",
        re.compile(
            r"no (?:socket |usable )?(?:listening |IP )?interface found|same subnet|"
            r"address family|neither AF_INET|no device found (?:after excluding|matching)",
            re.I,
        ),
        frozenset({"nccl_socket_interface"}),
    ),
    (
        "bootstrap",
        re.compile(r"^Bootstrap|\bbootstrap\w*:|Message truncated : received|NCCL_COMM_ID|unique ?id", re.I),
        frozenset({"nccl_bootstrap"}),
    ),
    (
        "socket_connect",
        re.compile(
            r"[Cc]onnect to \S+ (?:failed|returned)|exceeded error retry count|"
            r"Connect\w*: exceeded timeouts|Connection (?:refused|timed out)",
            re.I,
        ),
        frozenset({"nccl_socket_connect"}),
    ),
    (
        "socket_io",
        re.compile(
            r"Call to (?:recv|send)|socketProgress\w*: Call to|socket progress error|"
            r"Socket recv failed|(?:Receiving|Sending) data over socket|Recv from rank|"
            r"Send to rank",
            re.I,
        ),
        frozenset({"nccl_socket_io", "nccl_peer_closed", "nccl_proxy"}),
    ),
    (
        "p2p",
        re.compile(
            r"(?:cuda|hip|cu)Ipc\w* failed|cuMem(?:Import|Export)\w* (?:\(\w+\) )?failed|IPC handle|"
            r"failed to peer with device|P2P/IPC",
            re.I,
        ),
        frozenset({"nccl_p2p_ipc", "p2p_unavailable", "nccl_p2p_mappings_exhausted"}),
    ),
    ("nvls", re.compile(r"NVLS|NVLink SHARP|[Mm]ulticast", re.I), frozenset({"nvls_setup_failed"})),
    ("cuda_oom", re.compile(r"Failed to CUDA (?:malloc|calloc|host alloc)", re.I), frozenset({"nccl_cuda_out_of_memory"})),
    (
        "driver_version",
        re.compile(r"requires CUDA driver|installed CUDA driver|cuDriverGetVersion failed", re.I),
        frozenset({"driver_runtime_mismatch", "nccl_build_unsupported"}),
    ),
    (
        "proxy",
        re.compile(r"\[Proxy Service|\[Service thread\]|ncclProxy\w+ call to|proxyDestroy failed", re.I),
        frozenset({"nccl_proxy"}),
    ),
)
OTHER, GOES_ON, USAGE, CUDA = "other", "goes_on", "usage", "cuda"
# the CUDA errors a 'Cuda failure' quotes, each with the causes its own words name (the runtime's cause, not NCCL's)
CUDA_ERRORS: tuple[tuple[str, int, Want], ...] = (  # (cudaGetErrorString's text, its CUresult, the causes)
    ("out of memory", 2, frozenset({"nccl_cuda_out_of_memory"})),
    ("an illegal memory access was encountered", 700, frozenset({"application_cuda_error"})),
    ("unspecified launch failure", 719, frozenset({"application_cuda_error"})),
    ("uncorrectable ECC error encountered", 214, frozenset({"ecc_uncorrectable_since_boot", "api_reports_module_fault"})),
    ("peer access is not supported between these two devices", 217, frozenset({"p2p_unavailable"})),
    ("CUDA driver version is insufficient for CUDA runtime version", 35, frozenset({"driver_runtime_mismatch"})),
    ("no kernel image is available for execution on the device", 209, frozenset({"nccl_build_unsupported"})),
    ("system not yet initialized", 802, frozenset({"fabric_manager_failed"})),
    ("operation not supported", 801, frozenset({"nccl_build_unsupported", "api_reports_driver_state", INIT_FAIL})),
    ("unknown error", 999, frozenset({"api_reports_driver_state"})),
)
_CUDA_FMT = re.compile(r"(?:Cuda|Hip|ROCr) failure(?: %d)? '%s'", re.I)


@dataclass(frozen=True)
class Row:
    """One filled string in one framing and how doctor read it."""

    path: str
    text: str
    meaning: str
    framing: str
    read: str  # right, generic, clear, refused (healthy lines: clean, false)
    found: tuple[str, ...]


def meaning_of(fmt: str, path: str = "") -> tuple[str, Want]:
    """What a format says (MEANINGS' name) and what a right reading names."""
    if _CUDA_FMT.search(fmt):
        return CUDA, frozenset()
    return next(((name, want) for name, pat, want in MEANINGS if pat.search(fmt)), (OTHER, frozenset()))


# --- framings ----------------------------------------------------------------------------------------------------
def _prefix(dev: int = DEV) -> str:
    return f"{HOST}:{PID}:{TID} [{dev}]"


def _init_lines() -> list[str]:
    """A process's first NCCL_DEBUG=INFO lines, as a healthy run prints them."""
    p = _prefix()
    return [
        f"{p} NCCL INFO Bootstrap : Using bond0:10.12.3.17<0>",
        f"{p} NCCL INFO NCCL version 2.21.5+cuda12.4",
        f"{p} NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB bond0:10.12.3.17<0>",
        f"{p} NCCL INFO Using network IB",
        f"{p} NCCL INFO comm 0x5581c8d0a2f0 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 4e000 commId "
        "0x1f0c3e2b9a7d4c11 - Init START",
    ]


def _source(path: str) -> str:
    return path.removeprefix("src/")


def _warn(path: str, msg: str, stamped: bool) -> str:
    if stamped:
        return f"[2025-06-11 10:14:03] {_prefix()} {_source(path)}:1187 (ncclTransportP2pSetup) NCCL WARN {msg}"
    return f"{_prefix()} {_source(path)}:1187 NCCL WARN {msg}"


def _trace(path: str) -> str:
    return f"{_prefix()} NCCL INFO {_source(path)}:1189 -> 2"


_RESULT = (  # (words of the WARN, the ncclResult_t it returns, as ncclGetErrorString and PyTorch say it)
    (
        re.compile(r"Cuda failure|CUDA error|Hip failure", re.I),
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
        "ncclUnhandledCudaError: Call to CUDA function failed.",
    ),
    (
        re.compile(r"closed by|reset by peer|remote|Got completion|timed out|time ?out", re.I),
        "remote process exited or there was a network error",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
    ),
    (
        re.compile(r"invalid|pass NULL|must be|not supported|out of range|unknown", re.I),
        "invalid argument (run with NCCL_DEBUG=WARN for details)",
        "ncclInvalidArgument: Invalid value for an argument.",
    ),
    (
        re.compile(r""),
        "unhandled system error (run with NCCL_DEBUG=INFO for details)",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
    ),
)


def framings(path: str, msg: str) -> dict[str, str]:
    """The WARN as each kind of log shows it."""
    head = _init_lines()
    nccl = [*head, "", _warn(path, msg, False), _trace(path)]
    said, detail = next((s, d) for words, s, d in _RESULT if words.search(msg))
    return {
        "nccl": "\n".join(nccl),
        "stamped": "\n".join([*head, "", _warn(path, msg, True), _trace(path)]),
        "warn_only": "\n" + _warn(path, msg, False),
        "srun": "\n".join(f"3: {ln}" if ln else "" for ln in nccl),
        "torchrun": "\n".join(f"[rank3]:{ln}" for ln in nccl),
        "exception": (
            'Traceback (most recent call last):\n  File "/workspace/train.py", line 212, in <module>\n'
            '    dist.barrier()\n  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/'
            'c10d_logger.py", line 83, in wrapper\n    return func(*args, **kwargs)\n'
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            f"ProcessGroupNCCL.cpp:1970, {said}, NCCL version 2.21.5\n{detail}\nLast error:\n{msg}"
        ),
    }


# --- reading -----------------------------------------------------------------------------------------------------
def doctor(text: str, where: Path) -> tuple[bool, set[str]] | None:
    """What doctor --from finds in ``text``: (refused, the causes and NCCL families of its findings at warn or
    above); None where it refused the file."""
    _, findings = read(text, where)
    if findings is None:
        return None
    found = set()
    for f in findings:
        if f["severity"] in LOUD:
            found.add(f["cause"])
            kind = f.get("evidence", {}).get("kind")
            found.update({kind} if isinstance(kind, str) else set())
    return False, found


def verdict(meaning: str, want: Want, got: tuple[bool, set[str]] | None) -> str:
    if got is None:
        return "refused"
    found = got[1]
    if not found:
        return "clear"
    if meaning in (OTHER, GOES_ON, USAGE) or found & want:
        return "right"
    return "generic"


def warn_rows(
    data: dict[str, list[list[str]]], where: Path, meanings: set[str] | None, frames: set[str] | None
) -> list[Row]:
    rows: list[Row] = []
    for _, path, fmt in data["strings"]:
        meaning, want = meaning_of(fmt, path)
        variants = (
            [(filled(fmt, path, (e, c)), w) for e, c, w in CUDA_ERRORS] if meaning == CUDA else [(filled(fmt, path), want)]
        )
        if meanings and meaning not in meanings:
            continue
        for msg, expected in variants:
            for frame, text in framings(path, msg).items():
                if frames and frame not in frames:
                    continue
                got = doctor(text, where)
                rows.append(
                    Row(path, msg, meaning, frame, verdict(meaning, expected, got), tuple(sorted(got[1])) if got else ())
                )
    return rows


# --- healthy INFO lines and the INFO lines that matter in context ------------------------------------------------
# an INFO string that reports a failure or a lost path: judged in SCENARIOS (or not: an error-return trace, a step of
# a failure a WARN reports), never counted as a healthy line
_NOT_HEALTHY = re.compile(
    r"^%s:%d -> |Cuda failure|\bfail|\berror\b|\btime ?out|timed out|retry|retrying|refused|"
    r"disabled between|Could not enable P2P|peer query failed|exceeds device|No device found|"
    r"abort|unable|cannot|could not|invalid|mismatch|\bNo \w+ found\b|not available|"
    r"-- internal|\bdead\b|\blost\b|terminat|\bkill|exited|closed|hang|stuck|\bdown\b",
    re.I,
)


def healthy_rows(data: dict[str, list[list[str]]], where: Path) -> list[Row]:
    """Each healthy INFO string after a healthy process's init lines, then its Init COMPLETE."""
    rows = []
    done = (
        f"{_prefix()} NCCL INFO comm 0x5581c8d0a2f0 rank 3 nranks 16 cudaDev 3 nvmlDev 3 busId 4e000 "
        "commId 0x1f0c3e2b9a7d4c11 - Init COMPLETE"
    )
    for _, path, fmt in data["info"]:
        if _NOT_HEALTHY.search(fmt):
            continue
        msg = filled(fmt, path)
        got = doctor("\n".join([*_init_lines(), f"{_prefix()} NCCL INFO {msg}", done]), where)
        read = "refused" if got is None else "false" if got[1] else "clean"
        rows.append(Row(path, msg, "healthy", "nccl", read, tuple(sorted(got[1])) if got else ()))
    return rows


def _node(host: str, ip: str, rank: int, lines: list[str]) -> list[str]:
    p = f"{host}:{40100 + rank}:{40200 + rank} [{rank % 8}]"
    return [f"{p} NCCL INFO {ln}" for ln in lines]


def _two_nodes(second: list[str]) -> str:
    """A two-node job: node a on NET/IB, node b printing ``second`` after its bootstrap."""
    a = _node(
        "gpu-a01",
        "10.12.3.17",
        0,
        [
            "Bootstrap : Using bond0:10.12.3.17<0>",
            "NCCL version 2.21.5+cuda12.4",
            "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB bond0:10.12.3.17<0>",
            "Using network IB",
            "comm 0x55d1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
        ],
    )
    b = _node(
        "gpu-b02",
        "10.12.3.18",
        8,
        [
            "Bootstrap : Using bond0:10.12.3.18<0>",
            *second,
            "comm 0x55d2 rank 8 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
        ],
    )
    return "\n".join(a + b)


def _one_node(lines: list[str]) -> str:
    return "\n".join(
        _node(
            "gpu-a01",
            "10.12.3.17",
            0,
            [
                "Bootstrap : Using eno1:10.12.3.17<0>",
                "NCCL version 2.21.5+cuda12.4",
                *lines,
                "comm 0x55d1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0",
            ],
        )
    )


# (name, log, the causes or families a right reading names; None: no finding at warn or above)
SCENARIOS: tuple[tuple[str, str, Want | None], ...] = (
    (
        "two nodes, one falls back to NET/Socket after NET/IB : No device found",
        _two_nodes(["NET/IB : No device found.", "NET/Socket : Using [0]bond0:10.12.3.18<0>", "Using network Socket"]),
        frozenset({"nccl_transport_mismatch", "nccl_socket_fallback"}),
    ),
    (
        "two nodes, libibverbs missing on one",
        _two_nodes(
            ["Failed to open libibverbs.so[.1]", "NET/Socket : Using [0]bond0:10.12.3.18<0>", "Using network Socket"]
        ),
        frozenset({"nccl_transport_mismatch", "nccl_socket_fallback", "nccl_ib_unavailable"}),
    ),
    (
        "one node: NET/IB : No device found, NET/Socket (nothing crosses it)",
        _one_node(["NET/IB : No device found.", "NET/Socket : Using [0]eno1:10.12.3.17<0>", "Using network Socket"]),
        None,
    ),
    (
        "one node: libibverbs absent",
        _one_node(["Failed to open libibverbs.so[.1]", "NET/Socket : Using [0]eno1:10.12.3.17<0>"]),
        None,
    ),
    (
        "P2P disabled between NVLink-connected GPUs",
        _one_node(
            [
                "P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their "
                "connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set "
                "NCCL_IGNORE_DISABLED_P2P=1."
            ]
        ),
        frozenset({"p2p_disabled", "nccl_p2p_disabled"}),
    ),
    (
        "P2P disabled between PCIe GPUs (the cards' design)",
        _one_node(
            ["P2P is disabled between connected GPUs 1 and 0. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1."]
        ),
        None,
    ),
    (
        "the driver refuses P2P between two GPUs",
        _one_node(["Could not enable P2P between dev 1(=1b000) and dev 0(=1a000)"]),
        frozenset({"p2p_unavailable", "nccl_p2p_not_enabled"}),
    ),
    ("NVLS multicast not available (info)", _one_node(["NVLS multicast support is not available on dev 0"]), None),
    (
        "GPU Direct RDMA off by distance (NCCL's choice)",
        _one_node(
            [
                "GPU Direct RDMA Disabled for GPU 1b000 / HCA 0 (distance 5 > 4)",
                "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
            ]
        ),
        None,
    ),
    ("connect retried and went on", _one_node(["Call to connect returned Connection refused, retrying"]), None),
    (
        "NCCL kernels need more shared memory than the GPU has",
        _one_node(["ncclMaxSharedMem 232448 exceeds device/fn maxSharedMem 101376"]),
        frozenset({"nccl_build_unsupported", "nccl_kernel_shared_memory"}),
    ),
)


def scenario_rows(where: Path) -> list[Row]:
    rows = []
    for name, text, want in SCENARIOS:
        got = doctor(text, where)
        if want is None:
            read = "refused" if got is None else "false" if got[1] else "clean"
        else:
            read = verdict("scenario", want, got)
        rows.append(Row("scenario", name, "scenario", "log", read, tuple(sorted(got[1])) if got else ()))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--show", default="", help="verdicts to list, comma-separated (generic,clear,refused,false)")
    ap.add_argument("--meaning", help="only these meanings, comma-separated")
    ap.add_argument("--framing", help="only these framings, comma-separated")
    ap.add_argument("--no-healthy", action="store_true", help="skip the healthy INFO lines")
    args = ap.parse_args(argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    show = set(args.show.split(",")) if args.show else set()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "nccl.log"
        rows = warn_rows(
            data,
            where,
            set(args.meaning.split(",")) if args.meaning else None,
            set(args.framing.split(",")) if args.framing else None,
        )
        healthy = [] if args.no_healthy else healthy_rows(data, where)
        scenarios = scenario_rows(where)
    print(f"{len(data['strings'])} WARN and {len(data['info'])} INFO strings ({', '.join(data['sources'].values())})")
    _table(rows)
    for name, part in (("healthy INFO lines", healthy), ("scenarios", scenarios)):
        if part:
            c = Counter(r.read for r in part)
            print(f"{name}: {len(part)}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    for r in [*rows, *healthy, *scenarios]:
        if r.read in show:
            print(f"  [{r.meaning}/{r.framing}/{r.read}] {r.path}: {r.text[:150]}  {list(r.found)}")
    return 0


def _table(rows: list[Row]) -> None:
    frames = list(dict.fromkeys(r.framing for r in rows))
    print(
        f"{'meaning':<16}{'rows':>6}{'right':>7}{'generic':>9}{'clear':>7}{'refused':>9}   right by framing "
        f"({', '.join(frames)})"
    )
    by: dict[str, list[Row]] = {}
    for r in rows:
        by.setdefault(r.meaning, []).append(r)
    for name in [*(m for m, _, _ in MEANINGS), CUDA, OTHER, "classed", "judged"]:
        part = (
            [r for r in rows if r.meaning not in (GOES_ON, USAGE, OTHER)]
            if name == "classed"
            else [r for r in rows if r.meaning != GOES_ON]
            if name == "judged"
            else by.get(name, [])
        )
        if not part:
            continue
        c = Counter(r.read for r in part)
        per = " ".join(
            f"{sum(r.read == 'right' for r in part if r.framing == f)}/{sum(r.framing == f for r in part)}" for f in frames
        )
        print(f"{name:<16}{len(part):>6}{c['right']:>7}{c['generic']:>9}{c['clear']:>7}{c['refused']:>9}   {per}")


if __name__ == "__main__":
    sys.exit(main())
