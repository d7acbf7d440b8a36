"""Issue 46: the SYCL runtime's device listings read as modules. A SYCL runtime lists one entry per (backend,
device): one card is listed once through Level Zero and once through OpenCL (and through CUDA or HIP for NVIDIA's
and AMD's), so entries of one name are one module per card, its backends listed, never one module per entry: a
name's module count is the most entries of it any one backend lists. CPU, FPGA-emulation and other non-GPU entries
are host devices, said, never modules. The forms read:

- sycl-ls (intel/llvm sycl/tools/sycl-ls): '[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Arc(TM)
  A770 Graphics 12.55.8 [1.3.26918]', 2023's '[opencl:gpu:2] Intel(R) OpenCL Graphics, … [23.30.26918.50]', before
  2023 '[opencl:0] GPU : Intel(R) OpenCL HD Graphics 3.0 [21.49.21786]': the bracketed tail is the driver version.
  That older form names the PLATFORM, never the device (one GPU is two lines, OpenCL's and Level Zero's): its GPUs
  are cards of unknown model, at most one per backend device number. A device number listed twice (a listing pasted
  twice) is one device. compute_listing reads sycl-ls through this module: one reader.
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
# a line's head only; its tail (platform, name, '[driver]') is split by hand, never by a pattern that can backtrack
_LS_NEW = lazy(rf"^\s*\[{_BACKEND}:(gpu|cpu|acc|fpga|host|custom)(?::(\d{{1,3}}))?\](?:\[\w{{1,40}}:(\d{{1,3}})\])?\s")
_LS_OLD = lazy(rf"^\s*\[{_BACKEND}:(\d{{1,3}})\]\s{{1,8}}(GPU|CPU|ACC|HOST)\s{{0,8}}:")
# its '[N] ' may be gone: a rank label's shape, peeled by captures/decorations before any reader sees the line
_INFO_ENTRY = lazy(r"^\s*(?:\[\d{1,3}\]\s+)?([^|]{1,120}?)\s*\|\s*([^|]{1,120}?)$")
_INFO_PLATFORM = lazy(r"^\s*Platform:\s*([^|]{1,120}?)\s*\|\s*Device Name:\s*(\S.{0,119}?)$")
_INFO_DRIVER = lazy(r"^\s*Driver Version:\s*(\S{1,60})$")
_INFO_MEMORY = lazy(r"^\s*Global Mem Size:\s*(\d{1,16})$")  # bytes
_LLAMA_FOUND = lazy(r"^\s*found (\d{1,3}) SYCL devices:?$")
_LLAMA_DEVICE = lazy(r"^\s*Device (\d{1,3}):\s*([^,]{1,120}),\s*compute capability (\d{1,2}\.\d{1,2}),?$")
_LLAMA_MEM = lazy(r"\bglobal mem size\s+(\d{1,16})\b")
_LLAMA_ROW = lazy(rf"^\s*\|\s*\d{{1,3}}\s*\|\s*\[{_BACKEND}:(gpu|cpu|acc|fpga|host|custom)(?::\d{{1,3}})?\]\s*\|"
                  r"\s*([^|]{1,120}?)\s*\|\s*([\d.]{1,10})\s*\|(?:[^|]{0,20}\|){3}\s*(\d{1,9})M\s*\|\s*([^|\s]{1,60})"
                  r"\s*\|$")
_LLAMA_HEAD = lazy(r"^\s*\|(?:\s*\||--\|)|^\s*\|\s*ID\s*\|")
_NOT_GPU = lazy(r"Emulation|\bpocl\b|host platform|\bCPU\b|Processor|\bCore\(TM\)|Xeon|EPYC|Ryzen", re.I)
_CPU_NAME = lazy(r"\bCPU\b|Processor|\bCore\(TM\)|\bCore i\d|Xeon|EPYC|Ryzen|Threadripper|Opteron|Neoverse|"
                 r"\bGen Intel\b", re.I)
_GPU_NAME = lazy(r"Graphics|\bGPU\b|NVIDIA|GeForce|Tesla|Quadro|Radeon|Instinct|\bArc\b|\bgfx\d", re.I)
_MAX_ENTRIES = 256
_MAX_LINE = 512  # no listing line is longer; a longer one is read as none (every pattern's work bounded per line)
UNKNOWN = "model not printed"


@dataclass(frozen=True)
class Entry:
    """One (backend, device) the runtime listed."""

    backend: str  # level_zero, opencl, cuda, hip; 'not printed' (llama.cpp's old list)
    kind: str  # gpu, cpu, acc, host, emulated, 'cpu platform', 'unknown type'
    name: str  # the device's name; before 2023 sycl-ls printed its platform's (named False)
    driver: str | None = None
    memory_mib: float | None = None
    no: int = 0
    index: str | None = None  # the backend's device number: one device listed twice (a paste of two runs) is one
    named: bool = True


def _text(ln: Line) -> str:
    text = ln.text.rstrip()
    return text if len(text) <= _MAX_LINE else ""


def _kind(kind: str, name: str) -> str:
    """gpu, cpu, acc or emulated: an entry typed gpu whose name is a CPU's or an emulator's is none (pocl, FPGA
    emulation), never the host CPU either: only an entry typed cpu names that."""
    kind = kind.lower()
    if "emulation" in name.lower() or kind in ("acc", "fpga"):
        return "acc"
    return ("emulated" if _NOT_GPU.search(name) else "gpu") if kind == "gpu" else kind


def _untyped_kind(name: str) -> str:
    """llama.cpp's old list prints no type: a CPU's name is the host CPU, an emulator's none, the rest GPUs."""
    kind = _kind("gpu", name)
    return "cpu" if kind == "emulated" and _CPU_NAME.search(name) else kind


def _driver_tail(rest: str) -> tuple[str, str | None]:
    """(text, driver): sycl-ls ends a line with its driver version in brackets."""
    at = rest.rfind("[")
    if rest.endswith("]") and at >= 0 and len(rest) - at <= 62:
        return rest[:at].rstrip(), rest[at + 1:-1].strip() or None
    return rest, None


def ls_entry(text: str, no: int = 0) -> Entry | None:
    """One sycl-ls line as an entry; None where it is none. Before 2023 ('[opencl:0] GPU : Intel(R) OpenCL HD
    Graphics 3.0 [...]') a line names the PLATFORM, never the device (Intel's docs: one GPU is two such lines)."""
    text = text.rstrip() if len(text) <= _MAX_LINE else ""
    if "[" not in text:
        return None
    if (m := _LS_NEW.match(text)) is not None:
        rest, driver = _driver_tail(text[m.end():].strip())
        platform, comma, name = rest.partition(",")
        if not comma or not 0 < len(platform) <= 120 or "[" in platform or not 0 < len(name.strip()) <= 160:
            return None
        return Entry(m.group(1).removeprefix("ext_oneapi_"), _kind(m.group(2), name), _device_name(name), driver,
                     no=no, index=m.group(4) or m.group(3))
    if (o := _LS_OLD.match(text)) is not None:
        rest, driver = _driver_tail(text[o.end():].strip())
        if not 0 < len(rest) <= 160:
            return None
        kind = _kind(o.group(3), rest)
        return Entry(o.group(1).removeprefix("ext_oneapi_"), "cpu platform" if kind == "cpu" else kind,
                     _OLD_VERSION.sub("", rest)[:120], driver, no=no, index=o.group(2), named=False)
    return None


def _sycl_ls(lines: list[Line]) -> list[Entry]:
    return [e for ln in lines if (e := ls_entry(ln.text, ln.no)) is not None][:_MAX_ENTRIES]


_VERSION_TAIL = lazy(r"\s+(?:OpenCL \d\.\d\b.{0,40}|\d{1,3}(?:\.\d{1,6}){1,3}|\d\.\d\s+NEO)$")
_OLD_VERSION = lazy(r"\s+\d{1,3}(?:\.\d{1,6}){1,3}$")  # a platform's name then its version ('Intel(R) OpenCL 3.0')


def _device_name(text: str) -> str:
    """The device's name without the version sycl-ls prints after it ('… A770 Graphics OpenCL 3.0 NEO', '… 1.3')."""
    return _VERSION_TAIL.sub("", text.strip()).strip()[:120]


def _info_kind(name: str, backend: str, platform: str) -> str:
    """A syclinfo entry's type, which it does not print: CUDA's and HIP's SYCL backends list GPUs only, a CPU's name
    is a CPU's, Level Zero's and an OpenCL 'Graphics' platform's devices are GPUs; else said, not guessed."""
    if "emulation" in name.lower():
        return "acc"
    if backend in ("cuda", "hip"):
        return "gpu"
    if _CPU_NAME.search(name):
        return "cpu"
    gpu = backend == "level_zero" or "graphics" in platform.lower() or _GPU_NAME.search(name)
    return "gpu" if gpu else "unknown type"


def _syclinfo(lines: list[Line]) -> list[Entry]:
    """'[N] NAME | PLATFORM' under 'Available SYCL Devices:'; the details' driver version onto its device."""
    if not any("SYCL Devices" in ln.text for ln in lines):
        return []
    out: list[Entry] = []
    for ln in lines:
        text = _text(ln)
        if "|" in text and (m := _INFO_ENTRY.match(text)) is not None and not m.group(1).startswith("Platform:") \
                and (backend := _platform_backend(m.group(2))) != "not printed":
            out.append(Entry(backend, _info_kind(m.group(1), backend, m.group(2)), m.group(1), no=ln.no,
                             index=str(len(out))))
            if len(out) >= _MAX_ENTRIES:
                break
    return _details(lines, out)


def _details(lines: list[Line], out: list[Entry]) -> list[Entry]:
    """Each 'Platform: … | Device Name: …' block's driver version and memory onto the entries it names, once each
    (a key's entries are found by index, never by walking the list per line)."""
    at: dict[tuple[str, str], list[int]] = {}
    for i, e in enumerate(out):
        at.setdefault((e.backend, e.name), []).append(i)
    platform: tuple[str, str] | None = None
    done: set[tuple[str, tuple[str, str]]] = set()
    for ln in lines:
        text = _text(ln)
        if (p := _INFO_PLATFORM.match(text)) is not None:
            platform = (_platform_backend(p.group(1)), p.group(2))
            continue
        if platform is None or platform not in at:
            continue
        if (d := _INFO_DRIVER.match(text)) is not None and ("driver", platform) not in done:
            done.add(("driver", platform))
            for i in at[platform]:
                out[i] = replace(out[i], driver=d.group(1))
        elif (g := _INFO_MEMORY.match(text)) is not None:
            if ("memory", platform) not in done:
                done.add(("memory", platform))
                for i in at[platform]:
                    out[i] = replace(out[i], memory_mib=int(g.group(1)) / 2**20)
            platform = None  # its last field read of those kept
    return out


def _platform_backend(platform: str) -> str:
    low = platform.lower()
    return "level_zero" if "level-zero" in low or "level zero" in low else "cuda" if "cuda" in low else \
        "hip" if "hip" in low or "amd" in low else "opencl" if "opencl" in low else "not printed"


def _llama(lines: list[Line]) -> list[Entry]:
    out: list[Entry] = []
    for i, ln in enumerate(lines):
        text = _text(ln)
        if (row := _LLAMA_ROW.match(text)) is not None:
            out.append(Entry(row.group(1).removeprefix("ext_oneapi_"), _kind(row.group(2), row.group(3)),
                             row.group(3), row.group(6), float(row.group(5)), ln.no, index=str(len(out))))
        elif "compute capability" in text and (d := _LLAMA_DEVICE.match(text)) is not None:
            mem = _LLAMA_MEM.search(lines[i + 1].text) if i + 1 < len(lines) else None
            name = d.group(2).strip()
            out.append(Entry(f"not printed (version {d.group(3)})", _untyped_kind(name), name,
                             memory_mib=int(mem.group(1)) / 2**20 if mem else None, no=ln.no, index=d.group(1)))
            if mem is not None:
                out.append(Entry("", "detail", "", no=lines[i + 1].no))  # its detail line: claimed, not a device
    return out


@dataclass(frozen=True)
class Cards:
    """The cards of one model (None: the listing printed no model), and the entries that list them."""

    model: str | None
    count: int
    entries: list[Entry]
    backends: list[str]


def cards(entries: list[Entry]) -> list[Cards]:
    """The GPU entries as cards: one card is listed once per backend, so a model's card count is the most distinct
    devices any one backend lists (a device listed twice, a paste of two runs, counted once)."""
    gpus = [e for e in entries if e.kind == "gpu"]
    out: list[Cards] = []
    for model in dict.fromkeys(e.name if e.named else None for e in gpus):
        seen = [e for e in gpus if (e.name if e.named else None) == model]
        devices: dict[str, set[str]] = {}
        for e in seen:
            devices.setdefault(e.backend, set()).add(e.index if e.index is not None else f"line {e.no}")
        out.append(Cards(model, max(len(d) for d in devices.values()), seen, list(devices)))
    return out


def read(lines: list[Line], out: ListedParse) -> None:
    """The GPUs the listing names, one module per card, and its host devices said."""
    listed = (_sycl_ls(lines) or _syclinfo(lines) or _llama(lines))[:_MAX_ENTRIES]
    entries = [e for e in listed if e.kind != "detail"]
    if not entries:
        return
    for group in cards(entries):
        memory = next((e.memory_mib for e in group.entries if e.memory_mib), None)
        for _ in range(group.count):
            out.modules.append(ListedModule(f"SYCL GPU {len(out.modules)} ({group.model or UNKNOWN})",
                                            name=group.model, memory_mib=memory, tool=TOOL))
        drivers = ", ".join(dict.fromkeys(f"{e.backend} {e.driver}" for e in group.entries if e.driver))
        out.notes.append(f"SYCL: {group.model or _unnamed(group)}: {len(group.entries)} entry(ies) through "
                         f"{', '.join(group.backends)}: {group.count} card(s) (one card per device a backend lists, "
                         f"not one per entry); driver: {drivers or 'not printed'}")
    hosts = [e for e in entries if e.kind != "gpu"]
    out.host_cpus += [n for n in dict.fromkeys(e.name for e in hosts if e.kind == "cpu") if n not in out.host_cpus]
    if hosts:
        out.notes.append("SYCL: host device(s), not GPUs: " + "; ".join(dict.fromkeys(
            f"{e.name} ({e.kind}, {e.backend})" for e in hosts)))
    out.driver = out.driver or next((e.driver for e in entries if e.kind == "gpu" and e.driver), None)
    out.claimed |= {e.no for e in listed} | {ln.no for ln in lines if _LLAMA_FOUND.match(_text(ln))
                                               or "SYCL Devices" in ln.text or _LLAMA_HEAD.match(_text(ln))}
    out.kinds.append(TOOL)


def _unnamed(group: Cards) -> str:
    """A GPU sycl-ls named by its platform only (before 2023): its model is not in the listing."""
    platforms = ", ".join(dict.fromkeys(e.name for e in group.entries))
    return f"GPU, {UNKNOWN} (sycl-ls before 2023 names its platform only: {platforms})"
