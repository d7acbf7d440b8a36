"""Issue 46 (R10D): ``ethtool -m DEV`` (``--module-info``), a port's pluggable module (SFP/QSFP) EEPROM and its
digital diagnostics, as ethtool prints them (sfpid.c, sfpdiag.c, qsfp.c, cmis.c: ``\\tKey   : value``). Read so a
paste of it is neither refused nor taken for `nvidia-smi -q` (whose reader saw a GPU per repeated key): its lines
are claimed, the file is named 'ethtool -m (module EEPROM)', no GPU is listed. A diagnostics flag that reads On
('Module temperature high alarm : On', 'Rx loss of signal : Yes') is left unclaimed: the fault-line readers judge it."""

from __future__ import annotations

import re

from gpuvet.captures.marks import holding
from gpuvet.captures.text import Line

KIND = "ethtool -m (module EEPROM)"
# the keys ethtool -m prints (its sources' names); a key is matched on how it starts, thresholds and channels after it
_KEYS = ("Identifier", "Extended identifier", "Connector", "Transceiver codes", "Transceiver type", "Encoding",
         "BR, Nominal", "BR Nominal", "BR margin", "Rate identifier", "Length (", "Laser wavelength", "Vendor name",
         "Vendor OUI", "Vendor PN", "Vendor rev", "Vendor SN", "Date code", "Option values", "Option",
         "Optical diagnostics support", "Laser bias current", "Laser output power", "Laser tx bias current",
         "Receiver signal", "Rcvr signal", "Transmit avg optical power", "Module temperature", "Module voltage",
         "Alarm/warning flags implemented", "Extended identifier description", "Power class", "Revision Compliance",
         "Transmitter technology", "Attenuation at", "Active Cu cmplnce", "CLEI code", "Rx loss of signal",
         "Tx loss of signal", "Tx fault", "Tx adaptive eq fault", "Rx CDR loss of lock", "Tx CDR loss of lock",
         "Wavelength", "Module State", "LowPwrAllowRequestHW", "LowPwrRequestSW", "Module Firmware", "Module type",
         "CMIS revision", "Module revision", "Data Path", "Media", "Host")
# what only ethtool -m prints: one of them must be in the text for its generic keys (Connector, Encoding) to be read
_OWN = ("Transceiver codes", "Module temperature", "Laser bias current", "Laser wavelength", "Vendor OUI",
        "Optical diagnostics support", "Receiver signal average optical power", "Laser output power",
        "Extended identifier description", "Rcvr signal avg optical power", "CMIS revision")
_LINE = re.compile(r"^\s*([A-Za-z][\w ,./()-]{1,60}?)\s*:\s*(.*?)\s*$")
_COMMAND = re.compile(r"^\s*(?:\S{0,64}[$#❯>]\s*)?(?:sudo\s+)?(?:\S*/)?ethtool\s+(?:-m|--module-info|--dump-module-eeprom)"
                      r"\s+[A-Za-z][\w.@-]{0,31}\b")
_ON = re.compile(r"^(On|Yes)\b", re.I)
MARKS = ("Transceiver codes", "Module temperature", "Laser bias current", "Vendor OUI", "Laser output power")


def read(lines: list[Line], taken: set[int]) -> set[int]:
    """The lines of ``ethtool -m`` output (its command line and its keys) not in ``taken``, empty where the text
    holds none of its own keys (searched once: a bug report's lines are walked only when it does). A flag reading
    On/Yes is not claimed."""
    if not holding(lines, _OWN):
        return set()
    claimed: set[int] = set()
    for ln in lines:
        if ln.no in taken:
            continue
        if _COMMAND.match(ln.text):
            claimed.add(ln.no)
        elif (m := _LINE.match(ln.text)) is not None and m.group(1).startswith(_KEYS):
            flag = m.group(1).endswith(("alarm", "warning")) or m.group(1).startswith(("Rx loss", "Tx loss", "Tx fault",
                                                                                       "Tx adaptive", "Rx CDR", "Tx CDR"))
            if not (flag and _ON.match(m.group(2))):
                claimed.add(ln.no)
    return claimed
