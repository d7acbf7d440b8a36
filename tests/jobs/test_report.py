"""Reports: the HTML opens in a real headless Chromium with its plots and no console errors;
JUnit parses."""

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from gpuvet.cli.app import main
from tests.support.helpers import call

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")



@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reports")
    code = main(["validate", "--sim", "hgx-h200-8", "--level", "long", "--report", str(folder / "run.html"),
                 "--junit", str(folder / "run.xml"), "--logbook", str(folder / "lb.db"), "--json"])
    assert code == 0
    return folder


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium: apt-get install chromium (.ci/run installs it)")
def test_html_report_renders_in_a_real_browser_with_its_plots(reports):
    playwright = pytest.importorskip("playwright.sync_api")
    problems = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("requestfailed", lambda r: problems.append(f"request {r.url}"))
        page.goto((reports / "run.html").as_uri())
        assert "PASS" in page.title() and "SIMULATED" in page.inner_text("body")
        titles = page.eval_on_selector_all("svg.plot title", "els => els.map(e => e.textContent)")
        for wanted in ("GEMM, % of dense peak", "p2p_one_way GB/s (row → column)", "busbw vs message size",
                       "power during GEMM (median)"):
            assert wanted in titles
        for box in page.locator("svg.plot").all():
            size = box.bounding_box()
            assert size and size["width"] > 100 and size["height"] > 100  # drawn, not collapsed
        rows = page.locator("#checks tr").count()
        assert rows > 300
        assert len(page.screenshot(full_page=True)) > 50_000
        browser.close()
    assert problems == []


def test_html_report_is_self_contained(reports):
    html = (reports / "run.html").read_text()
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html


def test_junit_parses_and_counts(reports):
    root = ET.parse(reports / "run.xml").getroot()
    assert root.tag == "testsuites" and int(root.get("failures")) == 0
    suites = {s.get("name") for s in root}
    assert {"gpuvet.compute", "gpuvet.module_link", "gpuvet.collective"} <= suites
    assert int(root.get("tests")) == sum(1 for _ in root.iter("testcase"))


def test_junit_marks_failures(tmp_path, faulty):
    from gpuvet.logbook.document import as_document
    from gpuvet.report.junit import render
    from gpuvet.validate.run import Level, Validator

    run = Validator(faulty("mesh-4", [{"kind": "power_cap_low", "module": "gpu1", "watts": 300}]), Level.QUICK).run()
    root = ET.fromstring(render(as_document(run.to_json())).split("?>", 1)[1])
    failures = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert failures == ["gemm_bf16[gpu1]", "peers_gemm_bf16[gpu1]"]  # against the catalog, and against its peers


def test_report_command_rebuilds_from_the_logbook(reports, tmp_path, capsys):
    code, out, _ = call(capsys, "log", "list", "--json", "--logbook", str(reports / "lb.db"))
    run_id = json.loads(out)[0]["run_id"]
    target = tmp_path / "again.html"
    code, _, _ = call(capsys, "report", run_id, "-o", str(target), "--logbook", str(reports / "lb.db"))
    assert code == 0 and "GEMM, % of dense peak" in target.read_text()


def test_html_report_opens_with_what_failed_and_why_before_the_table():
    from gpuvet.logbook.document import RunDocument
    from gpuvet.report.html import render

    checks = [{"layer": "compute", "name": "gemm_bf16", "verdict": "pass", "value": 740.0, "module": f"gpu{i}"}
              for i in range(6)]
    checks += [
        {"layer": "module_link", "name": "p2p_one_way", "verdict": "warn", "value": 300.0, "unit": "GB/s",
         "expected": 390.0, "pct_of_expected": 76.9, "between": ["gpu2", "gpu3"], "reason": "76.9 % of expected"},
        {"layer": "compute", "name": "gemm_bf16", "verdict": "fail", "value": 500.0, "unit": "TFLOPS", "expected": 740.0,
         "pct_of_expected": 67.6, "module": "gpu<7>", "reason": "67.6 % of expected", "fix": "check cooling",
         "evidence": {"throttle_reasons": ["hw_slowdown"]}},
        {"layer": "memory", "name": "hbm_bw", "verdict": "skip", "reason": "not at this level"},
        {"layer": "memory", "name": "hbm_bw2", "verdict": "skip", "reason": "not at this level"},
    ]
    html = render(RunDocument.model_validate({"verdict": "fail", "environment": {"node": "n"}, "checks": checks}))
    summary, table = html.index("<h2>Summary</h2>"), html.index("<table id='checks'>")
    assert summary < html.index("<h2>Environment</h2>") < table
    head = html[summary:html.index("<h2>Environment</h2>")]
    assert "10 checks: <span class='fail'>1 fail</span><span class='warn'>1 warn</span>" in head
    assert "<span class='pass'>6 pass</span>" in head and "<span class='skip'>2 skip</span>" in head
    fail, warn = head.index("gpu&lt;7&gt;"), head.index("gpu2 → gpu3")  # place escaped; the worst first
    assert fail < warn and "67.6 % of expected [throttled: hw_slowdown]" in head and "check cooling" in head
    assert "500 TFLOPS of 740 expected (67.6 %)" in head and "2 × not at this level" in head
    assert "gemm_bf16" in head and head.count("<tr>") == 3  # header + the two problems, no passing rows


def test_html_report_of_a_clean_run_says_nothing_failed():
    from gpuvet.logbook.document import RunDocument
    from gpuvet.report.html import render

    html = render(RunDocument.model_validate({"verdict": "pass", "checks": [
        {"layer": "compute", "name": "gemm_bf16", "verdict": "pass", "value": 740.0, "module": "gpu0"}]}))
    assert "Nothing failed or warned." in html and html.index("Nothing failed") < html.index("<table id='checks'>")
