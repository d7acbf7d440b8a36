"""Issue 46 (R13A): the fields nvidia-smi and nccl-tests print as 'not read', and settings a product ships with.
benchmarks/data/r13a_phrasebook.json names the strings (NVML's error strings as nvidia-smi -q prints them and
--query-gpu brackets them; nccl-tests' 'N/A' error column and its '%7.0f' times) with their sources. Healthy texts:
a host-side field not read ('Host Max'), an add-in card at x8 of x16 (the slot's width), ECC off on a card that
ships with it off, nccl-tests run with -c 0; each must stay clean (no finding at warn or above, not refused).
Faults: ECC off on a datacenter part, a link below its design, a module field unread, nccl-tests' #wrong > 0: each
must give its cause at its severity.

Framings: bare, after the command's prompt line, fenced in a markdown block as a poster pastes it.

    .venv/bin/python -m benchmarks.r13a_phrasebook [--show false,refused,wrong]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import healthy_said, run, shown

DATA = Path(__file__).parent / "data" / "r13a_phrasebook.json"
_Q_HEAD = (
    "==============NVSMI LOG==============\n\nTimestamp                                 : Mon Jun  3 10:00:00 2024\n"
    "Driver Version                            : 550.127.05\nCUDA Version                              : 12.4\n\n"
    "Attached GPUs                             : 1\n"
)


def smi_q(product: str, *, host_max: str = "4", width: str = "16x", ecc: str = "Enabled", brand: str = "NVIDIA") -> str:
    """nvidia-smi -q's layout (driver 550) for one module, with the fields this class reads."""
    return (
        _Q_HEAD + "GPU 00000000:3B:00.0\n"
        f"    Product Name                          : {product}\n"
        f"    Product Brand                         : {brand}\n"
        "    ECC Mode\n"
        f"        Current                           : {ecc}\n"
        f"        Pending                           : {ecc}\n"
        "    PCI\n        Bus Id                            : 00000000:3B:00.0\n        GPU Link Info\n"
        "            PCIe Generation\n                Max                       : 4\n"
        "                Current                   : 4\n                Device Max                : 4\n"
        f"                Host Max                  : {host_max}\n            Link Width\n"
        f"                Max                       : 16x\n                Current                   : {width}\n"
    )


def query_csv(product: str, hostmax: str) -> str:
    cell = hostmax if hostmax.startswith("[") or hostmax == "N/A" else f"[{hostmax}]"
    return (
        "pci.bus_id, name, pcie.link.gen.gpumax, pcie.link.gen.hostmax, temperature.gpu\n"
        f"00000000:3B:00.0, {product}, 4, {cell}, 35\n"
    )


def nccl(wrong: str | None) -> str:
    """all_reduce_perf's table: without a check (-c 0: 'N/A' errors) or with a #wrong count."""
    root, err_head = ("      -1", "  #wrong") if wrong is not None else ("", "  error")
    cell = wrong if wrong is not None else "N/A"
    rows = "".join(
        f"  {size:>10}  {size // 4:>12}   float     sum{root}  {t:>7}  132.44  231.76  {cell:>5}  "
        f"{t:>7}  132.53  231.93  {cell:>5}\n"
        for size, t in ((1048576, "74.78"), (2147483648, "16215"), (8589934592, "63896"))
    )
    head = (
        "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20\n#\n"
        "# Using devices\n#   Rank  0 Pid   3442 on  hostname device  0 [0x07] A100-SXM4-40GB\n#\n"
        f"#       size         count    type   redop{' root' if wrong is not None else ''}     time   algbw   "
        f"busbw{err_head}     time   algbw   busbw{err_head}\n"
    )
    tail = "# Out of bounds values : " + (f"{wrong} FAILED" if wrong not in (None, "0") else "0 OK") + "\n"
    return head + rows + tail + "# Avg bus bandwidth    : 68.4048\n#\n"


def framings(text: str, command: str) -> dict[str, str]:
    return {"bare": text, "prompt": f"$ {command}\n{text}", "fenced": f"Output on the node:\n```\n{text}```\n"}


def healthy(data: dict[str, list[str]]) -> list[tuple[str, str, str]]:
    """(group, name, text) of each healthy framing."""
    out: list[tuple[str, str, str]] = []
    for v in data["not_read"]:
        for p in data["host_products"]:
            out += [
                ("host_max_q", f"{p} Host Max '{v}' {k}", t)
                for k, t in framings(smi_q(p, host_max=v), "nvidia-smi -q").items()
            ]
            out += [
                ("host_max_csv", f"{p} hostmax '{v}' {k}", t)
                for k, t in framings(
                    query_csv(p, v),
                    "nvidia-smi --query-gpu=pci.bus_id,name,pcie.link.gen.gpumax,"
                    "pcie.link.gen.hostmax,temperature.gpu --format=csv",
                ).items()
            ]
    for p in data["slot_x8_products"]:
        out += [("slot_x8", f"{p} x8 {k}", t) for k, t in framings(smi_q(p, width="8x"), "nvidia-smi -q").items()]
    for p in data["ecc_off_products"]:
        out += [("ecc_off_shipped", f"{p} {k}", t) for k, t in framings(smi_q(p, ecc="Disabled"), "nvidia-smi -q").items()]
    out += [("nccl_unchecked", f"-c 0 {k}", t) for k, t in framings(nccl(None), "./all_reduce_perf -b 8 -e 8G -c 0").items()]
    return out


def fault_text(f: dict[str, str]) -> tuple[str, str]:
    if f["kind"] == "ecc":
        return smi_q(f["product"], ecc="Disabled"), "nvidia-smi -q"
    if f["kind"] == "width":
        return smi_q(f["product"], width=f["width"]), "nvidia-smi -q"
    if f["kind"] == "brand":
        return smi_q(f["product"], host_max="Unknown Error", brand="Unknown Error"), "nvidia-smi -q"
    return nccl("3"), "./all_reduce_perf -b 8 -e 8G"


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    tally: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for group, name, text in healthy(data):
            code, found = run(text, where)
            verdict = (
                "refused" if code == 2 else "false" if any(f["severity"] in ("warn", "critical") for f in found) else "clean"
            )
            tally.setdefault(group, Counter())[verdict] += 1
            if verdict in show:
                print(f"{verdict}: {group}: {name}: {[(f['cause'], f['severity']) for f in found]}")
        faults = Counter[str]()
        for f in data["faults"]:
            text, command = fault_text(f)
            for k, t in framings(text, command).items():
                code, found = run(t, where)
                right = any(x["cause"] == f["want"] and x["severity"] == f["severity"] for x in found)
                verdict = "right" if right else "refused" if code == 2 else "wrong" if found else "clear"
                faults[verdict] += 1
                if verdict in show:
                    print(f"{verdict}: {f['kind']} {f['product']} {k}: {[(x['cause'], x['severity']) for x in found]}")
    total = Counter[str]()
    for group, c in tally.items():
        total += c
        print(f"{group:<16} {healthy_said(c)}")
    print(f"{'all':<16} {healthy_said(total)}")
    print(
        f"fault framings {sum(faults.values())}: right {faults['right']}, wrong {faults['wrong']}, "
        f"clear {faults['clear']}, refused {faults['refused']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
