"""Issue 46 (REV68a on FX68A): NVRM's refusals (driver_call_refused, info: 'the GPU is not at fault') are never read
on the GPU's initialisation path (GSP's kgspInitRm, RmInitAdapter) nor on a module whose init another message
failed. Written from the resource manager's check macro's line ('NVRM: nvCheckOkFailedNoLog: Check failed: Call
not supported [NV_ERR_NOT_SUPPORTED] (0x00000056) returned from kgspInitRm(…) @ kernel_gsp.c:N') and osinit.c's
'RmInitAdapter failed!'."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings

_INIT = ("[ 5.1] NVRM: nvCheckOkFailedNoLog: Check failed: Call not supported [NV_ERR_NOT_SUPPORTED] (0x00000056) "
         "returned from kgspInitRm(pGpu, pKernelGsp, pGspFw) @ kernel_gsp.c:4001\n")
_FAILED = ("[ 5.2] NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x62:0x56:2500)\n"
           "[ 5.2] NVRM: GPU 0000:41:00.0: rm_init_adapter failed, device minor number 0\n")
_RUNTIME = ("[ 900.1] NVRM: nvCheckOkFailedNoLog: Check failed: Call not supported [NV_ERR_NOT_SUPPORTED] "
            "(0x00000056) returned from pRmApi->Control(pRmApi, hClient, hObject, cmd, pParams, size) @ rs_server.c:99\n")


def test_an_init_refusal_beside_a_failed_init_is_not_called_harmless(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _INIT + _FAILED)
    assert found.get(("module_init_failed", "0000:41:00.0")) == "critical", found
    assert not [k for k in found if k[0] == "driver_call_refused"], found


def test_an_init_refusal_alone_is_no_harmless_refusal(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _INIT)
    assert not [k for k in found if k[0] == "driver_call_refused"], found
    assert any(sev in ("warn", "critical") for sev in found.values()), found


def test_a_refused_control_call_stays_info(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _RUNTIME)
    assert [sev for (c, _m), sev in found.items() if c == "driver_call_refused"] == ["info"], found
