"""The report writers, on a report with every kind of result (no broker needed)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from jmspy.conformance.catalogue import FAMILIES, catalogue
from jmspy.conformance.model import (
    BrokerRun,
    CapabilityReport,
    Outcome,
    Report,
    Result,
)
from jmspy.conformance.report import (
    render_json,
    render_junit,
    render_markdown,
    write_reports,
)


def _report() -> Report:
    entries = [e for e in catalogue() if e.id in ("DD-1", "DD-7", "WM-12", "RD-8")]
    artemis = BrokerRun(
        label="artemis 2.56.0",
        kind="artemis",
        url="amqp://127.0.0.1:5672",
        version="2.56.0",
        adapter="artemis",
        source="provisioned",
        capabilities=CapabilityReport(present={"DELAYED_DELIVERY": "offered"}),
        duration_s=1.5,
        results=[
            Result(check_id="DD-1", outcome=Outcome.PASSED, summary="ok", evidence=["a < b"]),
            Result(
                check_id="DD-7",
                outcome=Outcome.FAILED,
                summary="arrived early",
                observed="arrived 300 ms early",
                expected="not before JMSDeliveryTime",
                evidence=["<script>alert(1)</script>"],
            ),
            Result(
                check_id="WM-12",
                outcome=Outcome.DEVIATION,
                summary="the broker added a data section",
                observed="[('data', 'binary')]",
                expected="[]",
            ),
            Result(
                check_id="RD-8",
                outcome=Outcome.NOT_APPLICABLE,
                summary="broker lacks redelivery-address-settings",
                missing=["redelivery-address-settings"],
            ),
        ],
    )
    missing = BrokerRun(
        label="container apache/artemis",
        kind="artemis",
        url="",
        error="no Docker engine: /var/run/docker.sock does not exist",
    )
    return Report(
        generated_at="2026-01-01T00:00:00+00:00",
        jmspy_version="0.1.0",
        duration_s=2.0,
        families=dict(FAMILIES),
        catalogue=entries,
        runs=[artemis, missing],
    )


def test_json_round_trips() -> None:
    report = _report()
    again = Report.model_validate_json(render_json(report))
    assert again == report
    failed = again.runs[0].result("DD-7")
    assert failed is not None and failed.observed == "arrived 300 ms early"
    assert not again.ok


def test_junit_parses_with_failures_skips_and_errors() -> None:
    root = ET.fromstring(render_junit(_report()))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("skipped"), root.get("errors")) == (
        "5",
        "1",
        "1",
        "1",
    )
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [
        "jmspy-conformance.artemis 2.56.0",
        "jmspy-conformance.container apache/artemis",
    ]
    cases = {c.get("name", "").split()[0]: c for c in suites[0].findall("testcase")}
    assert set(cases) == {"DD-1", "DD-7", "WM-12", "RD-8"}
    failure = cases["DD-7"].find("failure")
    assert failure is not None and failure.get("message") == "arrived early"
    assert "arrived 300 ms early" in (failure.text or "")
    skipped = cases["RD-8"].find("skipped")
    assert skipped is not None and "redelivery-address-settings" in (skipped.get("message") or "")
    assert "BROKER DEVIATION" in (cases["WM-12"].findtext("system-out") or "")
    assert suites[1].find("testcase/error") is not None


def test_html_is_one_self_contained_file_with_the_matrix(tmp_path: Path) -> None:
    written = write_reports(_report(), tmp_path, ["html"])
    assert written == [tmp_path / "report.html"]
    page = written[0].read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<style>" in page
    assert not re.search(r"<(link|script|img)\b", page), "no external assets, no scripts"
    assert 'src="' not in page and "http://" not in page and "https://" not in page
    assert 'id="matrix"' in page
    for check_id in ("DD-1", "DD-7", "WM-12", "RD-8"):
        assert f'href="#c-{check_id}"' in page and f'id="c-{check_id}"' in page
    assert 'class="r failed"' in page and 'class="r deviation"' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # evidence is escaped
    assert "no Docker engine" in page


def test_markdown_has_summary_matrix_and_details() -> None:
    text = render_markdown(_report())
    assert (
        "| artemis 2.56.0 (provisioned, amqp://127.0.0.1:5672) | artemis | 1 | 1 | 1 | 1 |" in text
    )
    assert "| DD-7 | broker | Delivery delay preserves the expiry interval | FAIL | — |" in text
    assert "### DD-7 on artemis 2.56.0: failed" in text
    assert "not run: no Docker engine" in text


def test_write_reports_writes_each_format(tmp_path: Path) -> None:
    written = write_reports(_report(), tmp_path / "out")
    assert sorted(p.name for p in written) == [
        "junit.xml",
        "report.html",
        "report.json",
        "report.md",
    ]
