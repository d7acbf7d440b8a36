"""The plain nvidia-smi table left printing in a loop (`nvidia-smi -l 60 > gpu.log`) replays: a
sample per module per printout, at the printout's time, with temperature, power, memory and
utilisation; 'N/A' cells are no reading; a damaged log is exit 2 or a result, never a traceback.
The text below is written in the format of a data-centre driver's table (two modules, TCC-less
Linux layout), not captured; tests/data/telemetry/real/ holds a real one."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuvet.cli.app import main
from gpuvet.watch.readers import read_file

TABLE = """\
{stamp}
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
| N/A   {t0}C    P0            {p0}W /  700W |   40000MiB /  81559MiB |     97%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:2A:00.0 Off |                    0 |
| N/A   {t1}C    P0              N/A /  700W |       4MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
"""


def _log(tmp_path: Path, n: int = 5) -> Path:
    text = "".join(TABLE.format(stamp=f"Mon Nov  2 10:{m:02d}:00 2026", t0=60 + m % 3, p0=600 + m, t1=33)
                   for m in range(n))
    path = tmp_path / "rack1.log"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_printout_is_a_sample_per_module_at_its_time(tmp_path):
    rec = read_file(_log(tmp_path), 60.0)
    assert rec.source == "nvidia-smi table" and not rec.relative_time
    assert sorted(rec.modules) == ["rack1/gpu0", "rack1/gpu1"]
    assert rec.modules["rack1/gpu0"].model == "NVIDIA H100 80GB HBM3"
    assert rec.modules["rack1/gpu1"].bus_id == "0000:2A:00.0"  # as NVML's and lspci's compare
    first = [s for s in rec.samples if s.module == "rack1/gpu0"]
    assert [s.t - first[0].t for s in first] == [0.0, 60.0, 120.0, 180.0, 240.0]
    assert (first[1].temp_c, first[1].power_w, first[1].util) == (61.0, 601.0, 0.97)
    idle = next(s for s in rec.samples if s.module == "rack1/gpu1")
    assert (idle.temp_c, idle.power_w, idle.util, idle.fb_used_bytes) == (33.0, None, 0.0, 4 * 2**20)


def test_a_table_without_its_time_lines_is_refused(tmp_path, capsys):
    path = tmp_path / "notime.log"
    path.write_text(TABLE.format(stamp="", t0=60, p0=600, t1=33), encoding="utf-8")
    assert main(["watch", "--replay", str(path), "--no-log"]) == 2
    assert "nvidia-smi -l" in capsys.readouterr().err


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 4000), junk=st.text(max_size=40), at=st.integers(0, 4000))
def test_a_damaged_table_is_a_result_or_exit_2(tmp_path, capsys, cut, junk, at):
    text = _log(tmp_path, 3).read_text(encoding="utf-8")
    text = text[:at] + junk + text[at:cut or None]
    path = tmp_path / "damaged.log"
    path.write_text(text, encoding="utf-8")
    assert main(["watch", "--replay", str(path), "--no-log", "--json"]) in (0, 1, 2)
    capsys.readouterr()
