"""Report writers: Markdown, JSON, JUnit XML and one self-contained HTML page.

All four are written from the same :class:`~jmspy.conformance.model.Report`: checks down,
brokers across, every result with its observed value, expectation and evidence.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from pathlib import Path

from .model import BrokerRun, CatalogueEntry, Outcome, Report, Result

__all__ = [
    "FORMATS",
    "FILE_NAMES",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "write_reports",
]

FILE_NAMES = {
    "md": "report.md",
    "json": "report.json",
    "junit": "junit.xml",
    "html": "report.html",
}
FORMATS = tuple(FILE_NAMES)

_WORD = {
    Outcome.PASSED: "pass",
    Outcome.FAILED: "FAIL",
    Outcome.DEVIATION: "deviation",
    Outcome.NOT_APPLICABLE: "n/a",
}


def _column(run: BrokerRun) -> str:
    return run.label


def _cell(result: Result | None) -> str:
    return "—" if result is None else _WORD[result.outcome]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _by_family(report: Report) -> list[tuple[str, str, list[CatalogueEntry]]]:
    chosen = {r.check_id for run in report.runs for r in run.results}
    out = []
    for family, title in report.families.items():
        entries = [e for e in report.catalogue if e.family == family and e.id in chosen]
        if entries:
            out.append((family, title, entries))
    return out


def _family_counts(report: Report) -> str:
    parts = []
    for family, _, entries in _by_family(report):
        parts.append(f"{family} {len(entries)}")
    return ", ".join(parts)


def _chosen_count(report: Report) -> int:
    return sum(len(entries) for _, _, entries in _by_family(report))


# --------------------------------------------------------------------------- Markdown


def render_markdown(report: Report) -> str:
    lines = [f"# {report.title}", ""]
    lines.append(
        f"Generated {report.generated_at} by jmspy {report.jmspy_version} in "
        f"{report.duration_s:.1f} s. {_chosen_count(report)} checks ({_family_counts(report)})"
        + (f", selected by {', '.join(report.selection)}." if report.selection else ".")
    )
    lines += ["", "## Summary", ""]
    lines.append("| broker | adapter | passed | failed | deviation | not applicable | time |")
    lines.append("|---|---|---|---|---|---|---|")
    for run in report.runs:
        if run.error is not None:
            lines.append(f"| {_md_escape(run.label)} | — | not run: {_md_escape(run.error)} |||||")
            continue
        c = run.counts()
        lines.append(
            f"| {_md_escape(run.label)} ({run.source}, {run.url}) | {run.adapter} | "
            f"{c['passed']} | {c['failed']} | {c['deviation']} | {c['not-applicable']} | "
            f"{run.duration_s:.1f} s |"
        )
    runs = [run for run in report.runs if run.error is None]
    if runs:
        lines += ["", "## Broker capabilities", ""]
        lines.append("| capability | " + " | ".join(_md_escape(r.label) for r in runs) + " |")
        lines.append("|---|" + "---|" * len(runs))
        names = sorted(
            {n for r in runs for n in (*r.capabilities.present, *r.capabilities.missing)}
        )
        for name in names:
            cells = []
            for run in runs:
                if name in run.capabilities.present:
                    cells.append("yes")
                else:
                    cells.append("no: " + _md_escape(run.capabilities.missing.get(name, "?")))
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## Matrix", ""]
    for family, title, entries in _by_family(report):
        lines += [f"### {title} ({family})", ""]
        lines.append(
            "| check | level | title | "
            + " | ".join(_md_escape(_column(r)) for r in report.runs)
            + " |"
        )
        lines.append("|---|---|---|" + "---|" * len(report.runs))
        for entry in entries:
            row = " | ".join(_cell(run.result(entry.id)) for run in report.runs)
            lines.append(f"| {entry.id} | {entry.level} | {_md_escape(entry.title)} | {row} |")
        lines.append("")
    notable = [
        (entry, run, result)
        for _, _, entries in _by_family(report)
        for entry in entries
        for run in report.runs
        if (result := run.result(entry.id)) is not None and result.outcome is not Outcome.PASSED
    ]
    lines += ["## Failures, deviations and not-applicable checks", ""]
    if not notable:
        lines += ["None: every check passed.", ""]
    for entry, run, result in notable:
        lines += [f"### {entry.id} on {run.label}: {result.outcome.value}", ""]
        lines.append(f"*{entry.title}* — {entry.text}")
        lines.append("")
        lines.append(f"Source: {entry.source}. Level: {entry.level}.")
        lines.append("")
        lines.append(f"**{result.summary}**")
        lines.append("")
        if result.observed is not None:
            lines.append(f"- observed: `{_md_escape(result.observed)}`")
        if result.expected is not None:
            lines.append(f"- expected: `{_md_escape(result.expected)}`")
        if result.fallback:
            lines.append(f"- verified instead: {result.fallback}")
        if result.evidence:
            lines += ["", "```text", *[_indent(e) for e in result.evidence], "```"]
        lines.append("")
    lines += ["## Catalogue", ""]
    for family, title, entries in _by_family(report):
        lines += [f"### {title} ({family})", ""]
        for entry in entries:
            needs = f" Needs: {', '.join(entry.capabilities)}." if entry.capabilities else ""
            lines.append(
                f"- **{entry.id}** {entry.title} ({entry.level}). {entry.text} "
                f"Source: {entry.source}.{needs}"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _indent(text: str) -> str:
    return text.replace("```", "'''")


# --------------------------------------------------------------------------- JSON


def render_json(report: Report) -> str:
    return report.model_dump_json(indent=2) + "\n"


# --------------------------------------------------------------------------- JUnit XML


def _suite_name(run: BrokerRun) -> str:
    return f"jmspy-conformance.{run.label}"


def render_junit(report: Report) -> str:
    root = ET.Element("testsuites", name="jmspy-conformance")
    total = failures = skipped = errors = 0
    entries = {e.id: e for e in report.catalogue}
    for run in report.runs:
        suite = ET.SubElement(root, "testsuite", name=_suite_name(run))
        suite.set("timestamp", run.started_at)
        properties = ET.SubElement(suite, "properties")
        for name, value in (
            ("broker.kind", run.kind),
            ("broker.url", run.url),
            ("broker.version", run.version),
            ("broker.product", run.product),
            ("broker.source", run.source),
            ("adapter", run.adapter),
        ):
            ET.SubElement(properties, "property", name=name, value=value)
        for name, why in run.capabilities.present.items():
            ET.SubElement(properties, "property", name=f"capability.{name}", value=f"yes: {why}")
        for name, why in run.capabilities.missing.items():
            ET.SubElement(properties, "property", name=f"capability.{name}", value=f"no: {why}")
        s_tests = s_fail = s_skip = s_err = 0
        if run.error is not None:
            case = ET.SubElement(
                suite, "testcase", classname=_suite_name(run), name="broker", time="0"
            )
            ET.SubElement(case, "error", message=run.error, type="provisioning").text = run.error
            s_tests, s_err = 1, 1
        for result in run.results:
            entry = entries.get(result.check_id)
            title = entry.title if entry else ""
            family = entry.family if entry else result.check_id.split("-")[0]
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{_suite_name(run)}.{family}",
                name=f"{result.check_id} {title}".strip(),
                time=f"{result.duration_s:.3f}",
            )
            s_tests += 1
            body = _details_text(entry, result)
            if result.outcome is Outcome.FAILED:
                s_fail += 1
                ET.SubElement(case, "failure", message=result.summary, type="failed").text = body
            elif result.outcome is Outcome.NOT_APPLICABLE:
                s_skip += 1
                ET.SubElement(case, "skipped", message=f"not applicable: {result.summary}")
            elif result.outcome is Outcome.DEVIATION:
                ET.SubElement(case, "system-out").text = f"BROKER DEVIATION\n{body}"
            else:
                ET.SubElement(case, "system-out").text = body
        suite.set("tests", str(s_tests))
        suite.set("failures", str(s_fail))
        suite.set("skipped", str(s_skip))
        suite.set("errors", str(s_err))
        suite.set("time", f"{run.duration_s:.3f}")
        total += s_tests
        failures += s_fail
        skipped += s_skip
        errors += s_err
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("skipped", str(skipped))
    root.set("errors", str(errors))
    root.set("time", f"{report.duration_s:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _details_text(entry: CatalogueEntry | None, result: Result) -> str:
    lines = []
    if entry is not None:
        lines.append(f"{entry.id}: {entry.text}")
        lines.append(f"source: {entry.source}; level: {entry.level}")
    lines.append(f"result: {result.outcome.value}: {result.summary}")
    if result.observed is not None:
        lines.append(f"observed: {result.observed}")
    if result.expected is not None:
        lines.append(f"expected: {result.expected}")
    if result.fallback:
        lines.append(f"verified instead: {result.fallback}")
    lines += [f"evidence: {e}" for e in result.evidence]
    return "\n".join(lines)


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1200px;padding:0 1em;color:#1d2330}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccd;
padding-bottom:.2em}h3{margin-top:1.5em}
table{border-collapse:collapse;margin:.6em 0;width:100%}
th,td{border:1px solid #d5d8e0;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f1f3f7}td.r{text-align:center;white-space:nowrap;font-weight:600}
.passed{background:#e3f5e6;color:#17612a}.failed{background:#fbe0e0;color:#9b1c1c}
.deviation{background:#fff3d6;color:#7a5300}.not-applicable{background:#eceef2;color:#4a5060}
.none{color:#999}a{color:#2556a8;text-decoration:none}a:hover{text-decoration:underline}
.muted{color:#5a6070}.check{border:1px solid #d5d8e0;border-radius:6px;padding:.6em 1em;
margin:1em 0}.check h3{margin:.2em 0}.res{margin:.5em 0;padding:.4em .6em;border-radius:4px}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f7f9;padding:.5em;
border-radius:4px;font-size:12px;margin:.3em 0}.tag{display:inline-block;padding:0 .4em;
border-radius:3px;background:#eef;font-size:12px;margin-right:.3em}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _anchor(check_id: str) -> str:
    return f"c-{check_id}"


def render_html(report: Report) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(report.title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{_e(report.title)}</h1>",
        f'<p class="muted">Generated {_e(report.generated_at)} by jmspy '
        f"{_e(report.jmspy_version)} in {report.duration_s:.1f} s; {_chosen_count(report)} checks "
        f"({_e(_family_counts(report))})"
        + (f"; selected by {_e(', '.join(report.selection))}" if report.selection else "")
        + ".</p>",
        "<h2>Summary</h2>",
        "<table><tr><th>broker</th><th>adapter</th><th>passed</th><th>failed</th>"
        "<th>deviation</th><th>not applicable</th><th>time</th></tr>",
    ]
    for run in report.runs:
        if run.error is not None:
            parts.append(
                f'<tr><td>{_e(run.label)}</td><td colspan="6" class="failed">not run: '
                f"{_e(run.error)}</td></tr>"
            )
            continue
        c = run.counts()
        parts.append(
            f"<tr><td>{_e(run.label)}<br><span class=muted>{_e(run.source)}, {_e(run.url)}, "
            f"{_e(run.product)} {_e(run.version)}</span></td><td>{_e(run.adapter)}</td>"
            f'<td class="r passed">{c["passed"]}</td><td class="r failed">{c["failed"]}</td>'
            f'<td class="r deviation">{c["deviation"]}</td>'
            f'<td class="r not-applicable">{c["not-applicable"]}</td>'
            f"<td>{run.duration_s:.1f} s</td></tr>"
        )
    parts.append("</table>")
    runs = [r for r in report.runs if r.error is None]
    if runs:
        parts.append("<h2>Broker capabilities</h2><table><tr><th>capability</th>")
        parts += [f"<th>{_e(r.label)}</th>" for r in runs]
        parts.append("</tr>")
        names = sorted(
            {n for r in runs for n in (*r.capabilities.present, *r.capabilities.missing)}
        )
        for name in names:
            parts.append(f"<tr><td>{_e(name)}</td>")
            for run in runs:
                if name in run.capabilities.present:
                    why = run.capabilities.present[name]
                    parts.append(f'<td class="passed" title="{_e(why)}">yes</td>')
                else:
                    why = run.capabilities.missing.get(name, "")
                    parts.append(f'<td class="not-applicable">no: {_e(why)}</td>')
            parts.append("</tr>")
        parts.append("</table>")
    parts.append('<h2 id="matrix">Matrix</h2>')
    for family, title, entries in _by_family(report):
        parts.append(f"<h3>{_e(title)} ({_e(family)})</h3>")
        parts.append("<table><tr><th>check</th><th>level</th><th>title</th>")
        parts += [f"<th>{_e(_column(r))}</th>" for r in report.runs]
        parts.append("</tr>")
        for entry in entries:
            parts.append(
                f'<tr><td><a href="#{_anchor(entry.id)}">{_e(entry.id)}</a></td>'
                f"<td>{_e(entry.level)}</td><td>{_e(entry.title)}</td>"
            )
            for run in report.runs:
                result = run.result(entry.id)
                if result is None:
                    parts.append('<td class="r none">—</td>')
                else:
                    parts.append(
                        f'<td class="r {result.outcome.value}" title="{_e(result.summary)}">'
                        f"{_e(_WORD[result.outcome])}</td>"
                    )
            parts.append("</tr>")
        parts.append("</table>")
    parts.append("<h2>Checks</h2>")
    for family, title, entries in _by_family(report):
        parts.append(f"<h3>{_e(title)} ({_e(family)})</h3>")
        for entry in entries:
            parts.append(_html_check(entry, report.runs))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _html_check(entry: CatalogueEntry, runs: Sequence[BrokerRun]) -> str:
    tags = "".join(f'<span class="tag">needs {_e(c)}</span>' for c in entry.capabilities)
    out = [
        f'<div class="check" id="{_anchor(entry.id)}">',
        f"<h3>{_e(entry.id)} {_e(entry.title)}</h3>",
        f'<p><span class="tag">level {_e(entry.level)}</span>{tags}'
        + (f'<span class="tag">reason {_e(entry.reason)}</span>' if entry.reason else "")
        + "</p>",
        f"<p>{_e(entry.text)}</p>",
        f'<p class="muted">Source: {_e(entry.source)}</p>',
    ]
    if entry.fallback:
        out.append(f'<p class="muted">Without the capability: {_e(entry.fallback)}</p>')
    for run in runs:
        result = run.result(entry.id)
        if result is None:
            continue
        out.append(
            f'<div class="res {result.outcome.value}"><b>{_e(run.label)}: '
            f"{_e(result.outcome.value)}</b> ({result.duration_s:.2f} s) — {_e(result.summary)}"
        )
        if result.observed is not None:
            out.append(f"<br>observed: <code>{_e(result.observed)}</code>")
        if result.expected is not None:
            out.append(f"<br>expected: <code>{_e(result.expected)}</code>")
        if result.fallback:
            out.append(f"<br>verified instead: {_e(result.fallback)}")
        if result.evidence:
            opened = " open" if result.outcome is not Outcome.PASSED else ""
            out.append(f"<details{opened}><summary>evidence</summary>")
            out += [f"<pre>{_e(e)}</pre>" for e in result.evidence]
            out.append("</details>")
        out.append("</div>")
    out.append("</div>")
    return "\n".join(out)


# --------------------------------------------------------------------------- files

_RENDERERS = {
    "md": render_markdown,
    "json": render_json,
    "junit": render_junit,
    "html": render_html,
}


def write_reports(report: Report, directory: Path, formats: Iterable[str] = FORMATS) -> list[Path]:
    """Write the chosen formats into ``directory`` (created); returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        path = directory / FILE_NAMES[fmt]
        path.write_text(_RENDERERS[fmt](report), encoding="utf-8")
        written.append(path)
    return written
