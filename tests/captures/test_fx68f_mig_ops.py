"""FX68F (issue 46): nvidia-smi mig's creations and failures, a Kubernetes MIG driver's NVML errors and the default
table's 'MIG devices:' box alone. Created or destroyed instances are counted and said (MIG on, a configuration);
NVML's 'Insufficient Permissions' is a warn that the caller may not list or change MIG, 'Insufficient Resources' a
warn that the GPU has no room for the profile; NVML's other words are said only. Lines written in nvidia-smi's and
the DRA driver's formats (their printf strings), ids and profiles made up."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gpuvet.captures import mig_ops
from gpuvet.captures.text import clean
from gpuvet.cli.app import main


def _doctor(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, list[tuple[str, str]], str]:
    path = tmp_path / "mig.txt"
    path.write_text(text)
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    data = json.loads(out) if out.strip() else {"findings": []}
    return code, [(f["cause"], f["severity"]) for f in data["findings"]], out + err


CREATED = ("$ sudo nvidia-smi mig -cgi 9,9 -i 1 -C\n"
           "Successfully created GPU instance ID  2 on GPU  1 using profile MIG 3g.20gb (ID  9)\n"
           "Successfully created compute instance ID  0 on GPU  1 GPU instance ID  2 using profile MIG 3g.20gb (ID  2)\n"
           "Successfully created GPU instance ID  1 on GPU  1 using profile MIG 3g.20gb (ID  9)\n"
           "Successfully created compute instance ID  0 on GPU  1 GPU instance ID  1 using profile MIG 3g.20gb (ID  2)\n")


def test_created_instances_are_counted_and_said_never_judged(capsys, tmp_path) -> None:
    out = mig_ops.parse(clean(CREATED).lines)
    assert out.errors == [] and out.claimed == {2, 3, 4, 5}
    assert "2 GPU instance(s) created on GPU 1 (3g.20gb)" in out.notes[0]
    assert "2 compute instance(s) created on GPU 1 (3g.20gb)" in out.notes[0] and "MIG is enabled" in out.notes[0]
    code, found, _ = _doctor(capsys, tmp_path, CREATED)
    assert code == 0 and found == []


def test_insufficient_permissions_is_a_warn_that_mig_cannot_be_listed(capsys, tmp_path) -> None:
    for text in ("Failed to display GPU instances: Insufficient Permissions\n",
                 "user@node7:~$ nvidia-smi mig -lci\nFailed to display compute instances: Insufficient Permissions\n"):
        code, found, said = _doctor(capsys, tmp_path, text)
        assert code == 1 and found == [("mig_not_permitted", "warn")]
        assert "NVIDIA_MIG_MONITOR_DEVICES" in said


def test_insufficient_resources_is_a_warn_that_the_profile_cannot_be_placed(capsys, tmp_path) -> None:
    smi = "Unable to create a GPU instance on GPU  0 using profile 14: Insufficient Resources\n"
    dra = ('E0501 09:00:00.000001       1 server.go:10] "prepare failed" err="error creating GPU instance for '
           "'2g.20gb': Insufficient Resources\" requestID=7\n")
    for text in (smi, dra):
        code, found, said = _doctor(capsys, tmp_path, text)
        assert code == 1 and found == [("mig_no_room", "warn")], text
        assert "-lgip" in said


def test_other_nvml_words_are_said_not_judged() -> None:
    out = mig_ops.parse(clean("Unable to destroy GPU instance ID  1 from GPU  0: In use by another client\n").lines)
    assert out.errors == [] and out.claimed == {1} and "In use by another client" in out.notes[0]


MIG_BOX = """+-----------------------------------------------------------------------------+
| MIG devices:                                                                |
+------------------+----------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |         Memory-Usage |        Vol|         Shared        |
|      ID  ID  Dev |           BAR1-Usage | SM     Unc| CE  ENC  DEC  OFA  JPG|
|                  |                      |        ECC|                       |
|==================+======================+===========+=======================|
|  1    2   0   0  |     11MiB / 19968MiB | 42      0 |  3   0    2    0    0 |
|                  |      0MiB / 32767MiB |           |                       |
+------------------+----------------------+-----------+-----------------------+
|  1    1   0   1  |     11MiB / 19968MiB | 42      0 |  3   0    2    0    0 |
|                  |      0MiB / 32767MiB |           |                       |
+------------------+----------------------+-----------+-----------------------+
"""


def test_a_mig_devices_box_alone_is_read_not_refused(capsys, tmp_path) -> None:
    out = mig_ops.parse(clean(MIG_BOX).lines)
    assert out.claimed == set(range(1, 14)) and "2 MIG device(s)" in out.notes[0]
    assert "GPU 1 GI 2 CI 0 (MIG device 0): 42 SMs, 11 MiB of 19968 MiB used" in out.notes[0]
    code, found, _ = _doctor(capsys, tmp_path, "$ nvidia-smi\n" + MIG_BOX)
    assert code == 0 and found == []


def _cpu(text: str) -> float:
    lines = clean(text).lines
    start = time.process_time()
    mig_ops.parse(lines)
    return time.process_time() - start


def test_hostile_input_costs_linear_time() -> None:
    """A file of 160,000 lines against one a sixteenth its size (linear: ~16x; quadratic: ~256x), a 100 KB line
    against a 10 KB one: CPU time ratios of the same run, never the machine's speed."""
    unit = CREATED.splitlines()[1] + "\nFailed to display compute instances: Insufficient Permissions\n"
    small, big = unit * 5_000, unit * 80_000
    assert _cpu(big) < 60 * max(_cpu(small), 1e-3)
    line = "error creating GPU instance for " + "Successfully created GPU instance ID " * 300 + "x" * 5_000
    assert _cpu(line * 10 + "\n") < 30 * max(_cpu(line + "\n"), 1e-3)
