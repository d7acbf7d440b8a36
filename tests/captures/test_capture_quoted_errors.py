"""Issue 46: a file whose only words are a poster's sentence reporting a runtime's or a tool's message on their own
system is read as the poster's report (app_errors.reported), a lead (at most warn, low confidence) said as theirs;
a sentence that only asks what it means, cites documentation, or sets it in a runbook, a condition or a plan is
no report; code, grep hits and sentences that deny the message or put it behind the poster stay unread, and a
file holding a tool's own line reads as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures.app_errors import QUOTED
from gpuvet.captures.read import parse_text
from gpuvet.cli.app import main
from gpuvet.doctor.capture_failures import QUOTED_SAID
from gpuvet.doctor.outcome import LOW
from gpuvet.errors import CaptureError

# (the poster's words, the kind read): issue 46's examples and others worded as operators write
READ = [
    ('When I run nvidia-smi it says "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver."',
     "smi_no_driver"),
    ('torch fails with "CUDA error: an illegal memory access was encountered" on GPU 3', "illegal_address"),
    ("After the driver update **nvidia-smi** prints `Failed to initialize NVML: Driver/library version mismatch`",
     "nvml_mismatch"),
    ("Why does my training job die with 'CUDA out of memory' when only half of the card is used?", "out_of_memory"),
    ("The container says could not select device driver \"\" with capabilities: [[gpu]] every time I start it",
     "container_no_gpu"),
    ("> so deviceQuery tells me that *no CUDA-capable device is detected* on this box", "no_device"),
    ("Our PyTorch job hits a \"device-side assert triggered\" at step 400 on every node.", "device_assert"),
    ("Since the driver update my container prints 'CUDA driver version is insufficient for CUDA runtime version'.",
     "driver_too_old"),
    ("- on rank 5 the job says the Watchdog caught collective operation timeout after 30 minutes", "nccl_timeout"),
]

# never the poster's report: code, grep hits on source, comments, and sentences that deny it or put it behind them
REFUSED = [
    'src/train.py:88:    raise RuntimeError("CUDA error: an illegal memory access was encountered")',
    "csrc/alloc.cu:41: // CUDA out of memory is handled by the caching allocator",
    '    msg = "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver"',
    "# prints CUDA error: an illegal memory access was encountered when the index is wrong",
    'I no longer see "CUDA error: an illegal memory access was encountered" since the fix.',
    "It used to fail with 'CUDA out of memory' before the fix, now it trains fine.",
    "nvidia-smi did not say 'NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver' this time",
    "Solved: the 'Failed to initialize NVML: Driver/library version mismatch' went away after a reboot",
    "We never got a 'device-side assert triggered' on the A100s.",
]

# a poster's words that only ask about, cite or plan around a message (issue 46's review): no report, in any reader
NOT_REPORTS = [
    # a question about meaning
    "What does Xid 79 mean? Our vendor docs list it next to Xid 48 and Xid 63.",
    "Anyone know what 'CUDA driver version is insufficient for CUDA runtime version' means here?",
    'FAQ: what does "CUDA error: an illegal memory access was encountered" mean?',
    "Is `GPU lost from the bus` a hardware fault?",
    # a runbook or a conditional
    'Runbook: if a node logs "GPU has fallen off the bus" or "RmInitAdapter failed", drain it and open a ticket.',
    "If you see Xid 79 in dmesg, reseat the card.",
    "When `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver` appears, reinstall the driver.",
    # documentation, a plan, a hypothetical, a how-to
    "Is it normal that the docs say `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver` "
    "happens after a kernel update? I am asking before I upgrade.",
    "We should add a retry when NCCL reports \"unhandled system error\" in our launcher, see PR #12.",
    "Could a bad riser make the kernel print 'RmInitAdapter failed' on our nodes?",
    'How can I prevent "CUDA out of memory" errors when fine-tuning a 70B model on 8 GPUs?',
    # NBF1 (newcomer 55): a tool's whole line quoted in the question or the runbook, read by no tool's reader
    'What does "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus." mean?',
    'What does "NVRM: RmInitAdapter failed! (0x22:0x56:742)" mean?',
    'If you ever see "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error", drain the node.',
    # gone
    'Thanks, after reinstalling the driver the "GPU has fallen off the bus" message is gone and everything works.',
]

# the same messages as a report of the poster's own system: read
REPORTS = [
    ("Xid 79 showed up in dmesg on node gpu-07 last night, what does it say about the card?", "xid"),
    ("Our node logs 'RmInitAdapter failed! (0x26:0xffff:1290)' after every reboot.", "event"),
    ("I get \"CUDA error: an illegal memory access was encountered\" on GPU 2 every time.", "app"),
    ("After a kernel update nvidia-smi printed `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
     "driver` on my workstation.", "app"),
    # NBF1: a tool's whole line inside the poster's quotes is their report, never the kernel reader's own line
    ('nvidia-smi on node 3 says "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"', "event"),
]


@pytest.mark.parametrize("text", NOT_REPORTS)
def test_words_that_ask_cite_or_plan_are_no_report(text: str) -> None:
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text(text + "\n", "post.txt")


@pytest.mark.parametrize(("text", "reader"), REPORTS)
def test_a_report_of_the_posters_system_is_read(text: str, reader: str) -> None:
    fc = parse_text(text + "\n", "post.txt")
    assert fc.kinds == [QUOTED]
    read = {"xid": fc.kernel.xids, "event": fc.kernel.events, "app": fc.app_errors.errors}[reader]
    assert len(read) == 1 and read[0].quoted


def test_a_quoted_critical_message_is_a_lead_at_warn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A poster's report is capped at warn, at low confidence, whatever the knowledge base says a tool's line is."""
    for text in [r[0] for r in REPORTS]:
        (tmp_path / "post.txt").write_text(text + "\n")
        assert main(["doctor", "--from", str(tmp_path / "post.txt"), "--json"]) != 2
        findings = json.loads(capsys.readouterr().out)["findings"]
        assert findings and all(f["severity"] in ("warn", "info") for f in findings), text
        assert all(f["confidence"] == LOW and f["evidence"]["said"] == QUOTED_SAID for f in findings), text


@pytest.mark.parametrize(("text", "kind"), READ)
def test_a_quoted_message_is_the_posters_report(text: str, kind: str) -> None:
    fc = parse_text(text + "\n", "post.txt")
    assert fc.kinds == [QUOTED]
    assert [(e.kind, e.quoted) for e in fc.app_errors.errors] == [(kind, True)]


@pytest.mark.parametrize("text", REFUSED)
def test_code_and_distanced_sentences_stay_refused(text: str) -> None:
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text(text + "\n", "post.txt")


def test_a_tool_line_keeps_the_file_as_it_was() -> None:
    """A file with a tool's own line is read as before: the prose beside it is not read as a report."""
    text = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
            "I also once saw 'CUDA out of memory' on another node\n")
    fc = parse_text(text, "log.txt")
    assert QUOTED not in fc.kinds
    assert [(e.kind, e.quoted) for e in fc.app_errors.errors] == [("illegal_address", False)]


def test_doctor_says_whose_words_and_is_less_sure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    said = tmp_path / "said.txt"
    said.write_text(READ[0][0] + "\n")
    printed = tmp_path / "printed.txt"
    printed.write_text("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
                       "the latest NVIDIA driver is installed and running.\n")
    found = {}
    for path in (said, printed):
        assert main(["doctor", "--from", str(path), "--json"]) != 2  # read, not refused
        out = json.loads(capsys.readouterr().out)
        found[path.name] = next(f for f in out["findings"] if f["evidence"].get("kind") == "smi_no_driver")
    assert found["said.txt"]["cause"] == found["printed.txt"]["cause"]
    assert (found["printed.txt"]["severity"], found["said.txt"]["severity"]) == ("critical", "warn")
    assert found["said.txt"]["confidence"] == LOW < found["printed.txt"]["confidence"]
    assert found["said.txt"]["evidence"]["said"] == QUOTED_SAID
    assert "said" not in found["printed.txt"]["evidence"]
    assert main(["doctor", "--from", str(said), "--verbose"]) != 2
    assert "quoted in the poster's words, not a tool's own line" in " ".join(capsys.readouterr().out.split())


# the kernel's Xids in a poster's words: (the words, the module, the code), or refused
XIDS_READ = [
    ("dmesg shows Xid 79 on 0000:3b:00.0", "0000:3B:00.0", 79),
    ("**Why** do we keep getting `Xid 48` on this node?", "bus id not in the log", 48),
    ('the kernel log is full of "Xid (PCI:0000:86:00): 94" since Monday', "0000:86:00.0", 94),
]
XIDS_REFUSED = [
    "The Xid 79 errors on 0000:3b:00.0 are fixed since we replaced the riser.",
    "src/nvidia/nv.c:1200: // Xid 79 is logged when the GPU falls off the bus",
    "We have not seen Xid 79 on 0000:3b:00.0 again.",
]


@pytest.mark.parametrize(("text", "module", "code"), XIDS_READ)
def test_an_xid_in_a_posters_words_is_their_report(text: str, module: str, code: int) -> None:
    fc = parse_text(text + "\n", "post.txt")
    assert fc.kinds == [QUOTED]
    assert [(x.bus_id, x.code, x.quoted) for x in fc.kernel.xids] == [(module, code, True)]


@pytest.mark.parametrize("text", XIDS_REFUSED)
def test_an_xid_in_code_or_a_denied_sentence_stays_refused(text: str) -> None:
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text(text + "\n", "post.txt")


def test_doctor_is_less_sure_of_a_quoted_xid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    said, printed = tmp_path / "said.txt", tmp_path / "dmesg.txt"
    said.write_text("dmesg shows Xid 79 on 0000:3b:00.0\n")
    printed.write_text("[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n")
    found = {}
    for path in (said, printed):
        assert main(["doctor", "--from", str(path), "--json"]) != 2
        out = json.loads(capsys.readouterr().out)
        found[path.name] = next(f for f in out["findings"] if f["evidence"].get("xid") == 79)
    assert found["said.txt"]["cause"] == found["dmesg.txt"]["cause"]
    assert (found["dmesg.txt"]["severity"], found["said.txt"]["severity"]) == ("critical", "warn")
    assert found["said.txt"]["module"] == found["dmesg.txt"]["module"]
    assert found["said.txt"]["confidence"] == LOW < found["dmesg.txt"]["confidence"]
    assert found["said.txt"]["evidence"]["said"] == QUOTED_SAID
    assert "said" not in found["dmesg.txt"]["evidence"]


# the NVIDIA driver's messages (kernel.NVRM_MESSAGES) in a poster's words, with no driver line in the file
MESSAGES_READ = [
    ('the journal keeps printing "RmInitAdapter failed! (0x26:0xffff:1290)" on 0000:3b:00.0', "init_failed",
     "0000:3B:00.0"),
    ("Why does our node keep logging `GPU lost from the bus`?", "gpu_lost", "bus id not in the log"),
]


@pytest.mark.parametrize(("text", "kind", "module"), MESSAGES_READ)
def test_a_driver_message_in_a_posters_words_is_their_report(text: str, kind: str, module: str) -> None:
    fc = parse_text(text + "\n", "post.txt")
    assert fc.kinds == [QUOTED]
    assert [(e.kind, e.module, e.quoted) for e in fc.kernel.events] == [(kind, module, True)]


def test_a_driver_message_put_behind_the_poster_stays_refused() -> None:
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text("we no longer get 'RmInitAdapter failed' since the BIOS update\n", "post.txt")


def test_doctor_is_less_sure_of_a_quoted_driver_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    said, printed = tmp_path / "said.txt", tmp_path / "dmesg.txt"
    said.write_text(MESSAGES_READ[0][0] + "\n")
    printed.write_text("[   12.345678] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x26:0xffff:1290)\n")
    found = {}
    for path in (said, printed):
        assert main(["doctor", "--from", str(path), "--json"]) != 2
        out = json.loads(capsys.readouterr().out)
        found[path.name] = next(f for f in out["findings"] if f["evidence"].get("message") == "init_failed")
    assert found["said.txt"]["cause"] == found["dmesg.txt"]["cause"]
    assert (found["dmesg.txt"]["severity"], found["said.txt"]["severity"]) == ("critical", "warn")
    assert found["said.txt"]["confidence"] == LOW < found["dmesg.txt"]["confidence"]
    assert found["said.txt"]["evidence"]["said"] == QUOTED_SAID
    assert "said" not in found["dmesg.txt"]["evidence"]


# review 55 (F2, F8): sentences that explain a message, ask others about it, describe an alert rule, a course or a
# tutorial, call it a false positive or expected, or say it in everyday words unquoted: no report
NOT_REPORTS_55 = [
    "Xid 79 shows that the GPU has fallen off the bus. Reseat it and check the power cables.",
    "Xid 79 is what the driver prints when a GPU falls off the bus; the node then shows it missing in nvidia-smi.",
    "Has anyone seen Xid 79 on our nodes? Just curious whether it is common.",
    "Our monitoring alerts when a node logs Xid 79.",
    "Q: What is the difference between Xid 79 and Xid 48? I got both explained in a training course.",
    'Is it normal that the GPU shows "Xid 13" when my kernel has an out-of-bounds write?',
    "Every time our job crashes I reset the GPU, it needs to be reset with nvidia-smi -r.",
    "Our new server got a GSP Timeout message in the BMC web page, but the GPUs are fine.",
    "I got a GPU lost from the bus alert from our Grafana dashboard template, which was a false positive.",
    'In the tutorial we saw how nvidia-smi shows "Failed to initialize NVML: Driver/library version mismatch" after '
    "an upgrade without reboot.",
    'PyTorch throws "RuntimeError: CUDA error: an illegal memory access was encountered" every time I index past the '
    "end of a tensor, which is expected.",
]


@pytest.mark.parametrize("text", NOT_REPORTS_55)
def test_an_explanation_question_rule_or_course_is_no_report(text: str) -> None:
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text(text + "\n", "post.txt")


def test_every_xid_of_a_report_is_read_each_on_its_own_bus_id() -> None:
    """review 55 F3/F20: every Xid a report names is read, each on the bus id nearest it in its clause (never the
    line's first id); an Xid whose clause names no id is on no module."""
    xids = [("I got Xid 48 and then Xid 79 on GPU 0000:3b:00.0 last night.", [("0000:3B:00.0", 48), ("0000:3B:00.0", 79)]),
            ("GPU 0000:5e:00.0 runs fine, but since Monday I got Xid 79 on 0000:3b:00.0 twice.", [("0000:3B:00.0", 79)]),
            ("GPU 0000:5e:00.0 runs fine, but since Monday I got Xid 79 twice.", [("bus id not in the log", 79)])]
    for text, read in xids:
        fc = parse_text(text + "\n", "post.txt")
        assert sorted((x.bus_id, x.code) for x in fc.kernel.xids) == read, text


def test_every_driver_message_of_a_report_is_on_its_own_bus_id() -> None:
    text = ('my dmesg shows "RmInitAdapter failed! (0x26:0x56:1474)" for GPU 0000:5e:00.0 after GPU 0000:3b:00.0 got '
            'Xid 79 and "GPU lost from the bus" on 0000:86:00.0\n')
    fc = parse_text(text, "post.txt")
    assert sorted((e.kind, e.module) for e in fc.kernel.events) == [("gpu_lost", "0000:86:00.0"),
                                                                     ("init_failed", "0000:5E:00.0")]
    assert [(x.bus_id, x.code) for x in fc.kernel.xids] == [("0000:3B:00.0", 79)]


def test_every_runtime_message_of_a_report_is_read() -> None:
    fc = parse_text("My job got 'CUDA out of memory' on GPU 1 and then 'an illegal memory access was encountered'.\n",
                    "post.txt")
    assert sorted(e.kind for e in fc.app_errors.errors) == ["illegal_address", "out_of_memory"]


@pytest.mark.timeout(30)  # a guard only: read in well under a second when the reading is linear
@pytest.mark.parametrize("filler", ["when ", " ", "Xid ", "'a ", '"a '])
def test_a_100kb_prose_line_is_read_in_bounded_work(filler: str) -> None:
    """review 55 F1: a poster's line of 100 KB is judged on a bounded window around each message, whatever it holds."""
    fc = parse_text("I got Xid 79 on GPU 0000:3b:00.0 " + filler * (100_000 // len(filler)) + "\n", "post.txt")
    assert [(x.bus_id, x.code) for x in fc.kernel.xids] == [("0000:3B:00.0", 79)]


def test_an_empty_file_is_said_to_be_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """NBF1 (newcomer 55, LOW 12): an empty file is named as such, not answered with every format gpuvet reads."""
    (tmp_path / "empty.txt").write_text("")
    assert main(["doctor", "--from", str(tmp_path / "empty.txt")]) == 2
    err = capsys.readouterr().err
    assert "empty" in err and "nothing in it is output" not in err


def test_a_tool_line_quoted_in_prose_is_not_its_readers_own() -> None:
    """NBF1: beside a tool's own line, a sentence quoting a driver message is no kernel line (no module lost)."""
    text = ("[    5.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n"
            'nvidia-smi on node 3 says "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"\n')
    fc = parse_text(text, "log.txt")
    assert QUOTED not in fc.kinds and not fc.kernel.events


@pytest.mark.parametrize("text", [
    # a whole NCCL line pasted in backticks, its host:pid:tid prefix kept: NCCL's own line
    "error log `H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
    "fe80::966d:ae03:8b:df78%ib0<53249> with error 4, opcode 32564, len 32564, vendor err 81 (Send)`",
    # a tool's line with an empty quoted string, and NCCL's WARN with a quoted path, no prefix
    'Expected integer value from monitor, but got ""\nNCCL WARN Failed to open libibverbs.so "libibverbs.so.1"',
])
def test_real_lines_holding_quotes_are_still_the_tools(text: str) -> None:
    fc = parse_text(text + "\n", "log.txt")
    assert fc.kinds and QUOTED not in fc.kinds
