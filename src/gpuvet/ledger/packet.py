"""The RMA packet: what a vendor's support form asks for, from what the logbook holds of one
module, and a list of what it lacks (with the command that makes each). Nothing private: node
and host names become ``node-1``… unless the caller keeps them."""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from dataclasses import asdict

from pydantic import JsonValue

from gpuvet.ledger.build import Ledger
from gpuvet.ledger.fleet import is_simulated
from gpuvet.ledger.ladders import Ladders
from gpuvet.ledger.model import ModuleHistory, Report
from gpuvet.logbook.records import RunRow

FILES = ("summary.txt", "identity.json", "timeline.json", "findings.json", "figures.json", "kernel_lines.txt",
         "captures.json", "environment.json", "lacking.txt", "MANIFEST.json")
_ENV_KEYS = ("tool_version", "backend", "driver_version", "cuda_driver_version", "nvml_version", "rocm_version",
             "torch_version", "cuda_version", "nccl_version")
_FIRMWARE = ("serial", "vbios_version", "inforom_version", "gsp_firmware")  # a module's, in a run's envelope
_SYSLOG_HOST = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+)?\s*"
                          r"(?P<host>[A-Za-z0-9][A-Za-z0-9.-]*) kernel:")
REPLACED = ("node and host names the logbook keeps for the module's runs and findings",
            "the host field of syslog/journal kernel lines (Dec 6 01:02:03 HOST kernel:) and its FQDN's first label",
            "those names inside captured files' names (HOST-dmesg.txt) and wherever a file is cited "
            "(evidence sources, notes), one pseudonym per host (HOST-smi and HOST.domain are HOST)")


def packet_files(h: ModuleHistory, ledger: Ledger, ladders: Ladders, now_utc: str,
                 keep_hostnames: bool = False) -> dict[str, bytes]:
    """Every file of the packet by name (MANIFEST.json last: each other file's size and sha256)."""
    runs = [ledger.runs[r] for r in h.runs if r in ledger.runs]
    names = host_names(h, ledger)
    body = {
        "identity.json": _json(_identity(h)),
        "timeline.json": _json(timeline(h)),
        "findings.json": _json([_report(r, [] if keep_hostnames else names) for r in h.reports]),
        "figures.json": _json([asdict(f) for f in h.figures]),
        "kernel_lines.txt": _kernel_lines(h),
        "captures.json": _json(_captures(h, ledger, [] if keep_hostnames else names)),
        "environment.json": _json(_environment(runs, h.uuids)),
        "lacking.txt": _lacking(h, runs),
    }
    body["summary.txt"] = summary(h, ladders, runs, now_utc, simulated=is_simulated(h, ledger),
                                  names_replaced=not keep_hostnames and bool(names))
    if not keep_hostnames:
        body = {k: _redact(v, names) for k, v in body.items()}
    files = {k: v.encode("utf-8") for k, v in body.items()}
    manifest = {"module": h.id, "made_utc": now_utc, "hostnames": "kept" if keep_hostnames else "replaced",
                "hostnames_replaced": [] if keep_hostnames else list(REPLACED),
                "files": {k: {"bytes": len(v), "sha256": hashlib.sha256(v).hexdigest()} for k, v in files.items()}}
    files["MANIFEST.json"] = _json(manifest).encode("utf-8")
    return files


def host_names(h: ModuleHistory, ledger: Ledger) -> list[str]:
    """The node and host names a packet replaces, in order of first sight (node-1: where it was first)."""
    runs = [ledger.runs[r] for r in h.runs if r in ledger.runs]
    others = sorted({r.node for r in h.reports} | {f.node for f in h.figures} | {r.host for r in runs}
                    | {r.node for r in runs if r.node})
    return list(dict.fromkeys([p.node for p in h.places] + others + line_hosts(h)))


def write_tar(files: dict[str, bytes], folder: str) -> bytes:
    """The packet as a .tar.gz, each file under ``folder/``, with fixed times (same input, same bytes)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name in FILES:
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size, info.mode, info.mtime = len(files[name]), 0o644, 0
            tar.addfile(info, io.BytesIO(files[name]))
    return out.getvalue()


def _json(data: object) -> str:
    return json.dumps(data, indent=1, sort_keys=False, default=str) + "\n"


def _identity(h: ModuleHistory) -> dict[str, JsonValue]:
    return {"id": h.id, "serial": h.serial, "uuids": list(h.uuids), "model": h.model,
            "places": [asdict(p) for p in h.places]}


def timeline(h: ModuleHistory) -> list[dict[str, JsonValue]]:
    """Places, reports and figures in time order: what happened to the module, wherever it was."""
    items: list[dict[str, JsonValue]] = [
        {"time_utc": p.first_utc, "what": "placed", "node": p.node, "module": p.slot, "bus_id": p.bus_id,
         "until_utc": p.last_utc} for p in h.places]
    items += [{"time_utc": r.time_utc, "what": r.source, "node": r.node, "module": r.slot, "uuid": r.uuid,
               "fault": r.fault, "severity": r.severity, "message": r.message, "run_id": r.run_id} for r in h.reports]
    items += [{"time_utc": f.time_utc, "what": "figure", "node": f.node, "module": f.slot, "name": f.name,
               "value": f.value, "unit": f.unit, "expected": f.expected, "pct_of_expected": f.pct_of_expected,
               "verdict": f.verdict, "run_id": f.run_id} for f in h.figures]
    return sorted(items, key=lambda i: str(i["time_utc"]))


def _kernel_lines(h: ModuleHistory) -> str:
    """Each kernel line kept for the module once, with the first report that kept it (health and
    doctor keep the same line of one log)."""
    lines: dict[str, str] = {}
    for r in h.reports:
        kept = r.data.get("kernel_lines")
        for ln in kept if isinstance(kept, list) else []:
            if isinstance(ln, str):
                lines.setdefault(ln, f"{r.time_utc} {r.node}/{r.slot}: {ln}")
    return "\n".join(lines.values()) + "\n" if lines else "(no kernel line was kept for this module)\n"


def line_hosts(h: ModuleHistory) -> list[str]:
    """The host field of the syslog or journal kernel lines kept for the module
    (``Dec 6 01:02:03 gpu-node07.corp.example.com kernel: …``), each FQDN with its first label
    (``gpu-node07``, as capture files are often named): names to replace, the longest first."""
    out: list[str] = []
    for r in h.reports:
        kept = r.data.get("kernel_lines")
        for ln in kept if isinstance(kept, list) else []:
            m = _SYSLOG_HOST.match(ln) if isinstance(ln, str) else None
            if m:
                host = m.group("host")
                out += [host, host.split(".")[0]] if "." in host else [host]
    return list(dict.fromkeys(out))


def _environment(runs: list[RunRow], uuids: list[str]) -> list[dict[str, JsonValue]]:
    """Each run that saw the module: the node's software (driver, CUDA/ROCm, NVML, the runtime's
    versions) and the module as that run found it (slot, bus id, serial, VBIOS, InfoROM, GSP)."""
    out = []
    for r in runs:
        env = r.envelope.to_json()
        mine = _module_entry(r, uuids)
        out.append({"run_id": r.run_id, "kind": r.kind, "time_utc": r.started_utc, "node": r.node, "host": r.host,
                    "simulated": r.simulated, **{k: env.get(k) for k in _ENV_KEYS if env.get(k) is not None},
                    "module": mine})
    return out


def _module_entry(r: RunRow, uuids: list[str]) -> dict[str, JsonValue]:
    for m in r.envelope.modules:
        if m.uuid in uuids:
            return {k: v for k, v in m.to_json().items() if k in ("id", "bus_id", "model", *_FIRMWARE) and v is not None}
    return {}


def _report(r: Report, names: list[str]) -> dict[str, JsonValue]:
    """A report as kept, the captured files it names with a host's name in theirs replaced."""
    files = r.data.get("captures")
    out: dict[str, JsonValue] = asdict(r)
    if isinstance(files, list):
        out["data"] = {**r.data, "captures": [_redact(str(f), names, within_names=True) for f in files]}
    return out


def _captures(h: ModuleHistory, ledger: Ledger, names: list[str]) -> list[dict[str, JsonValue]]:
    """Each finding that came from captured files (doctor --from): the files and the lines of them
    that were its evidence; a run's capture list says what each file was read as. A file named
    after a host (``node07-dmesg.txt``) has that name replaced too, where ``names`` are to go."""
    out: list[dict[str, JsonValue]] = []
    for r in h.reports:
        files = r.data.get("captures")
        if not isinstance(files, list) or not files:
            continue
        run = ledger.runs.get(r.run_id)
        read = run.envelope.to_json().get("captures") if run else None
        listed = read if isinstance(read, list) else [{"file": f} for f in files]
        listed = [{**f, "file": _redact(str(f.get("file")), names, within_names=True)} if isinstance(f, dict) else f
                  for f in listed]
        out.append({"time_utc": r.time_utc, "node": r.node, "module": r.slot, "source": r.source, "fault": r.fault,
                    "files": listed,
                    "kernel_lines": r.data.get("kernel_lines", []), "evidence": r.data.get("evidence", [])})
    return out


def _lacking(h: ModuleHistory, runs: list[RunRow]) -> str:
    have = {k for r in runs for k, v in r.envelope.to_json().items() if v is not None}
    have |= {k for r in runs for k in _module_entry(r, h.uuids)}
    lines = ["What a vendor's RMA form asks for that this packet does not hold, and how to add it:",
             "- nvidia-bug-report.log.gz: gpuvet does not keep it. On the node: sudo nvidia-bug-report.sh",
             "- dcgmi diag -r 3 results: gpuvet does not keep them. On the node: dcgmi diag -r 3 -j > dcgm-diag.json"]
    if "vbios_version" not in have:
        lines.append("- VBIOS version: not kept by gpuvet. On the node: nvidia-smi -q -i <bus id> | grep -i vbios")
    if "inforom_version" not in have:
        lines.append("- InfoROM / firmware versions: not kept. On the node: nvidia-smi -q -i <bus id> -d INFOROM")
    if not h.serial:
        lines.append("- Board serial: no run read it. On the node: nvidia-smi --query-gpu=serial --format=csv")
    if "driver_version" not in have:
        lines.append("- Driver version: no run of this module kept it. On the node: nvidia-smi")
    if not h.figures:
        lines.append("- Benchmark figures against design: no validate run measured this module (gpuvet validate)")
    if any(r.simulated for r in runs):
        lines.append("- NOTE: some runs were on a SIMULATED node; their readings come from a model, not hardware")
    return "\n".join(lines) + "\n"


def summary(h: ModuleHistory, ladders: Ladders, runs: list[RunRow], now_utc: str, simulated: bool = False,
            names_replaced: bool = False) -> str:
    """One page, in the order a support form asks: product, identity, failure, history, done. A module
    only simulated runs saw says so on its second line: the packet is a model's, nothing to send."""
    driver = next((r.envelope.driver_version for r in reversed(runs) if r.envelope.driver_version), None)
    firmware = next((e for r in reversed(runs) if (e := _module_entry(r, h.uuids)).get("vbios_version")), {})
    first = h.occurrences[0] if h.occurrences else None
    lines = [f"RMA request: {h.model or 'unknown model'} (made by gpuvet on {now_utc[:10]})",
             *(["SIMULATED: every run that saw this module was on a simulated node (a model, not hardware)"]
               if simulated else []), "",
             f"Product / model:   {h.model or 'not read'}",
             f"Serial number:     {h.serial or 'not read (see lacking.txt)'}",
             f"UUID(s):           {', '.join(h.uuids)}",
             f"PCI bus id:        {h.places[-1].bus_id if h.places and h.places[-1].bus_id else 'not read'}",
             f"Where now:         {h.where}" + (" (host names replaced: --keep-hostnames keeps them)"
                                                   if names_replaced else ""),
             f"Driver version:    {driver or 'not kept (see lacking.txt)'}",
             f"VBIOS / InfoROM:   {firmware.get('vbios_version') or 'not read (see lacking.txt)'} / "
             f"{firmware.get('inforom_version') or 'not read'}",
             "", "Failure description:"]
    if h.step:
        lines.append(f"  Current action: {h.step.step} ({h.step.why})")
    for o in h.occurrences[-12:]:
        lines.append(f"  {o.first_utc[:16]}  {o.node}/{o.slot or '-'}  {ladders.ladder(o.fault).name} "
                     f"[{o.fault}] ({o.reports} report(s))")
    if first is None:
        lines.append("  No finding is kept for this module.")
    lines += ["", f"History: {len(h.places)} place(s), {len(h.occurrences)} fault occurrence(s), "
              f"{len(h.figures)} benchmark figure(s), {len(h.runs)} run(s) that saw it.",
              "Attached: identity.json, timeline.json, findings.json (with evidence), figures.json,",
              "kernel_lines.txt, captures.json (captured files and their evidence lines), environment.json",
              "(driver, CUDA/ROCm, VBIOS, InfoROM, GSP); lacking.txt lists what is still to be added."]
    low = [f for f in h.figures if f.verdict == "fail"]
    if low:
        lines.append(f"Benchmark: {len(low)} figure(s) failed against design, e.g. {low[-1].name} = "
                     f"{low[-1].value} {low[-1].unit or ''} (expected {low[-1].expected}).")
    return "\n".join(lines) + "\n"


def pseudonyms(names: list[str]) -> dict[str, str]:
    """Each name's ``node-N``, N in order of first sight, ONE per host: a name that is another one
    with a suffix (``prodhost99-smi``, ``prodhost99.example.com``, beside ``prodhost99``) is that
    host, so a packet never calls one machine node-1 and node-3. No pseudonym is a real name (a
    second pass could not rename it again)."""
    real = [n for n in dict.fromkeys(names) if n]
    group: dict[str, str] = {}
    alias: dict[str, str] = {}
    n = 0
    for name in real:
        root = min((r for r in real if name == r or (name.startswith(r) and name[len(r)] in "-_.")), key=len)
        if root not in group:
            n += 1
            while f"node-{n}" in real:
                n += 1
            group[root] = f"node-{n}"
        alias[name] = group[root]
    return alias


def _redact(text: str, names: list[str], within_names: bool = False) -> str:
    """Each name as its pseudonym, the longest first and in one pass: where a word or a file name
    starts (``prodhost42.txt (nvidia-smi -q)``, ``prodhost99-kern.log``, a kernel line's host) but
    not inside a word (``node1`` in ``node10``, ``smi`` in ``nvidia-smi``); ``within_names`` (a
    captured file's own name), also after a separator (``dmesg-node07.txt``)."""
    alias = pseudonyms(names)
    if not alias:
        return text
    either = "|".join(re.escape(n) for n in sorted(alias, key=len, reverse=True))
    before = r"[A-Za-z0-9]" if within_names else r"[\w.-]"
    return re.sub(rf"(?<!{before})(?:{either})(?![A-Za-z0-9])", lambda m: alias[m.group(0)], text)
