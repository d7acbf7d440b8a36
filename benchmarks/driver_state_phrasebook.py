"""Issue 46 (R6B): how NVIDIA's user-space stack says the driver is absent, mismatched or in a bad state, read as a
class: nvidia-smi's own words and NVML's nvmlErrorString texts after 'Failed to initialize NVML:', nvidia-smi's
'No devices were found' (exit 6) as a script captures it, nvidia-container-cli's and nvidia-docker v1's relays of
NVML, and the CUDA runtime's errors bare and after a suspend/resume the text shows. benchmarks/data/
driver_state_phrasebook.json holds each message with its sources and the cause an engineer would name (null for a
healthy line). Each is framed as captures show it; ``gpuvet doctor --from`` (in-process) reads each, and a framing
counts as class (the cause found at warn or above), generic (another finding only), missed (read, no finding) or
refused (exit 2). A healthy line must give no finding at warn or above and no refusal.

    .venv/bin/python -m benchmarks.driver_state_phrasebook [--show generic,missed,refused,false]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.support.phrasebook import run_families

DATA = Path(__file__).parent / "data" / "driver_state_phrasebook.json"
STAMP = "Dec 07 10:12:01 gpu-node-3"
DOCKER = (
    "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
    "runtime create failed: runc create failed: unable to start container process: error during container init: "
    "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'"
)
SUSPEND = {  # the text shows the machine suspended and resumed before the error
    "kernel": f"{STAMP} kernel: PM: suspend entry (deep)\n{STAMP} kernel: PM: suspend exit\n",
    "poster": "I closed the lid (suspend) and after resume the model no longer runs:\n",
    "hibernate": "After waking the PC from hibernate, ollama prints:\n",
}


def framings(family: str, text: str) -> dict[str, str]:
    """The message as each kind of capture shows it."""
    first = text.splitlines()[0]
    if family == "smi":
        return {
            "bare": text,
            "prompt": f"$ nvidia-smi\n{text}\n$",
            "sudo_L": f"user@node:~$ sudo nvidia-smi -L\n{text}",
            "quoted": f"Since the update nvidia-smi on my node prints `{first}` and nothing else.",
        }
    if family == "var":  # a CI script's trace of nvidia-smi's answer and exit status
        return {
            "xtrace": f"+ INSTALLED_DRIVER_VERSION='{text}'\n+ NVIDIA_SMI_STATUS=6",
            "assign": f'DRIVER_VERSION="{text}"',
        }
    if family == "nvc":
        return {
            "bare": text,
            "docker": f"{DOCKER}\n{text}: unknown.",
            "quoted": f"Since Monday my node keeps printing '{text}' and the job dies.",
        }
    if family == "nvd":  # nvidia-docker v1's and its plugin's log prefix
        return {
            "nvidia_docker": f"nvidia-docker | 2017/12/21 05:04:46 {text}",
            "plugin": f"nvidia-docker-plugin | 2017/12/21 05:04:46 {text}",
        }
    if family == "cuda":
        return {
            "bare": f"CUDA error: {text}",
            "torch": f"RuntimeError: CUDA error: {text}",
            "ggml": f"CUDA error: {text}\n  current device: 0, in function ggml_backend_cuda_synchronize at ggml.cu:2294",
        }
    if family == "resume":
        return {name: f"{pre}CUDA error: {text}" for name, pre in SUSPEND.items()}
    if family == "resume_log":  # a runtime's own log line after the resume
        return {name: f"{pre}{text}" for name, pre in SUSPEND.items()}
    if family == "log":
        return {"bare": text, "journal": f"{STAMP} ollama[812]: {text}"}
    lines = text.splitlines()
    return {
        "bare": text,
        "dmesg": "\n".join(f"[    5.39653{i}] {line}" for i, line in enumerate(lines)),
        "journal": "\n".join(f"{STAMP} kernel: {line}" for line in lines),
    }


def main(argv: list[str] | None = None) -> int:
    return run_families(__doc__, argv, DATA, framings, frame_width=13)


if __name__ == "__main__":
    raise SystemExit(main())
