"""`nvidia-smi`'s default table as older drivers print it (issue 46, batch F and the dev set): the 325
driver's MB memory cells, the pre-319 table without a persistence column and with the memory
utilisation before the memory cell, and an excerpt cut inside a module's readings row. Written in
the tool's layouts; bus ids, names and figures are made up."""

from __future__ import annotations

from gpuvet.captures import smi_table
from gpuvet.captures.text import clean

MB_TABLE = """\
+------------------------------------------------------+
| NVIDIA-SMI 5.331.20   Driver Version: 331.20         |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla K20c          On   | 0000:05:00.0     Off |                    0 |
| 30%   41C    P0    52W / 225W |       78MB /  4799MB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  GeForce GTX 770     Off  | 0000:06:00.0     N/A |                  N/A |
| 26%   33C  N/A     N/A /  N/A |        7MB /  2047MB |     N/A      Default |
+-------------------------------+----------------------+----------------------+
"""

NO_PERSISTENCE = """\
| NVIDIA-SMI 4.310.40   Driver Version: 310.40         |
|-------------------------------+----------------------+----------------------+
| GPU  Name                     | Bus-Id        Disp.  | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap| Memory-Usage         | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla M2090              | 0000:11:00.0     Off |                    0 |
| N/A   47C    P0   118W / 225W |  18%  612MB / 5375MB |     96%      Default |
+-------------------------------+----------------------+----------------------+
"""


def _parse(text: str) -> smi_table.SmiText:
    return smi_table.parse(clean(text).lines)


def test_the_331_table_reads_its_mb_cells_as_nvidia_smis_mib() -> None:
    got = _parse(MB_TABLE)
    assert [(m.bus_id, m.product) for m in got.modules] == [("0000:05:00.0", "Tesla K20c"),
                                                            ("0000:06:00.0", "GeForce GTX 770")]
    k20 = got.modules[0].fields
    assert (k20["FB Memory Usage/Total"], k20["GPU Power Readings/Current Power Limit"]) == ("4799 MiB", "225 W")
    assert k20["Persistence Mode"] == "Enabled" and got.driver == "331.20"
    assert "GPU Power Readings/Power Draw" not in got.modules[1].fields  # N/A stays unknown, never a figure


def test_the_pre_319_table_without_persistence_and_with_memory_utilisation_first() -> None:
    got = _parse(NO_PERSISTENCE)
    assert len(got.modules) == 1
    m = got.modules[0]
    assert (m.bus_id, m.product, m.fields["FB Memory Usage/Used"]) == ("0000:11:00.0", "Tesla M2090", "612 MiB")
    assert "Persistence Mode" not in m.fields and "Driver Model/Current" not in m.fields


def test_a_readings_row_cut_by_the_excerpt_keeps_the_module_by_name_and_bus_id() -> None:
    cut = MB_TABLE.rsplit("| 26%", 1)[0] + "| 26%   33C  N/A     N/A /  N/A |        7MB /  20\n"
    got = _parse(cut)
    assert [m.bus_id for m in got.modules] == ["0000:05:00.0", "0000:06:00.0"]
    assert "FB Memory Usage/Total" not in got.modules[1].fields
    assert any("were cut at line" in n for n in got.notes)
    # a row followed by more of the table is not a cut: a broken readings row is no module
    broken = MB_TABLE.replace("|        7MB /  2047MB |", "| garbage |")
    assert [m.bus_id for m in _parse(broken).modules] == ["0000:05:00.0"]


def test_a_readings_row_cut_in_its_utilisation_cell_keeps_the_whole_cells_before_it() -> None:
    # batch K's 375 table: the excerpt ends inside the last cell; power and memory were printed whole
    cut = MB_TABLE.rsplit("| 26%", 1)[0] + "| 26%   33C    P8    10W / 250W |      7MB /  2047MB |      0%      De\n"
    got = _parse(cut).modules[1].fields
    assert (got["FB Memory Usage/Total"], got["GPU Power Readings/Current Power Limit"]) == ("2047 MiB", "250 W")
    assert "Utilization/Gpu" not in got and "Compute Mode" not in got  # the cut cell stays unknown
    # the pre-319 layout (memory utilisation first), cut the same way, with a shell prompt's indent
    old = NO_PERSISTENCE.split("| N/A   47C")[0] + "  | N/A   47C    P0   118W / 225W |  18%  612MB / 5375MB |  9\n"
    m = _parse(old).modules
    assert [(x.bus_id, x.fields.get("FB Memory Usage/Total")) for x in m] == [("0000:11:00.0", "5375 MiB")]
