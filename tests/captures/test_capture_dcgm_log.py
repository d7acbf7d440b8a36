"""DCGM's own log lines (issue 46, batch L's dcgm272 as a class): nvvs.log and nv-hostengine.log print
'YYYY-MM-DD HH:MM:SS.mmm LEVEL [pid:tid] message [/path/file.cpp:N] [Class::Function]', the stamp sometimes cut
off by the paste. A debug log of the diagnostic's tests is read and said (levels, the tests started, the plugins),
never judged: a healthy excerpt has no finding. Its ERROR lines are said, not judged, unless they carry a health
incident or a DCGM_FR_ code, which stay read as those."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, capture_json

_SRC = "/builds/dcgm/dcgm/nvvs"


def _line(stamp: str, level: str, message: str, where: str) -> str:
    return f"{stamp}{level} [88121:88121] {message} [{_SRC}/{where}] [TestFramework::Run]"


def _debug_log(stamp: str) -> str:
    return "\n".join((
        _line(stamp, "DEBUG", "Test memory start", "src/TestFramework.cpp:910"),
        _line(stamp, "DEBUG", "[[memory]] Allocated 95 percent of the framebuffer on GPU 1",
              "plugin_src/memory/Memory.cpp:201"),
        _line(stamp, "INFO", "Set global parameter logfile_type -> 0.000000. st 0", "src/TestParameters.cpp:284"),
        _line(stamp, "DEBUG", "Test targeted_power start", "src/TestFramework.cpp:910"),
    )) + "\n"


def test_a_debug_log_of_the_diagnostics_tests_is_read_and_nothing_is_judged(tmp_path: Path) -> None:
    for stamp in ("2025-11-03 14:22:07.912 ", "2025-11-03T14:22:07.912 ", ""):
        text = "```\n" + _debug_log(stamp) + "```\n"
        assert capture_findings(tmp_path, text) == {}, stamp
        notes = " ".join(capture_json(tmp_path, text)["notes"])
        assert "tests started: memory, targeted_power" in notes, stamp


def test_its_error_lines_are_said_and_a_failure_code_stays_judged(tmp_path: Path) -> None:
    error = _line("2025-11-03 14:22:09.004 ", "ERROR", "[[pcie]] Unable to create CUDA context on GPU 2",
                  "plugin_src/pcie/Pcie.cpp:611")
    text = _debug_log("2025-11-03 14:22:07.912 ") + error + "\n"
    assert capture_findings(tmp_path, text) == {}
    assert "1 ERROR line(s), the first: '[[pcie]] Unable to create CUDA context" in " ".join(
        capture_json(tmp_path, text)["notes"])
    coded = _line("2025-11-03 14:22:09.004 ", "ERROR", "DCGM_FR_PCI_REPLAY_RATE: GPU 2 PCIe replay count 412 exceeds "
                  "the limit", "plugin_src/pcie/Pcie.cpp:640")
    assert set(capture_findings(tmp_path, text + coded + "\n").values()) == {"warn"}
