"""Issue 46 (NOTE): settings and readings an engineer would remark on in a healthy capture, said as info, never warn.
Each capture is written in its tool's own format (nvidia-smi's table of the 535 and 384 branches, -q's sections,
perftest's header, topo -m) with and without a notable setting; ``gpuvet doctor --from --json`` (in-process) reads
each. Counted: a notable setting said (its info cause, or topo -m's relations note), missed; a plain healthy capture
given an info finding (false info); any finding at warn or above (must be 0).

    .venv/bin/python -m benchmarks.notable_settings_bench
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from gpuvet.cli.app import main as gpuvet

EXCLUSIVE, NOTED = "module_compute_exclusive", "setting_worth_noting"
TOPO_NOTE = "GPU pairs by relation"


def smi_535(product: str, mode: str, used: int, persistence: str = "On", n: int = 2) -> str:
    """nvidia-smi's table as the 535 branch prints it, ``n`` modules alike."""
    out = [
        "+---------------------------------------------------------------------------------------+",
        "| NVIDIA-SMI 535.146.02             Driver Version: 535.146.02   CUDA Version: 12.2     |",
        "|-----------------------------------------+----------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                      |               MIG M. |",
        "|=========================================+======================+======================|",
    ]
    for i in range(n):
        mem = f"{used if i == 0 else 4}MiB / 81559MiB"
        out += [
            f"|{i:4d}  {product:<22}{persistence:>4}  | 00000000:{0x18 + i * 0x10:02X}:00.0 Off |{'0':>22} |",
            f"| N/A   34C    P0              62W / 400W | {mem:>20} |      0%   {mode:>10} |",
            "|                                         |                      |             Disabled |",
            "+-----------------------------------------+----------------------+----------------------+",
        ]
    return "\n".join(out) + "\n"


def smi_384(mode: str, used: int) -> str:
    """nvidia-smi's table as the 384 branch printed it (Tesla V100-SXM2 modules)."""
    rows = []
    for i, bus in enumerate(("06", "07")):
        mem = f"{used if i == 0 else 10}MiB / 16152MiB"
        rows += [
            f"|   {i}  Tesla V100-SXM2...  On   | 00000000:{bus}:00.0 Off |                    0 |",
            f"| N/A   39C    P0    72W / 300W | {mem:>20} |      0%  {mode:>11} |",
            "+-------------------------------+----------------------+----------------------+",
        ]
    return (
        "\n".join(
            [
                "+-----------------------------------------------------------------------------+",
                "| NVIDIA-SMI 384.145                Driver Version: 384.145                   |",
                "|-------------------------------+----------------------+----------------------+",
                "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |",
                "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |",
                "|===============================+======================+======================|",
                *rows,
            ]
        )
        + "\n"
    )


def perftest(link: str, mtu: int, device: str = "mlx5_0") -> str:
    """ib_write_bw's server header (perftest's own lines)."""
    return (
        "\n".join(
            [
                "************************************",
                "* Waiting for client to connect... *",
                "************************************",
                "---------------------------------------------------------------------------------------",
                "                    RDMA_Write BW Test",
                f" Dual-port       : OFF          Device         : {device}",
                " Number of qps   : 1            Transport type : IB",
                " Connection type : RC           Using SRQ      : OFF",
                " CQ Moderation   : 100",
                f" Mtu             : {mtu}[B]",
                f" Link type       : {link}",
                " Max inline data : 0[B]",
                " rdma_cm QPs     : OFF",
                " Data ex. method : Ethernet",
                "---------------------------------------------------------------------------------------",
            ]
        )
        + "\n"
    )


def topo(cells: list[list[str]], numa: list[int]) -> str:
    """nvidia-smi topo -m for the GPUs whose cells are given (row i, column j)."""
    n = len(cells)
    head = "\t" + "\t".join(f"GPU{j}" for j in range(n)) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    rows = [
        f"GPU{i}\t"
        + "\t".join(" X " if i == j else cells[i][j] for j in range(n))
        + f"\t{'0-47' if numa[i] == 0 else '48-95'}\t{numa[i]}\t\tN/A"
        for i in range(n)
    ]
    return "\n".join([head, *rows, "", "Legend:", "", "  X    = Self"]) + "\n"


def _pix_node_sys() -> list[list[str]]:
    def rel(i: int, j: int) -> str:
        if i // 4 != j // 4:
            return "SYS"
        return "PIX" if i // 2 == j // 2 else "NODE"

    return [[rel(i, j) for j in range(8)] for i in range(8)]


# (name, text, what a notable capture must say: a cause, the topo note, or None for a plain healthy capture)
CASES: list[tuple[str, str, str | None]] = [
    ("smi535_exclusive_held", smi_535("NVIDIA A100-SXM4-80GB", "E. Process", 1092), EXCLUSIVE),
    ("smi535_prohibited", smi_535("NVIDIA A100-SXM4-80GB", "Prohibited", 4), EXCLUSIVE),
    ("smi535_default", smi_535("NVIDIA A100-SXM4-80GB", "Default", 4), None),
    ("smi535_default_busy", smi_535("NVIDIA A100-SXM4-80GB", "Default", 30000), None),
    ("smi535_persistence_off_dc", smi_535("NVIDIA H100 80GB HBM3", "Default", 4, "Off"), NOTED),
    ("smi535_persistence_off_geforce", smi_535("NVIDIA GeForce RTX 4090", "Default", 4, "Off"), None),
    ("smi384_exclusive", smi_384("E. Process", 1092), EXCLUSIVE),
    ("smi384_default", smi_384("Default", 10), None),
    ("perftest_roce_1024", perftest("Ethernet", 1024), NOTED),
    ("perftest_roce_4096", perftest("Ethernet", 4096), None),
    ("perftest_ib_4096", perftest("IB", 4096), None),
    ("perftest_ib_2048", perftest("IB", 2048), None),
    ("perftest_ib_1024", perftest("IB", 1024), NOTED),
    ("topo_8gpu_pix_node_sys", topo(_pix_node_sys(), [0, 0, 0, 0, 1, 1, 1, 1]), TOPO_NOTE),
    ("topo_2gpu_nv", topo([["X", "NV12"], ["NV12", "X"]], [0, 0]), TOPO_NOTE),
]


def doctor(name: str, text: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.txt"
        path.write_text(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = gpuvet(["doctor", "--from", str(path), "--json"])
    got: dict[str, object] = json.loads(out.getvalue())
    got["rc"] = rc
    return got


def score() -> Counter[str]:
    counts: Counter[str] = Counter()
    for name, text, want in CASES:
        got = doctor(name, text)
        findings = got["findings"]
        assert isinstance(findings, list)
        loud = [f for f in findings if f["severity"] != "info"]
        info = {f["cause"] for f in findings if f["severity"] == "info"}
        notes = got["notes"]
        assert isinstance(notes, list)
        counts["warn or above"] += len(loud)
        counts["refused"] += got["rc"] == 2
        if want is None:
            counts["plain"] += 1
            counts["false info"] += bool(info)
        elif want in info or (want == TOPO_NOTE and any(TOPO_NOTE in n for n in notes)):
            counts["said"] += 1
        else:
            counts["missed"] += 1
            print(f"missed: {name} ({want}); info {sorted(info)}", file=sys.stderr)
    return counts


if __name__ == "__main__":
    c = score()
    notable = c["said"] + c["missed"]
    print(
        f"notable said {c['said']} of {notable}, missed {c['missed']}; plain healthy {c['plain']}: false info "
        f"{c['false info']}; findings at warn or above {c['warn or above']}; refused {c['refused']}"
    )
