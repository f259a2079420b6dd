"""The HTML report of HIL tests (--hil-report, hil.testing.report): read with an HTML
parser for its structure, and opened in headless Chromium (playwright) as a person would
look at it: the verdicts, the plots of the checks (loaded images) and the MF4 links."""

from __future__ import annotations

import html.parser
import shutil
from pathlib import Path

import pytest

from tests.system.hil_pytest_run import ROOT, run_pytest

PICK = "follows_the_lead or wrong_expectation or stale_radar_brings or over_xcp"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hil_report")
    # the virtual rig without its [xcp] section: the XCP test skips (its reason reported)
    text = (ROOT / "examples" / "hil_tests" / "rigs" / "virtual.toml").read_text()
    cut = text[:text.index("[xcp]")] + text[text.index("[signals]"):]
    (folder / "no_xcp.toml").write_text(cut)
    out = run_pytest("examples/hil_tests", "-q", "-k", PICK, "--runxfail",
                     "--rig", str(folder / "no_xcp.toml"),
                     "--hil-report", str(folder), "--junitxml", str(folder / "junit.xml"))
    assert out.returncode == 1, out.stdout[-3000:]  # the wrong expectation fails
    assert "1 failed, 2 passed, 1 skipped" in out.stdout, out.stdout[-3000:]
    return folder


class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.verdicts, self.imgs, self.links, self._cls = [], [], [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "span" and "verdict" in a.get("class", ""):
            self._cls = a["class"]
        if tag == "img":
            self.imgs.append(a)
        if tag == "a" and a.get("class") == "mf4":
            self.links.append(a["href"])

    def handle_data(self, data):
        if self._cls:
            self.verdicts.append(data)
            self._cls = None


def test_the_report_has_verdicts_plots_telemetry_and_measurements(report):
    page = (report / "index.html").read_text()
    p = _Page()
    p.feed(page)
    assert p.verdicts.count("FAILED") >= 2 and p.verdicts.count("PASSED") >= 2  # table, body
    assert "1 failed, 2 passed, 1 skipped" in page
    assert "skipped: the rig has no XCP" in page  # the reason, as the test gave it
    assert len(p.imgs) >= 5 and all((report / i["src"]).stat().st_size > 5000 for i in p.imgs)
    failing = [i for i in p.imgs if "(failed)" in i["alt"]]
    assert [i["alt"] for i in failing] == ["signals around the check at t = 10.000 s (failed)"]
    assert len(p.links) == 4 and all((report / h).stat().st_size > 1000 for h in p.links)
    assert "fault stale RADAR on can from t = 5.000 s" in page  # a step
    assert "verdict FAIL acc_hil_plant" in page  # the stale run's telemetry verdict
    assert "expected" not in page and "gap &gt;= 30 m failed at t = 10.000 s" in page
    assert (report / "junit.xml").read_text().count("<testcase") == 4


def test_the_measurement_files_open_in_asammdf(report):
    asammdf = pytest.importorskip("asammdf")
    for f in sorted((report / "mf4").glob("*.mf4")):
        with asammdf.MDF(f) as mdf:
            names = {ch.name for g in mdf.groups for ch in g.channels}
            assert {"ego_speed", "gap", "CAN_DataFrame"} <= names, f.name
            assert mdf.get("ego_speed").unit == "m/s"


def _browser():
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                               "(the test extra)")
    return sync.sync_playwright


def _launch(p):
    """playwright's own Chromium, else the system's (apt's chromium)."""
    try:
        return p.chromium.launch(headless=True)
    except Exception as own:  # noqa: BLE001 - not installed: python -m playwright install
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if exe is None:
            pytest.skip(f"no Chromium for playwright ({str(own).splitlines()[0]}); install "
                        "one: python -m playwright install chromium")
        return p.chromium.launch(headless=True, executable_path=exe)


def test_the_report_as_a_person_sees_it_in_headless_chromium(report):
    sync_playwright = _browser()
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            page = browser.new_page()
            page.goto(Path(report / "index.html").as_uri())
            assert page.title() == "HIL test report"
            rows = page.locator("table.summary tr")
            assert rows.count() == 5  # header + 4 tests
            failed = page.locator("section.test", has=page.locator("h2 .verdict.failed"))
            assert failed.count() == 1 and "wrong_expectation" in failed.locator(
                "h2").inner_text()
            assert failed.locator("pre.message").is_visible()
            assert "failed at t = 10.000 s" in failed.locator("pre.message").inner_text()
            img = failed.locator("img.plot")
            assert img.count() == 1 and img.is_visible()
            w = img.evaluate("e => e.complete ? e.naturalWidth : 0")
            assert w > 300  # the PNG loaded
            imgs = page.eval_on_selector_all("img.plot", "els => els.map(e => e.naturalWidth)")
            assert len(imgs) >= 5 and min(imgs) > 300
            links = page.locator("a.mf4")
            assert links.count() == 4 and links.first.is_visible()
            href = links.first.evaluate("e => e.href")
            assert href.startswith("file://") and Path(href[7:]).is_file()
            page.locator("table.summary a").first.click()  # the summary links to the test
            assert page.url.endswith("#" + page.locator("section.test").first.get_attribute(
                "id"))
        finally:
            browser.close()
