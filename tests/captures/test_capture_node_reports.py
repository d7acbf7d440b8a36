"""Issue 46 (AX2): reports over many nodes, each failing node its own finding with its reason's cause on its host
(and the GPU its reason names), the passing nodes counted and never a finding. Reports written here in the shapes the
suites print (AMD Primus node_smoke's Markdown report, report.py; a table aligned by spaces; LLNL's CSM epilog
roll-up, IBM/CAST#123; IBM CAST hcdiag's 'test FAIL, rc=N' through xdsh; pdsh's dshbak -c); the reasons are the
suites' own (benchmarks/node_report_phrasebook.py scores the whole class). Batch AA's two reports are checked
as they were pasted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

AA = Path(__file__).resolve().parents[1] / "data" / "captures" / "fresh_aa"
Found = tuple[str, str, str | None, str | None]


def _doctor(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[Found], list[str]]:
    path = tmp_path / "report.txt"
    path.write_text(text + "\n", encoding="utf-8")
    return _run(path, capsys)


def _run(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[Found], list[str]]:
    code = main(["doctor", "--from", str(path), "--json"])
    out = capsys.readouterr().out
    doc = json.loads(out) if out.strip() else {"findings": [], "notes": []}
    found = [
        (f["cause"], f["severity"], f.get("host"), f.get("module"))
        for f in doc["findings"]
        if f["severity"] in ("warn", "critical")
    ]
    return code, found, [str(n) for n in doc.get("notes", [])]


def test_a_markdown_smoke_report_names_each_failing_node_and_counts_the_rest(tmp_path, capsys):
    rows = [f"| {i} | mi-n{i:02d} | PASS | 22.4s |  |" for i in range(6)]
    rows += [
        "| 6 | mi-n06 | FAIL | 30.2s | gpu3: FAIL: GEMM TFLOPS 402 < threshold 600 |",
        "| 7 | mi-n07 | FAIL | 12.0s | gpu_processes: 1 foreign process(es) holding GPU(s) (e.g. gpu5: pid=77 "
        "name='python' hbm=60.0GiB) -- likely leaked rank(s) from a previous job. |",
    ]
    text = "\n".join(
        [
            "# Node-Local Smoke Test Report",
            "",
            "- **PASS**: `6`  **FAIL**: `2`",
            "",
            "| Node | Hostname | Status | Duration | Top fail reason |",
            "|------|----------|--------|----------|-----------------|",
            *rows,
        ]
    )
    code, found, notes = _doctor(text, tmp_path, capsys)
    assert code == 1
    assert ("compute_below_peak_unexplained", "warn", "mi-n06", "GPU 3") in found
    assert ("other_processes", "warn", "mi-n07", "GPU 5") in found
    assert not [f for f in found if f[2] not in ("mi-n06", "mi-n07")]
    assert any("2 node(s) failing" in n and "6 passing" in n for n in notes)


def test_an_aligned_table_and_a_reason_of_no_gpu_said_not_judged(tmp_path, capsys):
    text = "\n".join(
        [
            "HOSTNAME      STATUS  REASON",
            "cn101         PASS",
            "cn102         FAIL    GPU 1 failed cudaMalloc",
            "cn103         FAIL    /scratch not mounted",
            "cn104         PASS",
        ]
    )
    code, found, notes = _doctor(text, tmp_path, capsys)
    assert found == [("api_reports_driver_state", "warn", "cn102", "GPU 1")]
    assert any("not judged" in n and "cn103" in n for n in notes)


def test_a_rollup_by_node_list_expands_the_list_and_merges_the_verdict_it_quotes(tmp_path, capsys):
    text = "\n".join(
        [
            "[root@lc42:epilog.d]# /admin/scripts/check_node",
            "FAILED: lc42 Failed during cudaGetDeviceCount: initialization error",
            "",
            "#### CSM maintenance",
            'compute:    "IB CQE completion error 12":                         2: lc[0310,0311]',
            'compute:    "epilog: FAILED: lc42 Failed during cudaGetDeviceCount: initialization error":  1: lc42',
        ]
    )
    _, found, _ = _doctor(text, tmp_path, capsys)
    assert sorted(found) == [
        ("api_reports_driver_state", "warn", "lc42", None),
        ("rdma_completion_error", "warn", "lc0310", None),
        ("rdma_completion_error", "warn", "lc0311", None),
    ]


def test_dshbak_blocks_and_hcdiag_verdicts_under_their_hosts(tmp_path, capsys):
    dshbak = "\n".join(
        [
            "----------------",
            "node[01-03]",
            "----------------",
            "PASS",
            "----------------",
            "node04",
            "----------------",
            "FAIL: GPU 2 uncorrectable ECC errors: 4",
        ]
    )
    _, found, _ = _doctor(dshbak, tmp_path, capsys)
    assert found == [("ecc_uncorrectable_since_boot", "critical", "node04", "GPU 2")]
    hcdiag = "\n".join(
        [
            "c650f03p05: chk-nvidia-smi test FAIL, rc=1",
            "c650f03p06: chk-nvidia-smi test PASS, rc=0",
            "c650f03p07: chk-gpfs-mount test FAIL, rc=1",
        ]
    )
    _, found, _ = _doctor(hcdiag, tmp_path, capsys)
    assert found == [("node_health_check_failed", "warn", "c650f03p05", None)]


def test_a_report_whose_every_node_passed_is_read_and_quiet(tmp_path, capsys):
    text = "\n".join(
        [
            "| Node | Hostname | Status | Duration | Top fail reason |",
            "|---|---|---|---|---|",
            *(f"| {i} | gx-{i:03d} | PASS | 20.0s |  |" for i in range(8)),
        ]
    )
    code, found, notes = _doctor(text, tmp_path, capsys)
    assert code != 2 and not found
    assert any("0 node(s) failing" in n and "8 passing" in n for n in notes)


def test_batch_aa_sierra_epilog_roll_up(capsys):
    _, found, _ = _run(AA / "healthcheck_cast123_sierra_epilog_failures.txt", capsys)
    assert ("api_reports_driver_state", "warn", "sierra1133", None) in found
    assert ("api_reports_driver_state", "warn", "sierra1301", None) in found
    assert ("api_reports_driver_state", "warn", "sierra3061", "GPU 0") in found
    assert ("rdma_completion_error", "warn", "sierra1626", None) in found
    assert ("compute_below_peak_unexplained", "warn", "sierra1539", None) in found


def test_batch_aa_primus_smoke_report(capsys):
    code, found, _ = _run(AA / "smoketest_primus712_hbm_busy_node_report.txt", capsys)
    assert code == 1 and found == [("other_processes", "warn", "tus1-p3-g25", "GPU 0")]


def test_a_drain_row_and_a_node_record_carry_their_nodes(tmp_path, capsys):
    sinfo = "\n".join(
        [
            "REASON               USER      TIMESTAMP           NODELIST",
            "Xid 79 GPU lost      root      2024-03-01T10:00:00 gpu[01-02]",
            "scheduled maint      root      2024-03-01T10:00:00 gpu03",
        ]
    )
    _, found, _ = _doctor(sinfo, tmp_path, capsys)
    assert found == [("scheduler_gpus_short", "warn", "gpu[01-02]", None)]  # one drain of the nodes the row lists
    scontrol = "NodeName=gpu07 Arch=x86_64\n   State=IDLE+DRAIN\n   Reason=GPU 3 fell off the bus [root@2024-03-01T10:00:00]"
    _, found, _ = _doctor(scontrol, tmp_path, capsys)
    assert found == [("scheduler_gpus_short", "warn", "gpu07", None)]
