"""HM1 (issue 46): the host's own memory errors, as linux drivers/edac/edac_mc.c, the x86 machine check handler and
rasdaemon print them: a host DIMM's repeated corrected errors are a warn, an uncorrected one critical, each placed on
the DIMM by its label ('host DIMM <label>'), never on a GPU, never listed as a module; a single corrected error and
the EDAC drivers' set-up lines stay a note. The lines are written here in the kernel's formats (sources named in
benchmarks/data/host_memory_phrasebook.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import host_errors, kernel
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

CE = ("EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#2_DIMM#0 (channel:2 slot:0 page:0x849923 "
      "offset:0x380 grain:32 syndrome:0x0 -  area:DRAM err_code:0001:0092 socket:0 ha:0 channel_mask:4 rank:0)")
CHIPKILL = ("EDAC MC0: 1 CE single-symbol chipkill ECC on P0_Node0_Channel5_Dimm0 DIMMF1 (node:0 card:5 module:16 "
            "rank:0 DIMM location: P0_Node0_Channel5_Dimm0 DIMMF1 page:0x3fd437 offset:0x4180 grain:1 syndrome:0x0)")
UE = ("EDAC MC3: 1 UE memory read error on CPU_SrcID#1_MC#1_Chan#2_DIMM#0 (channel:2 slot:0 page:0xb757589 "
      "offset:0x140 grain:32 -  OVERFLOW err_code:0101:0092 socket:1 imc:1 rank:0)")


def _doctor(tmp_path: Path, text: str) -> tuple[int, list[tuple[str, str, str | None]]]:
    path = tmp_path / "dmesg.txt"
    path.write_text(text, encoding="utf-8")
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["doctor", "--from", str(path), "--json"])
    return code, [(f["severity"], f["cause"], f.get("module")) for f in json.loads(out.getvalue())["findings"]]


@pytest.mark.parametrize("stamp", ["", "[  511.304636] ", "May  7 06:45:12 node01 kernel: ",
                                   "[Mon Jan 27 19:27:15 2020] "])
def test_repeated_corrected_errors_on_one_dimm_are_a_host_warn(tmp_path: Path, stamp: str) -> None:
    second = CHIPKILL.replace("page:0x3fd437", "page:0x2ea37")
    code, found = _doctor(tmp_path, f"{stamp}{CHIPKILL}\n{stamp}{second}\n")
    assert (code, found) == (1, [("warn", "host_memory_ce_repeated", "host DIMM P0_Node0_Channel5_Dimm0 DIMMF1")])


def test_one_corrected_error_is_a_note_and_many_counted_at_once_a_warn(tmp_path: Path) -> None:
    assert _doctor(tmp_path, CE + "\n") == (0, [])
    code, found = _doctor(tmp_path, CE.replace(": 1 CE", ": 262 CE") + "\n")  # sb_edac's OVERFLOW burst
    assert found == [("warn", "host_memory_ce_repeated", "host DIMM CPU_SrcID#0_Ha#0_Chan#2_DIMM#0")]


def test_an_uncorrected_error_is_critical_on_its_dimm_and_no_gpu_is_listed(tmp_path: Path) -> None:
    text = f"[11189.970968] {UE}\n[11219.196673] mce: [Hardware Error]: Machine check events logged\n"
    assert _doctor(tmp_path, text) == (1, [("critical", "host_memory_uncorrected",
                                             "host DIMM CPU_SrcID#1_MC#1_Chan#2_DIMM#0")])
    assert kernel.parse(clean(text).lines).modules == []


def test_the_old_format_rasdaemon_and_the_machine_check_handler_are_read() -> None:
    lines = clean("EDAC MC0: UE page 0x1a2b, offset 0x0, grain 8, row 1, labels \"DIMM_A1\": amd64_edac\n"
                  "EDAC MC0: CE page 0x1a, offset 0x0, grain 8, syndrome 0x5, row 1, channel 0, label \"DIMM_B1\": x\n"
                  "EDAC MC0: CE page 0x2b, offset 0x0, grain 8, syndrome 0x5, row 1, channel 0, label \"DIMM_B1\": x\n"
                  "rasdaemon[1482]: <...>-118 [007] 0.000000: mc_event: 2024-05-01 10:00:00.000000 +0000 "
                  "(95270 = 0.95270) 1 Uncorrected error: memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 "
                  "(mc: 0 location: 0:1:0 grain: 6)\n"
                  "mce: Uncorrected hardware memory error in user-access at 2ecf3fa400\n").lines
    _, _, found = host_errors.read(lines)
    assert {(d.kind, d.place) for d in found} == {
        ("host_memory_uncorrected", "host DIMM DIMM_A1"), ("host_memory_ce_repeated", "host DIMM DIMM_B1"),
        ("host_memory_uncorrected", "host DIMM CPU_SrcID#0_MC#0_Chan#1_DIMM#0"),
        ("host_memory_uncorrected", host_errors.NOT_NAMED)}


def test_the_same_line_pasted_twice_is_one_report_and_set_up_lines_are_read_not_judged(tmp_path: Path) -> None:
    assert _doctor(tmp_path, f"[  5.1] {CE}\n[  5.1] {CE}\n") == (0, [])
    boot = ("[    1.2] EDAC MC: Ver: 3.0.0\n[    1.3] EDAC amd64: Node 0: DRAM ECC enabled.\n"
            "[    1.4] EDAC MC0: Giving out device to module amd64_edac controller F17h: DEV 0000:00:18.3 (INTERRUPT)\n")
    assert _doctor(tmp_path, boot) == (0, [])
    claimed, said, found = host_errors.read(clean(boot).lines)
    assert len(claimed) == 3 and said is not None and "set-up" in said and found == []


def test_a_poster_quoting_the_uncorrected_line_is_a_lead_at_most_warn(tmp_path: Path) -> None:
    code, found = _doctor(tmp_path, f'On my node dmesg printed "{UE}" and the job died.\n')
    assert found == [("warn", "host_memory_uncorrected", "host DIMM CPU_SrcID#1_MC#1_Chan#2_DIMM#0")]


ROW = "dmesg_top500bench43_ampereone_edac_chipkill_ce.txt"


def test_the_fresh_al_row_is_a_host_dimm_warn() -> None:
    path = Path(__file__).parents[1] / "data" / "captures" / "fresh_al" / ROW
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["doctor", "--from", str(path), "--json"])
    found = [(f["severity"], f["cause"], f.get("module")) for f in json.loads(out.getvalue())["findings"]]
    assert (code, found) == (1, [("warn", "host_memory_ce_repeated", "host DIMM P0_Node0_Channel5_Dimm0 DIMMF1")])


def _apei(n: int, severity: str) -> str:
    """A firmware-first memory error record as ghes.c and cper.c print it."""
    return "".join(f"[  539.0611{n}] {{{n}}}[Hardware Error]: {t}\n" for t in (
        "Hardware error from APEI Generic Hardware Error Source: 2", f"event severity: {severity}",
        f" Error 0, type: {severity}", "  section_type: memory error", "  node:0 card:5 module:16 rank:0 row:1492",
        "  DIMM location: P0_Node0_Channel5_Dimm0 DIMMF1", "  error_type: 4, single-symbol chipkill ECC"))


def test_firmware_first_memory_records_are_read_per_record(tmp_path: Path) -> None:
    dimm = "host DIMM P0_Node0_Channel5_Dimm0 DIMMF1"
    assert _doctor(tmp_path, _apei(39, "corrected")) == (0, [])
    assert _doctor(tmp_path, _apei(39, "corrected") + _apei(40, "corrected"))[1] == [
        ("warn", "host_memory_ce_repeated", dimm)]
    assert _doctor(tmp_path, _apei(41, "fatal"))[1] == [("critical", "host_memory_uncorrected", dimm)]
    pcie = _apei(42, "recoverable").replace("memory error", "PCIe error")  # a PCIe record: the note's, not a DIMM's
    assert _doctor(tmp_path, pcie) == (0, [])


def test_health_cites_a_host_dimms_errors_as_edacs_words_at_the_same_verdict() -> None:
    from gpuvet.health.checks import _STATUS_OF, _driver_word
    from gpuvet.knowledge import fault

    assert _driver_word("host_memory_ce_repeated") == "EDAC message" and _driver_word("init_failed") == "NVRM message"
    assert [_STATUS_OF[fault(k).severity].name for k in host_errors.KINDS] == ["FAIL", "WARN"]
