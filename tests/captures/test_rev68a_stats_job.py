"""Issue 46 (REV68a on FX68A): dcgmi stats -j's job summary (dcgmi/ProcessStats.cpp's box: '| GPU ID: N |' or
'| Summary |', the '-----  Event Stats  ---' section's 'Double Bit ECC Errors' and 'Critical XID Errors' rows,
'-----  Overall Health  ---' and its row). Counted double-bit errors and critical Xids during the job are findings
(the knowledge base's ecc_uncorrectable_since_boot and xid) on the GPU the box names; its Overall Health is never
read as a diag test's result."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import doctor_text

_BOX = """\
Successfully retrieved statistics for job: 42.
+------------------------------------------------------------------------------+
| {head:<77}|
+====================================+=========================================+
|-----  Event Stats  ----------------+-----------------------------------------|
| Single Bit ECC Errors              | 17                                      |
| Double Bit ECC Errors              | {dbe:<40}|
| PCIe Replay Warnings               | 0                                       |
| Critical XID Errors                | {xid:<40}|
|-----  Overall Health  -------------+-----------------------------------------|
| Overall Health                     | {health:<40}|
+------------------------------------+-----------------------------------------+
"""


def _found(tmp_path: Path, **cells: str) -> dict[tuple[str, object], str]:
    code, answer = doctor_text(tmp_path, _BOX.format(**cells), name="stats.txt")
    return {(f["cause"], f.get("module")): f["severity"] for f in answer.get("findings", [])}


def test_a_counted_double_bit_error_and_xid_are_findings_on_the_jobs_gpu(tmp_path: Path) -> None:
    found = _found(tmp_path, head="GPU ID: 3", dbe="2", xid="1", health="Healthy")
    assert found.get(("ecc_uncorrectable_since_boot", "GPU 3")) == "critical", found
    assert found.get(("xid", "GPU 3")) == "warn", found


def test_zero_counts_are_clear(tmp_path: Path) -> None:
    assert _found(tmp_path, head="GPU ID: 3", dbe="0", xid="0", health="Healthy") == {}


def test_a_job_summarys_failed_health_is_no_diag_test(tmp_path: Path) -> None:
    found = _found(tmp_path, head="Summary", dbe="0", xid="0", health="Failure")
    assert not [k for k in found if k[0].startswith("dcgm_diag")], found
