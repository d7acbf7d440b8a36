"""Issue 46 (STJ): state-table snapshots judged across their own fields. Each scenario of
benchmarks/data/state_snapshots.json (a module ~100 % busy at idle power, and the healthy snapshots that look like
it: a training node, a light job at full clocks, a desktop at idle, a container's view, a capped card) is rendered
in its tool's documented layout (nvidia-smi's table, -q, --query-gpu csv; amd-smi's default table; rocm-smi's
ROCm 5 and 6 tables; npu-smi info), bare and as a poster pastes it, and read by ``gpuvet doctor --from --json`` in-process.
A faulty snapshot is right when the expected cause is found on its module at warn, generic when another warn
finding is, missed otherwise; a healthy one is clear with no finding at warn or above, false with one, refused
when doctor read nothing (exit 2).

    .venv/bin/python benchmarks/state_judgment_bench.py [--show generic,missed,false,refused]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import LOUD, tally_said
from benchmarks.support.phrasebook import doctor as run_doctor

DATA = Path(__file__).parent / "data" / "state_snapshots.json"
Row = dict[str, Any]


def nvidia_table(s: Row) -> str:
    """nvidia-smi's default table (driver 535-550 layout) and its Processes box."""
    rule = "+-----------------------------------------+----------------------+----------------------+"
    out = [
        "Mon Dec  7 09:00:00 2026       ",
        "+---------------------------------------------------------------------------------------+",
        "| NVIDIA-SMI 535.154.05             Driver Version: 535.154.05   CUDA Version: 12.2     |",
        "|-----------------------------------------+----------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                      |               MIG M. |",
        "|=========================================+======================+======================|",
    ]
    for i, m in enumerate(s["modules"]):
        pwr = f"{m['power']:.0f}W / {m['cap']:.0f}W"
        mem = f"{m['used']}MiB / {m['total']}MiB"
        name, state = f"   {i}  {m['model']}", f" N/A   {m['temp']}C    {m['pstate']}"
        out += [
            f"|{name:<37}On  | {m['bus']} Off | {'0':>20} |",
            f"|{state}{pwr:>{40 - len(state)}} | {mem:>20} | {str(m['util']) + '%':>7}      Default |",
            "|                                         |                      |             Disabled |",
            rule,
        ]
    if s.get("processes") is None:  # a paste cut above the Processes box
        return "\n".join(out)
    out += [
        "",
        "+---------------------------------------------------------------------------------------+",
        "| Processes:                                                                            |",
        "|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |",
        "|        ID   ID                                                             Usage      |",
        "|=======================================================================================|",
    ]
    procs = s.get("processes") or []
    if not procs:
        out.append("|  No running processes found                                                           |")
    for gpu, pid, kind, name, mib in procs:
        out.append(f"|  {gpu:>3}   N/A  N/A  {pid:>9}  {kind:>5}   {name:<38}{str(mib) + 'MiB':>10} |")
    out.append("+---------------------------------------------------------------------------------------+")
    return "\n".join(out)


def nvidia_q(s: Row) -> str:
    """nvidia-smi -q's sections the judgment reads, as the driver prints them."""
    out = [
        "",
        "==============NVSMI LOG==============",
        "",
        "Timestamp                                 : Mon Dec  7 09:00:00 2026",
        "Driver Version                            : 550.54.15",
        "CUDA Version                              : 12.4",
        "",
        f"Attached GPUs                             : {len(s['modules'])}",
    ]
    for m in s["modules"]:
        out += [
            f"GPU {m['bus']}",
            f"    Product Name                          : {m['model']}",
            f"    Performance State                     : {m['pstate']}",
            "    Clocks Event Reasons",
            *(
                f"        {k:<34}: Not Active"
                for k in ("Idle", "Applications Clocks Setting", "SW Power Cap", "HW Slowdown", "SW Thermal Slowdown")
            ),
            "    FB Memory Usage",
            f"        Total                             : {m['total']} MiB",
            f"        Used                              : {m['used']} MiB",
            "    Utilization",
            f"        Gpu                               : {m['util']} %",
            "        Memory                            : 0 %",
            "    GPU Power Readings",
            f"        Power Draw                        : {m['power']:.2f} W",
            f"        Current Power Limit               : {m['cap']:.2f} W",
            f"        Default Power Limit               : {m['cap']:.2f} W",
            "    Clocks",
            f"        Graphics                          : {m['sm']} MHz",
            f"        SM                                : {m['sm']} MHz",
            "    Max Clocks",
            f"        Graphics                          : {m['sm_max']} MHz",
            f"        SM                                : {m['sm_max']} MHz",
        ]
        procs = [p for p in s.get("processes") or [] if p[0] == s["modules"].index(m)]
        if not procs:
            out.append("    Processes                             : None")
            continue
        out.append("    Processes")
        for _, pid, kind, name, mib in procs:
            out += [
                "        GPU instance ID                   : N/A",
                "        Compute instance ID               : N/A",
                f"        Process ID                        : {pid}",
                f"            Type                          : {kind}",
                f"            Name                          : {name}",
                f"            Used GPU Memory               : {mib} MiB",
            ]
    return "\n".join(out)


def nvidia_csv(s: Row) -> str:
    head = (
        "index, name, pci.bus_id, utilization.gpu [%], power.draw [W], power.limit [W], pstate, clocks.sm [MHz], "
        "clocks.max.sm [MHz]"
    )
    rows = [
        f"{i}, {m['model']}, {m['bus']}, {m['util']} %, {m['power']:.2f} W, {m['cap']:.2f} W, {m['pstate']}, "
        f"{m['sm']} MHz, {m['sm_max']} MHz"
        for i, m in enumerate(s["modules"])
    ]
    return "\n".join([head, *rows])


def amdsmi_table(s: Row) -> str:
    """amd-smi's default table (24.7+) and, where the scenario lists them, its Processes box."""
    out = [
        "+------------------------------------------------------------------------------+",
        "| AMD-SMI 25.3.0+ede62f2       amdgpu version: 6.10.5   ROCm version: 6.3.1    |",
        "| Platform: Linux Baremetal                                                    |",
        "|-------------------------------------+----------------------------------------|",
        "| BDF                        GPU-Name | Mem-Uti   Temp   UEC       Power-Usage |",
        "| GPU  HIP-ID  OAM-ID  Partition-Mode | GFX-Uti    Fan               Mem-Usage |",
        "|=====================================+========================================|",
    ]
    for i, m in enumerate(s["modules"]):
        power = f"{m['power']}/{m['cap']} W" if m["cap"] else "N/A"
        mem = f"{m['used']}/{m['total']} MB"
        out += [
            f"| {m['bus']} {m['model']:>22} | {'0 %':<8} {str(m['temp']) + ' °C':<7} {'0':<4}{power:>18} |",
            f"| {i:>3}     {i:>3}     N/A             N/A | {str(m['util']) + ' %':<10} N/A{mem:>25} |",
            "|-------------------------------------+----------------------------------------|",
        ]
    out[-1] = "+-------------------------------------+----------------------------------------+"
    if s.get("processes") is not None:
        out += [
            "+------------------------------------------------------------------------------+",
            "| Processes:                                                                   |",
            "|  GPU        PID  Process Name          GTT_MEM  VRAM_MEM  MEM_USAGE     CU % |",
            "|==============================================================================|",
            "|  No running processes found                                                  |",
            "+------------------------------------------------------------------------------+",
        ]
    return "\n".join(out)


def rocmsmi5(s: Row) -> str:
    out = [
        "======================= ROCm System Management Interface =======================",
        "================================= Concise Info =================================",
        "GPU  Temp (DieEdge)  AvgPwr  SCLK     MCLK     Fan  Perf  PwrCap  VRAM%  GPU%  ",
    ]
    out += [
        f"{i:<5}{m['temp']:.1f}c{'':<11}{m['power']:.1f}W{'':<3}{m['sclk']}Mhz   1600Mhz  0%   auto  "
        f"{m['cap']:.1f}W  {str(m['vram']) + '%':>4}   {str(m['util']) + '%':<4}"
        for i, m in enumerate(s["modules"])
    ]
    return "\n".join(out + ["=" * 80, "============================= End of ROCm SMI Log =============================="])


def rocmsmi6(s: Row) -> str:
    out = [
        "=" * 41 + " ROCm System Management Interface " + "=" * 41,
        "=" * 51 + " Concise Info " + "=" * 51,
        "Device  Node  IDs              Temp        Power     Partitions          SCLK    MCLK    Fan  Perf  "
        "PwrCap  VRAM%  GPU%",
        "              (DID,     GUID)  (Junction)  (Socket)  (Mem, Compute, ID)",
        "=" * 116,
    ]
    out += [
        f"{i:<8}{i + 2:<6}0x74a1,   {28851 + i:<6} {m['temp']:.1f}°C      {m['power']:.1f}W    NPS1, SPX, 0"
        f"        {m['sclk']}Mhz  900Mhz  0%   auto  {m['cap']:.1f}W  {str(m['vram']) + '%':<5}  {m['util']}%"
        for i, m in enumerate(s["modules"])
    ]
    return "\n".join(out + ["=" * 116, "=" * 48 + " End of ROCm SMI Log " + "=" * 47])


def npusmi(s: Row) -> str:
    """npu-smi info's table (the Ascend 910B layout with HBM-Usage) and its process box."""
    rule = "+===========================+===============+====================================================+"
    out = [
        "+------------------------------------------------------------------------------------------------+",
        "| npu-smi 23.0.rc3                 Version: 23.0.rc3                                             |",
        "+---------------------------+---------------+----------------------------------------------------+",
        "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
        "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |",
        rule,
    ]
    for i, m in enumerate(s["modules"]):
        power, hbm = f"{m['power']:<11} {m['temp']:<17} 0    / 0", f"{m['used']} / {m['total']}"
        out += [
            f"| {i:<5} {m['model']:<19} | OK            | {power:<51}|",
            f"| 0                         | {m['bus']:<13} | {str(m['util']):<11} 0    / 0          {hbm:<21}|",
            rule,
        ]
    out += [
        "+---------------------------+---------------+----------------------------------------------------+",
        "| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |",
        rule,
    ]
    out += [f"| No running processes found in NPU {i:<61}|" for i in range(len(s["modules"]))]
    return "\n".join(out)


RENDER = {
    "nvidia_table": nvidia_table,
    "nvidia_q": nvidia_q,
    "nvidia_csv": nvidia_csv,
    "amdsmi_table": amdsmi_table,
    "rocmsmi5": rocmsmi5,
    "rocmsmi6": rocmsmi6,
    "npusmi": npusmi,
}
COMMAND = {
    "nvidia_table": "nvidia-smi",
    "nvidia_q": "nvidia-smi -q",
    "amdsmi_table": "amd-smi",
    "rocmsmi5": "rocm-smi",
    "rocmsmi6": "rocm-smi",
    "npusmi": "npu-smi info",
    "nvidia_csv": "nvidia-smi --query-gpu=index,name,pci.bus_id,utilization.gpu,"
    "power.draw,power.limit,pstate,clocks.sm,clocks.max.sm --format=csv",
}


def framings(s: Row) -> dict[str, str]:
    text = RENDER[s["format"]](s)
    return {
        "bare": text,
        "posted": f"Here is what the node shows right now:\n\n```\n$ {COMMAND[s['format']]}\n{text}\n```\n"
        "Any idea what is going on?",
    }


def doctor(text: str, where: Path) -> tuple[int, list[Row]]:
    """doctor --from's exit and findings at warn or above (exit 2 and no JSON: refused)."""
    code, found = run_doctor(text, where)
    return code, [f for f in found if f["severity"] in LOUD]


def verdict(s: Row, code: int, found: list[Row]) -> str:
    if s["expect"] is None:
        return "refused" if code == 2 else ("false" if found else "clear")
    on = [f for f in found if s["module"].lower() in str(f.get("module") or "").lower()]
    if any(f["cause"] == s["expect"] for f in on):
        return "right"
    return "generic" if on else "missed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="generic,missed,false,refused", help="the verdicts to list, comma-separated")
    args = parser.parse_args(argv)
    show = set(args.show.split(","))
    tally: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "snapshot.txt"
        for s in json.loads(DATA.read_text(encoding="utf-8"))["scenarios"]:
            for frame, text in framings(s).items():
                code, found = doctor(text, where)
                tally[v := verdict(s, code, found)] += 1
                if v in show:
                    print(
                        f"{v:8} {frame:7} {s['name']}: exit {code}, "
                        f"{sorted((f['cause'], f.get('module')) for f in found)} (want {s['expect']})"
                    )
    print(tally_said("framed snapshots", tally, ("right", "generic", "missed", "clear", "false", "refused")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
