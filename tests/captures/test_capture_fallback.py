"""Issue 46's fallback (captures/fallback.py), on lines written here in each tool's own form: a known fault
line inside a surrounding no reader knows gives the finding the clean line gives; a kernel excerpt with no GPU
line is a kernel log judged clear; a poster's sentence and a random text are still refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import fallback
from gpuvet.captures.read import parse_text
from gpuvet.captures.text import Cleaned, Line
from gpuvet.cli.app import main
from gpuvet.errors import CaptureError
from tests.captures.test_captures_fresh_c import run_json

MESSAGES = {  # each tool's own line, as it prints it
    "xid": "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.",
    "sxid": "nvidia-nvswitch3: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error",
    "amdgpu": "amdgpu 0000:c1:00.0: [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled "
              "seq=123, emitted seq=125",
    "fallen": "NVRM: GPU 0000:c1:00.0: GPU has fallen off the bus.",
    "nccl": "gpu-7:1234:1290 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1234> with status=12 opcode=0 "
            "len=0 vendor err 129 (Recv)",
    "hccl_code": "EI0006: Getting socket times out. Reason: 1. The remote does not initiate a connect request.",
    "hccl_test": "hccl interface return err ./hccl_test/common/src/hccl_test_common.cc:538, retcode: 7",
    "plog": "[ERROR] HCCL(1234,python3):2026-12-01-10:00:01.123.456 [transport_base.cc:123][1234]transport connect "
            "failed",
    "no_handle": "Unable to determine the device handle for GPU 0000:3b:00.0: Unknown Error",
    "cuda": "RuntimeError: CUDA error: uncorrectable ECC error encountered",
    "torch_nccl": "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled "
                  "system error, NCCL version 2.14.3",
}
SURROUNDINGS = {  # what a monitoring agent, a program's logger, a log shipper or a table puts around the line
    "glog": "E1201 10:00:01.123456    4411 monitor.go:88] {}",
    "python logging": "ERROR 12-01 10:00:01 worker.py:88] {}",
    "per-rank file": "train.log:[0003/0008][2026-12-01 10:00:01,123] [misc/check.cc:12] {}",
    "json envelope": '{{"level":"error","ts":"2026-12-01T10:00:01Z","msg":"{}","stream":"stderr"}}',
    "table cell": "| node-3 | {} | critical |",
}


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _found(path: str) -> set[tuple[str, str | None, str]]:
    code, data = run_json("doctor", "--from", path)
    assert code in (0, 1)
    return {(f["cause"], f.get("module"), f["severity"]) for f in data["findings"]}


@pytest.mark.parametrize("kind", sorted(MESSAGES))
def test_a_known_line_in_any_surrounding_gives_the_clean_lines_finding(tmp_path: Path, kind: str) -> None:
    clean = _found(_write(tmp_path, "clean.txt", MESSAGES[kind] + "\n"))
    assert clean and {sev for _, _, sev in clean} <= {"warn", "critical"}
    for name, around in SURROUNDINGS.items():
        if (kind, name) == ("no_handle", "per-rank file"):  # read_quoted's first: a quoted report (warn), its rules
            continue
        got = _found(_write(tmp_path, "around.txt", "```\n" + around.format(MESSAGES[kind]) + "\n```\n"))
        assert got == clean, (kind, name)


def test_the_fallback_names_the_surrounding_it_stripped(tmp_path: Path) -> None:
    text = "E1201 10:00:01.123456    4411 hccl.go:88] " + MESSAGES["hccl_code"] + "\n"
    fc = parse_text(text, "agent.log")
    assert fc.kinds == ["Ascend HCCL error codes"]
    said = [n for n in fc.notes if "unrecognised surrounding" in n]
    assert said == ["read 1 line(s) by their known message inside an unrecognised surrounding (e.g. line 1: "
                    "'E1201 10:00:01.123456    4411 hccl.go:88]')"]


def test_a_json_envelopes_escaped_lines_are_read_apart(tmp_path: Path) -> None:
    body = r"EI0006: Getting socket \"times out\".\nTraceback follows"
    fc = parse_text('{"ts":"2026-12-01T10:00:01Z","msg":"' + body + '"}\n', "shipper.json")
    assert fc.kinds == ["Ascend HCCL error codes"]
    assert [f.at.message for f in fc.ascend.failures][0].startswith('Getting socket "times out".')


@pytest.mark.parametrize("text", [
    "the monitor told us the kernel printed EI0006: Getting socket times out\n",  # a poster's sentence
    "we think that hccl interface return err ./a.cc:1, retcode: 7 is the cause\n",
    "ERROR 12-01 10:00:01 worker.py:88] error: something failed (error 12)\n",  # only a word: no known message
    "lorem ipsum dolor sit amet\nconsectetur adipiscing elit\n",  # random text
    "ERROR 12-01 10:00:01 inventory.py:12] board serial EZ2023 read\n",  # a code-like token, no CANN colon
])
def test_prose_a_bare_word_and_random_text_are_still_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text(text, "paste.txt")
    assert main(["doctor", "--from", _write(tmp_path, "paste.txt", text)]) == 2


DMESG = """```
[  327.006239] sched: RT throttling activated
[  327.385240] iwlwifi 0000:04:00.0: Error sending STATISTICS_CMD: time out after 2000ms.
[  327.387395] iwlwifi 0000:04:00.0: Start IWL Error Log Dump:
[  327.387402] iwlwifi 0000:04:00.0: 0x00000084 | NMI_INTERRUPT_UNKNOWN
```
"""
DMESG_T = """[Sun Dec  6 10:00:01 2026] e1000e 0000:00:1f.6 eno1: NIC Link is Down
[Sun Dec  6 10:00:04 2026] e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: None
[Sun Dec  6 10:00:05 2026] usb 1-4: new high-speed USB device number 3 using xhci_hcd
"""
JOURNAL = """$ journalctl -k --since today
Dec 06 10:00:01 node-7 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN
Dec 06 10:00:03 node-7 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE
Dec 06 10:00:04 node-7 kernel: EXT4-fs (md127p3): re-mounted. Quota mode: none.
Dec 06 10:00:05 node-7 systemd[1]: Started systemd-journald.service - Journal Service.
"""
ISO = """2026-12-06T10:00:01.123456+00:00 node-7 kernel: nvme nvme0: I/O 123 QID 4 timeout, aborting
2026-12-06T10:00:02.123456+00:00 node-7 kernel: nvme nvme0: Abort status: 0x0
"""


@pytest.mark.parametrize(("text", "lines"), [(DMESG, 4), (DMESG_T, 3), (JOURNAL, 4), (ISO, 2)])
def test_a_kernel_excerpt_with_no_gpu_line_is_a_clear_kernel_log(tmp_path: Path, text: str, lines: int) -> None:
    path = _write(tmp_path, "kern.txt", text)
    code, data = run_json("doctor", "--from", path, "--verbose")
    assert code == 0 and not data["findings"]
    said = f"{lines} kernel line(s), none from a GPU, NIC-to-GPU or driver module"
    steps = {s["check"]: s for s in data["steps"] if s["check"] in ("kernel_messages", "xid_log")}
    assert {s["status"] for s in steps.values()} == {"clear"}, steps
    assert said in steps["kernel_messages"]["summary"]
    _, inv = run_json("inventory", "--from", path)
    assert not inv["modules"] and any(said in n for n in inv["notes"])


def test_a_nic_link_flap_in_the_excerpt_is_named_not_judged() -> None:
    fc = parse_text(JOURNAL, "kern.txt")
    assert fc.kinds == ["kernel log"] and isinstance(fc.kernel, fallback.GpulessKernel)
    assert any("mlx5_5 port 1: DOWN -> ACTIVE" in n for n in fc.notes)


def test_one_stamped_line_or_a_minority_of_kernel_lines_is_no_kernel_log() -> None:
    program = "".join(f"May 01 12:00:00 gpu-node-3 job.sh[4242]: {s}\n" for s in (  # a program's lines, journaled
        "Settings for ens1f0:", "Speed: 100000Mb/s", "Duplex: Full", "Link detected: yes"))
    for text in (program, "[  327.006239] sched: RT throttling activated\n",
                 "[  1.0] usb 1-4: new device\n[  1.1] usb 1-4: new device\nfoo bar\nbaz qux\nquux\n"):
        with pytest.raises(CaptureError):
            parse_text(text, "kern.txt")


NEAR = ("E1201 10:00:01.123456 4411 x.go:88] Xid (PCI: SXid amdgpu NCCL WARNX HCCL(EI00 interface return errs "
        "device handle PCIe Bus Errors (PID: (EIxx ")  # every word a known message holds, never its shape


def _searches(monkeypatch: pytest.MonkeyPatch, lines: list[str]) -> list[int]:
    """The length of the head each known message's search was given, one per search (review 56: work counted,
    never timed; the timing ratios live in benchmarks/fallback_cost.py)."""
    heads: list[int] = []
    start = fallback.Known.start

    def counted(self: fallback.Known, head: str) -> int | None:
        heads.append(len(head))
        return start(self, head)

    monkeypatch.setattr(fallback.Known, "start", counted)
    cleaned = Cleaned([Line(n, s) for n, s in enumerate(lines, 1)])
    assert fallback.surrounded(cleaned.lines) is None and fallback.gpuless(cleaned) is None
    return heads


def test_near_misses_cost_a_bounded_search_per_line_and_a_message_per_line_at_most(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each line's head alone is searched (HEAD characters, whatever the line's length), each known message at
    most once a line: 10 MB in 200 long lines is 200 heads' work."""
    long = NEAR + "E" * (10 * 2**20 // 200)
    heads = _searches(monkeypatch, [long] * 200)
    assert heads and max(heads) <= fallback.HEAD and len(heads) <= 200 * len(fallback.known())


def test_lines_holding_no_known_messages_word_are_never_searched_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 56 (11): a large refused text whose lines hold none of the words costs one search per block."""
    assert _searches(monkeypatch, ["alpha beta [12] HCCL( x=1 (E node value"] * 20000) == []
