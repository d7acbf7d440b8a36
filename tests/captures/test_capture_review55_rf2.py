"""Review 55's findings on readers (RF2): each class of input in the tool's own format, written here
small (the reviewer's reproducers' shape), fixed for its class, never for the one string."""

from __future__ import annotations

from pathlib import Path

from tests.captures.test_captures_fresh_c import run_json


def _doctor(tmp_path: Path, text: str, *extra: str) -> dict[tuple[str, str | None], str]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json("doctor", "--from", str(path), *extra)
    return {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


def _fatal(stamp: str, port: str, dev: str, driver: str, vid: str, bit: str) -> str:
    return (f"[{stamp}] pcieport {port}: AER: Uncorrected (Fatal) error received: {dev}\n"
            f"[{stamp}] {driver} {dev}: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, "
            "(Receiver ID)\n"
            f"[{stamp}] {driver} {dev}:   device [{vid}] error status/mask=00000020/04400000\n"
            f"[{stamp}] {driver} {dev}:    {bit}                   (First)\n")


def _recovered(stamp: str, port: str) -> str:
    return (f"[{stamp}] pcieport {port}: AER: Root Port link has been reset (0)\n"
            f"[{stamp}] pcieport {port}: AER: device recovery successful\n")


_PORT = "0000:40:01.1"


def test_f6_a_fatal_after_a_successful_recovery_is_unrecovered_again(tmp_path: Path) -> None:
    """review 55 F6 (a): the kernel's recovery is the last word on a device only until its next fatal error."""
    first = _fatal("1200.101", _PORT, _PORT, "pcieport", "1022:1483", "[ 5] SDES") + _recovered("1200.300", _PORT)
    again = _fatal("5400.777", _PORT, _PORT, "pcieport", "1022:1483", "[14] CmpltTO")
    assert _doctor(tmp_path, first) == {("pcie_aer_errors", _PORT.upper()): "warn"}
    assert _doctor(tmp_path, first + again) == {("pcie_aer_fatal", _PORT.upper()): "critical"}
    assert _doctor(tmp_path, first + again + _recovered("5400.900", _PORT)) == {
        ("pcie_aer_errors", _PORT.upper()): "warn"}


def test_f6_b_recovery_said_on_the_reporting_port_is_the_gpus_below_it(tmp_path: Path) -> None:
    """review 55 F6 (b): the kernel prints a link's recovery on the port that reported the error, never on the
    endpoint: the port's 'recovery successful' is the word on the devices it named as the errors' sources."""
    gpu = "0000:41:00.0"
    fatal = _fatal("1200.101", _PORT, gpu, "nvidia", "10de:2330", "[ 5] SDES")
    assert _doctor(tmp_path, fatal) == {("pcie_aer_fatal", gpu.upper()): "critical"}
    assert _doctor(tmp_path, fatal + _recovered("1200.300", _PORT)) == {("pcie_aer_errors", gpu.upper()): "warn"}
    later = _fatal("5400.777", _PORT, gpu, "nvidia", "10de:2330", "[14] CmpltTO")
    assert _doctor(tmp_path, fatal + _recovered("1200.300", _PORT) + later) == {
        ("pcie_aer_fatal", gpu.upper()): "critical"}
    other = "0000:40:03.1"  # a port's recovery is never another port's devices'
    assert _doctor(tmp_path, fatal + _recovered("1200.300", other)) == {("pcie_aer_fatal", gpu.upper()): "critical"}


def test_f7_the_aer_format_is_run_on_every_excerpt_its_parser_reads() -> None:
    """review 55 F7: a format whose markers a text lacks is not run, so every line the AER parser can claim
    must hold one of them: an excerpt of the kernel's recovery lines alone is read."""
    from gpuvet.captures.formats import FORMATS
    from gpuvet.captures.marks import Marks
    from gpuvet.captures.text import Line

    aer = next(f for f in FORMATS if f.name == "kernel AER")
    excerpts = (["Sep 22 09:59:09 gpu01 kernel: nvidia 0000:41:00.0: AER: can't recover (no error_detected callback)",
                 "Sep 22 09:59:09 gpu01 kernel: pcieport 0000:40:01.1: AER: device recovery failed"],
                ["[ 1200.300] pcieport 0000:40:01.1: AER: device recovery successful"],
                ["[ 1200.101] pcieport 0000:40:01.1: AER: Uncorrected (Fatal) error received: 0000:41:00.0"])
    for texts in excerpts:
        lines = [Line(i + 1, t) for i, t in enumerate(texts)]
        claimed = aer.run(lines, "dmesg.txt").claimed
        assert claimed, texts
        for ln in lines:
            if ln.no in claimed:
                assert Marks([ln]).any(aer.markers), ln.text


def _bandwidth_test(device: int, name: str, h2d: float, d2h: float) -> str:
    return (f"$ ./bandwidthTest --device={device}\n[CUDA Bandwidth Test] - Starting...\nRunning on...\n\n"
            f" Device {device}: {name}\n Quick Mode\n\n"
            + "".join(f" {title} Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n"
                      f"   Transfer Size (Bytes)\tBandwidth(GB/s)\n   32000000\t\t\t{x}\n\n"
                      for title, x in (("Host to Device", h2d), ("Device to Host", d2h)))
            + "Result = PASS\n\n")


def test_f9_bandwidth_test_runs_of_two_devices_are_two_modules_never_two_runs_of_one(tmp_path: Path) -> None:
    """review 55 F9: each run's own 'Device N:' line names its module: a second device's figures are that
    module's, never a second run of the first one (no numa_misplaced from two boards of different models)."""
    from gpuvet.captures import cuda_samples
    from gpuvet.captures.text import clean

    text = _bandwidth_test(0, "NVIDIA GeForce RTX 4090", 24.5, 26.3) + _bandwidth_test(
        1, "NVIDIA GeForce GTX 1080 Ti", 11.8, 12.9)
    parsed = cuda_samples.parse(clean(text).lines)
    assert [(d.index, d.name) for d in parsed.devices] == [(0, "NVIDIA GeForce RTX 4090"),
                                                            (1, "NVIDIA GeForce GTX 1080 Ti")]
    assert not any(" run " in name for name in parsed.matrices), sorted(parsed.matrices)
    assert parsed.matrices["bandwidthTest host_to_device (pinned)"] == [[24.5, 11.8]]
    assert not any(cause == "numa_misplaced" for cause, _ in _doctor(tmp_path, text))
    again = _bandwidth_test(0, "NVIDIA GeForce RTX 4090", 24.5, 26.3) + _bandwidth_test(
        0, "NVIDIA GeForce RTX 4090", 11.8, 12.9)  # the same module run twice (two numactl bindings): two runs
    assert _doctor(tmp_path, again).get(("numa_misplaced", "GPU 0")) == "warn"


_XPU_RULE = "+-----------------------------+--------------------------------------------------------------------+"


def _xpu_box(rows: list[tuple[str, str]]) -> list[str]:
    return [_XPU_RULE, *[f"| {a:<27} | {b:<66} |" for a, b in rows], _XPU_RULE]


def test_f14_an_xpu_smi_box_claims_only_the_rows_it_read(tmp_path: Path) -> None:
    """review 55 F14: a box under a 'Device ID' row is read row by row; a row neither the diag/health reader nor
    the stats reader took is left unclaimed (the skipped-lines note names it), never silently claimed."""
    from gpuvet.captures import xpu_smi
    from gpuvet.captures.text import clean

    health = ["$ xpu-smi health -l", *_xpu_box([("Device ID", "0")]),
              *_xpu_box([("1. GPU Core Temperature", "Status: Ok"), ("", "Description: All sensors are healthy.")])]
    config = ["$ xpu-smi config -d 0", *_xpu_box([("Device ID", "0")]),
              *_xpu_box([("GPU Min Frequency (MHz)", "300"), ("Standby Mode", "default")])]
    lines = clean("\n".join(health + config) + "\n").lines
    claimed = xpu_smi.parse(lines).claimed
    texts = {ln.no: ln.text for ln in lines}
    assert {texts[n].split("|")[1].strip() for n in claimed if "|" in texts[n]} == {
        "Device ID", "1. GPU Core Temperature", ""}
    stats = ["$ xpu-smi stats -d 0 -r", *_xpu_box([("Device ID", "0")]),
             *_xpu_box([("Reset", "3"), ("Mem Errors Uncorrectable", "12")])]
    found = _doctor(tmp_path, "\n".join(health + stats) + "\n", "--all")
    assert found.get(("module_reported_critical", "GPU 0")) == "critical"  # the stats box's counters judged


def _ibstat(n: int, down: set[int], model: str = "MT4129") -> str:
    def ca(i: int) -> str:
        state = ("Down", "Polling") if i in down else ("Active", "LinkUp")
        return (f"CA 'mlx5_{i}'\n\tCA type: {model}\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n"
                f"\tHardware version: 0\n\tNode GUID: 0xa088c20300{i:02x}aa00\n\tPort 1:\n\t\tState: {state[0]}\n"
                f"\t\tPhysical state: {state[1]}\n\t\tRate: {'10' if i in down else '400'}\n\t\tBase lid: {10 + i}\n"
                f"\t\tLMC: 0\n\t\tSM lid: 1\n\t\tCapability mask: 0xa751e848\n\t\tPort GUID: 0xa088c20300{i:02x}aa00\n"
                "\t\tLink layer: InfiniBand\n")
    return "".join(ca(i) for i in range(n))


def test_f4_a_captured_port_down_among_active_ports_of_its_model_is_critical(tmp_path: Path) -> None:
    """review 55 F4: in a captured ibstat the HCAs of one model whose other ports are Active are the peers that
    say the rail is used (as on the node itself, where a present HCA is declared): a port of that model down is
    critical; a lone port, or one whose model no Active peer shares, stays a warning."""
    assert _doctor(tmp_path, _ibstat(8, {5})) == {("nic_port_down", "mlx5_5 port 1"): "critical"}
    assert _doctor(tmp_path, _ibstat(1, {0})) == {("nic_port_down_undeclared", "mlx5_0 port 1"): "warn"}
    assert _doctor(tmp_path, _ibstat(2, {0, 1})) == {("nic_port_down_undeclared", "mlx5_0 port 1"): "warn",
                                                     ("nic_port_down_undeclared", "mlx5_1 port 1"): "warn"}  # each port
    other = _ibstat(1, {0}, "MT4123") + _ibstat(2, set()).replace("mlx5_0", "mlx5_8").replace("mlx5_1", "mlx5_9")
    assert _doctor(tmp_path, other) == {("nic_port_down_undeclared", "mlx5_0 port 1"): "warn"}  # no peer of its model


_PROBE_NOT_CALLED = """[    4.100100] NVRM: The NVIDIA probe routine was not called for 1 device(s).
[    4.100110] NVRM: This can occur when a driver such as:
               NVRM: nouveau, rivafb, nvidiafb or rivatv
               NVRM: was loaded and obtained ownership of the NVIDIA device(s).
[    4.100120] NVRM: Try unloading the conflicting kernel module (and/or
               NVRM: reconfigure your kernel without the conflicting
               NVRM: driver(s)), then try loading the NVIDIA kernel module
               NVRM: again.
[    4.200000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024
"""


def test_f19_the_probe_not_called_where_vfio_pci_owns_the_nvidia_device_is_a_passthrough(tmp_path: Path) -> None:
    """review 55 F19: where the same log shows vfio-pci bound to an NVIDIA (10de) function, or the kernel told
    to give it NVIDIA ids (vfio-pci.ids=10de:…), the probe was not called because the GPU is passed through to a
    VM on purpose: a note (info), never a failed module; with nouveau's own lines, or no owner shown, critical."""
    from gpuvet.captures.kernel import NO_BUS

    vfio = ("[    3.201234] vfio-pci 0000:41:00.0: vgaarb: changed VGA decodes: olddecodes=io+mem,decodes=io+mem:"
            "owns=none\n[    3.201300] vfio_pci: add [10de:2684[ffffffff:ffffffff]] class 0x000000/00000000\n")
    cmdline = ("[    0.000000] Command line: BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 intel_iommu=on "
               "vfio-pci.ids=10de:2684,10de:22ba\n")
    passthrough = {("module_passed_through", NO_BUS): "info"}
    assert _doctor(tmp_path, vfio + _PROBE_NOT_CALLED) == passthrough
    assert _doctor(tmp_path, cmdline + _PROBE_NOT_CALLED) == passthrough
    assert _doctor(tmp_path, _PROBE_NOT_CALLED) == {("module_init_failed", NO_BUS): "critical"}
    nouveau = "[    2.900000] nouveau 0000:41:00.0: NVIDIA AD102 (192000a1)\n"
    assert _doctor(tmp_path, vfio + nouveau + _PROBE_NOT_CALLED) == {("module_init_failed", NO_BUS): "critical"}
    other = "[    3.201300] vfio_pci: add [8086:56c0[ffffffff:ffffffff]] class 0x000000/00000000\n"  # not NVIDIA's
    assert _doctor(tmp_path, other + _PROBE_NOT_CALLED) == {("module_init_failed", NO_BUS): "critical"}


def _lspci_nic(name: str, cap: str, sta: str) -> str:
    return (f"3b:00.0 Infiniband controller: Mellanox Technologies {name}\n"
            "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
            f"\t\tLnkCap:\tPort #0, Speed {cap}, Width x16, ASPM not supported\n"
            f"\t\tLnkSta:\tSpeed {sta} (downgraded), Width x16 (ok)\n"
            "\tKernel driver in use: mlx5_core\n")


def test_f18_an_lspci_only_nic_below_its_cap_is_judged_by_its_models_rate_never_said_to_carry_it(
        tmp_path: Path) -> None:
    """review 55 F18: lspci gives no port rate: a NIC below its link capability is judged against the fastest
    rate its model runs at (the catalog), a slot that carries less may limit it (warn); a model the catalog
    does not know can't be told (a note saying so); 'it still carries the port's rate' only where it does."""
    def found(text: str) -> dict[str, tuple[str, str]]:
        path = tmp_path / "lspci.txt"
        path.write_text(text)
        _, data = run_json("doctor", "--from", str(path), "--all")
        return {f["cause"]: (f["severity"], f["title"]) for f in data["findings"] if f["cause"].startswith("nic_")}

    cx7 = found(_lspci_nic("MT2910 Family [ConnectX-7]", "32GT/s", "16GT/s"))  # Gen4 x16 ~252 Gb/s < NDR 400
    assert list(cx7) == ["nic_pcie_may_limit_rate"] and cx7["nic_pcie_may_limit_rate"][0] == "warn"
    cx6dx = found(_lspci_nic("MT2892 Family [ConnectX-6 Dx]", "16GT/s", "8GT/s"))  # Gen3 x16 ~126 > 100 GbE
    assert list(cx6dx) == ["nic_pcie_below_cap"] and cx6dx["nic_pcie_below_cap"][0] == "info"
    unknown = found(_lspci_nic("MT99999 Family [Unknown]", "16GT/s", "8GT/s"))
    assert list(unknown) == ["nic_pcie_rate_unread"] and unknown["nic_pcie_rate_unread"][0] == "info"
    assert all("carries the port's rate" not in title for _, title in [*cx7.values(), *unknown.values()])


def test_f16_a_posters_cut_in_capitals_is_a_cut() -> None:
    """review 55 F16: the lines looked at for a cut were found by a case-sensitive 'runcated', while the cut
    patterns read any case: '[OUTPUT TRUNCATED]' or '[ TRUNCATED ]' was no cut and named in no note."""
    from gpuvet.captures.text import Cut, clean

    for mark in ("[OUTPUT TRUNCATED]", "[ TRUNCATED ]", "(Truncated)", "[output truncated]"):
        lines = clean(f"GPU 0: A\n{mark}\nGPU 1: B\n").lines
        assert [type(ln) is Cut for ln in lines if ln.text] == [False, True, False], mark


def test_f17_the_fabric_managers_nvswitch_error_lines_are_read_without_its_name(tmp_path: Path) -> None:
    """review 55 F17: an excerpt of /var/log/fabricmanager.log holding only its 'detected NVSwitch … error'
    lines was refused (exit 2): the format's marker and the parser's gate asked for the word 'fabric'. The
    line is the fabric manager's own and unambiguous."""
    sxid = ("[Mar 14 2024 03:22:11] [ERROR] [tid 2209] detected NVSwitch fatal error 24007 on fid 0 on NVSwitch pci "
            "bus id 00000000:86:00.0 physical id 3 port 61\n"
            "[Mar 14 2024 03:22:12] [ERROR] [tid 2209] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch "
            "pci bus id 00000000:87:00.0 physical id 4 port 10\n")
    found = {cause: severity for (cause, _), severity in _doctor(tmp_path, sxid).items()}
    assert found == {"nvswitch_sxid_fatal": "critical", "nvswitch_sxid": "warn"}


def test_f15_the_copy_judgements_figures_are_the_knowledge_bases_thresholds() -> None:
    """review 55 F15: the figures the captured-copy verdicts judge by live in knowledge/faults.yaml `thresholds:`
    (one place, each with why), read by the code that judges."""
    from gpuvet import knowledge
    from gpuvet.captures import cuda_samples
    from gpuvet.doctor import capture_errors, p2p_gain

    rows = knowledge.thresholds()
    for name in ("p2p_no_gain", "p2p_slower_than_staged", "bandwidth_test_bound_bytes"):
        assert name in rows and rows[name].meaning, name
    assert p2p_gain.NO_GAIN == knowledge.threshold("p2p_no_gain")
    assert capture_errors.STAGED_FASTER == knowledge.threshold("p2p_slower_than_staged")
    assert cuda_samples.bound_bytes() == knowledge.threshold("bandwidth_test_bound_bytes")
