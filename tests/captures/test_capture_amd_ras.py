"""AMD's RAS/ECC counts (issue 46 dev set dev_i_other; leftover of batch G/H): ``rocm-smi --showrasinfo`` in both
layouts (ROCm 5+'s per-GPU table, whose lowercase header version prints its rows correctable count first; ROCm
4's ``Block X is:`` lines with the block's ``ue:``/``ce:`` counters) and an ``amd-smi metric --ecc`` excerpt
pasted without its ``GPU: N`` line (a ``grep -A3`` under its command line). An uncorrectable count above zero is
critical, a deferred one warns, correctable counts alone are said and not judged. Written in the tools' layouts;
figures made up."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.captures import amd_smi
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

SPACER = "=" * 36 + " RAS Info " + "=" * 36 + "\n"


def _table(rows: dict[str, tuple[str, str, str]], gpu: int = 0,
           header: str = "         Block     Status  uncorrectable err  correctable err  ") -> str:
    body = "".join(f"{b:>14}  {st:>13}  {c1:>17}  {c2:>15}  \n" for b, (st, c1, c2) in rows.items())
    return f"\nGPU[{gpu}]: \tRAS INFO\n{header}\n{body}" + "_" * 80 + "\n"


HEALTHY = {"UMC": ("ENABLED", "0", "0"), "SDMA": ("ENABLED", "0", "0"), "GFX": ("ENABLED", "0", "0"),
           "MMHUB": ("ENABLED", "0", "0"), "XGMI_WAFL": ("DISABLED", "0", "0")}


def _doctor(capsys, tmp_path: Path, text: str) -> tuple[list[tuple[str, str, str]], str]:
    path = tmp_path / "ras.txt"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    got = json.loads(out)
    return [(f["cause"], f["module"], f["severity"]) for f in got["findings"]], json.dumps(got["steps"])


def test_the_table_is_read_per_block_in_the_order_its_rows_carry_the_counts() -> None:
    rows = dict(HEALTHY, UMC=("ENABLED", "7", "0"))  # this header's rows: correctable first, then uncorrectable
    got = amd_smi.parse(clean("$ rocm-smi --showrasinfo all\n" + SPACER + _table(rows)).lines)
    assert got.kinds == ["rocm-smi --showrasinfo"]
    [m] = got.modules
    ras = dict(m.ras)
    assert (m.label, ras["RAS/UMC/CORRECTABLE_COUNT"], ras["RAS/UMC/UNCORRECTABLE_COUNT"]) == ("GPU[0]", "7", "0")
    assert ras["RAS/ECC_BLOCK_STATE/XGMI_WAFL"] == "DISABLED"


def test_a_header_naming_its_columns_is_read_by_their_names() -> None:
    head = "         Block     Status  Uncorrectable Error  Correctable Error"
    rows = dict(HEALTHY, SDMA=("ENABLED", "3", "0"))
    [m] = amd_smi.parse(clean(SPACER + _table(rows, header=head)).lines).modules
    assert dict(m.ras)["RAS/SDMA/UNCORRECTABLE_COUNT"] == "3"


def test_an_uncorrectable_count_is_critical_and_correctable_alone_is_not_judged(capsys, tmp_path: Path) -> None:
    bad = SPACER + _table(HEALTHY) + _table(dict(HEALTHY, GFX=("ENABLED", "0", "2")), gpu=1)
    assert _doctor(capsys, tmp_path, bad)[0] == [("module_reported_critical", "GPU[1]", "critical")]
    findings, steps = _doctor(capsys, tmp_path, SPACER + _table(dict(HEALTHY, UMC=("ENABLED", "12", "0"))))
    assert findings == [] and "RAS/UMC/CORRECTABLE_COUNT '12'" in steps and "not judged" in steps
    assert _doctor(capsys, tmp_path, SPACER + _table(HEALTHY))[0] == []


def test_the_rocm_4_lines_give_each_blocks_state_and_counters() -> None:
    text = ("GPU[0]\t\t: Block UMC is: ENABLED\nGPU[0]\t\t: ue: 1\nce: 4\n"
            "GPU[0]\t\t: Block GFX is: DISABLED\n")
    [m] = amd_smi.parse(clean(text).lines).modules
    assert dict(m.ras) == {"RAS/ECC_BLOCK_STATE/UMC": "ENABLED", "RAS/UMC/UNCORRECTABLE_COUNT": "1",
                           "RAS/UMC/CORRECTABLE_COUNT": "4", "RAS/ECC_BLOCK_STATE/GFX": "DISABLED"}


def test_an_amd_smi_ecc_excerpt_without_its_gpu_line_is_read_under_its_command(capsys, tmp_path: Path) -> None:
    excerpt = ("[root@mi300 ~]# amd-smi metric -g 3 --ecc-blocks | grep -A3 SDMA\n"
               "        SDMA:\n            CORRECTABLE_COUNT: 0\n            UNCORRECTABLE_COUNT: {ue}\n"
               "            DEFERRED_COUNT: {de}\n[root@mi300 ~]#\n")
    [m] = amd_smi.parse(clean(excerpt.format(ue=0, de=0)).lines).modules
    assert m.label == "GPU 3" and dict(m.ras)["SDMA/UNCORRECTABLE_COUNT"] == "0"
    assert _doctor(capsys, tmp_path, excerpt.format(ue=1, de=0))[0] == [("module_reported_critical", "GPU 3",
                                                                         "critical")]
    assert _doctor(capsys, tmp_path, excerpt.format(ue=0, de=2))[0] == [("module_reported_warning", "GPU 3", "warn")]
    assert amd_smi.parse(clean(excerpt.format(ue=0, de=0).split("\n", 1)[1]).lines).modules == []  # no command
