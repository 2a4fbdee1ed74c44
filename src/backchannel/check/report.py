"""The report card three ways: a table in the terminal, JSON for CI, a page for people.

``print_table`` writes the verdicts as a table (rich) and, under it, each failure with the
rule it broke and the end of the exchange that shows it. ``as_json`` is the document CI
reads: ``{"target": ..., "checks": [{"id", "group", "verdict", "spec", "evidence"}, ...]}``.
``as_html`` is one self-contained page (no script, no request to anywhere): the counts, a
table of verdicts per group, and each failure a ``<details>`` that opens on the evidence,
what was sent and what came back, line by line.
"""

from __future__ import annotations

__all__ = ["as_html", "as_json", "print_table"]

import datetime
import html
import json
from typing import TextIO

from .outcome import Outcome
from .runner import Report
from .spec import GROUPS

_MARK = {"pass": "[green]pass[/]", "fail": "[bold red]FAIL[/]", "n/a": "[dim]n/a[/]"}


def as_json(report: Report) -> str:
    return json.dumps(report.as_json(), indent=2, ensure_ascii=False)


def _ordered(report: Report) -> list[tuple[str, list[Outcome]]]:
    return [
        (group, [o for o in report.outcomes if o.group == group])
        for group in GROUPS
        if any(o.group == group for o in report.outcomes)
    ]


def print_table(report: Report, out: TextIO, *, width: int | None = None) -> None:
    """The verdicts as a table, then each failure's rule and evidence."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(file=out, width=width, highlight=False, soft_wrap=False)
    counts = report.counts()
    server = report.server.get("name", "?")
    version = report.server.get("version", "")
    eras = ", ".join(f"{era} {revision}" for era, revision in report.eras.items()) or "no era it speaks"
    console.print(f"[bold]backchannel check[/] {escape(report.target)} ({report.transport})")
    console.print(f"server {escape(str(server))} {escape(str(version))}; speaks {eras}")
    for group, outcomes in _ordered(report):
        table = Table(title=GROUPS[group], title_justify="left", expand=True, show_lines=False)
        table.add_column("verdict", no_wrap=True, width=7)
        table.add_column("check", no_wrap=True, overflow="ellipsis", max_width=40)
        table.add_column("what was found (the rule tested)", overflow="fold", ratio=1)
        for outcome in outcomes:
            rule = outcome.rule
            found = f"{escape(outcome.summary[:300])}\n[dim]{escape(rule.revision)} {escape(rule.file)}:{rule.line}[/]"
            table.add_row(_MARK[outcome.verdict], escape(outcome.key), found)
        console.print(table)
    failures = [o for o in report.outcomes if o.verdict == "fail"]
    if failures:
        console.print("[bold]Failures[/]")
    for outcome in failures:
        console.print(f"[bold red]{escape(outcome.key)}[/]: {escape(outcome.summary)}")
        console.print(f"  [dim]{escape(outcome.rule.cited())}: {escape(outcome.rule.text)}[/]")
        for line in outcome.exchange[-6:]:
            arrow = {"sent": "->", "received": "<-", "note": "  "}[line.direction]
            console.print(f"  [dim]{line.at:7.3f}[/] {arrow} {escape(line.text[:240])}", soft_wrap=True)
    console.print(
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['n/a']} not applicable in {report.seconds:.0f} s"
    )


_STYLE = """
:root { --pass: #1a7f37; --fail: #cf222e; --na: #6e7781; --line: #d0d7de; font-family: system-ui, sans-serif; }
body { margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #1f2328; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { margin-top: 2rem; font-size: 1.15rem; }
.meta { color: var(--na); margin: .2rem 0; }
.counts { display: flex; gap: .8rem; margin: 1rem 0; }
.count { border-radius: 6px; padding: .5rem 1rem; color: white; font-weight: 600; font-size: 1.1rem; }
.count.pass { background: var(--pass); } .count.fail { background: var(--fail); } .count.na { background: var(--na); }
table.verdicts { border-collapse: collapse; width: 100%; }
table.verdicts th, table.verdicts td { border-bottom: 1px solid var(--line); padding: .45rem .5rem;
  text-align: left; vertical-align: top; }
table.verdicts th { background: #f6f8fa; font-size: .85rem; }
.verdict { font-weight: 700; white-space: nowrap; border-radius: 4px; padding: .1rem .45rem; color: white; }
.verdict.pass { background: var(--pass); } .verdict.fail { background: var(--fail); }
.verdict.na { background: var(--na); }
tr.fail td { background: #fff5f5; }
tr.evidence td { padding-top: 0; }
code, .exchange { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .8rem; }
.spec { color: var(--na); font-size: .8rem; }
details summary { cursor: pointer; }
ol.exchange { list-style: none; padding: .5rem; margin: .5rem 0 0; background: #f6f8fa; border-radius: 6px;
  max-height: 28rem; overflow: auto; }
ol.exchange li { white-space: pre-wrap; word-break: break-all; padding: .1rem 0; }
ol.exchange .sent::before { content: "→ sent "; color: #0969da; font-weight: 600; }
ol.exchange .received::before { content: "← received "; color: #8250df; font-weight: 600; }
ol.exchange .note::before { content: "· "; color: var(--na); }
ol.exchange .at { color: var(--na); }
"""


def as_html(report: Report) -> str:
    """The report card as one page: counts, one table of verdicts per group, failures that open."""
    esc = html.escape
    counts = report.counts()
    eras = ", ".join(f"{era} ({revision})" for era, revision in report.eras.items()) or "no era it speaks"
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    server = f"{report.server.get('name', '?')} {report.server.get('version', '')}".strip()
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>backchannel check: {esc(server)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>Report card: {esc(server)}</h1>",
        f'<p class="meta">target <code>{esc(report.target)}</code> over {esc(report.transport)}; speaks {esc(eras)};'
        f" checked {esc(when)} in {report.seconds:.0f} s by backchannel check</p>",
        '<div class="counts">',
        f'<span class="count pass">{counts["pass"]} passed</span>',
        f'<span class="count fail">{counts["fail"]} failed</span>',
        f'<span class="count na">{counts["n/a"]} not applicable</span>',
        "</div>",
    ]
    for group, outcomes in _ordered(report):
        parts.append(f'<h2 id="{esc(group)}">{esc(GROUPS[group])}</h2>')
        parts.append(
            f'<table class="verdicts" data-group="{esc(group)}"><thead><tr><th>verdict</th><th>check</th>'
            "<th>what it asks</th><th>what was found</th><th>spec</th></tr></thead><tbody>"
        )
        for outcome in outcomes:
            parts.append(_row(outcome))
        parts.append("</tbody></table>")
    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(note)}</li>" for note in report.notes) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _row(outcome: Outcome) -> str:
    """A verdict's row; a failure's is followed by a row across the table that opens on its evidence."""
    esc = html.escape
    kind = "na" if outcome.verdict == "n/a" else outcome.verdict
    rule = outcome.rule
    spec = (
        f'<span class="spec">{esc(rule.revision)} <code>{esc(rule.file)}:{rule.line}</code> '
        f"§{esc(rule.section)}{', ' + esc(rule.keyword) if rule.keyword else ''}: {esc(rule.text)}</span>"
    )
    row = (
        f'<tr class="{kind}" id="{esc(outcome.key)}">'
        f'<td><span class="verdict {kind}">{esc(outcome.verdict)}</span></td>'
        f"<td><code>{esc(outcome.key)}</code></td><td>{esc(outcome.title)}</td><td>{esc(outcome.summary)}</td>"
        f"<td>{spec}</td></tr>"
    )
    if outcome.verdict != "fail" or not outcome.exchange:
        return row
    items = "".join(
        f'<li class="{line.direction}"><span class="at">{line.at:7.3f}s</span> {esc(line.text)}</li>'
        for line in outcome.exchange
    )
    sent = sum(1 for line in outcome.exchange if line.direction == "sent")
    received = sum(1 for line in outcome.exchange if line.direction == "received")
    return row + (
        f'<tr class="fail evidence" id="{esc(outcome.key)}-evidence"><td></td><td colspan="4">'
        f"<details><summary>the evidence: {sent} sent, {received} received</summary>"
        f'<ol class="exchange">{items}</ol></details></td></tr>'
    )
