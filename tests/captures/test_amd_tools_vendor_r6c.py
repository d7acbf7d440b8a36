"""Issue 46 (R6C), on lines written in each tool's own words: tt-smi's Blackhole reset
whose config-space reset did not complete (tt_tools_common bh_reset.py); rocm-bandwidth-test 2.6's list of CPU
agents only (no phantom GPU); a tool's output pasted as a page's HTML source (tags off, every line read); NCCL's
transport-limiting settings in one info; amdgpu's late SMU resume (a note); one card named by model and gfx target;
rocm-smi --showtemp and hwmon lines without their prefix."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

_TT = ("(.venv) user@bh-04:~$ tt-smi -r 0\n Starting PCI link reset on BH devices at PCI indices: 0\n"
       "Waiting for up to 2 seconds for asic to come back after reset\n")


def test_a_tt_smi_config_space_reset_not_completed_is_a_warn_a_chip_not_back_critical(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _TT + " Config space reset not completed for device 0!\n") == \
        {("module_reported_warning", "TT device 0"): "warn"}
    failed = _TT + " Config space reset not completed for device 0!\n Error when re-initializing chips!\n"
    assert capture_findings(tmp_path, failed) == {("module_reported_critical", "TT device 0"): "critical"}


_RBT = """          RocmBandwidthTest Version: 2.6.0

          Device Index:                             0
            Device Type:                            CPU
            Device Name:                            AMD EPYC 9575F 64-Core Processor
              Allocatable Memory Size (KB):         1584939352

          Device Index:                             1
            Device Type:                            CPU
            Device Name:                            AMD EPYC 9575F 64-Core Processor
              Allocatable Memory Size (KB):         1585343396
"""


def test_rocm_bandwidth_test_listing_cpu_agents_only_says_it_saw_no_gpu_and_invents_none(tmp_path: Path) -> None:
    code, answer = doctor_text(tmp_path, _RBT)
    assert code == 0 and not answer["findings"]
    assert any("2 CPU" in n and "saw no GPU" in n for n in answer["notes"])
    assert not any("container-cli" in n for n in answer["notes"])


_HTML = """<div><div><pre><code><span>$ </span> hccn_tool <span>-i</span> 3 <span>-ip</span> <span>-g</span>
ipaddr:29.1.112.213
netmask:255.255.0.0
</code></pre></div></div>
<p>route:</p>
<div><div><pre><code><span>$ </span>hccn_tool <span>-i</span> 3 <span>-link</span> <span>-g</span>
link status: UP
</code></pre></div></div>
"""


def test_a_tool_pasted_as_a_pages_html_source_is_read_not_refused(tmp_path: Path) -> None:
    code, answer = doctor_text(tmp_path, _HTML)
    assert code == 0 and not answer["findings"]
    assert any("HTML tags" in n and "every line kept" in n for n in answer["notes"])
    assert any("hccn_tool -ip: 29.1.112.213/16" in n for n in answer["notes"])


def test_hccn_tool_lldp_and_route_answers_are_said_not_judged(tmp_path: Path) -> None:
    text = ("$ hccn_tool -i 3 -lldp -g\nChassis ID TLV\n        MAC: 00:11:22:33:44:55\nPort ID TLV\n"
            "        Ifname: 400GE1/1/20:2\nEnd of LLDPDU TLV\n$ hccn_tool -i 3 -route -g\nRouting table:\n"
            "Destination     Gateway         Genmask         Flags Metric Ref    Use Iface\n"
            "default         29.1.0.1        0.0.0.0         UG    0      0        0 eth3\n")
    code, answer = doctor_text(tmp_path, text)
    assert code == 0 and not answer["findings"]
    assert any("cabled to it: 400GE1/1/20:2" in n for n in answer["notes"])
    assert any("hccn_tool -route: 1 route(s) read" in n for n in answer["notes"])


_NCCL = ("node1:85517:85801 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC\n"
         "node1:85517:85801 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.\n"
         "node1:85517:85801 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_bond_0\n"
         "node1:85517:85801 [0] NCCL INFO NET/IB : Using [0]mlx5_bond_0:1/RoCE ; OOB bond0:10.0.0.1<0>\n"
         "node1:85517:85801 [0] NCCL INFO Using network IB\n")


def test_every_transport_the_jobs_settings_turn_off_is_named_in_one_info(tmp_path: Path) -> None:
    code, answer = doctor_text(tmp_path, _NCCL)
    assert code == 0 and not answer["findings"]
    text = str(answer)
    assert "NCCL_P2P_LEVEL set by environment to LOC" in text and "NCCL_SHM_DISABLE=1 (line 2)" in text
    assert "NCCL_IB_HCA" not in text.split("limited by the job's own settings")[1][:80]


_RESUME = ("[5621798.980225] amdgpu 0000:83:00.0: amdgpu: SMU driver if version not matched\n"
           "[5621799.027382] amdgpu 0000:83:00.0: amdgpu: SMU is resumed successfully!\n"
           "[5621799.208840] amdgpu 0000:83:00.0: amdgpu: ring gfx_0.0.0 uses VM inv eng 0 on hub 0\n")


def test_amdgpu_resumed_late_is_said_in_a_note_and_named_after_a_reset(tmp_path: Path) -> None:
    code, answer = doctor_text(tmp_path, _RESUME)
    assert [(f["cause"], f["severity"]) for f in answer["findings"]] == [("module_firmware_interface_mismatch", "info")]
    assert any("re-initialised 0000:83:00.0 while the node ran at uptime 5621799 s" in n and "no reset line" in n
               for n in answer["notes"])
    reset = ("[5621790.1] amdgpu 0000:83:00.0: amdgpu: GPU reset begin!\n" + _RESUME +
             "[5621799.3] amdgpu 0000:83:00.0: amdgpu: GPU reset(1) succeeded!\n")
    code, answer = doctor_text(tmp_path, reset)
    assert any("after its reset" in n for n in answer["notes"])


def test_one_card_named_by_model_and_by_its_gfx_target_is_one_module(tmp_path: Path) -> None:
    from gpuvet.captures.gpu_mentions import mentions
    from gpuvet.captures.text import Line

    one = ["GPU: AMD Instinct MI50 (gfx906:sramecc+:xnack-)", "  0: AMD Radeon Graphics gcnArchName=gfx906:sramecc+"]
    assert [n.model for n in mentions([Line(i + 1, t) for i, t in enumerate(one)])] == ["AMD Instinct MI50"]
    two = [*one, "  1: AMD Radeon Graphics gcnArchName=gfx908"]
    assert [n.model for n in mentions([Line(i + 1, t) for i, t in enumerate(two)])] == ["AMD Instinct MI50", "gfx908"]


def test_rocm_smi_showtemp_and_hwmon_lines_without_their_prefix_are_read(tmp_path: Path) -> None:
    text = ("On an AMD Instinct MI300A:\nTemperature (Sensor junction) (C): 43.0\nTemperature (Sensor memory) (C): 37.0\n"
            "temp2_label : junction\ntemp2_input : 43000\ntemp3_label : mem\ntemp3_input : 37000\n")
    code, answer = doctor_text(tmp_path, text)
    assert code == 0 and not answer["findings"]
    assert any("junction 43.0 C, memory 37.0 C" in n for n in answer["notes"])
    assert any("amdgpu hwmon: junction 43 C, mem 37 C" in n for n in answer["notes"])
