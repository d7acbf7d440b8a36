"""Issue 46 (AX4): nv-hostengine's own ERROR lines about its NvSwitch module, as NVIDIA/DCGM's
modules/nvswitch/*.cpp logs them (v2.4.7 and v3.1.8 DcgmNvSwitchManager.cpp, v4.6.0 DcgmNscqManager.cpp): NSCQ's
warning that its version is not the driver's, a read failing on switches the module reached (warn: DCGM cannot
read the NVSwitches); 'Not attached to NvSwitches' after NSCQ never loaded is log noise on a node the capture
shows no NVSwitch on (no finding), a warning where the capture shows NVSwitches; DCGM's own bookkeeping is not
judged. The lines are written here in nv-hostengine's log format."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_capture

_STAMP = "2026-03-02 11:40:{s:02d}.118 ERROR [2210:2231] "
_V2 = "[/workspaces/dcgm-rel_dcgm_2_4-postmerge/modules/nvswitch/DcgmNvSwitchManager.cpp:{n}] " \
      "[DcgmNs::DcgmNvSwitchManager::{fn}]"
_V3 = "[[NvSwitch]] {msg} [/workspaces/dcgm-rel_dcgm_3_1-postmerge/modules/nvswitch/DcgmNvSwitchManager.cpp:{n}] " \
      "[DcgmNs::DcgmNvSwitchManager::{fn}]"
_V4 = "[[NvSwitch]] {msg} [/builds/dcgm/modules/nvswitch/DcgmNscqManager.cpp:{n}] [DcgmNs::DcgmNscqManager::{fn}]"
NOT_ATTACHED = "Not attached to NvSwitches. Aborting"
NOT_LOADED = "Could not load NSCQ. dlwrap_attach ret: No such file or directory (-2)"
VERSION = ("NSCQ returned warning during session creation. Ensure driver version matches NSCQ version. NSCQ "
           "warning ret: 1")
READ = "Could not read Switch status. NSCQ ret: -5"
UNREAD = "dcgm_nvswitch_unread"


def _log(form: str, *messages: str) -> str:
    out = []
    for i, msg in enumerate(messages):
        body = f"{msg} {_V2.format(n=400 + i, fn='AttachToNscq')}" if form == "v2" else \
            (_V3 if form == "v3" else _V4).format(msg=msg, n=400 + i, fn="ReadNvSwitchStatusAllSwitches")
        out.append(_STAMP.format(s=i) + body)
    return "\n".join(out) + "\n"


def _unread(data: dict[str, object]) -> list[dict[str, object]]:
    return [f for f in data["findings"] if f["cause"] == UNREAD]  # type: ignore[attr-defined,index]


@pytest.mark.parametrize("form", ["v2", "v3", "v4"])
def test_not_attached_without_an_nvswitch_shown_is_noise(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                         form: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, _log(form, NOT_LOADED, *[NOT_ATTACHED] * 4))
    assert code == 0 and data["findings"] == []
    echo = "ReadNvSwitchStatusAllSwitches() returned Object is in an undefined state"
    code, data = doctor_capture(capsys, tmp_path, _log(form, NOT_ATTACHED, echo, NOT_ATTACHED, echo))
    assert code == 0 and data["findings"] == []  # the loop's echo of the same fact (DCGM_ST_UNINITIALIZED)


@pytest.mark.parametrize("shown", ["dgx-h100-07: HGX H100 8-GPU board, nv-hostengine 3.1.8",
                                   "nvidia-fabricmanager.service - NVIDIA fabric manager service"])
def test_not_attached_where_the_capture_shows_nvswitches_warns(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               shown: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, shown + "\n" + _log("v3", NOT_LOADED, NOT_ATTACHED, NOT_ATTACHED))
    found = _unread(data)
    assert code == 1 and [(f["severity"], f["module"]) for f in found] == [
        ("warn", "NVSwitch (DCGM's NvSwitch module)")]


@pytest.mark.parametrize("form", ["v2", "v3", "v4"])
def test_nscq_version_warning_is_the_switches_unread(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     form: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, _log(form, VERSION, "Could not read NvSwitch status",
                                                       "AttachNvSwitches returned -14", NOT_ATTACHED))
    found = _unread(data)
    assert code == 1 and [(f["severity"], f["module"]) for f in found] == [
        ("warn", "NVSwitch (DCGM's NvSwitch module)")]
    message = str(found[0]["evidence"]["message"])  # type: ignore[index]
    assert "libnvidia-nscq's version is not the driver's" in message and "Ensure driver version" in message


def test_a_read_failing_on_reached_switches_warns(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, _log("v4", READ, READ, NOT_ATTACHED))
    assert [(f["severity"], "(3 line(s))" in str(f["evidence"])) for f in _unread(data)] == [  # type: ignore[index]
        ("warn", True)]


def test_dcgms_own_bookkeeping_in_the_module_is_not_judged(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, _log("v3", "Version mismatch, [16777217] != [16777218].",
                                                       "Failed to append NvSwitch Samples to the cache: Timeout"))
    assert code == 0 and _unread(data) == []


_AA = Path(__file__).parents[1] / "data" / "captures" / "fresh_aa"


def test_batch_aa_rows(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spam = (_AA / "nvhostengine_dcgm159_not_attached_nvswitch_spam.txt").read_text(encoding="utf-8")
    code, data = doctor_capture(capsys, tmp_path, spam)
    assert code == 0 and not [f for f in data["findings"] if f["severity"] in ("warn", "critical")]
    nscq = (_AA / "nvhostengine_gmt189_nscq_version_mismatch.txt").read_text(encoding="utf-8")
    code, data = doctor_capture(capsys, tmp_path, nscq)
    assert [(f["severity"], f["module"]) for f in _unread(data)] == [("warn", "NVSwitch (DCGM's NvSwitch module)")]
