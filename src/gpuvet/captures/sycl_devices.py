"""Issue 46: the SYCL runtime's device listings read as modules. A SYCL runtime lists one entry per (backend,
device): one card is listed once through Level Zero and once through OpenCL (and through CUDA or HIP for NVIDIA's
and AMD's), so entries of one name are one module per card, its backends listed, never one module per entry: a
name's module count is the most entries of it any one backend lists. CPU, FPGA-emulation and other non-GPU entries
are host devices, said, never modules. The forms read:

- sycl-ls (intel/llvm sycl/tools/sycl-ls): '[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Arc(TM)
  A770 Graphics 12.55.8 [1.3.26918]', 2023's '[opencl:gpu:2] Intel(R) OpenCL Graphics, … [23.30.26918.50]', before
  2023 '[opencl:0] GPU : Intel(R) OpenCL HD Graphics 3.0 [21.49.21786]': the bracketed tail is the driver version.
- syclinfo-style listings: 'Available SYCL Devices:' over '[N] NAME | PLATFORM', and a device's details below
  ('Platform: … | Device Name: …', 'Driver Version: 1.6.33890').
- llama.cpp's ls-sycl-device / ggml_sycl_init: 'found N SYCL devices:' over '  Device N: NAME, compute capability
  X.Y,' and its next line ('max compute_units …, global mem size BYTES'; the backend not printed, the version is
  the backend's API version), and its later table '|ID| Device Type| Name|Version|…|Global mem size| Driver version|'
  with rows '| 0| [level_zero:gpu:0]| Intel Arc A770 Graphics| 1.3| 512| 1024| 32| 16225M| 1.3.27642|'."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

TOOL = "SYCL device list"
MARKERS = ("[opencl:", "[level_zero:", "[ext_oneapi_", "[cuda:", "[hip:", "SYCL devices", "SYCL Devices",
           "Driver version|")
_BACKEND = r"((?:ext_oneapi_)?(?:level_zero|opencl|cuda|hip)|native_cpu|host)"
_LS_NEW = lazy(rf"^\s*\[{_BACKEND}:(gpu|cpu|acc|fpga|host|custom)(?::\d{{1,3}})?\](?:\[\w{{1,20}}:\d{{1,3}}\])?"
               r"\s+([^,\[]{1,120}),\s*([^\[]{1,160}?)\s*(?:\[([^\]]{1,60})\])?\s*$")
_LS_OLD = lazy(rf"^\s*\[{_BACKEND}:\d{{1,3}}\]\s+(GPU|CPU|ACC|HOST)\s*:\s*([^\[]{{1,160}}?)\s*(?:\[([^\]]{{1,60}})\])?"
               r"\s*$")
# its '[N] ' may be gone: a rank label's shape, peeled by captures/decorations before any reader sees the line
_INFO_ENTRY = lazy(r"^\s*(?:\[\d{1,3}\]\s+)?([^|]{1,120}?)\s*\|\s*([^|]{1,120}?)\s*$")
_INFO_PLATFORM = lazy(r"^\s*Platform:\s*([^|]{1,120}?)\s*\|\s*Device Name:\s*(\S.{0,119}?)\s*$")
_INFO_DRIVER = lazy(r"^\s*Driver Version:\s*(\S{1,60})\s*$")
_INFO_MEMORY = lazy(r"^\s*Global Mem Size:\s*(\d{1,16})\s*$")  # bytes
_LLAMA_FOUND = lazy(r"^\s*found (\d{1,3}) SYCL devices:?\s*$")
_LLAMA_DEVICE = lazy(r"^\s*Device (\d{1,3}):\s*([^,]{1,120}),\s*compute capability (\d{1,2}\.\d{1,2}),?\s*$")
_LLAMA_MEM = lazy(r"\bglobal mem size\s+(\d{1,16})\b")
_LLAMA_ROW = lazy(rf"^\s*\|\s*\d{{1,3}}\s*\|\s*\[{_BACKEND}:(gpu|cpu|acc|fpga|host|custom)(?::\d{{1,3}})?\]\s*\|"
                  r"\s*([^|]{1,120}?)\s*\|\s*([\d.]{1,10})\s*\|(?:[^|]{0,20}\|){3}\s*(\d{1,9})M\s*\|\s*([^|\s]{1,60})"
                  r"\s*\|\s*$")
_LLAMA_HEAD = lazy(r"^\s*\|(?:\s*\||--\|)|^\s*\|\s*ID\s*\|")
_NOT_GPU = lazy(r"Emulation|\bpocl\b|host platform|\bCPU\b|Processor|\bCore\(TM\)|Xeon|EPYC|Ryzen", re.I)
_MAX_ENTRIES = 256


@dataclass(frozen=True)
class Entry:
    """One (backend, device) the runtime listed."""

    backend: str  # level_zero, opencl, cuda, hip; 'not printed' (llama.cpp's old list)
    kind: str  # gpu, cpu, acc, host
    name: str
    driver: str | None = None
    memory_mib: float | None = None
    no: int = 0


def _kind(kind: str, name: str) -> str:
    """gpu, cpu or acc: an entry typed gpu whose name is a CPU's or an emulator's is not one (pocl, FPGA emulation)."""
    kind = kind.lower()
    if "emulation" in name.lower() or kind in ("acc", "fpga"):
        return "acc"
    return "gpu" if kind == "gpu" and not _NOT_GPU.search(name) else "cpu" if kind in ("gpu", "cpu") else kind


def _sycl_ls(lines: list[Line]) -> list[Entry]:
    out: list[Entry] = []
    for ln in lines:
        if "[" not in ln.text:
            continue
        if (m := _LS_NEW.match(ln.text)) is not None:
            out.append(Entry(m.group(1).removeprefix("ext_oneapi_"), _kind(m.group(2), m.group(4)),
                             _device_name(m.group(4)), m.group(5), no=ln.no))
        elif (o := _LS_OLD.match(ln.text)) is not None:
            kind = _kind(o.group(2), o.group(3))  # before 2023 a CPU entry names its platform, not the CPU
            out.append(Entry(o.group(1).removeprefix("ext_oneapi_"), "cpu platform" if kind == "cpu" else kind,
                             _device_name(o.group(3)), o.group(4), no=ln.no))
    return out


_VERSION_TAIL = lazy(r"\s+(?:OpenCL \d\.\d\b.*|\d{1,3}(?:\.\d{1,6}){1,3}|\d\.\d\s+NEO)\s*$")


def _device_name(text: str) -> str:
    """The device's name without the version sycl-ls prints after it ('… A770 Graphics OpenCL 3.0 NEO', '… 1.3')."""
    return _VERSION_TAIL.sub("", text).strip()[:120]


def _syclinfo(lines: list[Line]) -> list[Entry]:
    """'[N] NAME | PLATFORM' under 'Available SYCL Devices:'; the details' driver version onto its device."""
    if not any("SYCL Devices" in ln.text for ln in lines):
        return []
    out = [Entry(_platform_backend(m.group(2)), _kind("gpu" if "Graphics" in m.group(1) or "GPU" in m.group(1)
                                                      else "cpu", m.group(1)), m.group(1), no=ln.no)
           for ln in lines if "|" in ln.text and (m := _INFO_ENTRY.match(ln.text)) is not None
           and not m.group(1).startswith("Platform:") and _platform_backend(m.group(2)) != "not printed"]
    platform: tuple[str, str] | None = None
    for ln in lines:
        if (p := _INFO_PLATFORM.match(ln.text)) is not None:
            platform = (_platform_backend(p.group(1)), p.group(2))
        elif platform is not None and (d := _INFO_DRIVER.match(ln.text)) is not None:
            out = [replace(e, driver=d.group(1)) if (e.backend, e.name) == platform and e.driver is None else e
                   for e in out]
        elif platform is not None and (g := _INFO_MEMORY.match(ln.text)) is not None:
            out = [replace(e, memory_mib=int(g.group(1)) / 2**20) if (e.backend, e.name) == platform else e
                   for e in out]
            platform = None  # its last field read of those kept
    return out


def _platform_backend(platform: str) -> str:
    low = platform.lower()
    return "level_zero" if "level-zero" in low or "level zero" in low else "cuda" if "cuda" in low else \
        "hip" if "hip" in low or "amd" in low else "opencl" if "opencl" in low else "not printed"


def _llama(lines: list[Line]) -> list[Entry]:
    out: list[Entry] = []
    for i, ln in enumerate(lines):
        if (row := _LLAMA_ROW.match(ln.text)) is not None:
            out.append(Entry(row.group(1).removeprefix("ext_oneapi_"), _kind(row.group(2), row.group(3)),
                             row.group(3), row.group(6), float(row.group(5)), ln.no))
        elif "compute capability" in ln.text and (d := _LLAMA_DEVICE.match(ln.text)) is not None:
            mem = _LLAMA_MEM.search(lines[i + 1].text) if i + 1 < len(lines) else None
            name = d.group(2).strip()
            out.append(Entry(f"not printed (version {d.group(3)})", _kind("gpu", name), name,
                             memory_mib=int(mem.group(1)) / 2**20 if mem else None, no=ln.no))
            if mem is not None:
                out.append(Entry("", "detail", "", no=lines[i + 1].no))  # its detail line: claimed, not a device
    return out


def read(lines: list[Line], out: ListedParse) -> None:
    """The GPUs the listing names, one module per card, and its host devices said."""
    listed = (_sycl_ls(lines) or _syclinfo(lines) or _llama(lines))[:_MAX_ENTRIES]
    entries = [e for e in listed if e.kind != "detail"]
    if not entries:
        return
    gpus = [e for e in entries if e.kind == "gpu"]
    names = list(dict.fromkeys(e.name for e in gpus))
    for name in names:
        seen = [e for e in gpus if e.name == name]
        backends = list(dict.fromkeys(e.backend for e in seen))
        cards = max(sum(e.backend == b for e in seen) for b in backends)
        memory = next((e.memory_mib for e in seen if e.memory_mib), None)
        for _ in range(cards):
            out.modules.append(ListedModule(f"SYCL GPU {len(out.modules)} ({name})", name=name, memory_mib=memory,
                                            tool=TOOL))
        drivers = ", ".join(f"{e.backend} {e.driver}" for e in seen if e.driver) or "not printed"
        out.notes.append(f"SYCL: {name}: {len(seen)} entry(ies) through {', '.join(backends)}: {cards} card(s) "
                         f"(one card per backend entry, not one per entry); driver: {drivers}")
    hosts = [e for e in entries if e.kind != "gpu"]
    out.host_cpus += [n for n in dict.fromkeys(e.name for e in hosts if e.kind == "cpu") if n not in out.host_cpus]
    if hosts:
        out.notes.append("SYCL: host device(s), not GPUs: " + "; ".join(dict.fromkeys(
            f"{e.name} ({e.kind}, {e.backend})" for e in hosts)))
    out.driver = out.driver or next((e.driver for e in gpus if e.driver), None)
    out.claimed |= {e.no for e in listed} | {ln.no for ln in lines if _LLAMA_FOUND.match(ln.text)
                                               or "SYCL Devices" in ln.text or _LLAMA_HEAD.match(ln.text)}
    out.kinds.append(TOOL)
