"""Time to refuse each input limit (docs/limits.md): the hostile input is written to a file and
loaded in-process the way the CLI loads it; the figure is the median of 5 refusals, without the
interpreter's start. Reference measured in the same run: loading the 8-module preset
``hgx-h200-8`` from a file (what accepting a normal spec costs), so the ratio says how a refusal
compares with ordinary work on this machine. Target (issue 17): every refusal under 1 s.

Issue 36 adds the readers of captures and fleet envelopes, each refusal run in a forked process
of its own so its peak memory (ru_maxrss: the interpreter with gpuvet imported, plus what the
refusal held) is its own. Target: under 1 s and at most 200 MiB. The replay readers (watch
--replay FILE, --prometheus-url against an endless answer from a loopback server) the same way.

    python benchmarks/limits_refusal.py
"""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gpuvet.errors import GpuvetError
from gpuvet.node.spec import load_spec
from gpuvet.node.yamlload import MAX_FILE_BYTES
from gpuvet.validate.rules import load_rules


def _bomb() -> str:
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(8):
        text += f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n"
    return text + "name: n\nmodules: {count: 8, model: H100-SXM}\n"


FAULT = "&f {kind: link_degraded, between: [gpu1, nvswitch0], factor: 0.5}"
CASES: dict[str, str] = {
    "modules: count 100,000": "name: big\nmodules: {count: 100000, model: H200-SXM}\n",
    "modules: a list of 5,000": "name: big\nmodules:\n" + "".join(f"  - {{id: g{i}, model: H200-SXM}}\n"
                                                                for i in range(5000)),
    "links: 1,000-module full mesh": "name: m\nmodules: {count: 1000, model: H100-SXM}\n"
                                     "fabric: {kind: full_mesh, link: {kind: nvlink, width: 4, lane_gbps: 25}}\n",
    "endpoints: 1,000 sockets x 64 switches x 16 NICs": "name: m\nmodules: {count: 8, model: H100-SXM}\n"
                                                        "host: {sockets: 1000}\n"
                                                        "pcie: {switches_per_socket: 64, nics_per_switch: 16}\n",
    "sockets: 1,000,000": "name: m\nmodules: {count: 8, model: H100-SXM}\nhost: {sockets: 1000000}\n",
    "faults: 1,000 through aliases": f"base: hgx-h200-8\nfaults: [{FAULT}, " + ", ".join(["*f"] * 999) + "]\n",
    "YAML: alias bomb (10^9 nodes)": _bomb(),
    "YAML: 1,500 aliases": "x: &x 1\ny: [" + ", ".join(["*x"] * 1500) + "]\n",
    "YAML: nested 100,000 deep": "name: " + "[" * 100_000 + "]" * 100_000 + "\n",
    "file: twice the size limit": "name: x\n#" + "a" * (2 * MAX_FILE_BYTES) + "\n",
    "spec: an integer of 5,000 digits": "name: x\nbase: mesh-4\nmodules: {count: " + "9" * 5000 + "}\n",
    "lane_gbps: 1e308": "base: mesh-4\nfabric: {kind: full_mesh, link: {kind: nvlink, width: 4, lane_gbps: 1e308}}\n",
}


def _time(fn: Callable[[], object], repeat: int = 5) -> tuple[float, str]:
    times, outcome = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            fn()
            outcome = "accepted"
        except GpuvetError as exc:
            outcome = exc.what
        times.append(time.perf_counter() - start)
    return statistics.median(times), outcome


def _in_child(fn: Callable[[], object], queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    seconds, outcome = _time(fn, repeat=3)
    queue.put((seconds, outcome, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


def _measured(fn: Callable[[], object]) -> tuple[float, str, float]:
    """(median seconds, what was said, peak MiB) of ``fn`` in a forked process of its own."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_in_child, args=(fn, queue))
    child.start()
    result = queue.get(timeout=120)
    child.join()
    return result  # type: ignore[no-any-return]


def _reader_cases(folder: Path) -> dict[str, Callable[[], object]]:
    """Captures (doctor/topo/inventory --from) and fleet merge inputs, written into ``folder``."""
    from gpuvet.captures.read import read
    from gpuvet.fleet.fold import fold_figures
    from gpuvet.fleet.peers import PeerTable

    short = folder / "short.log.gz"  # 500 MiB of two-byte lines, ~0.5 MB packed
    long = folder / "long.log.gz"  # 400 MiB of 1,000-byte lines
    for path, line, total in ((short, b"a\n", 500 << 20), (long, b"x" * 999 + b"\n", 400 << 20)):
        block = line * ((1 << 20) // len(line))
        with gzip.open(path, "wb", compresslevel=9) as f:
            for _ in range(total // len(block)):
                f.write(block)
    fifo = folder / "fifo.json"
    os.mkfifo(fifo)
    xid = folder / "xid.txt"
    xid.write_text("[ 1.0] NVRM: Xid (PCI:0000:18:00): " + "7" * 5000 + ", pid=1\n")
    wrong = folder / "wrong.json"
    wrong.write_text(json.dumps({"schema_version": 1, "environment": {"node": 17}, "checks": []}))
    return {
        f"capture: .gz of 500 MiB of short lines ({short.stat().st_size / 1e3:.0f} KB)": lambda: read(str(short)),
        f"capture: .gz of 400 MiB of long lines ({long.stat().st_size / 1e3:.0f} KB)": lambda: read(str(long)),
        "capture: /dev/zero": lambda: read("/dev/zero"),
        "capture: a FIFO with no writer": lambda: read(str(fifo)),
        "capture: an Xid of 5,000 digits": lambda: read(str(xid)),
        "fleet merge: /dev/zero": lambda: fold_figures(PeerTable(), "/dev/zero"),
        "fleet merge: a FIFO with no writer": lambda: fold_figures(PeerTable(), str(fifo)),
        "fleet merge: environment.node a number": lambda: fold_figures(PeerTable(), str(wrong)),
    }


def _replay_cases(folder: Path) -> dict[str, Callable[[], object]]:
    """Hostile replay inputs, written to ``folder``; each value refuses one."""
    import http.server
    import threading

    from gpuvet.watch import prom_history
    from gpuvet.watch.readers import read_file

    header = "timestamp, index, temperature.gpu, power.draw [W], clocks_event_reasons.active\n"
    row = "2024/01/16 14:44:16.981, 0, 45, 310.12 W, 0x0000000000000000\n"
    files: dict[str, tuple[str, bytes | None]] = {
        "gzip: 1.5 MB unpacking to 500 MiB of rows": ("bomb.csv.gz", gzip.compress(header.encode()) + gzip.compress(
            row.encode() * (2**20 // len(row)), 9) * 500),
        "a line of 1 MiB without an end": ("long.csv", (header + "2024/01/16 14:44:16.981, 0, " + "4" * 2**20).encode()),
        "Prometheus dump: 300,000 series (a module each)": ("many.prom", "".join(
            f'DCGM_FI_DEV_GPU_TEMP{{gpu="{i}",Hostname="n{i}"}} 50 1700000000000\n' for i in range(300_000)).encode()),
        "Prometheus dump: 300,000 series of one module": ("jobs.prom", "".join(
            f'DCGM_FI_DEV_GPU_TEMP{{gpu="0",Hostname="n",job="{i}"}} 50 1700000000000\n'
            for i in range(300_000)).encode()),
        "query_range JSON nested 100,000 deep": ("nested.json", b"[" * 100_000 + b"]" * 100_000),
        "query_range JSON: 'values': null": ("null.json", json.dumps({"status": "success", "data": {
            "resultType": "matrix", "result": [{"metric": {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "0"},
                                                "values": None}]}}).encode()),
        "query_range JSON: a NaN time after 100,000 points": ("nan.json", ('{"status":"success","data":{"resultType":'
            '"matrix","result":[{"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","gpu":"0"},"values":['
            + ",".join(f'[{1700000000 + 15 * i},"50"]' for i in range(100_000)) + ',[NaN,"1"]]}]}}').encode()),
        "CSV: a 400-digit throttle mask": ("hex.csv", (header + row.replace("0x0000000000000000", "0x" + "f" * 400))
                                           .encode()),
        "a file over 256 MiB (sparse)": ("big.csv", None),
        "a named pipe (FIFO) with no writer": ("pipe.csv", None),
    }
    cases: dict[str, Callable[[], object]] = {}
    for name, (file, data) in files.items():
        path = folder / file
        if data is not None:
            path.write_bytes(data)
        elif file == "big.csv":
            with path.open("w") as f:
                f.write(header)
                f.truncate(2**28 + 1)
        else:
            os.mkfifo(path)
        cases[name] = lambda p=path: read_file(p, 1.0)  # type: ignore[misc]
    cases["/dev/zero"] = lambda: read_file(Path("/dev/zero"), 1.0)

    class Huge(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(80):
                    self.wfile.write(b" " * 2**20)
            except OSError:
                pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Huge)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/api/v1/query_range"
    cases["--prometheus-url: an endless answer (loopback)"] = lambda: prom_history.http_fetch(url)
    return cases


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        reference = folder / "reference.yaml"
        reference.write_text("base: hgx-h200-8\nname: ref\n")
        ref_s, _ = _time(lambda: load_spec(str(reference)))
        print(f"reference: load hgx-h200-8 through a file  {ref_s * 1e3:8.1f} ms")
        worst = 0.0
        for name, text in CASES.items():
            path = folder / "case.yaml"
            path.write_text(text)
            seconds, outcome = _time(lambda p=path: load_spec(str(p)))  # type: ignore[misc]
            worst = max(worst, seconds)
            print(f"{name:52s} {seconds * 1e3:8.1f} ms  ({seconds / ref_s:5.1f}x ref)  {outcome[:70]}")
        rules = folder / "rules.yaml"
        rules.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff" * 1000)
        seconds, outcome = _time(lambda: load_rules(rules))
        worst = max(worst, seconds)
        print(f"{'rules: a binary file':52s} {seconds * 1e3:8.1f} ms  ({seconds / ref_s:5.1f}x ref)  {outcome[:70]}")
        most = 0.0
        for name, fn in _reader_cases(folder).items():
            seconds, outcome, peak = _measured(fn)
            worst, most = max(worst, seconds), max(most, peak)
            print(f"{name:52s} {seconds * 1e3:8.1f} ms  peak {peak:5.0f} MiB  {outcome[:70]}")
        for name, fn in _replay_cases(folder).items():
            seconds, outcome, peak = _measured(fn)
            worst, most = max(worst, seconds), max(most, peak)
            print(f"{'replay: ' + name:52s} {seconds * 1e3:8.1f} ms  peak {peak:5.0f} MiB  {outcome[:70]}")
    print(f"slowest refusal {worst * 1e3:.1f} ms: target < 1000 ms {'met' if worst < 1.0 else 'MISSED'}; "
          f"largest peak of a reader's refusal {most:.0f} MiB: target <= 200 MiB {'met' if most <= 200 else 'MISSED'}")
    return 0 if worst < 1.0 and most <= 200 else 1


if __name__ == "__main__":
    sys.exit(main())
