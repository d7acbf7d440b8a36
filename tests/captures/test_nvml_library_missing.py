"""Issue 46 (batch Z): a program that cannot load the driver's NVML library (libnvidia-ml.so.1) is one fault,
whichever tool prints it: nvidia-smi's own line, the device plugin's and the GPU operator's go-nvml line 'could
not load NVML library: <dlerror>'. The library is missing from the program's environment (a container or pod
started without the NVIDIA runtime, a driver user-space not installed): a warn on the runtime's configuration,
never critical 'no GPU module is visible' (the modules are not judged by it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

# (file name, its lines): each tool's own words, as it prints them
PRINTED = [
    ("plugin.log",
     'I0312 10:11:02.100200       1 main.go:235] "Starting NVIDIA Device Plugin" version="v0.17.3"\n'
     "I0312 10:11:02.100900       1 main.go:317] Loading configuration.\n"
     'W0312 10:11:02.101500       1 rm.go:108] mig-strategy="single" is only supported with NVML\n'
     "W0312 10:11:02.101520       1 rm.go:109] NVML not detected: could not load NVML library: libnvidia-ml.so.1: "
     "cannot open shared object file: No such file or directory\n"),
    ("smi.txt",
     "$ nvidia-smi\n"
     "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display "
     "Driver is properly installed and present in your system.\n"
     "Please also try adding directory that contains libnvidia-ml.so to your system PATH.\n"),
    ("plugin_elf.log",
     "E0312 10:11:02.101520       1 factory.go:112] Incompatible platform detected\n"
     "E0312 10:11:02.101530       1 main.go:132] error starting plugins: failed to create resource managers: "
     "failed to initialize NVML: could not load NVML library: /usr/lib64/libnvidia-ml.so.1: wrong ELF class: "
     "ELFCLASS32\n"),
]


@pytest.mark.parametrize(("name", "text"), PRINTED)
def test_nvml_library_not_loadable_is_one_warn_for_every_tool(
        name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert main(["doctor", "--from", str(path), "--json"]) != 2
    findings = json.loads(capsys.readouterr().out)["findings"]
    lib = [f for f in findings if f["cause"] == "nvml_library_not_loadable"]
    assert lib and all(f["severity"] == "warn" for f in lib), findings
    assert not [f for f in findings if f["severity"] == "critical"], findings
    assert not [f for f in findings if f["cause"] == "no_modules_visible"], findings
