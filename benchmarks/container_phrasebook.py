"""Issue 46 (GEN2): the layer between the driver and the job, read as a class: nvidia-container-cli's stage errors
(libnvidia-container), the NVIDIA Container Toolkit's runtime and hook, docker's and podman's GPU and CDI errors, a
pod's events (kubelet's device manager, the scheduler, containerd's runtime lookup), the NVIDIA device plugin's klog
lines, the GPU operator's validator and Slurm's GRES errors. benchmarks/data/container_phrasebook.json holds each
message as its tool prints it, with the sources it was taken from, and the causes (faults.yaml) an engineer would
name for it ([] for a healthy line); IGC added nvidia-smi's and NVML's words as a container's shell shows them
(tool 'shell'). Each message is framed as captures show it: bare, behind the tool's own prefix
or the outer tool that relays it (docker's daemon error, a pod event, klog, logrus, slurmctld's stamp), in a
journal line, and quoted by a poster; ``gpuvet doctor --from`` (in-process) reads each, and a message counts as
read as its class (an expected cause found), generic (another finding only), missed (read, no finding) or refused
(exit 2). A healthy line must give no finding and no refusal.

    .venv/bin/python benchmarks/container_phrasebook.py [--show generic,missed,refused,false]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import LOUD, doctor

DATA = Path(__file__).parent / "data" / "container_phrasebook.json"
STAMP = "Mar 04 10:12:01 gpu-node-3"
DOCKER = (
    "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
    "runtime create failed: runc create failed: unable to start container process: error during container init: "
    "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'"
)
EVENT = (
    "  Warning  Failed     7s (x3 over 38s)  kubelet            Error: failed to create containerd task: failed to "
    "create shim task: OCI runtime create failed: runc create failed: unable to start container process: error "
    "during container init: error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode "
    "as 'legacy'"
)
EVENTS_HEAD = "Events:\n  Type     Reason     Age   From     Message\n  ----     ------     ----  ----     -------\n"


def _quoted(text: str) -> str:
    said = text.splitlines()[-2 if text.count("\n") >= 2 else 0]
    return f"Since Monday my node keeps printing '{said.strip()}' and the job dies."  # runtime_phrasebook's framing


def framings(tool: str, text: str) -> dict[str, str]:
    """The message as each kind of capture shows it."""
    first = text.splitlines()[0] if text else ""
    if tool == "nvc":
        return {
            "bare": text,
            "docker": f"{DOCKER}\n{text}: unknown.",
            "pod_event": f"{EVENTS_HEAD}{EVENT}\n{text}: unknown",
            "journal": f'{STAMP} dockerd[1123]: time="2026-03-04T10:12:01.123456789Z" level=error msg="error '
            f'waiting for container: {text}: unknown"',
            "quoted": _quoted(text),
        }
    if tool == "event":
        message = text.split("  ")[-1]
        return {"bare": f"  {text}", "pod_events": f"{EVENTS_HEAD}  {text}", "quoted": _quoted(message)}
    if tool in ("klog", "logrus", "print"):
        shown = {
            "klog": f"E0304 10:12:01.123456       1 factory.go:99] {first}",
            "logrus": f'time="2026-03-04T10:12:01Z" level=warning msg="{first}"',
            "print": f"$ kubectl -n gpu-operator logs nvidia-operator-validator-ndtzv -c driver-validation\n{text}",
        }
        journal = "\n".join(f"{STAMP} kubelet[2211]: {line}" for line in shown[tool].splitlines()[tool == "print" :])
        return {"bare": text, tool: shown[tool], "journal": journal, "quoted": _quoted(text)}
    if tool == "shell":  # IGC: nvidia-smi's own output inside a container, as a poster's session shows it
        out = f"{text}\n" if text else ""  # an empty output: the next prompt follows the command's line
        return {
            "docker_run": f"$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n{out}$",
            "docker_exec": f"$ docker exec -it trainer nvidia-smi\n{out}$",
            "compose_shell": f"# docker compose exec app bash\nroot@app:/# nvidia-smi\n{out}root@app:/#",
            "kubectl_exec": f"$ kubectl exec -it trainer-0 -- nvidia-smi\n{out}$",
            "podman_cdi": f"$ podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi\n{out}$",
            "quoted": f"Inside the container nvidia-smi prints '{text}' while on the host it works."
            if text
            else "Inside the container nvidia-smi prints nothing at all, on the host it works.",
        }
    if tool == "slurm":
        out = {"bare": text, "quoted": _quoted(text)}
        if not text.startswith("Reason="):
            out |= {
                "slurmctld": f"[2026-03-04T10:12:01.123] error: {text}",
                "journal": f"{STAMP} slurmctld[2211]: error: {text}",
            }
        else:
            out["scontrol"] = f"NodeName=gpu01 Arch=x86_64\n   Gres=gpu:a100:4\n   State=IDLE+DRAIN\n   {text}"
        return out
    if tool == "ok" and "\n" in text:  # a listing: as the tool prints it
        return {"bare": text, "kubectl": f"$ kubectl describe node gpu-node-3\n{text}"}
    if tool == "ok":
        return {
            "bare": text,
            "klog": f"I0304 10:12:01.123456       1 main.go:88] {text}",
            "logrus": f'time="2026-03-04T10:12:01Z" level=info msg="{text}"',
            "journal": f"{STAMP} kubelet[2211]: {text}",
        }
    return {"bare": text, "journal": f"{STAMP} dockerd[1123]: {text}", "quoted": _quoted(text)}


def causes(text: str, where: Path) -> set[str] | None:
    """The causes doctor --from finds in ``text`` at warn or above; None where it refused the file."""
    code, found = doctor(text, where)
    if code == 2:
        return None
    return {f["cause"] for f in found if f["severity"] in LOUD}


def verdict(expected: list[str], found: set[str] | None) -> str:
    if found is None:
        return "refused"
    if not expected:
        return "clean" if not found else "false"
    return "class" if found & set(expected) else ("generic" if found else "missed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="generic,missed,refused,false", help="the verdicts to list, comma-separated")
    args = parser.parse_args(argv)
    show = set(args.show.split(","))
    data = json.loads(DATA.read_text(encoding="utf-8"))
    tally: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for source, tool, text, expected in data["messages"]:
            for frame, framed in framings(tool, text).items():
                found = causes(framed, where)
                v = verdict(expected, found)
                tally.setdefault(source, Counter())[v] += 1
                if v in show:
                    print(f"{v:8} {source:6} {frame:10} {text[:90]!r} -> {sorted(found or ())} (want {expected})")
    kinds = ("class", "generic", "missed", "refused", "clean", "false")
    print(f"{'source':<8}" + "".join(f"{k:>9}" for k in kinds))
    for source, c in tally.items():
        print(f"{source:<8}" + "".join(f"{c[k]:>9}" for k in kinds))
    total = sum(tally.values(), Counter())
    print(f"{'all':<8}" + "".join(f"{total[k]:>9}" for k in kinds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
