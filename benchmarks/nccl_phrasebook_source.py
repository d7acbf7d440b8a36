"""Issue 46: extract NCCL's and RCCL's WARN format strings from their sources into benchmarks/data/nccl_phrasebook.json,
and fill a string's printf arguments as the library would (filled: benchmarks/nccl_phrasebook.py's lines).

Every ``WARN("…", …)`` call of the library's src/ tree at each tag (comments stripped, adjacent literals joined,
PRIu64-style macros turned into their conversions, a macro's stringified or named argument kept as ``%s``),
deduplicated by its text across tags (the first tag that prints it is kept, with its path). Windows-only files
(src/os/windows*) are left out: the captures read are Linux logs. Re-run it on a fetched mirror to refresh the data:

    .venv/bin/python benchmarks/nccl_phrasebook_source.py /work/.mirror/NVIDIA+nccl/repo v2.18.3-1 v2.21.5-1 \\
        v2.27.7-1 v2.30.7-1 --rccl /work/.mirror/ROCm+rccl/repo rocm-6.2.2
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

DATA = Path(__file__).parent / "data" / "nccl_phrasebook.json"
PEER = "10.12.3.41<50127>"
_ARG = re.compile(r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L)?([diouxXpPscfeg%])")
_TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_CALLS = {"WARN": re.compile(r"(?<![\w.>#])WARN\s*\("), "INFO": re.compile(r"(?<![\w.>#])INFO\s*\(")}
_PRI = {
    "PRIu64": "lu",
    "PRId64": "ld",
    "PRIx64": "lx",
    "PRIX64": "lX",
    "PRIu32": "u",
    "PRId32": "d",
    "PRIx32": "x",
    "PRIi64": "ld",
    "PRIu16": "u",
    "PRIu8": "u",
    "PRIx16": "x",
}


def _uncommented(src: str) -> str:
    """The source with comments blanked (their newlines kept), strings left whole."""
    return _TOKENS.sub(lambda m: m.group(0) if m.group(0)[0] in "\"'" else re.sub(r"[^\n]", " ", m.group(0)), src)


def _arg(src: str, start: int, nth: int = 0) -> str | None:
    """The nth argument (from 0) of the call whose '(' ends at ``start``, as text (None where it has none)."""
    depth, i, out = 0, start, []
    while i < len(src):
        c = src[i]
        if c in "\"'":
            m = _TOKENS.match(src, i)
            if m is None:
                return None
            out.append(m.group(0))
            i = m.end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return "".join(out) if nth == 0 else None
            depth -= 1
        elif c == "," and depth == 0:
            if nth == 0:
                return "".join(out)
            nth, out = nth - 1, []
            i += 1
            continue
        out.append(c)
        i += 1
    return None


def _format(arg: str) -> str | None:
    """The format string an argument holds: its literals joined, a PRI macro as its conversion, a macro's own
    argument (name, #call) as %s; None where it holds no literal."""
    parts, has_literal = [], False
    for tok in re.findall(r'"(?:\\.|[^"\\])*"|#?\w+|\S', arg):
        if tok.startswith('"'):
            has_literal = True
            parts.append(tok[1:-1])
        elif tok in _PRI:
            parts.append(_PRI[tok])
        elif re.match(r"#?[A-Za-z_]\w*$", tok):
            parts.append("%s")
    if not has_literal:
        return None
    text = "".join(parts).replace('\\"', '"').replace("\\n", " ").replace("\\t", " ").strip()
    return None if re.fullmatch(r"(?:%s|\s|:)*", text) else text


def extract(repo: Path, tag: str, level: str = "WARN") -> list[tuple[str, str]]:
    """(path, format) of every WARN (or INFO: its format is the second argument) call in the tag's src/ tree."""
    files = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", tag, "src"], capture_output=True, text=True, check=True
    ).stdout.split()
    out: list[tuple[str, str]] = []
    for path in files:
        if not re.search(r"\.(?:cc|cu|cpp|c|h|hpp)$", path) or "/os/windows" in path:
            continue
        src = _uncommented(
            subprocess.run(
                ["git", "-C", str(repo), "show", f"{tag}:{path}"],
                capture_output=True,
                text=True,
                errors="replace",
                check=True,
            ).stdout
        )
        for m in _CALLS[level].finditer(src):
            line_start = src.rfind("\n", 0, m.start()) + 1
            if src[line_start : m.start()].lstrip().startswith("#define") and "..." in src[m.start() : m.end() + 12]:
                continue
            arg = _arg(src, m.end(), 1 if level == "INFO" else 0)
            fmt = _format(arg) if arg is not None else None
            if fmt:
                out.append((path, fmt))
    return out


# --- filling a format (benchmarks/nccl_phrasebook.py reads each string so filled) ---------------------------------
# (the words right before a %s, what the library puts there); first match wins
_S_BEFORE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:Cuda|Hip|ROCr) failure(?: %d)? '$|CUDA error %d '$", re.I), "\0cuda"),
    (re.compile(r"status=$"), "transport retry counter exceeded"),  # ibv_wc_status_str
    (re.compile(r"opcode=$"), "SEND"),
    (re.compile(r"async (?:fatal )?event(?: on \w+.*)?\s*:\s*$|non-fatal async event: $", re.I), "port error"),
    (re.compile(r"^NET/IB\s*:\s*$"), "mlx5_0"),  # NET/IB : %s:%d (the device and port)
    (re.compile(r"failed to peer with device \S+: %d $"), "peer access is not supported between these two devices"),
    (re.compile(r"%d\($"), "Connection timed out"),  # 'returned %d(%s)'
    (re.compile(r"\)$|%s$|vendor_err=%u $"), ""),  # NET/IB's (%s)%s%s%s: optional parts
    (re.compile(r"\($"), "Send"),
    (
        re.compile(r"(?:with remote peer|Connect to|connect to|from peer|peer|from|to|addr(?:ess)?|host)\s*:?\s*$", re.I),
        PEER,
    ),
    (re.compile(r"(?:hca|HCA|device|dev|devName|NIC|mergedDev)\s*[:=]?\s*'?$"), "mlx5_0"),
    (re.compile(r"(?:interface|IFNAME|ifName)\s*[:=]?\s*'?$", re.I), "eth0"),
    (re.compile(r"(?:file|open|path|segment|of|shm|memory)\s*'?$", re.I), "/dev/shm/nccl-Rz7Xq2"),
    (re.compile(r"version\s*$", re.I), "2.21.5"),
    (re.compile(r"(?:dlsym|dlvsym|symbol)\b.*$", re.I), "ncclNetPlugin_v8"),
    (re.compile(r"Call to\s*$|Retrieve\s*$", re.I), "ibv_create_qp"),
    (re.compile(r"(?:failed|error|returned|errno|err)\s*[:=]?\s*'?$|: $", re.I), "\0errno"),
    (re.compile(r"^$"), "socketStartConnect"),  # a format opening with its caller's name ('%s: connect to')
)
_STRERROR = {
    "socket": "Connection refused",
    "shm": "No space left on device",
    "ib": "Cannot allocate memory",
    "p2p": "invalid argument",
    "": "Input/output error",
}


def _errno_text(path: str, text: str) -> str:
    """The strerror() a failed call prints, as the file's calls most often fail."""
    key = next((k for k in ("shm", "socket", "p2p") if k in path or k in text.lower()), "")
    key = "ib" if not key and ("net_ib" in path or "ibv" in text) else key
    return _STRERROR[key]


def filled(fmt: str, path: str, cuda_error: tuple[str, int] = ("out of memory", 2)) -> str:
    """The format with its arguments as the library fills them."""
    text, out, at = fmt.replace("Call to %s %s failed", "Call to recv from %s failed"), [], 0
    for m in _ARG.finditer(text):
        out.append(text[at : m.start()])
        out.append(_value(text, m, path, cuda_error))
        at = m.end()
    out.append(text[at:])
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _value(text: str, m: re.Match[str], path: str, cuda_error: tuple[str, int]) -> str:
    before, conv = text[: m.start()], m.group(1)
    if conv == "%":
        return "%"
    if conv == "p":
        return "0x7f3a2c000000"
    if conv in "xX":
        return "1b000" if re.search(r"busId|dev \d*\(=|\(=$|\[$", before) else "7f3a"
    if conv in "fge":
        return "1.5"
    if conv == "c":
        return "x"
    if conv != "s":
        return str(cuda_error[1]) if re.search(r"Cuda failure $", before) else _number(before)
    value = next((v for pat, v in _S_BEFORE if pat.search(before)), "ib0")
    if value == "\0cuda":
        return "invalid argument" if "NVLS" in text else cuda_error[0]  # nvls.cc's bind: the driver refused it
    return _errno_text(path, text) if value == "\0errno" else value


def _number(before: str) -> str:
    if re.search(r"status=\s*$|with error\s*$|wc\.status=$", before):
        return "12"
    if re.search(r"vendor[ _]err[ =]?\s*$", before):
        return "129"
    if re.search(r"(?:errno|error|ret|returned|err|rc)\s*[:=]?\s*\(?$", before, re.I):
        return "110"
    if re.search(r"CUDA error\s*$", before):
        return "1"
    if re.search(r"Cuda failure\s*$", before, re.I):
        return "2"
    if re.search(r"rank\w*\s*[:=]?\s*$|peer\s*$", before, re.I):
        return "5"
    if re.search(r"^NET/IB\s*:\s*%s:$", before):
        return "1"  # the device's port
    if re.search(r"status=%s\($", before):
        return "12"
    if re.search(r"(?:with|Cuda failure|\): )\s*$", before):
        return "217" if "peer" in before else "2"
    if re.search(r"bytes?\s*$|size\s*[:=]?\s*$|\bsz\s*$", before, re.I):
        return "4194304"
    return "2"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("nccl", type=Path)
    ap.add_argument("tags", nargs="+")
    ap.add_argument("--rccl", nargs=2, metavar=("MIRROR", "TAG"))
    args = ap.parse_args()
    seen: dict[str, list[str]] = {}
    infos: dict[str, list[str]] = {}
    sources: dict[str, str] = {}
    runs = [("NVIDIA/nccl", args.nccl, t) for t in args.tags]
    runs += [("ROCm/rccl", Path(args.rccl[0]), args.rccl[1])] if args.rccl else []
    for name, repo, tag in runs:
        key = f"{name.split('/')[1]} {tag}"
        sources[key] = f"{name} {tag}"
        for path, fmt in extract(repo, tag):
            seen.setdefault(fmt, [key, path, fmt])
        for path, fmt in extract(repo, tag, "INFO"):
            infos.setdefault(fmt, [key, path, fmt])
    strings = sorted(seen.values(), key=lambda r: (r[1], r[2]))
    info = sorted(infos.values(), key=lambda r: (r[1], r[2]))
    DATA.write_text(
        json.dumps(
            {
                "about": "WARN format strings of NCCL's and RCCL's sources (benchmarks/"
                "nccl_phrasebook_source.py), deduplicated by text; each row: the first "
                "source (tag) that prints it, its path there, the format; 'info': the "
                "INFO format strings alike",
                "sources": sources,
                "strings": strings,
                "info": info,
            },
            indent=0,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{len(strings)} WARN and {len(info)} INFO strings from {', '.join(sources.values())}")


if __name__ == "__main__":
    main()
