"""Issue 43 (docs/limits.md "Reading speed"), review 46 (RF2): the readers added late find their lines in a long
text (marks.holding) instead of walking every line. Each is given its own few lines among 20,000 lines of an
ordinary kernel log, kept as places in the text (lines.TextLines, as a bug report's are), and the Lines it makes
are counted: a reader that tests every line makes all 20,000 of them. Inputs are small constructed ones."""

from __future__ import annotations

import pytest

from gpuvet.captures import amd_xgmi, app_gpu_lines, container_layer, rocminfo, tegrastats, xpu_smi
from gpuvet.captures import lines as lines_module
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.lines import TextLines, line_ends
from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import Line

_FILLER = 20_000
_FEW = 200  # a reader's own lines and those it reads around them; far below the filler's count

# constructed: tegrastats' sample (JetPack 6)
TEGRA = "RAM 2848/7620MB (lfb 2x4MB) CPU [5%@729,3%@729] GR3D_FREQ 99%@[1020] gpu@55.8C tj@56.2C"
# constructed: amd-smi xgmi --metric of one GPU
XGMI = """LINK METRIC TABLE:
       bdf           bit_rate  max_bandwidth  link_type  GPU0
GPU0   0000:0c:00.0  32 Gb/s   512 Gb/s       XGMI       N/A
 Read                                                    0 KB"""
# constructed: rocminfo's GPU agent cut above its Name (a paste that starts inside the agent)
ROCMINFO = """  Chip ID:                 29876(0x74b4)
  Compute Unit:            304
  SIMDs per CU:            4
  BDFID:                   3072
  Device Type:             GPU
  Max Clock Freq. (MHz):   2100"""
# constructed: xpu-smi -v
XPU_VERSION = """CLI:
    Version: 1.3.0.20250707
    Build ID: 3db7de07
Service:
    Version: 1.3.0.20250707
    Build ID: 3db7de07
    Level Zero Version: 1.21.9"""
# constructed: PhoenixMiner's NVML read of a lost card (miner_lost's docstring)
MINER = "2021.09.24:22:57:10.022: hwmc GPU2: unable to get fan speed - GPU is lost (15)"
# constructed: NVML's error in a container the session started (container_layer, IGC)
CONTAINER = "$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\nFailed to initialize NVML: " \
    "Unknown Error"


def _placed(own: str) -> TextLines:
    """``own``'s lines in the middle of the filler, as places in the text."""
    filler = [f"[{i / 100:10.6f}] usb 1-1: new high-speed USB device number {i % 90}" for i in range(_FILLER)]
    body = "\n" + "\n".join([*filler[:_FILLER // 2], *own.split("\n"), *filler[_FILLER // 2:]])
    starts, ends = line_ends(body, 1)
    return TextLines(body, starts, ends, whole=True)


def _tegrastats(lines: TextLines) -> object:
    got = tegrastats.parse(lines)
    assert got.modules and got.modules[0].fields["Utilization/Gpu"] == "99 %"
    return got


def _xgmi(lines: TextLines) -> object:
    out = ListedParse()
    amd_xgmi.read(lines, out)
    assert [m.bus_id for m in out.modules] == ["0000:0C:00.0"]
    return out


def _rocminfo(lines: TextLines) -> object:
    out = ListedParse()
    rocminfo.read_cpu_only(lines, out)
    assert [m.bus_id for m in out.modules] == ["0000:0C:00.0"] and "compute units: 304" in out.notes[0]
    return out


def _xpu_version(lines: TextLines) -> object:
    got = xpu_smi.versions(lines)
    assert got.kinds == ["xpu-smi version"] and "Service Level Zero Version 1.21.9" in got.notes[0]
    return got


def _miner(lines: TextLines) -> object:
    got = app_gpu_lines.parse(lines)  # miner_lost's reader first, then the programs' own lines
    assert [(e.kind, e.module) for e in got.events] == [("gpu_lost", "GPU 2")]
    return got


def _container(lines: TextLines) -> object:
    out = AppErrorsParse()
    container_layer.framed(out, lines, set())
    assert [e.kind for e in out.errors] == ["container_nvml_unknown"]
    return out


@pytest.mark.parametrize(("read", "own"), [(_tegrastats, TEGRA), (_xgmi, XGMI), (_rocminfo, ROCMINFO),
                                           (_xpu_version, XPU_VERSION), (_miner, MINER), (_container, CONTAINER)],
                         ids=["tegrastats", "amd-smi xgmi", "rocminfo cut agents", "xpu-smi version",
                              "miner's lost card", "NVML in a container"])
def test_a_reader_makes_only_the_lines_holding_its_words(read, own, monkeypatch: pytest.MonkeyPatch) -> None:
    placed = _placed(own)
    made: list[tuple[int, str]] = []

    def counted(kind: type[Line], args: tuple[int, str]) -> Line:
        made.append(args)
        return tuple.__new__(kind, args)

    monkeypatch.setattr(lines_module, "_MADE", counted)  # every Line a TextLines makes, indexed or iterated
    read(placed)
    assert len(made) < _FEW, f"{len(made)} Lines made of {len(placed)}: the reader walks every line"
