"""What marks a text as holding another accelerator's tool or driver lines (accel_tools' readers): Gaudi's, Neuron's,
Tenstorrent's, and (R13C) XRT's xbutil/xbmgmt/xrt-smi, the amdxdna NPU driver's and the Neuron runtime's NRT status
lines. Kept apart from the readers so formats.py names them without importing them (issue 43)."""

# xrt_tools' readers' markers (accel_tools dispatches them by this tuple too)
XRT = (
    "Device Ready",
    "Device(s) Present",
    "0 devices found",
    "Validating card",
    "Validate Device",
    "Validate device",
    "are usable",  # xbutil 1's 'Found total 1 card(s), 0 are usable' ('card(s)' is any tool's word)
    "] is not ready",  # its 'Card [0] is not ready' (a bare 'is not ready' is kubelet's, systemd's, …)
    "Shell running",
    "XOCL",
    "AMDXDNA",
    "amdxdna",
    "aie2_",
    "aie4_",
    "firmware version on /dev/accel",  # FastFlowLM's check (a bare '/dev/accel' is any accel driver's node)
)
ACCEL = (
    "HL-SMI",
    "AIP",
    ".aip",
    "hl-smi",
    "habanalabs",
    "NEURON",
    "reset on",
    "to reappear",
    "space reset",
    '"device_',
    "enstorrent",
    "ing chips",
    "wait_for_init",
    "Opened PCI device",
    "DRAM training",
    "Unsuccessful ",  # R8A, R10A
    *XRT,
    "nrt_",
    "NRT",
    "NMGR",
    "Inference completed",
    # R13D's readers in accel_tools (tt_faults, tt_eth), uncommitted when R13C moved the markers here
    "Chip initialization",
    "safe to communicate",
    "Unknown board type",
    "Still waiting",
    "ethernet ports to train",
    # issue 46: the SYCL device lists (captures/sycl_devices.MARKERS)
    "[opencl:", "[level_zero:", "[ext_oneapi_", "[cuda:", "[hip:", "SYCL devices", "SYCL Devices", "Driver version|",
    "AXCL-SMI", "Packet: ",  # issue 46: axcl_smi.MARKERS, hl_smi_async.MARKERS
)
