"""lspci's one-line listings (issue 46): ``-m``/``-mm``/``-nnm`` print each function as quoted fields (its
class, vendor and device, ``[id]`` after each name with ``-nn``), ``-nn`` as the default line with the class
code and the vendor:device ids in brackets. Neither has a field block, so links.parse_lspci (lspci -vvv)
reads no GPU from the quoted form nor an accelerator's class from either; this reader lists the GPU and
accelerator functions of the vendors gpuvet reads, by bus id, for inventory."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.lines import starting
from gpuvet.captures.links import ListedGpu, LspciParse
from gpuvet.captures.text import Line
from gpuvet.node.catalog import find_model, pci_product

_BUS = r"((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
# -m: BUS "class" "vendor" "device" ... (a line cut in the device's name keeps its bus id, class and vendor)
_MACHINE = lazy(_BUS + r'\s+"([^"]*)"\s+"([^"]*)"\s+"([^"]*)')
# -nn: BUS class name [cccc]: vendor and device words [vvvv:dddd] (rev xx)
# (each name starts and ends on a non-blank: no run of blanks split between a name and \s*, review 55 F12)
_NUMERIC = lazy(_BUS + r"\s+([^\[\]:\s](?:[^\[\]:]*?[^\[\]:\s])?)\s*\[([0-9a-fA-F]{4})\]:\s*(\S(?:.*?\S)?)\s*"
                r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
# the PCI classes of a GPU or an accelerator: display controllers (03xx) and processing accelerators (1200)
_CLASSES = lazy(r"^(?:VGA compatible controller|3D controller|Display controller|Processing accelerators)\b",
                re.I)
_CLASS_CODES = ("0300", "0302", "0380", "1200")
_VENDOR_IDS = {"10de": "NVIDIA", "1002": "AMD", "8086": "Intel"}  # Intel's: dropped beside the others' (module_lists)
_VENDOR_CODES = {name: code for code, name in _VENDOR_IDS.items()}
_VENDOR_NAMES = (("NVIDIA", lazy(r"\bNVIDIA\b")), ("AMD", lazy(r"\[AMD/ATI\]|\bATI Technologies\b")),
                 ("Intel", lazy(r"^Intel Corporation\b")))
_ID = lazy(r"\s*\[[0-9a-fA-F]{4}\]$")  # the id -nn puts after each quoted name
_PRODUCT = lazy(r"\[([^\[\]]*[A-Za-z][^\[\]]*)\]\s*$")  # pci.ids' 'chip [product]': the product
_PCI_ID = lazy(r"\s*\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")  # -nn's [vendor:device] after the name
_NOISE = lazy(r"\s*\((?:rev \w+|prog-if [^()]*(?:\[[^\]]*\])?)\)")  # '(rev a1)', '(prog-if 00 [VGA …])'
_UNNAMED = lazy(r"(?:Device|Unknown device)\s+([0-9a-fA-F]{4})", re.I)  # an id its pci.ids does not name


_LEADS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz \t\x0b\x0c\r\x1c\x1d\x1e\x1f"  # what a line
# whose stripped text opens with a letter or a digit can open with (an ASCII text's: lines.TextLines)


def parse(lines: list[Line]) -> LspciParse:
    """Each GPU or accelerator function of NVIDIA or AMD a quoted or -nn line lists, once by bus id."""
    out = LspciParse()
    seen: set[str] = set()
    firsts = starting(lines, _LEADS)  # a long text's (lines.TextLines): a line the test below passes over is not made
    for ln in lines if firsts is None else map(lines.__getitem__, firsts):
        s = ln.text.strip()
        if not s[:1].isalnum() or ('"' not in s and "]:" not in s):
            continue
        got = _machine(s) or _numeric(s)
        if got is None or got.bus_id in seen:
            continue
        seen.add(got.bus_id)
        out.claimed.add(ln.no)
        out.listed.append(got)
        if got.vendor == "NVIDIA":
            out.gpus.append((got.bus_id, got.model))
    return out


def _machine(s: str) -> ListedGpu | None:
    """A quoted (-m) line of a GPU or accelerator function."""
    m = _MACHINE.match(s)
    if m is None or not _CLASSES.match(m.group(2)):
        return None
    code = re.search(r"\[([0-9a-fA-F]{4})\]$", m.group(3))
    vendor = _VENDOR_IDS.get(code.group(1).lower()) if code else None
    vendor = vendor or next((name for name, p in _VENDOR_NAMES if p.search(m.group(3))), None)
    if not vendor:
        return None
    device = re.search(r"\[([0-9a-fA-F]{4})\]$", m.group(4))  # -nnm's device id after its name
    words = _ID.sub("", m.group(4)) + (f" [{_VENDOR_CODES[vendor]}:{device.group(1)}]" if device else "")
    return ListedGpu(m.group(1).upper(), vendor, product_name(vendor, words), None)


def _numeric(s: str) -> ListedGpu | None:
    """An -nn line of a GPU or accelerator function, by its class code and vendor id."""
    m = _NUMERIC.match(s)
    if m is None or m.group(3) not in _CLASS_CODES or (vendor := _VENDOR_IDS.get(m.group(5).lower())) is None:
        return None
    words = re.sub(r"^.*?(?:NVIDIA Corporation|\[AMD/ATI\]|ATI Technologies Inc\.?|Intel Corporation)\s*", "", m.group(4))
    return ListedGpu(m.group(1).upper(), vendor, product_name(vendor, f"{words} [{m.group(5)}:{m.group(6)}]"), None)


def _model(words: str) -> str:
    """The product pci.ids names in brackets after the chip ('Aqua Vanjaram [Instinct MI325X]' ->
    'Instinct MI325X': the catalog knows products, not chips), else the chip's words."""
    p = _PRODUCT.search(words)
    return p.group(1).strip() if p else words.strip()


def product_name(vendor: str, words: str, keep_chip: bool = False) -> str:
    """The module lspci names, from its device words as any lspci form prints them (-vvv, -nn, -m): pci.ids'
    product in brackets after the chip ('GA100 [A100 SXM4 80GB]' -> 'A100 SXM4 80GB'; with ``keep_chip`` the
    chip stays where the product is no catalog model's: 'TU104 [GeForce RTX 2080]'), the [vendor:device] id,
    revision and prog-if left out. Where the words name no product ('GH100', 'Device 2330': a pci.ids older than
    the module) the id names it from the catalog's pci.ids table; a product the words do name is kept as named
    (an 'H100 SXM5 94GB' is not the catalog's 80 GB one)."""
    clean = _NOISE.sub("", _PCI_ID.sub("", words)).strip()
    product = _PRODUCT.search(clean)
    if product is not None:
        named = product.group(1).strip()
        catalog = find_model(named) or find_model(f"{vendor} {named}")
        return clean if keep_chip and catalog is None else named
    ids = _PCI_ID.search(words)
    unnamed = _UNNAMED.fullmatch(clean)
    code = ids.group(1).lower() if ids else _VENDOR_CODES.get(vendor)
    device = ids.group(2) if ids else unnamed.group(1) if unnamed else None
    known = pci_product(f"{code}:{device}") if code and device else None
    return known.product if known else clean
