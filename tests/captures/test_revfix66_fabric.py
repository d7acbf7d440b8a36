"""Issue 46 (REVFIX66, review of R12A's fabric_tools): cxiberstat's corrected-BER line is gpuvet's own (HPE gives
none) and its finding says so; the fdrstat note only where an fdrstat line was read."""

from __future__ import annotations

from pathlib import Path

from gpuvet.backends.nic_readings import SLINGSHOT_CCW_BER_LIMIT
from gpuvet.captures import fabric_tools
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.text import Line
from tests.support.helpers import doctor_text

_BER_HEAD = "      Node  Device    CCW_BER    UCW_BER\n"


def _read(text: str) -> AppErrorsParse:
    out = AppErrorsParse()
    fabric_tools.read([Line(i + 1, t) for i, t in enumerate(text.splitlines())], out)
    return out


def test_high_corrected_ber_finding_says_the_line_is_gpuvets_and_its_basis(tmp_path: Path) -> None:
    assert SLINGSHOT_CCW_BER_LIMIT == 1e-8
    code, got = doctor_text(tmp_path, _BER_HEAD + "nid000050:    cxi1  4.000e-07       <min\n")
    log = got["findings"][0]["evidence"]["log"]
    assert "at or above 1e-08" in log and "HPE gives none" in log and "2.5e-6" in log


def test_fdrstat_note_only_where_an_fdrstat_line_was_read() -> None:
    other = "ethtool: FEC Uncorrected codewords seen on eth0 (see below)\n"
    assert not [n for n in _read(other).notes if "fdrstat" in n]
    fdr = "port 118: Collecting Data ...\nNumber of Uncorrected codewords:           0             0\n"
    assert [n for n in _read(fdr).notes if "fdrstat" in n]
