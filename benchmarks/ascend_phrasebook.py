"""Issue 46 (ASC): Ascend's and Habana's own failure records, read as a class. The messages are the tools' own
(benchmarks/data/ascend_phrasebook.json names each source): the CANN runtime's ACL return codes (rt_error_codes.h),
torch_npu's device-error labels and its 'NPU function error: …, error code is N' / 'HCCL function error' lines,
the runtime's and ACL's error-manager codes (EE/EH…, their documented titles), npu-smi's Health column and
`-t health` fault codes (MindCluster's handling level of each), hccn_tool's link, net health and optical outputs,
and the habanalabs driver's reset/heartbeat/init lines. Each is set in the framings real captures show (torch_npu's
traceback with its [ERROR] device line, an ACL sample's printf, the runtime's TraceBack line, the plog, a dmesg
stamp, the command above a tool's answer, a poster's sentence) and read by ``gpuvet doctor --from`` (in-process).

A row is read as its class (an expected cause found), generic (another finding only), missed (nothing) or, for a
line that says nothing is wrong, clean or false. What each message means is judged here from its own words (the
header comment, the documented title, the level MindCluster handles a code at), not from gpuvet's tables.

    .venv/bin/python -m benchmarks.ascend_phrasebook [--show generic,missed,false] [--family acl,...]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import LOUD, read

DATA = Path(__file__).parent / "data" / "ascend_phrasebook.json"
ECC, HW, LINK, COLL = (
    "ecc_uncorrectable_since_boot",
    "api_reports_module_fault",
    "fabric_link_errors",
    "collective_runtime_error",
)
RUN, DRV, APP, OOM = "npu_runtime_error", "api_reports_driver_state", "application_api_error", "application_out_of_memory"
COLLECTIVE = frozenset({COLL, "collective_stalled", "collective_init_failed"})
Want = frozenset[str] | None  # None: the line says nothing is wrong (no finding at warn or above)

# an ACL code's meaning from its header comment, first match wins (rt_error_codes.h's own words)
_ACL_WORDS: tuple[tuple[re.Pattern[str], Want], ...] = (
    (re.compile(r"ECC", re.I), frozenset({ECC, HW})),
    (re.compile(r"MEM ERROR|ub mem error|port error", re.I), frozenset({HW, ECC, LINK})),
    (re.compile(r"\blink ERROR", re.I), frozenset({LINK, "link_down", "nvlink_errors"})),
    (re.compile(r"remote|hccl", re.I), COLLECTIVE),
    (re.compile(r"heartbeat|hdc disconnect", re.I), frozenset({HW, "module_fell_off_bus", "module_needs_reset"})),
    (
        re.compile(
            r"not complete|end of sequence|abort normal|feature not support|\bover flow|queue is (?:empty|full)|"
            r"no data",
            re.I,
        ),
        None,
    ),
    (re.compile(r"time ?out", re.I), frozenset({RUN, "collective_stalled"})),
    (re.compile(r"exception|trap|execute failed|ts internel|abort", re.I), frozenset({RUN})),
    (re.compile(r"\bno device", re.I), frozenset({"no_modules_visible"})),
    (re.compile(r"no permission", re.I), frozenset({"device_permissions"})),
    (
        re.compile(
            r"memory allocation|\boom\b|no \w+ resource|resource alloc|over limit|task full|use out|alloc batch", re.I
        ),
        frozenset({OOM}),
    ),
    (re.compile(r"^invalid\b", re.I), frozenset({APP})),
    (
        re.compile(
            r"drv internal|device setup|hdc send|soc version|internal error|context release|aicpu internal|"
            r"die|dma|copy data|task abort|response error|ipc error|ringbuffer not init|unregister|"
            r"debug (?:un)?register|profiling error|snapshot",
            re.I,
        ),
        frozenset({DRV, RUN}),
    ),
)
_LABELS: dict[str, Want] = {
    "UCE ERROR": frozenset({ECC, HW}),
    "HBM MULTI BIT ECC ERROR": frozenset({ECC, HW}),
    "SUSPECT MEM ERROR": frozenset({HW, ECC}),
    "HCCS LINK ERROR": frozenset({LINK}),
    "HCCL OP RETRY FAILED": COLLECTIVE,
    "SUSPECT REMOTE ERROR": COLLECTIVE,
    "FORCE STOP": frozenset({RUN}),
}
# MindCluster's handling level of a fault code: isolate or reset the NPU is a critical state, a job restart or a
# sub-health a warning, a code it does not handle nothing the NPU must be drained for
_LEVELS: dict[str, str] = {
    "SeparateNPU": "critical",
    "PreSeparateNPU": "critical",
    "RestartNPU": "critical",
    "FreeRestartNPU": "critical",
    "RestartRequest": "warn",
    "RestartBusiness": "warn",
    "SubHealthFault": "warn",
    "NotHandleFault": "warn",
}
_SEVERE = {"critical": "module_reported_critical", "warn": "module_reported_warning"}
_TITLE_WORDS: tuple[tuple[re.Pattern[str], Want], ...] = (
    (re.compile(r"Insufficient_Host_Memory|Resource_Error"), frozenset({OOM})),
    (re.compile(r"Incorrect_Driver_Version"), frozenset({"driver_runtime_mismatch", DRV})),
    (re.compile(r"Timeout"), frozenset({RUN})),
    (re.compile(r"Execution_Error"), frozenset({RUN})),
    (re.compile(r"Not_Supported"), None),
    (re.compile(r""), frozenset({APP})),  # an invalid argument, a file, a configuration, a call sequence: the caller's
)
DEVICE_LINE = "[ERROR] 2025-06-26-10:14:03 (PID:4242, Device:3, RankID:3) ERR00100 PTA call acl api failed"


def _acl(code: int, comment: str) -> list[tuple[str, str, Want]]:
    want = next((w for pat, w in _ACL_WORDS if pat.search(comment)), frozenset({APP}))
    return [
        (f, t, want)
        for f, t in (
            (
                "torch_npu",
                'Traceback (most recent call last):\n  File "train.py", line 41, in <module>\n'
                "    torch.npu.synchronize()\nRuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/"
                f"compiler_depend.ts:479 NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is "
                f"{code}\n{DEVICE_LINE}",
            ),
            ("acl_sample", f"[INFO]  acl init success\n[ERROR]  aclrtSynchronizeStream failed, errorCode = {code}"),
            (
                "runtime_trace",
                "        TraceBack (most recent call last):\n        synchronize stream failed, runtime "
                f"result = {code}.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]",
            ),
            (
                "logger",
                f"(VllmWorker rank=3 pid=4242) ERROR 06-26 10:14:03 [multiproc_executor.py:487] RuntimeError: "
                f"ACLGraphWrapper:vllm_ascend/compilation/acl_graph.py:212 NPU function error: aclrtSynchronizeStream"
                f"(stream), error code is {code}\n(VllmWorker rank=3 pid=4242) ERROR 06-26 10:14:03 "
                f"[multiproc_executor.py:487] {DEVICE_LINE}",
            ),
            ("quoted", f"Since the CANN upgrade our training on NPU 3 dies with 'error code is {code}' every night."),
        )
    ]


def _label(label: str) -> list[tuple[str, str, Want]]:
    want = _LABELS[label]
    return [
        (f, t, want)
        for f, t in (
            ("torch_npu", f"RuntimeError: {label}, the current working operator name is MatMul\n{DEVICE_LINE}"),
            ("plog", f"[ERROR] PYTORCH(4242,python3):2025-06-26-10:14:03.123.456 [NPUQueue.cpp:431]4242 {label} happened."),
            ("quoted", f"Our job on NPU 3 stopped with '{label}' in the log."),
        )
    ]


def _hccl(result: int, meaning: str) -> list[tuple[str, str, Want]]:
    dist = "[ERROR] 2025-06-26-10:14:03 (PID:4242, Device:5, RankID:13) ERR02200 DIST call hccl api failed."
    return [
        (
            "run",
            f"RuntimeError: HCCL function error: HcclAllReduce(inputPtr, outputPtr, numel, dataType, op, "
            f"comm, stream), error code is {result}\n{dist}",
            COLLECTIVE,
        ),
        (
            "init",
            f"RuntimeError: HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, "
            f"config, &comm), error code is {result}\n{dist}",
            frozenset({"collective_init_failed"}),
        ),
    ]


def _ecode(code: str, title: str, fmt: str) -> list[tuple[str, str, Want]]:
    want = next(w for pat, w in _TITLE_WORDS if pat.search(title))
    msg = re.sub(r"%\w", "x", fmt) or "Inner error."
    return [
        ("bare", f"{code}: {msg}", want),
        ("named", f"[ERROR] RecentErrMsg: [PID: 1613] 2026-03-24-12:14:45.885.234 {title}({code}): {msg}", want),
    ]


def _npu_table(health: str) -> str:
    rows = "".join(
        f"| {n}     910B3               | {health if n == 2 else 'OK':<14}| 93.5        37                0    / 0"
        f"             |\n| 0                         | 0000:{0xC1 + n:02X}:00.0  | 0           0    / 0          3161 / "
        "65536         |\n+===========================+===============+======================================="
        "=============+\n"
        for n in range(4)
    )
    return (
        "+------------------------------------------------------------------------------------------------+\n"
        "| npu-smi 23.0.6                   Version: 23.0.6                                               |\n"
        "+---------------------------+---------------+----------------------------------------------------+\n"
        "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n"
        "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n"
        "+===========================+===============+====================================================+\n" + rows
    )


def _npu(data: dict[str, object]) -> list[tuple[str, str, str, Want]]:
    out: list[tuple[str, str, str, Want]] = []
    for word, want in (
        ("OK", None),
        ("Warning", frozenset({_SEVERE["warn"]})),
        ("Alarm", frozenset({_SEVERE["warn"], _SEVERE["critical"]})),
        ("Critical", frozenset({_SEVERE["critical"]})),
    ):
        out.append(("npu_smi", "table", _npu_table(word), want))
        out.append(
            (
                "npu_smi",
                "health",
                f"# npu-smi info -t health -i 2 -c 0\n        Health Status                  : {word}\n",
                want,
            )
        )
    codes = data["npu_fault_codes"]
    assert isinstance(codes, dict)
    for level, pairs in codes.items():
        for code, _ in pairs:
            text = (
                f"# npu-smi info -t health -i 2 -c 0\n        Health Status                  : Warning\n"
                f"        Error Code                     : {code}\n"
            )
            out.append(("npu_fault", level, text, frozenset({_SEVERE[_LEVELS[level]]})))
    return out


def _hccn(data: dict[str, object]) -> list[tuple[str, str, str, Want]]:
    def loop(option: str, said: dict[int, str], default: str) -> str:
        return "".join(f"[root@node1 ~]# hccn_tool -i {n} -{option} -g\n{said.get(n, default)}\n" for n in range(8))

    port = frozenset({"nic_port_down"})
    out: list[tuple[str, str, str, Want]] = [
        ("hccn", "link one down", loop("link", {5: "link status: DOWN"}, "link status: UP"), port),
        ("hccn", "link all up", loop("link", {}, "link status: UP"), None),
        ("hccn", "link all down", loop("link", {}, "link status: DOWN"), frozenset({"nic_port_down_undeclared"})),
        (
            "hccn",
            "for loop",
            "for i in {0..7}; do hccn_tool -i $i -link -g ; done\n"
            + "".join("link status: DOWN\n" if n == 5 else "link status: UP\n" for n in range(8)),
            port,
        ),
    ]
    statuses = data["net_health"]
    assert isinstance(statuses, list)
    for status in statuses:
        want = None if status in ("Success", "Init") else frozenset({"npu_network_unhealthy"})
        out.append(
            (
                "hccn",
                f"net_health {status}",
                loop("net_health", {5: f"net health status: {status}"}, "net health status: Success"),
                want,
            )
        )
    optical = (
        "optical info:\npresent              : present\ntemperature          : 47 C\nTx Power0            : "
        "1.4035 mW\nRx Power0            : {rx} mW\nTxPower High Thres   : 3.5481 mW\nTxPower Low Thres    : "
        "0.2818 mW\nRxPower High Thres   : 3.5481 mW\nRxPower Low Thres    : 0.1445 mW\nTx Los Flag          : "
        "0x0\nRx Los Flag          : {los}\nTx LoL Flag          : 0x0\nRx LoL Flag          : {lol}\n"
    )
    for name, rx, los, lol, want in (
        ("optical clean", "1.0189", "0x0", "0x0", None),
        ("optical rx los", "1.0189", "0xff", "0x0", frozenset({"nic_hardware_alarm"})),
        ("optical rx lol", "1.0189", "0x0", "0xff", frozenset({"nic_hardware_alarm"})),
        ("optical rx power", "0.0054", "0x0", "0x0", frozenset({"nic_hardware_alarm"})),
    ):
        text = f"/usr/local/Ascend/driver/tools/hccn_tool -i 5 -optical -g\n{optical.format(rx=rx, los=los, lol=lol)}"
        out.append(("hccn", name, text, want))
    return out


_HL_FAIL = frozenset(
    {"module_reported_critical", "module_needs_reset", "module_init_failed", "module_hung_reset", "module_fell_off_bus"}
)


def _habana(message: str) -> list[tuple[str, str, str, Want]]:
    said = message.replace("%s", "0000:19:00.0").replace("%d", "0")
    healthy = message.startswith(("Going to reset", "Successfully", "Driver version"))
    text = (
        "[    5.123456] habanalabs 0000:19:00.0: Driver version: 1.17.0-495b8f9\n"
        f"[ 8123.456789] habanalabs 0000:19:00.0: {said}\n"
    )
    return [("habana", "dmesg", text, None if healthy else _HL_FAIL)]


def rows(data: dict[str, object]) -> list[tuple[str, str, str, Want]]:
    """(family, framing, text, expected) for every message of the data."""
    out: list[tuple[str, str, str, Want]] = []
    for code, _, comment in data["acl_codes"]:  # type: ignore[attr-defined]
        out += [("acl", f"{f} {code}", t, w) for f, t, w in _acl(int(code), str(comment))]
    for label in data["torch_npu_labels"]:  # type: ignore[attr-defined]
        out += [("label", f"{f} {label}", t, w) for f, t, w in _label(str(label))]
    for result, meaning in data["hccl_results"]:  # type: ignore[attr-defined]
        out += [("hccl_call", f"{f} {result}", t, w) for f, t, w in _hccl(int(result), str(meaning))]
    for code, title, fmt in data["ecodes"]:  # type: ignore[attr-defined]
        out += [("ecode", f"{f} {code}", t, w) for f, t, w in _ecode(str(code), str(title), str(fmt))]
    out += _npu(data) + _hccn(data)
    for message in data["habanalabs"]:  # type: ignore[attr-defined]
        out += _habana(str(message))
    return out


# the module a framing names (torch_npu's [ERROR] line 'Device:3', the hccn_tool answer of NPU 5, the HCCL call's
# 'Device:5'): a finding of the right class must name it (a word of its module), or it is counted 'elsewhere'
_MODULE = {
    "acl torch_npu": "3",
    "acl logger": "3",
    "label torch_npu": "3",
    "hccl_call run": "5",
    "hccn link one down": "5",
    "hccn for loop": "5",
    "hccn net_health": "5",
    "hccn optical": "5",
    "npu_smi": "2",
    "npu_fault": "2",
    "habana": "0000:19:00.0",
}


def findings(text: str, where: Path) -> tuple[dict[str, list[str]], set[str], bool]:
    """The causes doctor --from finds in ``text`` with the modules each names, those at warn or above, and whether it
    refused the file."""
    _, findings = read(text, where)
    if findings is None:
        return {}, set(), True
    found: dict[str, list[str]] = {}
    for f in findings:
        found.setdefault(f["cause"], []).append(str(f.get("module") or ""))
    severe = {f["cause"] for f in findings if f["severity"] in LOUD}
    return found, severe, False


def verdict(want: Want, found: dict[str, list[str]], severe: set[str], refused: bool, module: str | None) -> str:
    """An info finding of the expected cause is its class (an application's out-of-memory is info by design); where
    the framing names a module, the class finding must name it ('elsewhere' if it names another or none)."""
    if want is None:
        return "false" if severe else "refused" if refused else "clean"
    right = [m for cause in want & set(found) for m in found[cause]]
    if right and module is not None and not any(re.search(rf"(?<![\w:]){re.escape(module)}(?![\w])", m) for m in right):
        return "elsewhere"
    return "class" if right else "generic" if severe else "refused" if refused else "missed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="elsewhere,generic,missed,false,refused", help="verdicts to list, comma-separated")
    parser.add_argument("--family", default="", help="families to run, comma-separated (all by default)")
    args = parser.parse_args(argv)
    show, only = set(args.show.split(",")), set(filter(None, args.family.split(",")))
    data = json.loads(DATA.read_text(encoding="utf-8"))
    tally: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for family, frame, text, want in rows(data):
            if only and family not in only:
                continue
            found, severe, refused = findings(text, where)
            module = next((m for k, m in _MODULE.items() if f"{family} {frame}".startswith(k)), None)
            tally.setdefault(family, Counter())[v := verdict(want, found, severe, refused, module)] += 1
            if v in show:
                print(f"{v:8} {family:9} {frame:28} -> {found} (want {sorted(want) if want else None}, {module})")
    heads = ("class", "elsewhere", "generic", "missed", "refused", "clean", "false")
    print(f"{'family':<10}{'rows':>6}" + "".join(f"{h:>10}" for h in heads))
    for family, c in tally.items():
        print(f"{family:<10}{sum(c.values()):>6}" + "".join(f"{c[h]:>10}" for h in heads))
    total = sum(tally.values(), Counter())
    print(f"{'all':<10}{sum(total.values()):>6}" + "".join(f"{total[h]:>10}" for h in heads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
