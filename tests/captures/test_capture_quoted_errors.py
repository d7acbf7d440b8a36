"""Issue 46: a file whose only words are a poster's sentence quoting a runtime's or a tool's message is read as the
poster's report (app_errors.quoted), one step less sure and said as theirs; code, grep hits and sentences that deny
the message or put it behind the poster stay unread, and a file holding a tool's own line reads as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures.app_errors import QUOTED
from gpuvet.captures.read import parse_text
from gpuvet.cli.app import main
from gpuvet.doctor.capture_failures import QUOTED_SAID
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
    ("Anyone know what 'CUDA driver version is insufficient for CUDA runtime version' means here?", "driver_too_old"),
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
    assert found["said.txt"]["severity"] == found["printed.txt"]["severity"]
    assert found["said.txt"]["confidence"] < found["printed.txt"]["confidence"]
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
    assert found["said.txt"]["severity"] == found["dmesg.txt"]["severity"]
    assert found["said.txt"]["module"] == found["dmesg.txt"]["module"]
    assert found["said.txt"]["confidence"] < found["dmesg.txt"]["confidence"]
    assert found["said.txt"]["evidence"]["said"] == QUOTED_SAID
    assert "said" not in found["dmesg.txt"]["evidence"]


# the NVIDIA driver's messages (kernel.NVRM_MESSAGES) in a poster's words, with no driver line in the file
MESSAGES_READ = [
    ('the journal keeps printing "RmInitAdapter failed! (0x26:0xffff:1290)" on 0000:3b:00.0', "init_failed",
     "0000:3B:00.0"),
    ("Is `GPU lost from the bus` a hardware fault?", "gpu_lost", "bus id not in the log"),
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
    assert (found["said.txt"]["cause"], found["said.txt"]["severity"]) == (found["dmesg.txt"]["cause"],
                                                                          found["dmesg.txt"]["severity"])
    assert found["said.txt"]["confidence"] < found["dmesg.txt"]["confidence"]
    assert found["said.txt"]["evidence"]["said"] == QUOTED_SAID
    assert "said" not in found["dmesg.txt"]["evidence"]
