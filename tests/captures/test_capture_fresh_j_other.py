"""Batch J's misses on AMD, Intel, NIC, Ascend and lspci output (issue 46), each fixed for its class of input
and tested on lines written here in the tool's own form: HCCL's error code written after its name, alone on
its line."""

from __future__ import annotations

from pathlib import Path

from gpuvet.cli.app import main
from tests.captures.test_captures_fresh_c import run_json


def _run(tmp_path: Path, text: str, cmd: str = "doctor") -> dict[str, object]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json(cmd, "--from", str(path))
    assert isinstance(data, dict)
    return data


def _findings(tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    data = _run(tmp_path, text)
    return {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}  # type: ignore[attr-defined]


def test_an_hccl_code_after_its_name_is_read_with_the_codes_advice(tmp_path: Path) -> None:
    data = _run(tmp_path, "```\nCommunication_Error_Get_Socket(EI0006)\n```\n")
    found = data["findings"]
    assert [(f["cause"], f["severity"]) for f in found] == [("collective_runtime_error", "warn")]  # type: ignore
    assert "HCCL_CONNECT_TIMEOUT" in found[0]["fix"]  # type: ignore[index]
    assert _findings(tmp_path, "Error_Transport_Init(EJ0001)\n") == {
        ("collective_init_failed", "host and GPU not in the log"): "critical"}  # HCCP's code: its words say init
    path = tmp_path / "other.txt"  # a bracketed code of another component is not the collective's: not read
    path.write_text("Some_Runtime_Error(EH9999)\n")
    assert main(["doctor", "--from", str(path)]) == 2
