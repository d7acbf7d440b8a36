"""JUnit XML for CI systems: a test suite per layer, a test case per check; fail → failure,
skip → skipped, warn → passed with the warning in system-out (JUnit has no warn)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from gpuvet.checks.model import Check, Verdict
from gpuvet.logbook.document import RunDocument


def render(doc: RunDocument) -> str:
    checks = doc.checks
    root = ET.Element("testsuites", name="gpuvet validate", tests=str(len(checks)),
                      failures=str(sum(c.verdict is Verdict.FAIL for c in checks)))
    by_layer: dict[str, list[Check]] = {}
    for c in checks:
        by_layer.setdefault(c.layer, []).append(c)
    for layer, rows in by_layer.items():
        suite = ET.SubElement(root, "testsuite", name=f"gpuvet.{layer}", tests=str(len(rows)),
                              failures=str(sum(c.verdict is Verdict.FAIL for c in rows)),
                              skipped=str(sum(c.verdict is Verdict.SKIP for c in rows)))
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="simulated", value=str(doc.simulated).lower())
        ET.SubElement(props, "property", name="run_id", value=str(doc.run_id))
        for c in rows:
            case = ET.SubElement(suite, "testcase", classname=f"gpuvet.{layer}",
                                 name=c.name + (f"[{c.where}]" if c.where else ""))
            text = f"value {c.value} {c.unit or ''}, expected {c.expected}"
            message = c.reason or ""
            if c.verdict is Verdict.FAIL:
                ET.SubElement(case, "failure", message=message).text = f"{text}\n{c.fix or ''}"
            elif c.verdict is Verdict.SKIP:
                ET.SubElement(case, "skipped", message=message)
            elif c.verdict is Verdict.WARN:
                ET.SubElement(case, "system-out").text = f"WARN: {message}; {text}"
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
