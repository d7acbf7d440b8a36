"""JUnit XML for CI systems: a test suite per layer, a test case per check; fail → failure,
skip → skipped, warn → passed with the warning in system-out (JUnit has no warn)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any


def render(doc: dict[str, Any]) -> str:
    checks: list[dict[str, Any]] = doc.get("checks", [])
    root = ET.Element("testsuites", name="gpuvet validate", tests=str(len(checks)),
                      failures=str(sum(c["verdict"] == "fail" for c in checks)))
    by_layer: dict[str, list[dict[str, Any]]] = {}
    for c in checks:
        by_layer.setdefault(c["layer"], []).append(c)
    for layer, rows in by_layer.items():
        suite = ET.SubElement(root, "testsuite", name=f"gpuvet.{layer}", tests=str(len(rows)),
                              failures=str(sum(c["verdict"] == "fail" for c in rows)),
                              skipped=str(sum(c["verdict"] == "skip" for c in rows)))
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="simulated", value=str(bool(doc.get("simulated"))).lower())
        ET.SubElement(props, "property", name="run_id", value=str(doc.get("run_id")))
        for c in rows:
            where = " → ".join(c["between"]) if c.get("between") else c.get("module")
            case = ET.SubElement(suite, "testcase", classname=f"gpuvet.{layer}",
                                 name=c["name"] + (f"[{where}]" if where else ""))
            text = f"value {c.get('value')} {c.get('unit') or ''}, expected {c.get('expected')}"
            message = c.get("reason") or ""
            if c["verdict"] == "fail":
                ET.SubElement(case, "failure", message=message).text = f"{text}\n{c.get('fix') or ''}"
            elif c["verdict"] == "skip":
                ET.SubElement(case, "skipped", message=message)
            elif c["verdict"] == "warn":
                ET.SubElement(case, "system-out").text = f"WARN: {message}; {text}"
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
