"""Issue 46 (YX1): the i915 and xe drivers' healthy boot lines, read quietly: the platform and device id they found,
the firmware they loaded (GuC, HuC, GSC, DMC) and its version, the mode they run in (SR-IOV PF/VF), the memory
they set up, the console hand-over. Their words are drivers/gpu/drm/xe (xe_pci.c's 'Found %s (device ID %04x)',
xe_uc_fw.c's 'Using %s firmware from %s version %u.%u.%u'), drivers/gpu/drm/i915 (intel_uc_fw.c, intel_dmc.c's
'Finished loading DMC firmware %s (v%u.%u)', drm's 'Initialized %s %d.%d.%d %s for %s on minor %d') and the
out-of-tree i915-sriov-dkms port's own banner.

None of these is a fault: each device is listed as an Intel module with what the lines print, nothing judged.
The drivers' error strings are kernel.py's (kernel_messages.yaml's intel_*); a line neither reads stays unread
(and a failure's words in it become a lead, captures/unread_leads.py)."""

from __future__ import annotations

import re

from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import MAX_MODULES, Line

KIND = "i915/xe driver boot lines"
MARKERS = ("i915", "xe ", "xe:")  # the drivers' prefixes ('xe 0000:00:02.0: …', 'xe: You are using …')
_LINE = re.compile(r"(?<![\w-])(?P<driver>i915|xe)(?: (?P<bus>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]))?: "
                   r"(?:\[drm\] )?(?:(?:\*ERROR\*|ERROR)\s*)?(?P<said>.{1,300})$")
_GT = re.compile(r"^(?:Tile\d{1,2}: )?(?:GT\d{1,2}: )?")  # xe's and i915's per-tile, per-GT prefix
# the boot lines read (the drivers' info prints), each anchored at the message's start after the GT prefix
_HEALTHY = re.compile(
    r"^(?:Found (?P<platform>\S{1,60}) \(device ID (?P<devid>[0-9a-fA-F]{4})\)"
    r"|Using (?P<fw>GuC|HuC|GSC|DMC) firmware (?:from )?(?P<fwpath>\S{1,80}) version (?P<fwver>[\d.]{1,20})"
    r"|(?P<fw2>GuC|HuC|GSC) firmware (?P<fwpath2>\S{1,80}) version (?P<fwver2>[\d.]{1,20})"
    r"|Finished loading DMC firmware (?P<dmc>\S{1,80}) \(v(?P<dmcver>[\d.]{1,12})\)"
    r"|Initialized (?:i915|xe) [\d.]{1,12} \d{8} for \S{1,20} on minor \d{1,3}"
    r"|Running in SR-IOV (?P<sriov>PF|VF) mode|PF: |VF: "
    r"|vgaarb: |enabling device \(|Initial FB size exceeds half of stolen"
    r"|(?:GUC|GuC|HuC|GSC): (?:submission|SLPC|authenticated|RC)\b|GuC (?:RC|submission|SLPC): enabled"
    r"|(?:VISIBLE VRAM|Total VRAM|Available VRAM|VRAM\[\d{1,2}, \d{1,2}\]): "
    r"|You are using the i915-sriov-dkms module|Please file any bug report at |Module Homepage: "
    r"|(?:GuC|HuC|GSC) firmware\(s\) can be downloaded from |DMC firmware homepage: |GUC: ADS capture alloc size )")


def parse(lines: list[Line]) -> ListedParse:
    """Each device the drivers' boot lines name (possibly none), its firmware said."""
    out = ListedParse()
    found: dict[str, dict[str, str]] = {}
    firmware: dict[str, list[str]] = {}
    dkms = False
    for ln in (lines[i] for i in holding(lines, ("i915", "xe"))):  # the drivers' lines alone (issue 43: no walk)
        if (m := _LINE.search(ln.text)) is None:
            continue
        said = _GT.sub("", m["said"].strip(), count=1)
        h = _HEALTHY.match(said)
        if h is None:
            continue
        out.claimed.add(ln.no)
        dkms = dkms or said.startswith("You are using the i915-sriov-dkms")
        if m["bus"] is None:
            continue
        mod = found.setdefault(m["bus"].upper(), {"driver": m["driver"]})
        if h["platform"]:
            mod |= {"platform": h["platform"], "devid": h["devid"].lower()}
        if h["sriov"]:
            mod["sriov"] = h["sriov"]
        fw = h["fw"] or h["fw2"] or ("DMC" if h["dmc"] else None)
        if fw:
            path, ver = h["fwpath"] or h["fwpath2"] or h["dmc"], h["fwver"] or h["fwver2"] or h["dmcver"]
            firmware.setdefault(m["bus"].upper(), []).append(f"{fw} {ver} ({path})")
    for k, (bus, mod) in enumerate(list(found.items())[:MAX_MODULES]):
        out.modules.append(ListedModule(f"Intel GPU {k}", name=f"Intel {mod.get('platform', 'GPU')}"
                                        + ("" if "platform" in mod else " (platform not in the lines)"), bus_id=bus,
                                        device_id=mod.get("devid"), tool=KIND))
        fws = "; firmware " + ", ".join(dict.fromkeys(firmware.get(bus, []))) if firmware.get(bus) else ""
        sriov = f"; SR-IOV {mod['sriov']} mode" if "sriov" in mod else ""
        out.notes.append(f"{KIND}: {mod['driver']} at {bus}" + (f", {mod['platform']} (device ID {mod['devid']})"
                                                                  if "platform" in mod else "") + fws + sriov)
    if dkms:
        out.notes.append(f"{KIND}: the driver is the out-of-tree i915-sriov-dkms port (its banner), not the kernel's own")
    if out.claimed:
        out.kinds.append(KIND)
    return out
