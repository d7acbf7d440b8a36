"""`nvidia-smi -q -x` XML as people paste it: whole, cut off mid-element, or a fragment.

Parsed with defusedxml, so entity expansion and external entities are refused whatever the
Python's expat. A document cut short is closed where it stops and read up to there (with a note);
a fragment without the <nvidia_smi_log> root is wrapped and read for what it holds.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from gpuvet.captures.records import ModuleHealth, SmiProcess
from gpuvet.captures.smi_text import MARGIN_C, reset_told
from gpuvet.captures.text import CLOCK_MHZ, MAX_MODULES, TEMP_C, Line, integer, reading
from gpuvet.errors import CaptureError

_TAG = re.compile(r"<(/?)([A-Za-z_][\w.:-]*)([^<>]*?)(/?)>")
_MARK = re.compile(r"<gpu id=|</?(clocks_(throttle|event)_reasons|fb_memory_usage|pci_gpu_link_info|temperature|"
                   r"retired_pages|remapped_rows|power_readings|gpu_power_readings|max_clocks|ecc_errors)>")
_NA = ("", "N/A", "[N/A]", "Not Supported", "[Not Supported]")
MAX_GPUS = MAX_MODULES  # more <gpu> elements than any node has: refused before they are read (one bound: text.py)


@dataclass
class SmiXml:
    root: ET.Element
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def find_span(lines: list[Line]) -> tuple[int, int] | None:
    """Indexes of the first and last line of XML in the lines, if they hold nvidia-smi XML."""
    marks = [i for i, ln in enumerate(lines) if "<" in ln.text and ("<nvidia_smi_log" in ln.text or "<?xml" in ln.text
             or _MARK.search(ln.text))]
    if not marks:
        return None
    tagged = [i for i, ln in enumerate(lines) if "<" in ln.text and (_TAG.search(ln.text) or
                                                                      ln.text.strip().startswith("<"))
              and not _html_only(ln.text)]
    first = min(i for i in tagged if i >= 0)
    return first, max(tagged)


_HTML = frozenset(("details", "summary", "pre", "code", "p", "div", "br", "b", "strong"))  # none is nvidia-smi's


def _html_only(text: str) -> bool:
    """A line of a post's HTML around the XML (GitHub's <details><summary>log</summary> … </details>)."""
    tags = [m.group(2).lower() for m in _TAG.finditer(text)]
    return bool(tags) and all(t in _HTML for t in tags)


def parse(lines: list[Line], where: str) -> SmiXml | None:
    span = find_span(lines)
    if span is None:
        return None
    a, b = span
    chosen = lines[a:b + 1]
    text = "\n".join(ln.text for ln in chosen)
    notes: list[str] = []
    try:
        root = _fromstring(text, where)
    except ET.ParseError:
        try:
            repaired, what = _repair(text)
        except ET.ParseError as exc:
            raise CaptureError(f"not well-formed XML ({exc})", where=where,
                               fix="capture it again with `nvidia-smi -q -x > smi.xml`.") from None
        notes.append(f"the XML {what}: read up to where it stops; what followed is missing")
        try:
            root = _fromstring(repaired, where)
        except ET.ParseError as exc:
            raise CaptureError(f"not well-formed XML, even when closed where it stops ({exc})",
                               where=where, fix="capture it again with `nvidia-smi -q -x > smi.xml`.") from None
    if not any((el.text or "").strip() or el.attrib for el in root.iter()):
        raise CaptureError("the XML ends before any field could be read (cut right after its start?)", where=where,
                           fix="capture it again with `nvidia-smi -q -x > smi.xml`.")
    if root.tag == "gpuvet_fragment":
        notes.append("an XML fragment without <nvidia_smi_log>: read what it holds")
    return SmiXml(root, {ln.no for ln in chosen}, notes)


def _fromstring(text: str, where: str) -> ET.Element:
    try:
        return fromstring(text, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise CaptureError(f"the XML declares entities or external references ({type(exc).__name__}); "
                           "nvidia-smi never writes them, so the file is refused", where=where,
                           fix="give the unedited output of `nvidia-smi -q -x`.") from None


def _repair(text: str) -> tuple[str, str]:
    """Close a cut document; wrap a fragment. Returns the text and what was done."""
    end = text.rfind(">")
    body = text[:end + 1]
    body = re.sub(r"<!DOCTYPE[^>]*>", "", body)
    stack: list[str] = []
    out: list[str] = []
    pos = 0
    stray = 0
    for m in _TAG.finditer(body):
        out.append(body[pos:m.start()])
        pos = m.end()
        closing, name, _, selfclosing = m.group(1), m.group(2), m.group(3), m.group(4)
        if closing:
            if stack and stack[-1] == name:
                stack.pop()
                out.append(m.group(0))
            elif stack:
                raise ET.ParseError(f"</{name}> closes <{stack[-1]}>")
            else:
                stray += 1  # closes something that opened before the fragment began
        else:
            out.append(m.group(0))
            if not selfclosing:
                stack.append(name)
    out.append(body[pos:])
    fixed = re.sub(r"<\?xml[^>]*\?>", "", "".join(out)) + "".join(f"</{n}>" for n in reversed(stack))
    cut = "ends early (cut mid-document, " + f"{len(stack)} element(s) left open)" if stack else "was incomplete"
    if stray or not fixed.lstrip().startswith("<nvidia_smi_log"):
        return f"<gpuvet_fragment>{fixed}</gpuvet_fragment>", "is a fragment" + (f" and {cut}" if stack else "")
    return fixed, cut


# --- fields --------------------------------------------------------------------------------
def text_of(el: ET.Element, path: str) -> str | None:
    found = el.find(path)
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    return None if value in _NA else value


def _active(el: ET.Element) -> frozenset[str]:
    out = set()
    for section in ("clocks_event_reasons", "clocks_throttle_reasons"):
        sec = el.find(section)
        if sec is None:
            continue
        for child in sec:
            if (child.text or "").strip() == "Active":
                name = re.sub(r"^clocks?_(event|throttle)_reason_", "", child.tag)
                out.add(name.replace("gpu_idle", "idle"))
    return frozenset(out)


def processes(g: ET.Element) -> tuple[SmiProcess, ...] | None:
    """The <process_info> of a <gpu>, as printed; an empty <processes> is none, a missing one not known."""
    listed = g.find("processes")
    if listed is None:
        return None
    infos = listed.findall("process_info")
    if not infos and (listed.text or "").strip() not in ("", "None"):
        return None  # 'N/A' or a word: not a list
    return tuple(SmiProcess(text_of(p, "pid") or "", text_of(p, "type"), text_of(p, "process_name"),
                            text_of(p, "used_memory")) for p in infos)


def _yes(value: str | None) -> bool | None:
    return None if value is None else value.strip().lower() in ("yes", "true")


def _uncorrectable(g: ET.Element, scope: str) -> int | None:
    base = g.find(f"ecc_errors/{scope}")
    if base is None:
        return None
    values = [integer(e.text) for e in base.iter() if "uncorrectable" in e.tag or e.tag == "dram_uncorrectable"]
    dbe = base.find("double_bit/total")
    if dbe is not None:
        values.append(integer(dbe.text))
    seen = [v for v in values if v is not None and v >= 0]
    return sum(seen) if seen else None


def _link_max(g: ET.Element, gen: str) -> int | None:
    """The top generation the link can train to: max_link_gen, else the lower of the device's and the host's."""
    top = integer(text_of(g, f"{gen}/max_link_gen"))
    known = [v for v in (integer(text_of(g, f"{gen}/max_device_link_gen")), integer(text_of(g, f"{gen}/max_host_link_gen")))
             if v is not None]
    return top if top is not None else (min(known) if known else None)


def health(module: str, g: ET.Element) -> ModuleHealth:
    link = "pci/pci_gpu_link_info"
    retired = [integer(text_of(g, f"retired_pages/{k}/retired_count"))
               for k in ("multiple_single_bit_retirement", "double_bit_retirement")]
    bad: list[str] = []
    return ModuleHealth(
        module=module, product=text_of(g, "product_name"),
        pcie_gen=integer(text_of(g, f"{link}/pcie_gen/current_link_gen")),
        pcie_gen_max=integer(text_of(g, f"{link}/pcie_gen/max_device_link_gen") or
                             text_of(g, f"{link}/pcie_gen/max_link_gen")),
        pcie_width=integer(text_of(g, f"{link}/link_widths/current_link_width")),
        pcie_width_max=integer(text_of(g, f"{link}/link_widths/max_link_width")),
        clock_events=_active(g), ecc_mode=text_of(g, "ecc_mode/current_ecc"),
        ecc_uncorrectable_volatile=_uncorrectable(g, "volatile"),
        ecc_uncorrectable_aggregate=_uncorrectable(g, "aggregate"),
        retired_pages_pending=_yes(text_of(g, "retired_pages/pending_retirement") or
                                   text_of(g, "retired_pages/pending_blacklist")),
        retired_pages=sum(r for r in retired if r is not None) if any(r is not None for r in retired) else None,
        remap_pending=_yes(text_of(g, "remapped_rows/remapped_row_pending")),
        remap_failure=_yes(text_of(g, "remapped_rows/remapped_row_failure")),
        remap_uncorrectable=integer(text_of(g, "remapped_rows/remapped_row_unc")),
        temperature_c=reading(text_of(g, "temperature/gpu_temp"), TEMP_C, "gpu_temp", bad),
        temperature_max_operating_c=reading(text_of(g, "temperature/gpu_temp_max_gpu_threshold"), TEMP_C,
                                            "gpu_temp_max_gpu_threshold", bad),
        temperature_slowdown_c=reading(text_of(g, "temperature/gpu_temp_slow_threshold"), TEMP_C,
                                       "gpu_temp_slow_threshold", bad),
        margin_c=reading(text_of(g, "temperature/gpu_temp_tlimit"), MARGIN_C, "gpu_temp_tlimit", bad),
        slowdown_margin_c=reading(text_of(g, "temperature/gpu_temp_slow_tlimit_threshold"), MARGIN_C,
                                  "gpu_temp_slow_tlimit_threshold", bad),
        max_operating_margin_c=reading(text_of(g, "temperature/gpu_temp_max_gpu_tlimit_threshold"), MARGIN_C,
                                       "gpu_temp_max_gpu_tlimit_threshold", bad),
        pcie_gen_link_max=_link_max(g, f"{link}/pcie_gen"),
        utilization_pct=reading(text_of(g, "utilization/gpu_util"), (0.0, 100.0), "gpu_util", bad),
        sm_clock_mhz=reading(text_of(g, "clocks/sm_clock"), CLOCK_MHZ, "sm_clock", bad),
        sm_clock_max_mhz=reading(text_of(g, "max_clocks/sm_clock"), CLOCK_MHZ, "max sm_clock", bad), corrupt=tuple(bad),
        reset_told=reset_told(text_of(g, "gpu_reset_status/reset_required"),
                              text_of(g, "gpu_reset_status/drain_and_reset_recommended"),
                              text_of(g, "gpu_recovery_action")),
    )
