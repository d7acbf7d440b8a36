"""Issue 46 (REVFIX66, review of R12A's slurm_nodes beside OPS3's ops_logs): one table of sinfo states for both of
its forms, and every form judged. Tables written as sinfo(1) prints them: the default and -N (space-aligned), -o
with '|' between the fields, whatever its first column."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_text

_SPACED = "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ngpu*         up   infinite      2  {} gpu[01-02]\n"
_PIPED = (
    "PARTITION|AVAIL|NODES|STATE|NODELIST\ngpu|up|2|{}|gpu[01-02]\n",
    "NODELIST|PARTITION|STATE|GRES\ngpu01|batch|{}|gpu:a100:8\n",
    "HOSTNAMES|STATE|GRES|REASON\ngpu01|{}|gpu:h100:8|xid 79\n",
    "AVAIL|CPUS|NODELIST|STATE|REASON |GRES \nup|80|gpu01|{}|none |gpu:gen:8 \n",
)


def _verdicts(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    code, got = doctor_text(tmp_path, text)
    assert code != 2
    return [(f["cause"], f["severity"]) for f in got["findings"]]


@pytest.mark.parametrize("state", ["down*", "fail", "failg", "invalid", "inval", "drained*", "drain*", "unk*"])
def test_every_sinfo_form_judges_a_gpu_node_out_of_service_alike(tmp_path: Path, state: str) -> None:
    want = [("scheduler_gpus_short", "warn")]
    assert _verdicts(tmp_path, _SPACED.format(f"{state:>6}")) == want, "spaced"
    for form in _PIPED:
        assert _verdicts(tmp_path, form.format(state)) == want, form


@pytest.mark.parametrize("state", ["drained", "drng", "maint", "resv", "idle", "alloc", "mix"])
def test_an_admins_drain_or_a_node_in_service_is_no_finding_in_any_form(tmp_path: Path, state: str) -> None:
    assert _verdicts(tmp_path, _SPACED.format(f"{state:>6}")) == []
    for form in _PIPED:
        assert _verdicts(tmp_path, form.format(state)) == [], form
