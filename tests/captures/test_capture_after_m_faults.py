"""Batch M's faulty misses as classes (issue 46): every spelling NVRM has given its Xid line (the oldest drivers'
'NVRM Xid (PCI:…) : 32,' included), nvidia-smi's 'No devices were found' inside an inline code span or quotes,
a mining program's NVML line saying a card is lost (PhoenixMiner's, T-Rex's), a program's failed count of the
CUDA devices with the runtime's message (cudaGetErrorString's words), and NCCL's prefix with its pid masked (its
tid with it or not). Written in each tool's own wording (NVIDIA's driver, nvidia-smi, the miners, the CUDA runtime,
NCCL's debug.cc prefix); bus ids, hosts and dates made up."""

from __future__ import annotations

from pathlib import Path

from gpuvet.backends.kernel_log import xids_from_records
from gpuvet.captures import kernel, links, miner_lost, nccl_log, runtime_status
from gpuvet.captures.text import clean
from tests.support.helpers import capture_findings


def test_every_spelling_of_the_xid_line_is_an_xid() -> None:
    log = ("[912.1] NVRM: Xid (PCI:0000:82:00): 48, pid=1, name=python3, An uncorrectable double bit error\n"
           "[77.3] NVRM: Xid (0000:03:00): 13, 0003 00000000 0000a097 00001b0c 00001000 00000080\n"
           "[500.8] NVRM Xid (PCI:0000:0b:00) : 32, Channel ID 00000009 intr 00008000\n"
           "[501.0] NVRM: Xid (PCI:0000:0c:00.0): 79, GPU has fallen off the bus.\n")
    got = kernel.parse(clean(log).lines)
    assert [(x.bus_id, x.code) for x in got.xids] == [("0000:82:00.0", 48), ("0000:03:00.0", 13),
                                                      ("0000:0B:00.0", 32), ("0000:0C:00.0", 79)]
    live = xids_from_records([(7, "NVRM Xid (PCI:0000:0b:00) : 32, Channel ID 00000009 intr 00008000")], lambda b: None)
    assert [(r.code, r.bus_id) for r in live] == [(32, "0000:0B:00.0")]


def test_the_oldest_xid_spelling_in_a_posters_prose_is_a_finding_on_its_module(tmp_path: Path) -> None:
    text = ("One of the cards on the rig threw this after some hours:\n\n"
            "[3301.120044] NVRM Xid (PCI:0000:05:00) : 32, Channel ID 00000011 intr 00008000\n\nAny idea?\n")
    assert capture_findings(tmp_path, text) == {("xid", "0000:05:00.0"): "warn"}


def test_no_devices_were_found_in_a_code_span_quotes_or_after_a_colon_is_nvidia_smis_answer(tmp_path: Path) -> None:
    for line in ('`"No devices were found"`', 'running it says: No devices were found', "> No devices were found",
                 "**No devices were found.**"):
        assert links.smi_none(line), line
        assert capture_findings(tmp_path, line + "\n") == {("no_modules_visible", None): "critical"}, line
    assert links.smi_none("nvidia-smi prints `No devices were found` now")  # a sentence's quote: quoted.py's to read
    assert not links.smi_none("in case of No devices were found we retry the probe later")


def test_a_miners_nvml_line_saying_a_card_is_lost_is_that_card_lost(tmp_path: Path) -> None:
    log = ("2022.01.03:10:11:12.100: hwmc GPU3: unable to get fan speed - GPU is lost (15)\n"
           "2022.01.03:10:11:17.104: hwmc GPU3: unable to get fan speed - GPU is lost (15)\n"
           "20220103 10:12:00 WARN: NVML: can't get fan speed for GPU #1, error code 15\n"
           "20220103 10:12:00 WARN: NVML: can't get power for GPU #4, error code 999\n")
    got = miner_lost.parse(clean(log).lines)
    assert [(e.kind, e.module, e.count) for e in got.events] == [("gpu_lost", "GPU 3", 2), ("gpu_lost", "GPU 1", 1)]
    assert capture_findings(tmp_path, log) == {("module_fell_off_bus", "GPU 3"): "critical",
                                               ("module_fell_off_bus", "GPU 1"): "critical",
                                               # issue 46 (APPX): NVML's 999 on one card is its sensors unreadable
                                               ("module_sensors_unreadable", "GPU #4"): "warn"}
    assert not miner_lost.parse(clean("why does GPU2 say it is lost every few hours?\n").lines).events


def test_a_failed_count_of_the_cuda_devices_says_the_runtime_could_not_start(tmp_path: Path) -> None:
    for line, kind in (("[APP] [Error] src/common.cpp (line 88): Cannot get number of CUDA devices: operation not "
                        "supported.", "cuda_init_unknown"),
                       ("cuDeviceGetCount failed: initialization error", "cuda_init_unknown")):
        log = runtime_status.read(clean(line + "\n").lines)
        assert [e.kind for e, _ in log.errors] == [kind], line
    found_none = runtime_status.read(clean("[2020-01-02 03:04:05] [INFO] [Devices] CudaDevicesDetection found no "
                                           "devices.\n").lines)
    assert [e.kind for e, _ in found_none.errors] == ["runtime_no_device"]  # a program's own detection found none
    text = "> [APP] [Error] app.cpp (line 9): Cannot get number of CUDA devices: initialization error\n"
    assert capture_findings(tmp_path, text) == {("framework_sees_no_module", None): "warn"}


def test_nccls_prefix_with_a_masked_pid_names_its_host_and_device() -> None:
    for line in ("[2025-01-02 03:04:05] node-7.example.org:XXXXXX [3] transport/net_ib.cc:700 NCCL WARN NET/IB : oops",
                 "node-7.example.org:<pid>:40200 [3] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>",
                 "node-7.example.org:40113:40200 [3] NCCL INFO Channel 00/02 :    0   1"):
        got = nccl_log._log_line(clean(line + "\n").lines[0])
        assert got is not None and (got.host, got.dev) == ("node-7.example.org", 3), line
    unsure = nccl_log._log_line(clean("node7:40113 [3] NCCL INFO x\n").lines[0])  # a pid alone: no tid, not the prefix
    assert unsure is not None and unsure.host is None


def test_the_gsp_falcon_core_dump_behind_any_prefix_is_the_gsp_no_longer_answering(tmp_path: Path) -> None:
    """The open modules print the GSP's falcon registers (kflcnCoreDumpNondestructive) once it stopped answering."""
    log = "".join(f"10.0.0.9: kern: warning: [2026-01-05T03:04:05.{i:06d}Z]: NVRM: kflcnCoreDumpNondestructive_IMPL: "
                  f"TRACE: {i:02d} = 0x00000000051{i:02d}a0\n" for i in range(3))
    assert capture_findings(tmp_path, log) == {("module_needs_reset", kernel.NO_BUS): "critical"}


def test_a_miners_device_list_names_its_cards() -> None:
    """T-Rex's start-up list (bus and device id) and PhoenixMiner's (no full bus id) list the cards it mines on."""
    from gpuvet.captures.runtime_devices import runtime_lines

    log = ("20220103 10:00:01 + GPU #0: [00:01.0|2489] EVGA GeForce RTX 3060 Ti, 8192 MB\n"
           "2021.09.24:20:00:01.100: main GPU1: NVIDIA GeForce RTX 3060 Ti (pcie 1), CUDA cap. 8.6, 8 GB VRAM, 38 CUs\n"
           "2021.09.24:22:57:10.065: main GPU1: 68C 72% 140W, GPU2: 67C\n")
    found, claimed = runtime_lines(clean(log).lines)
    assert [(d.tool, d.index, d.name, d.bus_id, d.memory_mib) for d in found] == [
        ("T-Rex", "#0", "EVGA GeForce RTX 3060 Ti", "0000:00:01.0", 8192.0),
        ("PhoenixMiner", "1", "NVIDIA GeForce RTX 3060 Ti", None, 8192.0)]
    assert claimed == {1, 2}
