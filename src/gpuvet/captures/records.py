"""Typed records of what captured files say; every figure read from text, none invented."""

from __future__ import annotations

from dataclasses import dataclass, field

UNNAMED = "GPU (bus id not in the excerpt)"
EXPORTER_NVLINK = "dcgm-exporter NVLink counters"  # the kind dcgm-exporter's NVLink counters are read as
# the kinds of readers that formats.py names before it imports them (issue 43: a reader is imported on first need)
HCCL_TEST, TRANSFERBENCH, PCIE_STATUS = "hccl_test", "TransferBench", "kernel PCIe link status"
DCGM_EXPORTER, AMD_EXPORTER = "dcgm-exporter", "AMD device-metrics-exporter"
NVML_VALUES = "NVML values (a binding's)"  # captures/nvml_values.py's kind
SMI_MESSAGES = "nvidia-smi's messages"  # AX1: nvidia-smi's own lines of a module's state (captures/smi_messages.py)
# issue 46: the kinds read into -q's fields, captures/monitor_tools.py's and NVML_VALUES (a binding's clock event
# reasons as -q's): doctor cites their file for those readings
MONITOR_KINDS = ("gpustat", "gpustat --json", "nvitop", "nvidia-top", "nvtop -s", "nvidia-smi pmon",
                 "nvidia-smi --query-compute-apps", NVML_VALUES)


# issue 46: the field a reader whose 'Disabled' may mean 'no ECC' (deviceQuery's 'Device has ECC support') sets
AMBIGUOUS_ECC = "ECC support (off, or none)"


@dataclass(frozen=True)
class ModuleHealth:
    """Health-relevant state of one module, from `nvidia-smi -q` text or `-q -x` XML."""

    module: str  # bus id as printed (upper case), or UNNAMED for an excerpt without the GPU line
    product: str | None = None
    pcie_gen: int | None = None
    pcie_gen_max: int | None = None
    pcie_gen_link_max: int | None = None  # -q 'PCIe Generation/Max' (host and device), else 'Host Max'
    utilization_pct: float | None = None  # -q 'Utilization/Gpu': busy now (a busy link does not downshift)
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    clock_events: frozenset[str] = frozenset()  # active reasons: hw_slowdown, hw_thermal_slowdown, …
    ecc_mode: str | None = None
    ecc_present_said: bool = True  # issue 46: the tool's 'Disabled' says ECC exists (nvidia-smi: N/A where none);
    # False for deviceQuery's 'ECC support: Disabled', printed where ECC is off and where there is none
    ecc_uncorrectable_volatile: int | None = None
    ecc_uncorrectable_aggregate: int | None = None
    retired_pages_pending: bool | None = None
    retired_pages: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None
    remap_uncorrectable: int | None = None
    temperature_c: float | None = None
    temperature_max_operating_c: float | None = None  # -q 'GPU Max Operating Temp': the module's own limit
    temperature_slowdown_c: float | None = None  # -q 'GPU Slowdown Temp'
    # newer drivers' -q 'T.Limit' fields are margins, not temperatures: 'GPU T.Limit Temp' is the degrees left to
    # the module's limit now; 'GPU Slowdown / Max Operating T.Limit Temp' is where on that scale each step begins
    margin_c: float | None = None
    slowdown_margin_c: float | None = None
    max_operating_margin_c: float | None = None
    sm_clock_mhz: float | None = None  # -q 'Clocks/SM' now
    sm_clock_max_mhz: float | None = None  # -q 'Max Clocks/SM': the module's own maximum
    corrupt: tuple[str, ...] = ()  # figures outside physical bounds (99999 °C, NaN): left out above, said here
    fabric_state: str | None = None  # -q 'Fabric/State': the NVLink domain registration (Completed, In Progress)
    fabric_status: str | None = None  # -q 'Fabric/Status': Success, or the fabric manager's error
    fabric_health: str | None = None  # -q 'Fabric/Health/Summary' (newer drivers): Healthy, Unhealthy, …
    # FX68E: the Health fields away from their healthy value, as printed ('Bandwidth Degraded, Route Unhealthy True')
    fabric_health_detail: str | None = None
    fabric_clique: str | None = None  # FX68E: -q 'Fabric/CliqueId' and 'Fabric/ClusterUUID', as printed
    unreadable: tuple[str, ...] = ()  # fields the tool printed as ERR! or Unknown Error: NVML cannot read the module
    reset_told: str | None = None  # -q 'GPU Reset Status' Yes or 'GPU Recovery Action' other than None, as printed
    lost_told: str | None = None  # a field NVML answered 'GPU is lost' (NVML_ERROR_GPU_IS_LOST): the module is lost
    unread_as: tuple[str, ...] = ()  # what the tool printed in place of the unreadable fields, as printed
    not_read: tuple[str, ...] = ()  # fields printed N/A or Not Supported: not known, and so never read


@dataclass(frozen=True)
class NvLinkState:
    gpu: str  # "GPU 3" as nvidia-smi prints it, or "gpuId 0" (dcgmi)
    link: int
    up: bool
    speed_gbps: float | None = None
    state: str = ""  # as printed when the link is not up: <inactive>, D, X


@dataclass(frozen=True)
class NvLinkErrors:
    gpu: str
    link: int
    counter: str  # Replay, Recovery, CRC, Data CRC, Flit CRC …
    count: int


@dataclass(frozen=True)
class PcieLink:
    """One NVIDIA device in `lspci -vvv`: its link capability and status, AER bits set."""

    device: str  # bus id, or "device line not in the excerpt"
    name: str | None
    cap_speed_gts: float | None
    cap_width: int | None
    speed_gts: float | None
    width: int | None
    speed_downgraded: bool  # lspci's own "(downgraded)" mark
    width_downgraded: bool
    aer_uncorrectable: tuple[str, ...] = ()
    aer_correctable: tuple[str, ...] = ()
    link_inactive: bool = False  # R4B: DLActive- on a port that reports it (LLActRep+): no link trained below it


@dataclass(frozen=True)
class DcgmResult:
    category: str
    test: str
    gpu: str | None  # "0", "0,1,2,3" or None for the whole group
    status: str  # pass, fail, warn, skip, …
    detail: str | None = None
    codes: tuple[int, ...] = ()  # DCGM's failure codes the output gave by number (-j's error_id): dcgm_errors.yaml


@dataclass(frozen=True)
class DcgmHealthIncident:
    """One system's incident in `dcgmi health -c`, as printed: the entity, the system, its health
    (Warning, Failure) and DCGM's message (its wrapped lines joined)."""

    entity: str  # "GPU 0", "Switch 11"
    system: str  # "NVLINK system", "Memory system", "Driver"
    health: str
    message: str
    quoted: bool = False  # a poster's sentence quotes it (read.py's read_quoted): their report, not DCGM's output


@dataclass(frozen=True)
class AppError:
    """One error line an application, a CUDA sample or a stress test printed (captures/app_errors.py):
    its kind (a key of app_errors.KINDS), the module it names if any, and the line as printed."""

    kind: str
    line: int
    text: str
    module: str | None = None  # "GPU 0", a bus id, or None where the line names none
    tool: str | None = None  # the program that printed it, where the line says (gpu-burn, deviceQuery, PyTorch)
    times: int = 1  # lines of the same kind on the same module (a traceback repeats its error)
    quoted: bool = False  # issue 46: a poster's sentence quoting the message, read only where nothing else was
    host: str | None = None  # the launcher's host, where the log names two or more (captures/hosted.py)
    meaning: str | None = None  # what a code the line prints only as a number is (ASC: '507054 ACL_ERROR_RT_HBM_…')


@dataclass(frozen=True)
class XidLine:
    bus_id: str
    code: int
    text: str
    quoted: bool = False  # issue 46: a poster's sentence naming the Xid, read only where nothing else was
    line: int = 0  # its line number in the file (0: not kept), which names its host in a log of several
    host: str | None = None  # the launcher's host (pdsh's 'node1: '), where the log names two or more


@dataclass(frozen=True)
class NcclRow:
    size_bytes: int
    time_us: float | None  # None: the row's figure was negative, NaN or unreadable (see notes)
    algbw: float | None
    busbw: float | None
    wrong: int | None  # None: validation off (N/A) or an old table without the column


@dataclass
class NcclResult:
    op: str
    ranks: int | None
    rows: list[NcclRow]
    avg_busbw: float | None
    where: str
    nodes: tuple[str, ...] = ()
    models: tuple[str, ...] = ()  # the module each device line names, one per rank line (nccl_devices.py)
    announced_max: int | None = None  # the largest size its header announced (maxBytes); None: not read
    finished: bool = False  # its 'Out of bounds values : N OK' line, printed after the last size, was read
    gpus_per_thread: int | None = None  # nGpus of its header ('nThread 1 nGpus 8': one thread drives 8), else read
    # from rank lines that list one pid for every device; None: not said. Above 1, that thread launches them in turn

    @property
    def cut_before(self) -> int | None:
        """The announced largest size a run stopped short of (killed, hung, or the copy stopped):
        its rows say nothing of the sizes after them. None: whole (a summary, or the last size
        reached), or no size announced."""
        if self.announced_max is None or self.avg_busbw is not None or self.finished or not self.rows:
            return None
        return self.announced_max if max(r.size_bytes for r in self.rows) < self.announced_max else None


@dataclass
class CopyCheckFailure:
    """nvbandwidth stopped because a copy's contents did not match (its own pattern check)."""

    test: str | None
    text: str


@dataclass
class NvbDevice:
    index: int
    name: str
    bus_id: str | None = None


@dataclass(frozen=True)
class SmiProcess:
    """A process nvidia-smi -q (or -q -x) lists on a module, as printed: doctor's other_processes step sees it."""

    pid: str
    type: str | None = None  # C (compute), G (graphics), C+G, M (MPS) …; None where not printed
    name: str | None = None
    memory: str | None = None  # 'Used GPU Memory' as printed ('70000 MiB')


@dataclass
class SmiTextModule:
    bus_id: str
    product: str
    fields: dict[str, str] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)  # the table's cells printed ERR! (its -q key), not in fields
    unread_as: list[str] = field(default_factory=list)  # what those cells printed (ERR!, [Unknown Error] …)
    not_read: list[str] = field(default_factory=list)  # the cells printed N/A, [N/A], [Not Supported] (its -q key)


@dataclass(frozen=True)
class StateReading:
    """One module's figures at the moment a state table printed them (issue 46, STJ): read against each other and
    the module's design by doctor/state_judgment.py (busy at idle power); None where the table printed none."""

    busy_pct: float | None = None  # the engine's utilization (amd-smi GFX-Uti, rocm-smi GPU%, npu-smi AICore)
    power_w: float | None = None  # the draw now
    power_cap_w: float | None = None  # the cap printed beside it
    memory_used_mib: float | None = None


@dataclass(frozen=True)
class ListedModule:
    """One module as a vendor's tool lists it (amd-smi, rocm-smi, rocm-bandwidth-test, npu-smi):
    only what the capture printed, None for the rest."""

    label: str  # as the tool names it: "GPU 0", "card1", "NPU 1 chip 0"
    name: str | None = None
    bus_id: str | None = None  # as printed, upper case
    memory_mib: float | None = None
    uuid: str | None = None
    pcie_gen_max: int | None = None
    pcie_width_max: int | None = None
    pcie_gen_current: int | None = None  # rocm-smi --showmetrics' pcie_link_speed, as the generation of that rate
    pcie_width_current: int | None = None
    health: str | None = None  # the tool's own verdict (npu-smi Health: OK, Warning, Alarm, Critical)
    temperature_c: float | None = None
    ecc_uncorrectable: int | None = None  # since the driver loaded (amd-smi metric --ecc)
    power_limit_w: float | None = None  # the power cap the tool prints (xpu-smi's table: Pwr:Usage/Cap)
    ras: tuple[tuple[str, str], ...] = ()  # amd-smi's RAS/ECC fields as printed: (path, value), judged by captures.verdicts
    tool: str | None = None  # the tool that listed it: "amd-smi", "rocm-smi", "npu-smi info", "rocm-bandwidth-test"
    processes: tuple[SmiProcess, ...] | None = None  # the processes the tool lists on it (hl-smi); None: not listed
    serial: str | None = None  # the board serial the tool prints (rocm-smi --showserial)
    vbios: str | None = None  # the VBIOS version it prints (rocm-smi --showvbios)
    device_id: str | None = None  # the PCI device id as printed (rocm-smi's 'GPU ID' / 'Device ID': 0x687f)
    state: StateReading | None = None  # its utilization, power and memory now, where the table prints them


@dataclass(frozen=True)
class ToolVerdict:
    """What a vendor's tool itself says of one module's state (npu-smi's Health, amd-smi's RAS
    and ECC fields), as printed, and what that means: ok, warn, critical, or unknown (a word
    gpuvet does not know: noted, never judged)."""

    tool: str  # "npu-smi info", "amd-smi"
    module: str  # the tool's label: "NPU 0 chip 0", "GPU 0"
    bus_id: str | None
    field: str  # "Health", "ECC/TOTAL_UNCORRECTABLE_COUNT", "RAS/ECC_BLOCK_STATE/UMC"
    value: str
    severity: str  # ok, info (a count said, not judged: no bound), warn, critical, unknown

    @property
    def where(self) -> str:
        return f"{self.module} ({self.bus_id})" if self.bus_id else self.module


@dataclass
class FabricTable:
    """How pairs of modules connect, as amd-smi topology or rocm-smi --showtopo print it; each
    table is kept as printed (a cut capture has only some)."""

    source: str  # the tool, for notes: "amd-smi topology", "rocm-smi --showtopo"
    devices: list[str] = field(default_factory=list)  # the tool's names (GPU0…, or bus ids), in order
    link_type: dict[frozenset[str], str] = field(default_factory=dict)  # XGMI, PCIE …
    weight: dict[frozenset[str], int] = field(default_factory=dict)
    hops: dict[frozenset[str], int] = field(default_factory=dict)
    numa: dict[str, int] = field(default_factory=dict)


@dataclass
class ListedParse:
    """What a vendor tool's listing said: its modules, its link tables, the driver it names."""

    modules: list[ListedModule] = field(default_factory=list)
    fabric: FabricTable | None = None
    driver: str | None = None
    kinds: list[str] = field(default_factory=list)  # the formats found, named as the user ran them
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    unnamed: list[ToolVerdict] = field(default_factory=list)  # a tool's verdict on a module it does not name
    host_cpus: list[str] = field(default_factory=list)  # issue 46: the host CPUs it lists beside them (rocminfo's CPU
    # agents, rocm-bandwidth-test's CPU devices), as named: the inventory's host CPU model, never a module


GPU_DRIVERS = ("nvidia", "amdgpu", "nvlddmkm", "amdkmdag")  # the drivers whose AER errors are a GPU module's own
# (captures/aer.py; Windows' display drivers: the GPU a WHEA record names, captures/whea.py)
