"""The GPUs a compute API's own listing tool prints (issue 46): ``clinfo`` (its long form's ``Device Name`` blocks
and ``clinfo -l``'s tree), ``hashcat -I`` (``Backend Device ID #N`` blocks, since v6; ``Device ID #N`` before)
and hashcat's start-up list (``* Device #1: NAME, 23336/24259 MB, 82MCU``), and ``vulkaninfo`` (``--summary``'s
``GPU0:`` blocks, the full report's ``GPU id : 0 (NAME)``). A device of CPU type (pocl, llvmpipe, Intel's CPU
runtime) is not a GPU and is left out; a device another API already listed (hashcat's alias) is listed once."""

from __future__ import annotations

import re

from gpuvet.captures.runtime_devices import RuntimeDevice, mib, vendor_of
from gpuvet.captures.text import Line

_BUS = re.compile(r"\b((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b")
_CPU_NAME = re.compile(r"\bCPU\b|Processor|pthread|\bcpu-|llvmpipe|lavapipe|SwiftShader|FPGA Emulation"
                       r"|Core\(TM\)|\bXeon\b|\bEPYC\b", re.I)  # R3B: Intel's OpenCL CPU device: 'Intel(R) Core(TM) i9'…

# clinfo's long form: 'Key<two spaces or more>value', the keys it prints for a device
_CLINFO = re.compile(r"^\s*(Device Name|Device Vendor|Device Type|Driver Version|Device Board Name \(AMD\)|"
                     r"Device Topology \((?:NV|AMD)\)|Device PCI bus info \(KHR\)|Global memory size|Platform Name|"
                     r"Max compute units)"
                     r"\s{2,}([^\s:].*?)\s*$")  # 'Device Name   : [..]' is amdgpu_top -d's (rocm_tools), not clinfo's
_CLINFO_TREE = re.compile(r"^\s*[`+|\\]--\s*Device #(\d{1,3}): (.+?)\s*$")


def _clinfo_device(block: dict[str, str], index: int, line: int) -> RuntimeDevice | None:
    name = block.get("Device Board Name (AMD)") or block["Device Name"]
    kind = block.get("Device Type", "")
    if "CPU" in kind.upper() or "Emulation" in name or (not kind and _CPU_NAME.search(name)):
        return None  # R3B: Intel's 'FPGA Emulation Device' (type Accelerator) is no GPU
    where = block.get("Device Topology (NV)") or block.get("Device PCI bus info (KHR)") \
        or block.get("Device Topology (AMD)") or ""
    bus = _BUS.search(where)
    memory = re.search(r"\(([\d.]+\s*[KMGT]i?B)\)", block.get("Global memory size", ""))
    units = block.get("Max compute units", "")
    gfx = block["Device Name"] if re.fullmatch(r"gfx[0-9a-f]{3,5}\S*", block["Device Name"]) else None
    return RuntimeDevice("clinfo", str(index), name, line, vendor_of(f"{name} {block.get('Device Vendor', '')}"),
                         bus.group(1) if bus else None, mib(memory.group(1)) if memory else None, compute=gfx,
                         driver=block.get("Driver Version"), compute_units=int(units) if units.isdigit() else None)


def clinfo(lines: list[Line]) -> tuple[list[RuntimeDevice], set[int]]:
    """clinfo's devices (long form, then -l's tree) and the lines read."""
    out: list[RuntimeDevice] = []
    claimed: set[int] = set()
    block: dict[str, str] = {}
    at = 0

    def close() -> None:
        if "Device Name" in block and (d := _clinfo_device(block, len(out), at)) is not None:
            out.append(d)

    for ln in lines:
        if (m := _CLINFO.match(ln.text)) is not None:
            key, value = m.group(1), m.group(2)
            if key in ("Device Name", "Platform Name"):
                close()
                block, at = {}, ln.no
            block.setdefault(key, value)
            claimed.add(ln.no)
        elif (t := _CLINFO_TREE.match(ln.text)) is not None and not _CPU_NAME.search(t.group(2)):
            out.append(RuntimeDevice("clinfo -l", f"#{t.group(1)}", t.group(2), ln.no, vendor_of(t.group(2))))
            claimed.add(ln.no)
    close()
    return out, claimed


# hashcat -I: a device block's head, then 'Key.......: value' lines
_HC_HEAD = re.compile(r"^\s*(?:Backend )?Device ID #(\d{1,3})(?: \(Alias: #(\d{1,3})\))?\s*$")
_HC_KV = re.compile(r"^\s*([A-Za-z][A-Za-z.()]*?)[.\s]*:\s*(.*?)\s*$")
_HC_LIST = re.compile(r"^\s*\* Device #(\d{1,3}): (.+?), (?:(\d+)/)?(\d+) MB\b")


_HC_PLATFORM = re.compile(r"^\s*(?:OpenCL )?Platform ID #\d{1,3}\s*$")  # its 'Vendor' names its devices' vendor


def _hashcat_device(head: re.Match[str], kv: dict[str, str], line: int, platform: str = "") -> RuntimeDevice | None:
    name, kind = kv.get("Name", ""), kv.get("Type", "").upper()  # a block cut before its Name whose Type says GPU
    if "CPU" in kind or (not name and "GPU" not in kind) or (not kind and _CPU_NAME.search(name)):  # is a device
        return None
    bus = _BUS.search(kv.get("PCI.Addr.BDFe") or kv.get("PCI.Addr.BDF") or "")
    vendor = vendor_of(f"{name} {kv.get('Vendor', '')}") or vendor_of(platform)
    return RuntimeDevice("hashcat -I", f"#{int(head.group(1))}", name, line, vendor,
                         bus.group(1) if bus else None, mib(kv.get("Memory.Total") or kv.get("Memory", "").split("/")[-1]),
                         driver=kv.get("Driver.Version"))


def hashcat(lines: list[Line]) -> tuple[list[RuntimeDevice], set[int]]:
    """hashcat -I's devices (an alias of a device already read left out) and its start-up list's."""
    out: list[RuntimeDevice] = []
    claimed: set[int] = set()
    seen: set[int] = set()
    head: re.Match[str] | None = None
    kv: dict[str, str] = {}
    at, platform = 0, ""

    def close() -> None:
        if head is None:
            return
        if (alias := head.group(2)) is None or int(alias) not in seen:  # an alias of a device read: listed once
            if (d := _hashcat_device(head, kv, at, platform)) is not None:
                out.append(d)
        seen.add(int(head.group(1)))

    for ln in lines:
        if (h := _HC_HEAD.match(ln.text)) is not None:
            close()
            head, kv, at = h, {}, ln.no
            claimed.add(ln.no)
        elif _HC_PLATFORM.match(ln.text):
            close()
            head, platform = None, ""
        elif head is None and not platform and (m := _HC_KV.match(ln.text)) is not None and m.group(1) == "Vendor":
            platform = m.group(2)  # the platform's vendor ('Vendor..: Advanced Micro Devices, Inc.')
        elif head is not None and (m := _HC_KV.match(ln.text)) is not None and m.group(1) not in kv:
            kv[m.group(1)] = m.group(2)
            claimed.add(ln.no)
        elif (li := _HC_LIST.match(ln.text)) is not None:
            out.append(RuntimeDevice("hashcat", f"#{li.group(1)}", li.group(2), ln.no, vendor_of(li.group(2)),
                                     memory_mib=float(li.group(4))))
            claimed.add(ln.no)
    close()
    return out, claimed


# vulkaninfo: --summary's 'GPU0:' block of 'key = value' lines; the full report's 'GPU id : 0 (NAME)'
_VK_HEAD = re.compile(r"^\s*GPU(\d{1,3}):\s*$")
_VK_KV = re.compile(r"^\s*(deviceName|deviceType|vendorID|driverVersion|driverName|deviceUUID)\s*=\s*(.*?)\s*$")
_VK_ID = re.compile(r"^\s*GPU id\s*[:=]\s*(\d{1,3}) \((.+?)\)")


def _vulkan_device(index: str, kv: dict[str, str], line: int) -> RuntimeDevice | None:
    name = kv.get("deviceName", "")
    if not name or kv.get("deviceType", "").endswith("_CPU") or _CPU_NAME.search(name):
        return None
    driver = " ".join(v for v in (kv.get("driverName"), kv.get("driverVersion")) if v) or None
    return RuntimeDevice("vulkaninfo", index, name, line, _VENDOR.get(kv.get("vendorID", "").lower()) or vendor_of(name),
                         driver=driver, uuid=kv.get("deviceUUID"))


_VENDOR = {"0x10de": "NVIDIA", "0x1002": "AMD", "0x8086": "Intel", "0x106b": "Apple"}


def vulkaninfo(lines: list[Line]) -> tuple[list[RuntimeDevice], set[int]]:
    """vulkaninfo's GPUs (--summary's blocks, else the full report's 'GPU id' lines) and the lines read."""
    out: list[RuntimeDevice] = []
    claimed: set[int] = set()
    index, at = "", 0
    kv: dict[str, str] = {}
    for ln in lines:
        if (h := _VK_HEAD.match(ln.text)) is not None:
            if index and (d := _vulkan_device(index, kv, at)) is not None:
                out.append(d)
            index, kv, at = h.group(1), {}, ln.no
            claimed.add(ln.no)
        elif index and (m := _VK_KV.match(ln.text)) is not None:
            kv.setdefault(m.group(1), m.group(2))
            claimed.add(ln.no)
        elif (g := _VK_ID.match(ln.text)) is not None and not _CPU_NAME.search(g.group(2)):
            out.append(RuntimeDevice("vulkaninfo", g.group(1), g.group(2), ln.no, vendor_of(g.group(2))))
            claimed.add(ln.no)
    if index and (d := _vulkan_device(index, kv, at)) is not None:
        out.append(d)
    return out, claimed

