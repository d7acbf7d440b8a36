"""The evidence audit (issue 34): a verdict that says clear / OK / pass names what it read, and a
check given inputs that lack its evidence says "can't tell" (SKIP for validate).

The checks are enumerated from the playbooks and health's check list, so a new check is audited
as soon as a playbook names it; ``EVIDENCED_BY`` must then say which inputs can tell it anything
(the test naming the check fails until it does)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.backends.host import HostBackend
from gpuvet.backends.nic_readings import NicReadings
from gpuvet.backends.readings import ModuleHealth, Unavailable
from gpuvet.cli.app import main
from gpuvet.cli.doctor import doctor
from gpuvet.doctor.checks import CHECKS
from gpuvet.doctor.model import Cited, playbooks
from gpuvet.doctor.outcome import clear
from gpuvet.errors import GpuvetError
from gpuvet.health import checks as health_checks
from gpuvet.health import nic_checks
from gpuvet.health.fabric_state import fabric_state
from gpuvet.health.model import CHECKS as HEALTH_CHECKS
from gpuvet.health.model import Status
from tests.support.corpus import corpus_files
from tests.support.sweep import batches, check_each

DATA = Path(__file__).parent.parent / "data" / "captures"
CAPTURES = corpus_files(DATA)  # less a blind batch not yet scored
BATCHES = batches(CAPTURES, DATA)  # one test per batch folder (tests/support/sweep.py)

SMI = {"nvidia-smi -q", "nvidia-smi -q -x"}
NODE = SMI | {"nvidia-smi topo -m"}  # a capture the capture backend rebuilds a node from
LISTS = {"nvidia-smi table", "nvidia-smi --query-gpu"}  # a module's readings without -q's sections
LISTS |= {"gpustat", "gpustat --json", "nvitop", "nvidia-top", "nvtop -s", "nvidia-smi pmon",  # issue 46: the
          "nvidia-smi --query-compute-apps"}  # monitors' screens, read into -q's fields (captures/monitor_tools.py)
RIG = "rig report (nvidia-smi's fields restated)"  # a report's GPU bullets: -q's power limits and PCIe link width
# What can tell each doctor check anything. "declared": --expect with a found node; "window":
# live or simulated telemetry; "engine": a benchmark run; "local": this machine (env, host, devices).
EVIDENCED_BY: dict[str, set[str]] = {
    "module_presence": {"declared"}, "link_state": NODE | {"declared", "window", RIG}, "wiring": {"declared"},
    "p2p_path": {"nvbandwidth", "engine", "local"}, "nccl_environment": {"local"},
    "pair_bandwidth": {"engine", "nvbandwidth", "TransferBench", "p2pBandwidthLatencyTest", "bandwidthTest",
                       "busGrind", "rocm-bandwidth-test"},
    "collective_results": {"nccl-tests", "hccl_test"}, "host_bottleneck": {"local"}, "xid_log": {"kernel log", "window",
                                                                                            "device plugin",
                                                                                            "dcgm-exporter or gpud Xids"},
    "hotplug_history": {"window"}, "visibility": {"local"}, "driver_runtime": {"engine"},
    "ecc_health": SMI | LISTS | {"window"}, "gemm_agreement": {"engine"},
    "thermal_state": SMI | LISTS | {"window"},
    "thermal_trend": {"window"}, "other_processes": NODE | LISTS, "clock_stability": {"window"},
    "power_limit": NODE | LISTS | {RIG},
    "clocks": NODE | LISTS, "compute_rate": {"engine"}, "captured_memory": SMI | LISTS, "captured_clock_events": SMI,
    "captured_links": {"nvlink state", "lspci -vvv", "kernel AER", "nvbandwidth", "npu-smi info -t topo", "TransferBench",
                       "rocm-bandwidth-test -v", "kernel PCIe link status", "dcgm-exporter NVLink counters",
                       "dcgmi nvlink -e"},
    "dcgm_diag": {"dcgmi diag", "dcgmi diag -j", "DCGM diagnostic JSON"},  # the last: any keys a user kept
    "tool_verdicts": {"npu-smi info", "amd-smi (static/metric/list)", "amd-smi --json", "amd-smi monitor",
                      "amd-smi (default table)", "xpu-smi diag", "xpu-smi health",
                      "rocm-smi (default table)", "rocm-smi -a"},  # theirs (amd-smi: UEC; rocm-smi: its ERROR line
    # on a module; rocm-smi -a's readings no sensor gives, captures/rocm_sensors.py)
    "kernel_messages": {"kernel log", "nvidia-smi: no devices",  # 'No devices were found' beside lspci's GPUs
                        "miner NVML lines",  # a miner's 'GPU is lost (15)' (captures/miner_lost.py)
                        "nvidia-smi's messages"},  # its infoROM warning, -i's target lost (captures/smi_messages.py)
    "benchmark_failures": {"nccl-tests", "hccl_test", "nvbandwidth", "TransferBench", "rocm-bandwidth-test"},
    "nic_ports": {"ibstat", "ibv_devinfo", "ibdev2netdev", "ibstatus", "lshca", "mlxlink", "local", "sysfs IB counters",
                  "perfquery"},
    "fabric_registration": SMI,  # -q's Fabric section
    "fabric_manager": {"fabric manager log"}, "rdma_bandwidth": {"perftest", "UCX log"},
    "nccl_log": {"NCCL debug log", "RCCL debug log", "HCCL plog", "Ascend HCCL error codes"},  # the runtimes' own logs
    # issue 46: the programs' own error lines, the CUDA samples' verdicts, gpu-burn; DCGM's health report
    "captured_errors": {"application error lines", "ROCm/HIP error lines", "deviceQuery", "p2pBandwidthLatencyTest",
                        "gpu-burn", "gpu-fryer", "scheduler and runtime GPU lines",
                        "runtime and framework device lines", "driver installation and binding",
                        "error messages quoted in a poster's words"},  # app_errors.QUOTED: the poster's own report
    "dcgm_health": {"dcgmi health"},
}
# issue 46: an environment report's 'Is CUDA available' answer (captures/env_report.py), by the script that printed it
EVIDENCED_BY["captured_errors"] |= {"PyTorch collect_env", "vLLM collect_env", "check_env (mmcv/sglang/lmdeploy)",
                                    "transformers/diffusers/accelerate env", "detectron2 collect_env"}
NO_EVIDENCE_MARK = "cited no evidence"  # what clear() says when a check called it with nothing read
# issue 46: other accelerators' tools judge their own modules (captures/accel_tools.py)
EVIDENCED_BY["tool_verdicts"] |= {"hl-smi", "hl-smi -q", "hl-smi -Q", "habanalabs driver", "tt-smi"}
# session 66 (batch AX): hl-smi's table holds a Compute Processes section, one row per AIP ('N/A' on an idle one, as
# Habana's docs print it), read onto the modules as nvidia-smi's table's are: other_processes judges it
EVIDENCED_BY["other_processes"] |= {"hl-smi"}
# session 67 (batches BC, BD): npu-smi info's second table lists each NPU chip's processes (Process id, name,
# memory), read onto the modules as hl-smi's are: other_processes judges it
EVIDENCED_BY["other_processes"] |= {"npu-smi info"}
# issue 46 (FX68B): axcl-smi's Processes section (card, PID, name, NPU memory), onto its cards as hl-smi's are
EVIDENCED_BY["other_processes"] |= {"axcl-smi"}
# session 66 (batch AY): lspci -vvv gives a NIC's LnkCap and LnkSta; nic_ports judges a NIC link trained below its
# capability from them (checks/nics.pcie: info where no port rate was read)
EVIDENCED_BY["nic_ports"] |= {"lspci -vvv"}
# session 66 (batch AZ, R13C): the AMD NPU driver's lines (firmware not alive), XRT's examine/validate verdicts
# and the Neuron runtime's NRT statuses are the module's state as habanalabs' are (captures/xrt_tools.py,
# neuron_status.py): tool_verdicts judges them
EVIDENCED_BY["tool_verdicts"] |= {"amdxdna", "xbutil examine", "xbutil validate", "Neuron runtime"}
EVIDENCED_BY["tool_verdicts"] |= {"tt-smi -s", "tt-umd", "tt-kmd"}  # R8A: Tenstorrent's other faults (captures/tt_faults.py)
EVIDENCED_BY["tool_verdicts"] |= {"tt-smi reset script"}  # R10A: its "Unsuccessful board reset" (captures/tt_resets.py)
# session 65 (batch AW): deviceQuery prints each module's ECC mode ('ECC Enabled: Yes'): ecc_health judges the mode
# (ECC off is a finding) and says its counters were not read
EVIDENCED_BY["ecc_health"] |= {"deviceQuery"}
# issue 46 (MX2): xpu-smi's -j forms and rvs's own pass/FALSE verdicts (captures/xpu_smi_json.py, rocm_tools.py)
EVIDENCED_BY["tool_verdicts"] |= {"xpu-smi diag -j", "xpu-smi health -j", "rvs (ROCm Validation Suite)"}
# issue 46: Windows' event log and WSL's lines are a kernel log of another OS (captures/windows.py)
EVIDENCED_BY["kernel_messages"] |= {"Windows event log or WSL lines"}
EVIDENCED_BY["xid_log"] |= {"Windows event log or WSL lines"}  # nvlddmkm's Event 13: Xid 13
# session 60 (YX1): omnistat's rocm_ras_* uncorrectable counts are the exporter's own per-card verdict
# (captures/prom_metrics.py); NVML's clock event reasons as a binding prints them say whether the module is
# slowed for heat (captures/nvml_values.py), as nvidia-smi -q's Clocks Event Reasons do
EVIDENCED_BY["tool_verdicts"] |= {"omnistat"}
EVIDENCED_BY["thermal_state"] |= {"NVML values (a binding's)"}
# session 60 (ZX1, ZX3): a NIC driver that failed its card is the RDMA step's evidence (captures/nic_driver.py);
# GPU functions on the bus against the device nodes their drivers made say a GPU has no driver (device_nodes.py)
EVIDENCED_BY["rdma_bandwidth"] |= {"NIC driver kernel lines"}
EVIDENCED_BY["captured_errors"] |= {"GPU functions against their device nodes"}
EVIDENCED_BY["captured_clock_events"] |= {"NVML values (a binding's)"}  # the same reasons: hw_slow, hw_power_brake
EVIDENCED_BY["pair_bandwidth"] |= {"hipBusBandwidth"}  # MX1: HIP's host copies, priced as bandwidthTest's
# issue 46 (AX3): the RDMA fabric's own tools read as NIC ports (captures/ib_fabric.py)
# issue 46 (STJ, 32a21e8): a state table's busy and power figures, read across each other, are clock events' evidence
# (doctor/state_judgment.py: busy at idle power)
EVIDENCED_BY["captured_clock_events"] |= {"nvidia-smi table", "nvidia-smi --query-gpu", "amd-smi (default table)",
                                          "rocm-smi (default table)"}
EVIDENCED_BY["rdma_bandwidth"] |= {"RDMA verbs lines"}  # RDV (28c753f): the verbs failures' own format, once UCX's
EVIDENCED_BY["nic_ports"] |= {"rdma link", "rdma dev", "rdma resource", "rdma statistic", "ibv_devices", "sminfo",
                              "iblinkinfo", "ibnetdiscover", "ibqueryerrors", "ibcheckerrors", "ibdiagnet"}
# session 62: Ascend's runtime codes (ACL's device-lost, heartbeat) are program output like any runtime's error lines
# (captures/ascend_codes.py, read as app_errors); sysfs's current/max link width is a link's state as lspci's is
# (captures/pcie_sysfs.py, R3C)
EVIDENCED_BY["captured_errors"] |= {"Ascend runtime codes"}
# R6A (issue 46): lspci's ACSCtl lines say whether ACS redirects peer traffic at a bridge (captures/pcie_acs.py)
EVIDENCED_BY["captured_errors"] |= {"lspci ACS control"}
EVIDENCED_BY["captured_errors"] |= {"vGPU licence status"}  # issue 46 (BJ, FX68G): a vGPU guest's -q licence
EVIDENCED_BY["captured_errors"] |= {"nvidia-smi mig operations"}  # FX68F: NVML's refusals of MIG commands (mig_ops)
# R7C (issue 46): show_gids' n_gids_found=0 and ethtool's ENODEV are judged as program output (captures/side_tables.py;
# one format for four tools, named so a file is not said to be read as all four)
EVIDENCED_BY["captured_errors"] |= {"show_gids/ethtool/mthreads-gmi/dcgmi -l table"}
EVIDENCED_BY["captured_links"] |= {"sysfs PCIe link"}
# session 63 (R4B, captures/xid_reports.py): a report's or a poster's sentence naming the Xids a node logged ("Xid 48 /
# 171 on GPU2 (0000:9c:00)", "Xid 149, NETIR_LINK_DOWN Fatal") is the driver's Xids as the poster quotes them
EVIDENCED_BY["xid_log"] |= {"error messages quoted in a poster's words"}
# session 63 (R5B): ethtool's own settings ('Link detected: yes', Speed, Duplex), read past its 'Cannot get' lines, are
# a NIC port's state as ibstat's are
EVIDENCED_BY["nic_ports"] |= {"ethtool"}
# R8C (issue 46): the PCI core's link status line of a NIC driver (and Corundum's mqnic probe lines) is that NIC's PCIe
# link, judged by the NIC rule (captures/pcie_status.py)
EVIDENCED_BY["nic_ports"] |= {"kernel PCIe link status"}
# session 65 (batch AT): a poster's quote of nvidia-smi's own message ('Unable to determine the device handle for
# GPU0000:4F:00.0: Unknown Error') is that message as captures/smi_messages.py reads it from the tool:
# kernel_messages' evidence
EVIDENCED_BY["kernel_messages"] |= {"error messages quoted in a poster's words"}


def _playbook_checks() -> set[str]:
    return {s.check for b in playbooks().values() for s in b.steps}


def _doctor(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["doctor", "--all", "--json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if code != 2 else {}


def _assert_cited(step: dict, where: str) -> None:
    """A clear or confirmed step names what it read: source, field and value, none empty."""
    assert NO_EVIDENCE_MARK not in step["summary"], f"{where}: {step['check']} called clear() with no evidence"
    if step["status"] == "clear":
        assert step["evidence"], f"{where}: {step['check']} says clear with no evidence: {step['summary']!r}"
        for e in step["evidence"]:
            assert e["source"] and e["field"] and e["value"], f"{where}: {step['check']}: empty citation {e}"


def _read_as(data: dict, name: str) -> set[str]:
    """The kinds a capture was read as, from doctor's own notes ("file: read as a, b")."""
    prefix = f"{name}: read as "
    return {k for n in data["notes"] if n.startswith(prefix) for k in n[len(prefix):].split(", ")}


def test_every_playbook_check_says_what_can_tell_it():
    unlisted = _playbook_checks() - set(EVIDENCED_BY)
    assert not unlisted, f"add to EVIDENCED_BY the inputs that can tell these checks anything: {sorted(unlisted)}"


@pytest.mark.parametrize("batch", BATCHES)
def test_each_capture_alone_clears_only_what_it_holds(capsys, batch):
    """Each capture kind alone: a check whose evidence is not in the file says can't tell, and
    whatever says clear cites the file. One test per batch folder, each of its files audited."""
    first = BATCHES[batch][0]
    check_each(BATCHES[batch], lambda capture: _audit_alone(capsys, capture, capture == first), DATA)


def _doctor_from(capsys: pytest.CaptureFixture[str], capture: Path) -> tuple[int, dict]:
    """`doctor --all --json --from CAPTURE` as main() runs it, less click's building and parsing of the
    command line: the command's own function, its JSON, and its exit code and refusals (2) as main() turns
    them. The line's parsing was a quarter of this sweep's CPU (~4 s of 16); each batch's first file is
    still also run through main() and must give the same code and JSON."""
    try:
        doctor(from_=[str(capture)], all_steps=True, as_json=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except (GpuvetError, MemoryError, OSError):
        code = 2
    out = capsys.readouterr().out
    return code, json.loads(out) if code != 2 else {}


def _audit_alone(capsys: pytest.CaptureFixture[str], capture: Path, through_main: bool = False) -> None:
    code, data = _doctor_from(capsys, capture)
    if through_main:
        assert _doctor(capsys, "--from", str(capture)) == (code, data), f"{capture.name}: main() answers otherwise"
    if code == 2:
        pytest.skip("refused as bad input (exit 2): nothing judged")
    _audit(capture, data)


def _audit(capture: Path, data: dict) -> None:
    kinds = _read_as(data, capture.name)
    assert kinds, data["notes"]
    for step in data["steps"]:
        _assert_cited(step, capture.name)
        if not EVIDENCED_BY.get(step["check"], set()) & kinds:
            assert step["status"] == "inconclusive", (
                f"{capture.name} (read as {sorted(kinds)}) holds nothing for {step['check']}, yet it says "
                f"{step['status']}: {step['summary']!r}")
        elif step["status"] == "clear":
            assert any(capture.name in e["source"] for e in step["evidence"]), (capture.name, step)


# The audit's own mutation check: a check that lies must fail it. Three lies of ecc_health, the
# check issue 34 caught clearing on an lspci capture: a bare clear, a clear citing a reading the
# file does not hold, and a clear citing the file for a field it does not have.
LIES = {
    "bare clear": lambda ev: clear("ECC on and quiet"),
    "cites nvidia-smi -q it was not given": lambda ev: clear("ECC on and quiet",
                                                             Cited("nvidia-smi -q", "ECC Mode", "Enabled")),
    "cites another file": lambda ev: clear("ECC on and quiet", Cited("other.txt (nvidia-smi -q)", "ECC", "on")),
}


@pytest.mark.parametrize("lie", LIES)
def test_the_audit_fails_a_check_that_clears_without_evidence(capsys, monkeypatch, lie):
    monkeypatch.setitem(CHECKS, "ecc_health", LIES[lie])
    capture = DATA / "real" / "lspci_hwloc653_a100_cut.txt"
    code, data = _doctor(capsys, "--from", str(capture))
    assert code != 2
    with pytest.raises(AssertionError, match="ecc_health"):
        _audit(capture, data)


def test_issue_34_lspci_alone_says_nothing_of_ecc(capsys):
    _, data = _doctor(capsys, "--from", str(DATA / "real" / "lspci_hwloc653_a100_cut.txt"))
    (ecc, *_) = [s for s in data["steps"] if s["check"] == "ecc_health"]
    assert ecc["status"] == "inconclusive" and "nvidia-smi -q" in ecc["summary"], ecc


def test_issue_34_unreadable_nccl_rows_are_not_clear(capsys, tmp_path):
    head = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
            "   busbw #wrong\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
            "     (us)  (GB/s)  (GB/s)\n")
    rows = ("         8             2     float     sum      -1     nan    0.00    0.00      0     nan    0.00    0.00"
            "      0\n        16             4     float     sum      -1    -1.0    0.00    0.00      0    -1.0    0.00"
            "    0.00      0\n        32             8     float     sum      -1   1.2.3    0.00    0.00      0   1.2.3"
            "    0.00    0.00      0\n")
    f = tmp_path / "nccl.txt"
    f.write_text(head + rows)
    _, data = _doctor(capsys, "--from", str(f))
    (step,) = [s for s in data["steps"] if s["check"] == "collective_results"]
    assert step["status"] == "inconclusive", step


HEADERS = {
    "nccl_header.txt": "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 "
                       "validation: 1\n#\n#       size         count      type   redop    root     time   algbw   "
                       "busbw #wrong     time   algbw   busbw #wrong\n#        (B)    (elements)                   "
                       "            (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n",
    "nvb_header.txt": "nvbandwidth Version: v0.4\n\nCUDA Runtime Version: 12040\nCUDA Driver Version: 12040\n"
                      "Driver Version: 550.54.15\n\nDevice 0: NVIDIA H100 80GB HBM3\n\n",
    "smi_header.txt": "\n==============NVSMI LOG==============\n\nTimestamp : Mon Jan  1 00:00:00 2024\n"
                      "Driver Version : 550.54.15\nCUDA Version : 12.4\n\nAttached GPUs : 8\n",
}


@pytest.mark.parametrize("name", sorted(HEADERS))
def test_a_capture_with_only_its_header_tells_nothing(capsys, tmp_path, name):
    f = tmp_path / name
    f.write_text(HEADERS[name])
    code, data = _doctor(capsys, "--from", str(f))
    if code == 2:
        return  # refused with what/where/fix: not a verdict
    judged = [(s["check"], s["status"], s["summary"]) for s in data["steps"] if s["status"] != "inconclusive"]
    assert not judged, judged


def test_an_empty_node_clears_nothing_about_modules(capsys, monkeypatch):
    from gpuvet.backends import select
    from gpuvet.doctor.run import ABOUT_THE_MACHINE

    monkeypatch.setattr(select, "open_backend", lambda **_: HostBackend("the NVIDIA driver is not loaded"))
    _, data = _doctor(capsys)
    for step in data["steps"]:
        _assert_cited(step, "empty node")
        if step["check"] not in ABOUT_THE_MACHINE:
            assert step["status"] == "inconclusive", step


def test_a_simulated_node_without_modules_clears_nothing_about_modules(capsys, tmp_path):
    spec = tmp_path / "none.yaml"
    spec.write_text("base: mesh-4\nfaults:\n" + "".join(f"  - {{kind: missing_module, module: gpu{i}}}\n"
                                                          for i in range(4)))
    _, data = _doctor(capsys, "--sim", str(spec))
    for step in data["steps"]:
        _assert_cited(step, "simulated node without modules")
        if step["status"] == "clear":  # only what speaks of this process, not of a module
            assert all(e["source"].startswith("environment") for e in step["evidence"]), step


def test_simulated_clears_cite_simulated_readings(capsys):
    code, data = _doctor(capsys, "--sim", "hgx-h200-8")
    assert code == 0 and data["simulated"]
    clears = [s for s in data["steps"] if s["status"] == "clear"]
    assert {s["check"] for s in clears} >= {"ecc_health", "link_state", "module_presence", "power_limit",
                                            "compute_rate", "xid_log"}
    for step in clears:
        _assert_cited(step, "hgx-h200-8")
        node_sources = [e["source"] for e in step["evidence"] if not e["source"].startswith("environment")
                        and e["source"] != "this machine"]
        assert all("simulated" in s for s in node_sources), step
        assert node_sources or step["check"] == "nccl_environment", step


# --- health -----------------------------------------------------------------------------------
def _unread(module: str) -> ModuleHealth:
    gone = Unavailable("the reading failed")
    return ModuleHealth(module, gone, gone, gone, gone, gone)


# each health check fed readings that tell it nothing: no module, or every reading failed
HEALTH_EMPTY = {
    "ecc": lambda: health_checks.ecc([], "src") + health_checks.ecc([_unread("gpu0")], "src"),
    "row_remap": lambda: health_checks.row_remap([], "src") + health_checks.row_remap([_unread("gpu0")], "src"),
    "throttle": lambda: health_checks.throttle([], "src") + health_checks.throttle([_unread("gpu0")], "src"),
    "xid": lambda: health_checks.xid(Unavailable("no kernel log"), None, _policy(), "since boot", "src")[0],
    "kernel_messages": lambda: health_checks.kernel_messages(Unavailable("no kernel log"), None, {}, "since boot",
                                                             "src"),
    "processes": lambda: health_checks.processes(_empty_inventory()),
    "power_limit": lambda: health_checks.power_limit(_empty_inventory()),
    "pcie": lambda: health_checks.pcie(_empty_inventory(), _empty_node(), []),
    "fabric": lambda: health_checks.fabric(_empty_node(), [], "src"),
    "presence": lambda: health_checks.presence(_empty_inventory(), _empty_node(), None, None),
    "driver": lambda: health_checks.driver(HostBackend("no driver").inventory(), None, 0.1),
    "fabric_state": lambda: fabric_state([], "src") + fabric_state([_unread("gpu0")], "src"),
    "nic": lambda: nic_checks.nic(None, [], {}) + nic_checks.nic(Unavailable("no sysfs"), [], {})
    + nic_checks.nic(NicReadings((), None, "src"), [], {}),
    "peer_memory": lambda: nic_checks.peer_memory(None, {"nvidia"})
    + nic_checks.peer_memory(NicReadings((), Unavailable("no /sys/module"), "src"), {"nvidia"}),
}


def _policy():
    from gpuvet.health.xids import xid_policy

    return xid_policy()


def _empty_inventory():
    return HostBackend("no driver").inventory()


def _empty_node():
    return HostBackend("no driver").node()


def test_every_health_check_is_audited():
    assert set(HEALTH_CHECKS) == set(HEALTH_EMPTY)


@pytest.mark.parametrize("check", HEALTH_CHECKS)
def test_a_health_check_without_readings_is_never_ok(check):
    found = HEALTH_EMPTY[check]()
    assert found and all(f.status in (Status.UNKNOWN, Status.SKIP) for f in found), found


@pytest.mark.parametrize("sim", ["hgx-h200-8", "pcie-8"])
def test_health_oks_cite_simulated_readings(capsys, sim):
    code = main(["health", "--sim", sim, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    oks = [f for f in data["findings"] if f["status"] == "ok"]
    assert oks
    for f in oks:
        assert f.get("evidence"), f
        assert all(e["source"] and e["field"] and e["value"] and "simulated" in e["source"] for e in f["evidence"]), f


# --- validate ---------------------------------------------------------------------------------
def _validate(capsys, *args: str) -> list[dict]:
    main(["validate", "--level", "quick", "--json", "--no-log", *args])
    return json.loads(capsys.readouterr().out)["checks"]


def test_every_validate_pass_carries_evidence(capsys):
    checks = _validate(capsys, "--sim", "hgx-h200-8")
    passes = [c for c in checks if c["verdict"] == "pass"]
    assert len(passes) > 50
    bare = [(c["layer"], c["name"], c.get("module")) for c in passes if not c.get("evidence")]
    assert not bare, bare
    settings = [c for c in passes if c["layer"] == "software" and c.get("module")]
    assert settings and all("simulated" in c["evidence"]["source"] for c in settings)


def test_validate_on_a_node_without_modules_skips_rather_than_passes(capsys, tmp_path):
    spec = tmp_path / "none.yaml"
    spec.write_text("base: mesh-4\nfaults:\n" + "".join(f"  - {{kind: missing_module, module: gpu{i}}}\n"
                                                          for i in range(4)))
    checks = _validate(capsys, "--sim", str(spec))
    (modules,) = [c for c in checks if c["name"] == "modules"]
    assert modules["verdict"] == "skip", modules
    assert not [c for c in checks if c["verdict"] == "pass" and not c.get("evidence")]


# --- topo -------------------------------------------------------------------------------------
def test_topo_no_differences_names_what_was_compared(capsys):
    assert main(["topo", "--sim", "hgx-h200-8", "--expect", "hgx-h200-8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["differences"] == [] and data["simulated"]
    assert data["compared"] == {"declared": "hgx-h200-8", "modules": 8, "links": len(data["links"]),
                                "fabric_known": True, "pcie_known": True, "pcie_width_unread": [],
                                "fabric_rate_unread": []}


def test_topo_says_it_cannot_tell_a_width_no_source_gave(capsys):
    """A topology matrix names no PCIe width: the nominal x16 the node carries for modelling is
    not a reading, so "no differences" must not cover it; the module list's widths are judged."""
    topo_only = str(DATA / "topo_nvswitch_8gpu.txt")
    assert main(["topo", "--from", topo_only, "--expect", "hgx-h200-8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["compared"]["pcie_width_unread"] == [f"gpu{i}" for i in range(8)]
    own = [lk for lk in data["links"] if lk["kind"] == "pcie" and lk["between"][0].startswith("gpu")]
    assert len(own) == 8 and all(lk["width_known"] is False and lk["width"] == 16 for lk in own), own
    main(["topo", "--from", topo_only, "--expect", "hgx-h200-8"])
    assert "can't tell the PCIe width of 8 module(s)" in capsys.readouterr().out
    assert main(["topo", "--from", topo_only, "--from", str(DATA / "smi_q_x_h100_8gpu.xml"),
                 "--expect", "hgx-h200-8", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["compared"]["pcie_width_unread"] == []
    assert [d["between"] for d in data["differences"] if d["kind"] == "link_degraded"] == [["gpu5", "pcisw2"]]


def test_topo_from_an_xml_alone_says_its_fabric_was_not_compared(capsys):
    main(["topo", "--from", str(DATA / "smi_q_x_h100_8gpu.xml"), "--expect", "hgx-h200-8", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["compared"]["fabric_known"] is False
    assert not [d for d in data["differences"] if d["kind"] in ("link_down", "wiring_mismatch")
                and "nvswitch" in json.dumps(d)]


def test_validate_topology_pass_names_the_widths_it_could_not_read():
    from gpuvet.backends.capture.backend import CaptureBackend
    from gpuvet.node.build import build_node
    from gpuvet.node.spec import load_spec
    from gpuvet.validate.run import _difference_checks

    want = build_node(*load_spec("hgx-h200-8"))
    found = CaptureBackend([str(DATA / "topo_nvswitch_8gpu.txt")]).node()
    (check,) = _difference_checks(want, found, "declared", "", "fix")
    assert check.verdict.value == "pass" and "PCIe width of 8 module(s) not read" in str(check.value)
    assert check.evidence["pcie_width_unread"] == [f"gpu{i}" for i in range(8)]


def test_a_bindings_clock_event_reasons_clear_cites_their_file(capsys, tmp_path):
    """Session 60: NVML's reasons as CUDA.jl prints them fill -q's fields; a clear from them names this file."""
    f = tmp_path / "jl.txt"
    f.write_text("julia> NVML.clock_event_reasons(dev)\n(idle = false, display_setting = false, hw_power_brake = false, "
                 "sw_power_cap = false, application_setting = false, hw_slow = false, sync_boost = false, "
                 "sw_thermal = false, hw_thermal = false)\n")
    _, data = _doctor(capsys, "--from", str(f))
    clears = [s for s in data["steps"] if s["check"] in ("thermal_state", "captured_clock_events")]
    assert clears and all(s["status"] == "clear" for s in clears), clears
    _audit(f, data)
