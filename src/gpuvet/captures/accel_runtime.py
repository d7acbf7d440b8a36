"""The accelerator runtimes' and the cluster's device layers' own lines (issue 46, R8B): AWS Neuron's runtime
daemon nrtd (1.x: ``nrtd[1]: [NRTD:InitTongas] Failed to initialize devices, error:2``, its TDRV and NMGR parts, the
HAL's ``[hal] request seq: 2, cmd: 1 timed out`` and ``[TDRV:reset_mla] Resetting 0000:00:10.0``), Google's
tpu-info (its TPU Chips table and 'Libtpu metrics unavailable'), NVIDIA's device plugin's ``XidCriticalError:
Xid=999`` (the plugin's own code for an event wait NVML failed, no driver Xid), kubelet's device manager and
container runtime lines for any vendor's device plugin (huawei.com/Ascend…: ListAndWatch ended, an OCI runtime
of the vendor failing pod starts, no healthy devices), and gpud's fabric state per GPU ('state=Not Supported' on a
PCIe GPU is its design: no NVSwitch). Each fact one record of an existing kind (doctor/capture_errors), or a note."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

_BDF = r"([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
# nrtd's HAL timing out on a command to a device, and the TDRV resetting a device (its PCI address)
_HAL_TIMEOUT = re.compile(r"\[hal\]\s*request seq:\s*\d+,\s*cmd:\s*\d+\s+timed out", re.I)
_RESET = re.compile(r"\[TDRV:reset_mla\]\s*Resetting\s+" + _BDF)
# nrtd's device initialisation failing, the most telling line first: no device given, a device it cannot open
_NRTD_CAUSE = re.compile(r"\[NMGR:\w+\]\s*(No devices specified)|\[TDRV:\w+\]\s*(Could not open the device index:\s*\d+)")
_NRTD_FAILED = re.compile(
    r"\[NRTD:\w+\]\s*Failed to initialize devices(?:, error:\s*(\d+))?|\[TDRV:\w+\]\s*TDRV not "
    r"initialized|\bNRT_(?:FAILURE|UNINITIALIZED|INVALID)\b.{0,80}nrt_init",
    re.I,
)
_NRTD_BUILD = re.compile(r"nrtd build using:\s*([\d.]+)")
# Neuron runtime 2.x's NRT_STATUS names (aws-neuron-sdk nrt_status.h) that say a device's state: an uncorrectable
# HBM, NeuronCore SRAM or DMA engine error (1201-1203), an HBM error repaired at the next reset (1205), a collective
# stuck on a worker's hardware error (1200), a NeuronCore held by another process (1005); the others are the caller's
_NRT_STATUS = re.compile(
    r"\bNRT_(EXEC_HW_ERR_(?:HBM_UE|NC_UE|DMA_ABORT|REPAIRABLE_HBM_UE|COLLECTIVES)|EXEC_NC_BUSY)\b(?:\s*\((\d{3,4})\))?"
)
# the runtime 2.x log's frame ('2024-Dec-20 10:11:12.0123 4321:4388 INFO  NRT:nrt_init  …'): its lines below ERROR
# are read and said; an ERROR line no status above names is left to the readers of failure lines
_NRT_LINE = re.compile(r"\b(?:INFO|DEBUG|WARN|WARNING|TRACE)\s+(?:NRT|TDRV|NMGR|NCCL|KMGR|HAL|NEFF):\w+")
_NRT_KIND = {
    "EXEC_HW_ERR_HBM_UE": "neuron_hw_uncorrectable",
    "EXEC_HW_ERR_NC_UE": "neuron_hw_uncorrectable",
    "EXEC_HW_ERR_DMA_ABORT": "neuron_hw_uncorrectable",
    "EXEC_HW_ERR_REPAIRABLE_HBM_UE": "neuron_hbm_repairable",
    "EXEC_HW_ERR_COLLECTIVES": "neuron_collectives_hw",
    "EXEC_NC_BUSY": "neuron_core_busy",
}
# tpu-info's chips table (Chip, Type, Devices, PID) and its words when no framework serves libtpu's metrics
_TPU_CHIP = re.compile(r"^\W*(/dev/(?:accel|vfio/)\d+)\W+(TPU v\w+(?: \w+)? chip)\W+(\d+)\b")
_TPU_NO_METRICS = re.compile(r"Libtpu metrics unavailable|TPU runtime metrics (?:are )?unavailable", re.I)
# NVIDIA's device plugin: Xid 999 is its own code (nvml bindings: an event wait that failed), not a driver Xid
_PLUGIN_999 = re.compile(r"XidCriticalError:\s*Xid=999\b(?:\s+on\s+Device=(\S+?)[,.]?(?:\s|$))?")
# kubelet's device manager (pkg/kubelet/cm/devicemanager): the plugin's stream gone, no healthy device to admit
_RESOURCE = r"([a-z][\w-]{0,30}(?:\.[\w-]{1,30}){1,3}/[\w.-]{1,60})"
_STREAM_ENDED = re.compile(
    r"ListAndWatch ended unexpectedly for device plugin\"?(?:.{0,80}?resource=\"?" + _RESOURCE + r")?"
)
_UNHEALTHY = re.compile(r"cannot allocate unhealthy devices " + _RESOURCE)
_NO_HEALTHY = re.compile(r"no healthy devices present;?\s*$|previously allocated devices are no longer healthy;?\s*$")
# a vendor's OCI runtime or hook failing a container's start (containerd/runc: 'did not terminate successfully')
# (a line relaying nvidia-container-cli's own error is container_layer's: it says what failed)
_VENDOR_OCI = re.compile(
    r"OCI runtime create failed.{0,400}?(\S*(?:ascend-docker-runtime|nvidia-container-runtime(?:"
    r"-hook)?|habana-container-runtime|neuron-oci-hook)) did not terminate successfully(?:: "
    r"exit status (\d+))?"
)
# gpud's fabric state per GPU: 'with unhealthy fabric state: GPU GPU-…: state=Not Supported; GPU …'
_GPUD_FABRIC = re.compile(r"GPU (GPU-[0-9a-fA-F-]{8,40}):\s*state=([A-Za-z][A-Za-z ]{0,30}?)(?:;|$)")
_FABRIC_FINE = ("not supported", "completed", "success")

_WORDS = (
    "nrtd",
    "NRTD",
    "TDRV",
    "[hal]",
    "NRT_",
    "NRT:",
    "TPU v",
    "Libtpu",
    "metrics unavailable",
    "Xid=999",
    "ListAndWatch",
    "unhealthy devices",
    "did not terminate",
    "state=",
)


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """Read the lines of this module's tools into ``out`` (records and notes); lines holding none of its
    words are not tested (holding: a cheap substring first)."""
    picked = holding(lines, _WORDS, marks)
    if not picked:
        return
    _neuron(lines, picked, out)
    for i in picked:
        ln = lines[i]
        t = ln.text
        if "Xid=999" in t and (m := _PLUGIN_999.search(t)) is not None:
            dev = m.group(1) or "a device it does not name"
            _add(
                out,
                "k8s_device_unhealthy",
                ln,
                f"the NVIDIA device plugin marked {dev} unhealthy on "
                "XidCriticalError Xid=999: the plugin's own code for an NVML event wait that failed, not a driver "
                f"Xid (the kernel log names what happened): {m.group(0).strip()}",
                "NVIDIA device plugin",
            )
        elif "ListAndWatch" in t and (m := _STREAM_ENDED.search(t)) is not None:
            _add(
                out,
                "k8s_stack_not_ready",
                ln,
                f"kubelet: the device plugin's ListAndWatch stream for "
                f"{m.group(1) or 'its resource'} ended (the plugin restarted or died; its devices are withdrawn "
                f"until it registers again): {m.group(0)}",
                "kubelet device manager",
            )
        elif "unhealthy devices" in t and (m := _UNHEALTHY.search(t)) is not None and not _nvidia_amd(m.group(1)):
            before = lines[i - 1].text if i > 0 else ""
            said = "no healthy" if "no healthy" in t or _NO_HEALTHY.search(before) else "no longer healthy"
            _add(
                out,
                "k8s_device_unhealthy",
                ln,
                f"kubelet: {said} {m.group(1)} to allocate (the device plugin "
                f"reports them unhealthy; its own view, not a hardware reading): {t.strip()}",
                "kubelet device manager",
            )
        elif "did not terminate" in t and "container-cli" not in t and (m := _VENDOR_OCI.search(t)) is not None:
            code = f" (exit status {m.group(2)})" if m.group(2) else ""
            _add(
                out,
                "container_hook_failed",
                ln,
                f"the container runtime's vendor hook {m.group(1)} failed{code}, "
                f"so the pod's container did not start: {t.strip()}",
                "container runtime (OCI)",
            )
        elif "state=" in t and "fabric" in t:
            _gpud_fabric(out, ln)
    _nrt(lines, picked, out)
    _tpu_info(lines, picked, out)


def _nrt(lines: list[Line], picked: list[int], out: AppErrorsParse) -> None:
    """The Neuron runtime 2.x's statuses, and its log's lines below ERROR read and said."""
    for i in picked:
        if "NRT_" in lines[i].text:
            _nrt_status(out, lines[i])
        if ":" in lines[i].text and lines[i].no not in out.claimed and _NRT_LINE.search(lines[i].text):
            out.claimed.add(lines[i].no)
            out.notes += (
                []
                if any("Neuron runtime log" in n for n in out.notes)
                else ["Neuron runtime log: its INFO/WARN lines read, no fault by themselves"]
            )


def _nvidia_amd(resource: str) -> bool:
    """nvidia.com/amd.com resources: ops_layer's own pattern reads those lines."""
    return resource.startswith(("nvidia.com/", "amd.com/"))


def _neuron(lines: list[Line], picked: list[int], out: AppErrorsParse) -> None:
    """nrtd's log: a HAL timeout and the devices it reset (each on its bus id), else its init failure."""
    timeout = next((lines[i] for i in picked if "[hal]" in lines[i].text and _HAL_TIMEOUT.search(lines[i].text)), None)
    resets = [
        (lines[i], m.group(1)) for i in picked if "TDRV" in lines[i].text and (m := _RESET.search(lines[i].text)) is not None
    ]
    for ln, bdf in resets:
        said = f"'{timeout.text.strip().strip('*')[-60:]}' (line {timeout.no}) and " if timeout else ""
        out.errors.append(
            AppError(
                "neuron_device_reset",
                ln.no,
                f"the Neuron runtime (nrtd): {said}it reset the device {bdf} during its init: {ln.text.strip()}"[:300],
                bdf,
                "nrtd",
            )
        )
        out.claimed.add(ln.no)
    if timeout is not None:
        out.claimed.add(timeout.no)
    cause = next(
        ((lines[i], m) for i in picked if "[" in lines[i].text and (m := _NRTD_CAUSE.search(lines[i].text)) is not None),
        None,
    )
    failed = next((lines[i] for i in picked if _NRTD_FAILED.search(lines[i].text)), None)
    for i in picked:
        if _NRTD_BUILD.search(lines[i].text) or _NRTD_FAILED.search(lines[i].text):
            out.claimed.add(lines[i].no)
    if failed is None and cause is None:
        return
    at = cause[0] if cause else failed
    assert at is not None
    why = (cause[1].group(1) or cause[1].group(2)) if cause else ""
    why = f"{why}; " if why else ""
    end = f" ({failed.text.strip()[-80:]})" if failed is not None else ""
    _add(
        out,
        "neuron_init_failed",
        at,
        f"the Neuron runtime (nrtd) failed to initialise its devices: {why}the "
        f"devices given to it, its driver (aws-neuron-dkms) and runtime packages, not the hardware{end}",
        "nrtd",
    )


def _nrt_status(out: AppErrorsParse, ln: Line) -> None:
    """A Neuron runtime 2.x status naming the device's state: one record of its kind."""
    for m in _NRT_STATUS.finditer(ln.text):
        _add(out, _NRT_KIND[m.group(1)], ln, f"the Neuron runtime returned NRT_{m.group(1)}: {ln.text.strip()}", "nrt")


def _tpu_info(lines: list[Line], picked: list[int], out: AppErrorsParse) -> None:
    """tpu-info's chips table and its note that no framework serves libtpu's metrics: read, no fault."""
    chips = [m for i in picked if "TPU v" in lines[i].text and (m := _TPU_CHIP.match(lines[i].text)) is not None]
    for i in picked:
        if "TPU v" in lines[i].text and _TPU_CHIP.match(lines[i].text) or _TPU_NO_METRICS.search(lines[i].text):
            out.claimed.add(lines[i].no)
    if chips:
        out.notes.append(
            f"tpu-info: {len(chips)} TPU chip(s) read ({chips[0].group(2)}, {', '.join(m.group(1) for m in chips[:8])})"
        )
    if any(_TPU_NO_METRICS.search(lines[i].text) for i in picked):
        out.notes.append(
            "tpu-info: libtpu's runtime metrics unavailable (no framework holds the TPU): the tool's "
            "limit, no fault of the chips"
        )


def _gpud_fabric(out: AppErrorsParse, ln: Line) -> None:
    """gpud's fabric state per GPU: Not Supported (a PCIe GPU, no NVSwitch) or Completed is the design; others warn."""
    states = _GPUD_FABRIC.findall(ln.text)
    if not states:
        return
    out.claimed.add(ln.no)
    bad = [(g, s) for g, s in states if s.strip().lower() not in _FABRIC_FINE]
    if bad:
        _add(out, "gpud_unhealthy", ln, "gpud fabric state: " + "; ".join(f"{g} state={s}" for g, s in bad), "gpud")
    else:
        out.notes.append(
            f"gpud fabric state: {len(states)} GPU(s) 'Not Supported' or complete (a PCIe GPU has no "
            "NVSwitch fabric: its design, no fault, whatever gpud's wording)"
        )


def _add(out: AppErrorsParse, kind: str, ln: Line, text: str, tool: str) -> None:
    """One record of ``kind`` (a second line of the same kind counted on it)."""
    out.claimed.add(ln.no)
    for i, e in enumerate(out.errors):
        if e.kind == kind and e.tool == tool:
            out.errors[i] = AppError(e.kind, e.line, e.text, e.module, e.tool, e.times + 1)
            return
    out.errors.append(AppError(kind, ln.no, text[:300], None, tool))
