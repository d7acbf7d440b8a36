"""An nvidia-smi --query-gpu CSV cut after its header (issue 46, batch R): a file of the tool's own output that
lists no module is read and said (no row, nothing judged), never refused. Lines written in the tool's layout."""

from __future__ import annotations

from gpuvet.captures import smi_query
from gpuvet.captures.text import clean
from tests.support.helpers import doctor_capture

HEADER = "index, name, temperature.gpu, power.draw [W], memory.used [MiB], clocks.current.sm [MHz]\n"


def test_a_header_alone_is_read_with_no_module_and_doctor_answers(capsys, tmp_path):
    text = "$ nvidia-smi --query-gpu=index,name,temperature.gpu,power.draw --format=csv\n\n" + HEADER
    got = smi_query.parse(clean(text).lines)
    assert got.modules == [] and got.claimed == {3}
    assert any("has no row under it" in n for n in got.notes), got.notes
    code, data = doctor_capture(capsys, tmp_path, text)
    assert code == 0 and not [f for f in data["findings"] if f["severity"] in {"warn", "critical"}]


def test_a_header_with_rows_reads_the_rows_and_says_no_bare_header():
    text = HEADER + "0, NVIDIA L4, 41, 27.50 W, 310 MiB, 2040 MHz\n"
    got = smi_query.parse(clean(text).lines)
    assert len(got.modules) == 1 and not any("no row under it" in n for n in got.notes)
