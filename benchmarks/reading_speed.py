"""Reading speed (issue 43): each gpuvet figure beside the plain work that does the same job,
measured in the same run, alternating, each figure the median of --repeats runs of a child
process's CPU time (``resource.getrusage(RUSAGE_CHILDREN)``: what a free core gives, whatever else
the shared machine runs).

  replay   `gpuvet watch --replay` of a month of one-minute `--query-gpu` logs of 8 modules
           (345,600 rows), beside `pandas.read_csv` of the same file (python startup and the pandas
           import in both). Target: within 3x.
  sim      `gpuvet watch --sim hgx-h200-8 --duration 6h --speedup max` (the logbook included), in
           samples per CPU second, startup included. Target: >= 100,000. Reference: a bare
           sqlite3 executemany of as many rows, in this process. Measured twice: with --json, and
           as the issue writes it (`gpuvet watch --node hgx-h200-8 --duration 6h --speedup max`, no
           --json: the live table, its stdout to a file; the default logbook of a fresh GPUVET_HOME).
  doctor   `gpuvet doctor --sim nvl72`, CPU seconds. Target: <= 1.5 s. Reference: the imports
           alone (`python -c "import gpuvet.cli.app"`).
  kernel   `gpuvet doctor --from` a kernel log of 20,000 Xid 13 lines (a flood), CPU seconds, beside
           the same command on 2,000 of them. Target: within 5x (ten times the lines; linear with
           its startup is about 3x; a per-line cost that swamps the rest, as re-reading xids.yaml
           per line did, is about 10x), and its lines per marginal CPU second.
  report   `gpuvet doctor --from` a generated nvidia-bug-report.log of 20 MB and 125 MB (its header,
           banner-led sections of lspci -vvv, nvidia-smi -q and ordinary kernel logs with a few Xid
           blocks; seeded), CPU seconds and peak RSS of the child alone, beside a one-pass Python
           scan of the same file with the same kinds of regexes (Xid, LnkSta/LnkCap, nvidia-smi -q
           `Key : value`, AER, amdgpu), its own process and startup. Targets: within 5x, and peak
           memory <= 100 MiB + 1 MiB per MB of input.

    python benchmarks/reading_speed.py [--repeats 3] [--only replay sim doctor kernel report] [--sizes 20 125]
                                       [--keep DIR] [--no-bytecode]

pandas lives in the ``bench`` extra (pip install -e '.[bench]'); without it the replay line says so.

gpuvet's modules are compiled once before anything is timed (``compileall`` into a bytecode folder
of the run's own, ``PYTHONPYCACHEPREFIX``), as an installed package has them and as pandas' are: a
machine that sets PYTHONDONTWRITEBYTECODE (the build VM does) otherwise compiles every imported
gpuvet module in every timed run. ``--no-bytecode`` times that instead.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

START = 1_767_225_600  # 2026-01-01 00:00 UTC
GPUS, MINUTES = 8, 30 * 1440
HEADER = ("timestamp, index, name, uuid, temperature.gpu, power.draw [W], utilization.gpu [%], clocks.sm [MHz], "
          "clocks.mem [MHz], clocks_event_reasons.active, ecc.errors.corrected.volatile.total")


def write_month(path: Path, seed: int = 43) -> int:
    """A month of an 8-module H200 node logged with nvidia-smi --query-gpu … --format=csv -l 60:
    jobs of 1-12 h, a daily inlet cycle, whole °C, ECC counters that grow now and then. Returns rows."""
    rng = np.random.default_rng(seed)
    util = np.zeros((MINUTES, GPUS))
    for g in range(GPUS):
        i = 0
        while i < MINUTES:
            job = int(rng.uniform(60, 720))
            util[i:i + job, g] = rng.uniform(0.9, 1.0)
            i += job + int(rng.uniform(0, 60))
    day = np.arange(MINUTES) / 1440.0
    power = 75 + util * rng.uniform(560, 620, GPUS) + rng.normal(0, 6, (MINUTES, GPUS))
    temp = 24 + 2.5 * np.sin(2 * np.pi * day)[:, None] + 0.056 * power + rng.normal(0, 0.4, (MINUTES, GPUS))
    ecc = np.cumsum(rng.random((MINUTES, GPUS)) < 0.0005, axis=0)
    stamps = [time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(START + 60 * k)) for k in range(MINUTES)]
    with path.open("w") as out:
        out.write(HEADER + "\n")
        for k in range(MINUTES):
            out.write("".join(
                f"{stamps[k]}.{k % 1000:03d}, {g}, NVIDIA H200, GPU-bench-{g:02d}, {temp[k, g]:.0f}, {power[k, g]:.2f} W, "
                f"{util[k, g] * 100:.0f} %, {1980 if util[k, g] else 345} MHz, 3201 MHz, 0x0000000000000000, "
                f"{ecc[k, g]}\n" for g in range(GPUS)))
    return MINUTES * GPUS


def child_cpu(argv: list[str], env: dict[str, str], to_file: Path | None = None) -> tuple[float, str]:
    """CPU seconds (user + system) of one child process, and its stdout (``to_file``: written
    there, as a redirected run writes it, then read back)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if to_file is None:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    else:
        with to_file.open("w") as out:
            done = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, text=True, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
    stdout = done.stdout if to_file is None else to_file.read_text(encoding="utf-8")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), stdout


@dataclass
class Pair:
    """Alternating runs of gpuvet's work and the plain reference; medians of each."""

    label: str
    ours: list[float] = field(default_factory=list)
    reference: list[float] = field(default_factory=list)
    samples: int = 0

    def run(self, repeats: int, ours: Callable[[], tuple[float, int]], reference: Callable[[], float]) -> None:
        for _ in range(repeats):
            cpu, self.samples = ours()
            self.ours.append(cpu)
            self.reference.append(reference())

    @property
    def median(self) -> float:
        return statistics.median(self.ours)

    @property
    def ref(self) -> float:
        return statistics.median(self.reference)


def gpuvet(*args: str) -> list[str]:
    return [sys.executable, "-m", "gpuvet", *args]


def bench_replay(folder: Path, repeats: int, env: dict[str, str]) -> Pair | None:
    try:
        import pandas  # noqa: F401
    except ImportError:
        print("replay: pandas is not installed (pip install -e '.[bench]'); skipped")
        return None
    path = folder / "node01.csv"
    if not path.exists():
        write_month(path)
    pair = Pair("watch --replay, a month of 8 modules")

    def ours() -> tuple[float, int]:
        cpu, out = child_cpu(gpuvet("watch", "--replay", str(path), "--json", "--no-log"), env)
        return cpu, int(json.loads(out)["samples"])

    code = f"import pandas; print(len(pandas.read_csv({str(path)!r}, skipinitialspace=True)))"
    pair.run(repeats, ours, lambda: child_cpu([sys.executable, "-c", code], env)[0])
    return pair


def bare_sqlite(n: int, folder: Path) -> float:
    """CPU seconds of a bare sqlite3 executemany of ``n`` sample rows (the logbook's columns)."""
    rows = [(i % 8, float(i // 8), 60.0, 600.0, 1980.0, 3201.0, 0.97, 0) for i in range(n)]
    path = folder / "bare.db"
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE s (mkey INT, t REAL, temp REAL, power REAL, sm REAL, mem REAL, util REAL, throttle INT, "
               "PRIMARY KEY (mkey, t)) WITHOUT ROWID")
    started = time.process_time()
    for i in range(0, n, 50_000):
        db.execute("BEGIN")
        db.executemany("INSERT INTO s VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows[i:i + 50_000])
        db.execute("COMMIT")
    took = time.process_time() - started
    db.close()
    return took


def bench_sim(folder: Path, repeats: int, env: dict[str, str]) -> Pair:
    pair = Pair("watch --sim hgx-h200-8 --duration 6h --speedup max --json")
    book = folder / "watch.db"

    def ours() -> tuple[float, int]:
        for p in folder.glob("watch.db*"):
            p.unlink()
        cpu, out = child_cpu(gpuvet("watch", "--sim", "hgx-h200-8", "--duration", "6h", "--speedup", "max", "--json",
                                    "--no-admission", "--logbook", str(book)), env)
        return cpu, int(json.loads(out)["samples"])

    pair.run(repeats, ours, lambda: bare_sqlite(pair.samples or 172_800, folder))
    return pair


def bench_sim_table(folder: Path, repeats: int, env: dict[str, str]) -> Pair:
    """The issue's own command: no --json, so watch shows its live table (stdout to a file), keeps
    the run in the default logbook (a fresh GPUVET_HOME each run) and admits modules as it does."""
    pair = Pair(f"{SIM_COMMAND} (table)")

    def ours() -> tuple[float, int]:
        home = folder / "home-table"
        shutil.rmtree(home, ignore_errors=True)
        cpu, out = child_cpu(gpuvet(*SIM_COMMAND.split()), {**env, "GPUVET_HOME": str(home)},
                             folder / "watch-table.out")
        found = re.search(r"^(\d+) samples, ", out, re.MULTILINE)
        if found is None:
            raise SystemExit(f"{SIM_COMMAND}: no 'N samples' summary line in its output: {out[-2000:]}")
        return cpu, int(found.group(1))

    pair.run(repeats, ours, lambda: bare_sqlite(pair.samples or 172_800, folder))
    return pair


SIM_COMMAND = "watch --node hgx-h200-8 --duration 6h --speedup max"


def bench_doctor(repeats: int, env: dict[str, str]) -> Pair:
    pair = Pair("doctor --sim nvl72")
    pair.run(repeats, lambda: (child_cpu(gpuvet("doctor", "--sim", "nvl72", "--json"), env)[0], 0),
             lambda: child_cpu([sys.executable, "-c", "import gpuvet.cli.app"], env)[0])
    return pair


XID_LINES = 20_000


def write_xid_flood(path: Path, lines: int) -> None:
    """``lines`` NVRM Xid 13 lines of one module, one a second (a job stuck faulting)."""
    with path.open("w") as out:
        for i in range(lines):
            out.write(f"[Sat Dec  5 {i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d} 2026] NVRM: Xid "
                      "(PCI:0000:2a:00): 13, pid=1, name=x, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): "
                      "Out Of Range Address\n")


def bench_kernel(folder: Path, repeats: int, env: dict[str, str]) -> Pair:
    flood, tenth = folder / "xid_flood.txt", folder / "xid_tenth.txt"
    write_xid_flood(flood, XID_LINES)
    write_xid_flood(tenth, XID_LINES // 10)
    pair = Pair(f"doctor --from a kernel log of {XID_LINES:,} Xid lines")
    pair.run(repeats, lambda: (child_cpu(gpuvet("doctor", "--from", str(flood), "--json"), env)[0], XID_LINES),
             lambda: child_cpu(gpuvet("doctor", "--from", str(tenth), "--json"), env)[0])
    return pair


REPORT_SIZES = (20, 125)  # MB of generated bug report (issue 43's "20 MB and 125 MB")
BANNER = "_" * 44
KERNEL_NOISE = (
    "usb 1-1.{n}: new high-speed USB device number {k} using xhci_hcd",
    "EXT4-fs (nvme0n1p{n}): mounted filesystem with ordered data mode. Quota mode: none.",
    "IPv6: ADDRCONF(NETDEV_CHANGE): ens{n}f0: link becomes ready",
    "audit: type=1400 audit({k}.120:{n}): apparmor=\"STATUS\" operation=\"profile_load\" name=\"job{n}\"",
    "systemd[1]: Started session-{k}.scope - Session {k} of User slurm.",
    "mlx5_core 0000:{n:02x}:00.0: mlx5_pcie_event:301: PCIe slot advertised sufficient power (75W).",
    "nvidia-nvswitch{n}: open (major={k})",
    "perf: interrupt took too long ({k} > {n}), lowering kernel.perf_event_max_sample_rate to 50000",
)
XID_BLOCK = (
    "NVRM: Xid (PCI:0000:{bus:02x}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "NVRM: GPU at PCI:0000:{bus:02x}:00: GPU-bench-{bus:02x}",
    "NVRM: GPU Board Serial Number: 16520230{bus:05d}",
    "NVRM: Xid (PCI:0000:{bus:02x}:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
)


def dmesg_section(rng: np.random.Generator, lines: int, start: float, xids: int) -> str:
    """``lines`` of ordinary kernel log, ``xids`` Xid blocks placed at seeded lines."""
    at = set(rng.integers(0, lines, xids).tolist())
    picks, ns = rng.integers(0, len(KERNEL_NOISE), lines), rng.integers(1, 200, lines)
    out = []
    for i in range(lines):
        stamp = f"[{start + i * 0.37:12.6f}] "
        out.append(stamp + KERNEL_NOISE[picks[i]].format(n=ns[i], k=i + 1000))
        if i in at:
            bus = int(rng.choice([0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]))
            out.extend(stamp + line.format(bus=bus) for line in XID_BLOCK)
    return "\n".join(out) + "\n"


def lspci_section(buses: list[int]) -> str:
    """``lspci -vvv`` of the node's H200 modules: the link fields doctor reads, the rest as printed."""
    out = []
    for bus in buses:
        out += [f"0000:{bus:02x}:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H200 SXM 141GB] [10de:2335] (rev a1)",
                "\tSubsystem: NVIDIA Corporation Device [10de:18be]",
                "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ FastB2B- DisINTx+",
                "\tLatency: 0, Cache Line Size: 64 bytes", f"\tInterrupt: pin A routed to IRQ {bus + 100}",
                f"\tNUMA node: {0 if bus < 0x80 else 1}",
                "\tCapabilities: [68] Express (v2) Endpoint, MSI 00",
                "\t\tDevCap:\tMaxPayload 256 bytes, PhantFunc 0, Latency L0s unlimited, L1 <64us",
                "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported",
                "\t\tLnkSta:\tSpeed 32GT/s, Width x16", "\t\tLnkCtl2: Target Link Speed: 32GT/s, EnterCompliance- SpeedDis-",
                "\tCapabilities: [100 v1] Advanced Error Reporting",
                "\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-",
                "\t\tCESta:\tRxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-",
                "\tKernel driver in use: nvidia", "\tKernel modules: nvidia", ""]
    return "\n".join(out) + "\n"


def smi_q_section(buses: list[int], rng: np.random.Generator) -> str:
    """``nvidia-smi -q`` of the same modules (a sample of its ``Key : value`` lines)."""
    out = ["==============NVSMI LOG==============", "", "Driver Version                            : 570.124.06",
           "CUDA Version                              : 12.8", "",
           f"Attached GPUs                             : {len(buses)}"]
    for bus in buses:
        out += [f"GPU 00000000:{bus:02X}:00.0", "    Product Name                          : NVIDIA H200",
                f"    Serial Number                         : 16520230{bus:05d}",
                f"    GPU UUID                              : GPU-bench-{bus:02x}",
                "    PCI", f"        Bus                               : 0x{bus:02X}",
                "        GPU Link Info", "            PCIe Generation",
                "                Max                       : 5", "                Current                   : 5",
                "            Link Width", "                Max                       : 16x",
                "                Current                   : 16x", "    ECC Errors", "        Volatile",
                "            SRAM Correctable              : 0", "            SRAM Uncorrectable            : 0",
                "            DRAM Correctable              : 0", "            DRAM Uncorrectable            : 0",
                "    Temperature", f"        GPU Current Temp                  : {int(rng.integers(30, 45))} C",
                "    Power Readings", f"        Power Draw                        : {rng.uniform(70, 120):.2f} W", ""]
    return "\n".join(out) + "\n"


def write_report(path: Path, megabytes: int, seed: int = 43) -> None:
    """A generated nvidia-bug-report.log of about ``megabytes`` MB: its header, then banner-led
    sections of lspci -vvv, nvidia-smi -q and rotated kernel logs (ordinary dmesg text, a few
    Xid blocks) until the size is reached."""
    rng = np.random.default_rng(seed)
    buses = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]
    target = megabytes * 1_000_000
    with path.open("w") as out:
        out.write("Start of NVIDIA bug report log file.  Please include this file, along\n"
                  "with a detailed description of your problem, when reporting a graphics\ndriver bug.\n\n"
                  "nvidia-bug-report.sh Version: 1\n\nDate: Sun Dec  6 08:00:00 UTC 2026\n\n")
        for name, text in (("lspci -nnDvvv", lspci_section(buses)), ("nvidia-smi -q", smi_q_section(buses, rng))):
            out.write(f"{BANNER}\n\n{name}\n\n{text}\n")
        rotated = 0
        while out.tell() < target:
            lines = min(100_000, max(1, (target - out.tell()) // 90))
            out.write(f"{BANNER}\n\n/var/log/kern.log.{rotated}\n\n")
            out.write(dmesg_section(rng, lines, 1000.0 + rotated * 40_000, xids=1))
            rotated += 1
        out.write(f"{BANNER}\n\nEnd of NVIDIA bug report log file.\n")


# One pass over the file, the same kinds of patterns gpuvet's readers look for; counts each.
SCAN = r"""
import re, sys
kinds = [re.compile(p) for p in (
    r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+)",
    r"^\s*(LnkSta|LnkCap):\s*(?:Port #\d+, )?Speed ([\d.]+)GT/s.*?Width x(\d+)",
    r"^\s*([A-Za-z][\w ()/.-]*?)\s+: (.*)$",
    r"AER: (Corrected|Uncorrected|Multiple).*error",
    r"amdgpu [0-9a-f:.]+: .*(fault|timeout|reset)",
)]
counts = [0] * len(kinds)
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    for line in f:
        for i, k in enumerate(kinds):
            if k.search(line):
                counts[i] += 1
print(counts)
"""


# A fresh small process that runs the child and writes the child's own CPU seconds and peak RSS:
# Linux carries the forking process's resident size into a child's ru_maxrss across exec, so the
# peak of a child forked from this process (numpy loaded, a report just written) would be floored
# at this process's size; the wrapper's floor is a bare interpreter's.
ALONE = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1] + '.out', 'w'))\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "open(sys.argv[1], 'w').write(f'{u.ru_utime + u.ru_stime} {u.ru_maxrss}')\n"
    "sys.exit(rc)\n"
)


def child_usage(argv: list[str], env: dict[str, str], folder: Path) -> tuple[float, float, str]:
    """CPU seconds and peak RSS (MiB) of this one child alone (run under ``ALONE``: not the max
    over every child so far, as this process's RUSAGE_CHILDREN gives), and its stdout."""
    usage = folder / "child.usage"
    done = subprocess.run([sys.executable, "-c", ALONE, str(usage), *argv], stderr=subprocess.PIPE, text=True,
                          env=env, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]}")
    cpu, kib = usage.read_text(encoding="utf-8").split()
    return float(cpu), int(kib) / 1024, Path(f"{usage}.out").read_text(encoding="utf-8")


@dataclass
class ReportRow:
    """One report size: gpuvet's and the scan's CPU seconds and peak MiB, alternating runs."""

    megabytes: float
    ours: list[float] = field(default_factory=list)
    ours_mib: list[float] = field(default_factory=list)
    scan: list[float] = field(default_factory=list)
    scan_mib: list[float] = field(default_factory=list)


def bench_report(folder: Path, repeats: int, env: dict[str, str], sizes: tuple[int, ...]) -> list[ReportRow]:
    rows = []
    paths = [folder / f"nvidia-bug-report-{mb}MB.log" for mb in sizes]
    for mb, path in zip(sizes, paths, strict=True):
        if not path.exists():
            write_report(path, mb)
    if "PYTHONPYCACHEPREFIX" in env and paths:  # one untimed run first: see warmed
        warmed([gpuvet("doctor", "--from", str(paths[0]), "--json"), [sys.executable, "-c", SCAN, str(paths[0])]],
               env, folder)
    for path in paths:
        row = ReportRow(path.stat().st_size / 1e6)
        for _ in range(repeats):
            cpu, mib, _ = child_usage(gpuvet("doctor", "--from", str(path), "--json"), env, folder)
            row.ours.append(cpu)
            row.ours_mib.append(mib)
            cpu, mib, _ = child_usage([sys.executable, "-c", SCAN, str(path)], env, folder)
            row.scan.append(cpu)
            row.scan_mib.append(mib)
        rows.append(row)
    return rows


def warmed(commands: list[list[str]], env: dict[str, str], folder: Path) -> None:
    """Each command run once, untimed. The run's own bytecode folder (``compiled``) hides the installed
    packages' bytecode too, so the first child compiles every module it imports that is not gpuvet's
    (typer, pydantic, numpy, yaml, the standard library's), which an installed gpuvet never does: that one
    run's peak was 5 MiB above the others' at 20 MB, and the peak is the largest of the runs."""
    for argv in commands:
        child_usage(argv, env, folder)


def report_table(rows: list[ReportRow]) -> None:
    print(f"{'doctor --from a bug report':<28}{'gpuvet CPU s':>13}{'MB/s':>7}{'peak MiB':>10}{'scan CPU s':>12}"
          f"{'scan MiB':>10}{'ratio':>8}  within 5x / memory bound")
    for r in rows:
        cpu, scan, mib = statistics.median(r.ours), statistics.median(r.scan), max(r.ours_mib)
        ratio, bound = cpu / scan if scan > 0 else float("inf"), 100 + r.megabytes
        print(f"{f'{r.megabytes:.1f} MB ({len(r.ours)} runs)':<28}{cpu:>13.2f}{r.megabytes / cpu:>7.1f}{mib:>10.0f}"
              f"{scan:>12.2f}{max(r.scan_mib):>10.0f}{ratio:>7.1f}x  {'met' if ratio <= 5 else 'NOT met'} / "
              f"<= {bound:.0f} MiB: {'met' if mib <= bound else 'NOT met'}")


def table(pairs: list[Pair], compiled_once: bool) -> None:
    print(f"{'work':<60}{'gpuvet CPU s':>13}{'reference s':>13}{'ratio':>8}  figure / target")
    for p in pairs:
        ratio = p.median / p.ref if p.ref > 0 else float("inf")
        if p.label.startswith("watch --replay"):
            figure = f"{p.samples / p.median:,.0f} samples/s; within 3x pandas.read_csv: {'yes' if ratio <= 3 else 'NO'}"
        elif "--speedup max" in p.label:
            rate = p.samples / p.median
            figure = (f"{rate:,.0f} samples per CPU s (>= 100,000: {'yes' if rate >= 1e5 else 'NO'}); reference: bare "
                      f"sqlite executemany of {p.samples:,} rows")
        elif p.label.startswith("doctor --from a kernel log"):
            marginal = p.median - p.ref
            rate = f"{p.samples * 0.9 / marginal:,.0f}" if marginal > 0 else "-"
            figure = (f"within 5x: {'yes' if ratio <= 5 else 'NO'}; reference: the same on {p.samples // 10:,} lines; "
                      f"{rate} lines per marginal CPU s")
        else:
            figure = f"<= 1.5 s: {'yes' if p.median <= 1.5 else 'NO'}; reference: import gpuvet.cli.app"
        print(f"{p.label:<60}{p.median:>13.2f}{p.ref:>13.2f}{ratio:>7.1f}x  {figure}")
    print(f"(medians of alternating runs; CPU time of child processes; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; {'gpuvet compiled once' if compiled_once else 'gpuvet compiled in every run'})")


def compiled(env: dict[str, str], folder: Path) -> None:
    """gpuvet's modules compiled into ``folder``, which the timed children then read (``env``)."""
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(folder)
    import gpuvet

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(gpuvet.__file__).parent)], env=env, check=True,
                   stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=["replay", "sim", "doctor", "kernel", "report"],
                        choices=["replay", "sim", "doctor", "kernel", "report"])
    parser.add_argument("--sizes", nargs="*", type=int, default=list(REPORT_SIZES),
                        help="MB of each generated bug report (default: 20 125)")
    parser.add_argument("--keep", type=Path, help="keep the generated month and bug reports here (and reuse them)")
    parser.add_argument("--no-bytecode", action="store_true", help="compile gpuvet's modules in every timed run")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if not args.no_bytecode:
            compiled(env, Path(tmp) / "bytecode")
        env["GPUVET_HOME"] = str(Path(tmp) / "home")
        pairs: list[Pair] = []
        if "replay" in args.only and (p := bench_replay(folder, args.repeats, env)) is not None:
            pairs.append(p)
        if "sim" in args.only:
            pairs.append(bench_sim(Path(tmp), args.repeats, env))
            pairs.append(bench_sim_table(Path(tmp), args.repeats, env))
        if "doctor" in args.only:
            pairs.append(bench_doctor(args.repeats, env))
        if "kernel" in args.only:
            pairs.append(bench_kernel(Path(tmp), args.repeats, env))
        reports = bench_report(folder, args.repeats, env, tuple(args.sizes)) if "report" in args.only else []
    if pairs:
        table(pairs, not args.no_bytecode)
    if reports:
        report_table(reports)
        print(f"(CPU time and peak RSS of each child alone, under a bare wrapper; medians of alternating runs, "
              f"peak the largest; "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
