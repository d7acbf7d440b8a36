"""R9B (issue 46): the host platform's RAS lines beside the GPUs, as the tools print them: the kernel's machine
check records (arch/x86/kernel/cpu/mce/core.c print_mce, drivers/edac/mce_amd.c), rasdaemon's ras-mc-ctl
(util/ras-mc-ctl.in: --errors, --summary, --status), mcelog's records and dmidecode's 'Error Correction Type'.
An uncorrected machine check is critical, corrected ones repeated a warn, one a note; a memory controller's bank
is a host DIMM's (host_errors' kinds), any other the host CPU's; never a GPU's. Lines written here in those formats
(sources in benchmarks/data/host_ras_phrasebook.json)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from gpuvet.captures import host_ras
from gpuvet.cli.app import main

# print_mce's three lines for one record (an AMD Zen core's bank 5, UC and PCC set), after the reset that caused it
KERNEL_UC = ("mce: [Hardware Error]: Machine check events logged\n"
             "mce: [Hardware Error]: CPU 9: Machine Check: 0 Bank 5: bea0000000000108\n"
             "mce: [Hardware Error]: TSC 0 ADDR 1ffffc0754f4a MISC d012000100000000 SYND 4d000000 IPID 500b000000000\n")
RAS_CE = ("{n} 2024-12-19 03:52:38 +0000 error: Corrected error, no action required., CPU 2, bank Unified Memory "
          "Controller (bank=17), mcg mcgstatus=0, mci CECC, memory_channel=0,csrow=1, mcgcap=0x0000011c, "
          "status=0x9c2040000000011b, addr=0x319deb440, misc=0xd01b0fff01000000, walltime=0x6763988{n}, "
          "cpuid=0x00870f10, bank=0x00000011")
RAS_HEAD = "No Memory errors.\n\nNo PCIe AER errors.\n\nNo Extlog errors.\n\nNo devlink errors.\n\nNo disk errors.\n\n"


def _doctor(tmp_path: Path, text: str) -> tuple[int, list[tuple[str, str, str | None]]]:
    path = tmp_path / "ras.txt"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["doctor", "--from", str(path), "--json"])
    return code, [(f["severity"], f["cause"], f.get("module")) for f in json.loads(out.getvalue())["findings"]]


def test_status_bits_decoded_as_the_sdm_and_ppr_name_them() -> None:
    assert host_ras.decode(0xBEA0000000000108) == (True, "VAL, UC, EN, MISCV, ADDRV, PCC: uncorrected, processor "
                                                         "context corrupt")
    assert host_ras.decode(0x9C2040000000011B) == (False, "VAL, EN, MISCV, ADDRV: corrected")
    assert host_ras.decode(0xDC2040000000011B)[1].startswith("VAL, OVER, EN")


@pytest.mark.parametrize("stamp", ["", "[  511.304636] ", "Feb 27 15:09:35 nixos kernel: "])
def test_an_uncorrected_cpu_machine_check_is_critical_on_the_host_cpu(tmp_path: Path, stamp: str) -> None:
    text = "".join(stamp + ln + "\n" for ln in KERNEL_UC.splitlines())
    assert _doctor(tmp_path, text) == (1, [("critical", "host_machine_check", "host CPU 9 (MCA bank 5)")])


def test_a_corrected_machine_check_once_is_a_note_repeated_a_warn(tmp_path: Path) -> None:
    one = "mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 1: 9c00000000010151\n"
    assert _doctor(tmp_path, one) == (0, [])
    two = one + one.replace("CPU 3", "CPU 3").replace("010151", "010151") + one
    code, found = _doctor(tmp_path, "[1.0] " + two.replace("\nmce", "\n[2.0] mce", 1))
    assert found == [("warn", "host_machine_check_repeated", "host CPU 3 (MCA bank 1)")]


def test_an_intel_memory_controller_bank_is_a_host_dimm_fault(tmp_path: Path) -> None:
    # compound code 0x0091 (0000 0000 1001 0001: a memory controller's read error, channel 1)
    ue = "mce: [Hardware Error]: CPU 0: Machine Check Exception: 5 Bank 8: be00000000800091\n"
    assert _doctor(tmp_path, ue) == (1, [("critical", "host_memory_uncorrected", "host memory controller (MCA bank 8)")])


def test_amd_decoder_line_and_its_bank_name_make_a_dimm_record_once(tmp_path: Path) -> None:
    text = ("[Hardware Error]: Corrected error, no action required.\n"
            "[Hardware Error]: CPU:0 (19:1:1) MC17_STATUS[-|CE|MiscV|AddrV|-|-|SyndV|CECC|-|-|-]: 0x9c2040000000011b\n"
            "[Hardware Error]: Error Addr: 0x0000000319deb440\n"
            "[Hardware Error]: Unified Memory Controller Ext. Error Code: 0, DRAM ECC error.\n")
    assert _doctor(tmp_path, text) == (0, [])  # one corrected record: a note
    code, found = _doctor(tmp_path, text + text.replace("Addr: 0x00", "Addr: 0x01"))
    assert found == [("warn", "host_memory_ce_repeated", "host memory controller (MCA bank 17)")]


def test_ras_mc_ctl_errors_repeated_corrected_dram_is_a_warn_not_refused(tmp_path: Path) -> None:
    text = "[root@host:~]# ras-mc-ctl --errors\n" + RAS_HEAD + "MCE events:\n" + \
        "\n".join(RAS_CE.format(n=n) for n in (1, 2, 3)) + "\n"
    assert _doctor(tmp_path, text) == (1, [("warn", "host_memory_ce_repeated",
                                            "host memory channel 0 csrow 1 (MCA bank 17)")])


def test_ras_mc_ctl_with_nothing_logged_is_read_clear(tmp_path: Path) -> None:
    text = "$ sudo ras-mc-ctl --status\nras-mc-ctl: drivers are loaded.\n$ sudo ras-mc-ctl --summary\n" + RAS_HEAD + \
        "No MCE errors.\n"
    assert _doctor(tmp_path, text) == (0, [])


def test_ras_mc_ctl_summary_counts(tmp_path: Path) -> None:
    dimm = "Memory controller events summary:\n\tCorrected on DIMM Label(s): 'CPU_SrcID#0_Ha#0_Chan#0_DIMM#0' " \
           "location: 0:0:0:-1 errors: 14\n\n"
    assert _doctor(tmp_path, dimm + "No PCIe AER errors.\n") == (1, [
        ("warn", "host_memory_ce_repeated", "host DIMM CPU_SrcID#0_Ha#0_Chan#0_DIMM#0")])
    mce = "No Memory errors.\n\nMCE records summary:\n\t3 Uncorrected error, system halted. errors\n"
    code, found = _doctor(tmp_path, mce)
    assert [f[:2] for f in found] == [("critical", "host_machine_check")]
    once = "No Memory errors.\n\nMCE records summary:\n\t1 Corrected error, no action required. errors\n"
    assert _doctor(tmp_path, once) == (0, [])


def test_mcelog_record_is_decoded(tmp_path: Path) -> None:
    text = ("Hardware event. This is not a software error.\nMCE 0\nCPU 4 BANK 5 \nTIME 1355386442 Thu Dec 13 2012\n"
            "MCG status:\nMCi status:\nUncorrected error\nError enabled\nProcessor context corrupt\n"
            "STATUS b200000000000402 MCGSTATUS 5\nMCGCAP c09 APICID 8 SOCKETID 0\n")
    code, found = _doctor(tmp_path, text)
    assert found == [("critical", "host_machine_check", "host CPU 4 (MCA bank 5)")]


@pytest.mark.parametrize("line", ["\tError Correction Type: None", "\tError Correction Type: Multi-bit ECC"])
def test_dmidecode_s_ecc_type_is_a_fact_never_a_warn(tmp_path: Path, line: str) -> None:
    text = "Handle 0x0011, DMI type 16, 23 bytes\nPhysical Memory Array\n\tLocation: System Board Or Motherboard\n" + \
        line + "\n\tMaximum Capacity: 128 GB\n"
    assert _doctor(tmp_path, text) == (0, [])


def test_memory_said_to_have_no_ecc_is_no_lead(tmp_path: Path) -> None:
    text = ("66:00.0 Display controller: Advanced Micro Devices, Inc. [AMD/ATI] Device 1586 (rev c1)\n"
            "8 x 16 GB LPDDR5X-8000 (Micron), total 128 GB\nNo ECC / No ECC -- all memory errors are silent\n")
    code, found = _doctor(tmp_path, text)
    assert code != 2 and [f for f in found if f[0] in ("warn", "critical")] == []


def test_a_machine_check_quoted_in_a_poster_s_sentence_is_read_on_the_host(tmp_path: Path) -> None:
    text = 'On my node dmesg printed "mce: [Hardware Error]: CPU 9: Machine Check: 0 Bank 5: bea0000000000108" ' \
           "and the machine rebooted.\n"
    code, found = _doctor(tmp_path, text)
    assert [(f[1], f[2]) for f in found] == [("host_machine_check", "host CPU 9 (MCA bank 5)")]  # a quote: the
    # quoted readers' severity
    asked = 'What does "mce: [Hardware Error]: CPU 9: Machine Check: 0 Bank 5: bea0000000000108" mean?\n'
    path = tmp_path / "asked.txt"
    path.write_text(asked, encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["doctor", "--from", str(path)]) in (0, 2)  # a question about the line: no finding


@pytest.mark.parametrize("stamp", ["..", ""])
def test_ras_mc_ctl_errors_without_a_time_column_are_read_alike(tmp_path: Path, stamp: str) -> None:
    """rasdaemon's database kept no time: '1 .. error: Corrected error, …' (rasdaemon issue 121's spelling)."""
    line = RAS_CE.replace("2024-12-19 03:52:38 +0000", stamp).replace("  ", " ")
    text = "MCE events:\n" + "\n".join(line.format(n=n) for n in (1, 2, 3)) + "\n"
    assert _doctor(tmp_path, text) == (1, [("warn", "host_memory_ce_repeated",
                                            "host memory channel 0 csrow 1 (MCA bank 17)")])


def test_one_corrected_record_is_said_in_a_note_with_its_overflow(tmp_path: Path) -> None:
    from gpuvet.captures.text import Line

    one = RAS_CE.format(n=1).replace("mci CECC", "mci Error_overflow CECC").replace("0x9c20", "0xdc20")
    claimed, notes, found = host_ras.read([Line(1, "MCE events:"), Line(2, one)])
    assert found == [] and claimed == {1, 2}
    assert len(notes) == 1 and "host memory channel 0 csrow 1 (MCA bank 17): 1 corrected error(s)" in notes[0]
    assert "overflow" in notes[0]
    assert _doctor(tmp_path, "MCE events:\n" + one + "\n") == (0, [])


def test_the_rasdaemon121_row_is_read_its_one_corrected_umc_error_said() -> None:
    from gpuvet.captures.text import Line

    path = Path(__file__).resolve().parents[1] / "data/captures/fresh_av/rasmcctl_rasdaemon121_cpu_ce_umc_ryzen.txt"
    lines = [Line(i + 1, t) for i, t in enumerate(path.read_text(encoding="utf-8").splitlines())]
    claimed, notes, found = host_ras.read(lines)
    assert found == [] and 31 in claimed
    assert any("host memory channel 0 csrow 2 (MCA bank 21): 1 corrected error(s)" in n for n in notes)
