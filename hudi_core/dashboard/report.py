"""A shareable postmortem report: one JSON document and one self-contained HTML file.

:func:`build_report` gathers what a bug report needs from the engine: the table facts and findings,
the doctor's findings, the clean dry-run, the archival dry-run with and without the HUDI-7779
guard (and the replaced file groups each would expose), duplicate log-block sequences, any file
group histories asked for, and the instants and markers of the timeline chart. :func:`redact`
replaces the table's location (and bucket) in every string, for public bug reports.
:func:`render_html` writes the same document as HTML that opens offline: Plotly's JavaScript is
inlined, the chart is the dashboard's timeline chart, and the JSON itself is embedded
(``<script type="application/json" id="report-data">``), so the page and `--format json` agree.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc

from hudi_core.dashboard import charts, frames
from hudi_core.inspect import TableInspector
from hudi_core.services.archive import GuardName
from hudi_core.services.config import ServiceConfig
from hudi_core.services.doctor import age_text
from hudi_core.services.markers import Marker, MarkerKind, timeline_markers

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

REPORT_VERSION = 1
REDACTED_TABLE = "<table>"
#: Longest file list the report carries (evidence, files to delete): a shareable report stays small on tables
#: with millions of files; the full lists are one `doctor` / `plan-clean` command away. `*_total` keeps the count.
REPORT_LIST_LIMIT = 1000
#: The instant columns the timeline chart reads (file names and decode errors stay out of the report).
CHART_COLUMNS = ["requested_time", "action", "state", "pending_action", "completed_action", "completion_time",
                 "source", "operation_type"]


def _bounded_doctor(doctor: dict[str, Any]) -> dict[str, Any]:
    """The doctor's JSON with each finding's evidence file list cut at :data:`REPORT_LIST_LIMIT`."""
    findings = []
    for f in doctor["health_findings"]:
        files = f["evidence"]["files"]
        if len(files) > REPORT_LIST_LIMIT:
            f = {**f, "evidence": {**f["evidence"], "files": files[:REPORT_LIST_LIMIT], "files_total": len(files)}}
        findings.append(f)
    return {**doctor, "health_findings": findings}


def _clean_summary(plan: Any) -> dict[str, Any]:
    """The clean dry-run for the report: decisions counted by reason, the files to delete cut at the limit."""
    full = plan.to_dict()
    kept: dict[str, int] = {}
    for d in plan.kept:
        kept[d.reason] = kept.get(d.reason, 0) + 1
    cut = ("files_to_delete", "files_to_delete_if_forced")
    out = {k: v for k, v in full.items() if k not in ("kept", "hoodie_cleaner_plan", *cut)}
    for key in cut:  # a clean Hudi would not schedule deletes nothing; a forced one is reported apart
        listed = full.get(key) or []
        out[key], out[f"{key}_total"] = listed[:REPORT_LIST_LIMIT], len(listed)
    out["kept_by_reason"] = dict(sorted(kept.items()))
    return out


def build_report(table: HudiTable, conf: Mapping[str, str] | ServiceConfig | None = None, *,
                 now: dt.datetime | None = None, histories: Iterable[str] = ()) -> dict[str, Any]:
    """The report document (plain JSON data) of `table` under the cleaner/archiver config `conf`."""
    from hudi_core.services.archive import plan_archive
    from hudi_core.services.doctor import DoctorContext, DoctorOptions, run_doctor
    from hudi_core.services.history import file_group_history
    from hudi_core.services.verdict import compute_verdict

    config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(dict(conf or {}))
    moment = now or dt.datetime.now(dt.UTC)
    # The doctor's context computes the clean plan, the guarded archive plan and the duplicate analysis
    # once; the report reads them from it rather than computing them again.
    ctx = DoctorContext(table, config, DoctorOptions(now=moment), all_kept_files=True)  # kept files by reason
    doctor = run_doctor(table, config, context=ctx)
    verdict = compute_verdict(table, config, ctx.options, triage=doctor, view=ctx.view)
    clean = ctx.clean_plan
    guarded = ctx.archive_plan
    bare = plan_archive(table, config, savepoint_guard=False)
    instants = TableInspector(table).instants(archived=True)
    archived = int(pc.sum(pc.not_equal(instants["source"], "active")).as_py() or 0)
    source = (f"unified timeline: {instants.num_rows - archived} active + {archived} archived instants" if archived
              else "active timeline (no archived instants)")
    marks = timeline_markers(table, config, now=moment, plan=guarded)
    duplicates = [r.to_dict() for r in ctx.duplicates]
    return {
        "report_version": REPORT_VERSION,
        "verdict": verdict.to_dict(),
        "generated_at": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "redacted": False,
        "conf": {k: str(v) for k, v in config.explicit.items()},
        "hudi_release": config.hudi_release,
        "table": table.describe(),
        "doctor": _bounded_doctor(doctor.to_dict()),
        "dry_runs": {"clean": _clean_summary(clean), "archive_with_guard": guarded.to_dict(),
                     "archive_without_guard": bare.to_dict()},
        "exposed_file_groups": {"with_guard": [e.to_dict() for e in guarded.exposed_file_groups],
                                "without_guard": [e.to_dict() for e in bare.exposed_file_groups]},
        "duplicate_sequences": duplicates,
        # Pending writes with their writers' heartbeats, the lock and markers (computed by the doctor's context).
        "writers": ctx.writers.to_dict(),
        "histories": [file_group_history(table, fid).to_dict() for fid in histories],
        "timeline": {"source": source, "timezone": table.properties.timezone,
                     "replaced": frames.replaced_by_instant(table),
                     "instants": instants.select(CHART_COLUMNS).to_pylist(),
                     "markers": [m.to_dict() for m in marks]},
        "findings": [f.to_dict() for f in table.findings],
    }


def redact(document: Any, uri: str) -> Any:
    """`document` with the table location replaced by ``<table>`` in every string (keys too), and an
    object store's bucket (``s3://bucket/…``) by ``<bucket>`` wherever else it appears."""
    base = uri.rstrip("/")
    # Longest first: the file URL of a local table before its bare path.
    patterns = [(re.escape("file://" + base), REDACTED_TABLE)] if "://" not in base else []
    patterns.append((re.escape(base), REDACTED_TABLE))
    match = re.match(r"^([a-z][a-z0-9+.-]*://)([^/]+)", base)
    if match and match.group(1) != "file://":
        patterns.append((re.escape(match.group(1) + match.group(2)), match.group(1) + "<bucket>"))
    compiled = [(re.compile(p), r) for p, r in patterns]

    def text(value: str) -> str:
        for pattern, replacement in compiled:
            value = pattern.sub(replacement, value)
        return value

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return text(value)
        if isinstance(value, Mapping):
            return {text(str(k)): walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    out = walk(document)
    if isinstance(out, dict):
        out["redacted"] = True
    return out


# -- HTML ----------------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1f2328;max-width:1400px}
h1{margin-bottom:4px}h2{margin-top:32px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #d0d7de;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa}code{font-size:12px}
.sev{font-weight:600;padding:1px 6px;border-radius:4px}.error{background:#ffebe9;color:#cf222e}
.warning{background:#fff8c5;color:#9a6700}.info{background:#ddf4ff;color:#0969da}.healthy{background:#dafbe1;
color:#1a7f37}.muted{color:#57606a;font-size:12px}details{margin:4px 0}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _table(rows: list[Mapping[str, Any]], columns: list[str], empty: str = "none") -> str:
    if not rows:
        return f"<p class='muted'>{_e(empty)}</p>"
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    shown = rows[:REPORT_LIST_LIMIT]
    body = "".join("<tr>" + "".join(f"<td>{_cell(r.get(c))}</td>" for c in columns) + "</tr>" for r in shown)
    more = f"<p class='muted'>… {len(rows) - len(shown)} more rows</p>" if len(rows) > len(shown) else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return "<br>".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return "<code>" + _e(json.dumps(value, sort_keys=True)) + "</code>"
    return _e(value)


def _finding_html(f: Mapping[str, Any]) -> str:
    ev = f["evidence"]
    facts = [("instants", ", ".join(ev["instants"])), ("files", "<br>".join(_e(x) for x in ev["files"])),
             ("file groups", ", ".join(f"{g['partition']}/{g['file_id']}" for g in ev["file_groups"])),
             ("partitions", ", ".join(ev["partitions"])), ("blocks", "<br>".join(_e(x) for x in ev["blocks"])),
             ("files in all", ev.get("files_total")),
             ("age", age_text(ev["age_hours"]) if ev["age_hours"] is not None else None), ("bytes", ev["bytes"]),
             ("count", ev["count"]), ("limit", ev["limit"]),
             ("detail", ev["detail"])]
    rows = "".join(f"<tr><th>{k}</th><td>{v if k in ('files', 'blocks') else _e(v)}</td></tr>"
                   for k, v in facts if v not in (None, "", []))
    return (f"<details class='finding'><summary><span class='sev {f['severity']}'>{_e(f['severity'])}</span> "
            f"<code>{_e(f['check'])}</code> {_e(f['title'])}</summary><table>{rows}</table>"
            f"<p><b>Why:</b> {_e(f['why'])}</p><p><b>What to do:</b> {_e(f['what_to_do'])}</p></details>")


def verdict_html(verdict: Mapping[str, Any]) -> str:
    """The verdict first: status and headline, then each item with its files, why and what to do."""
    status = verdict["status"]
    css = {"ok": "healthy", "incomplete": "warning"}.get(status, status)
    items = "".join(
        f"<li><span class='sev {i['severity']}'>{_e(i['severity'])}</span> {_e(i['title'])}"
        + ("<br>" + "<br>".join(f"<code>{_e(f)}</code>" for f in i["files"][:20]) if i["files"] else "")
        + (f"<br><b>Why:</b> {_e(i['why'])}<br><b>What to do:</b> {_e(i['what_to_do'])}" if i["why"] else "")
        + "</li>" for i in verdict["items"])
    return (f"<div id='verdict'><h2>Verdict: <span class='sev {css}'>{_e(status)}</span></h2>"
            f"<p><b>{_e(verdict['headline'])}</b></p>" + (f"<ul>{items}</ul>" if items else "") + "</div>")


def _archive_html(plan: Mapping[str, Any]) -> str:
    boundary = plan["boundary"]
    archived = [d["requested_time"] for d in plan["instants"] if d["decision"] == "archive"]
    guards = _table(plan["guards"], ["name", "instant", "binding", "detail"])
    return (f"<p>{_e(plan['archiver'])}; keep min {plan['min_to_keep']} / max {plan['max_to_keep']}; boundary "
            f"<code>{_e(boundary['instant'])}</code> set by <code>{_e(boundary['guard'])}</code>; archives "
            f"{len(archived)} instants: {_e(', '.join(archived) or '-')}</p>{guards}"
            + _table(plan["exposed_file_groups"], ["partition", "file_id", "replaced_by", "replacement_file_ids"],
                     "no replaced file group exposed"))


def dry_run_release(document: Mapping[str, Any]) -> str:
    """The Hudi release the report's dry runs emulate (``"1.2.x"``): the plans' own `hudi_release`, which
    readers do not share (they emulate `table.EMULATED_HUDI_RELEASE`, as the Overview says)."""
    runs = document["dry_runs"]
    for plan in (runs["archive_with_guard"], runs["clean"]):
        if plan.get("hudi_release"):
            return str(plan["hudi_release"])
    return f"{document.get('hudi_release')}.x"


def render_html(document: Mapping[str, Any], figure_html: str) -> str:
    """The report as one HTML file: `figure_html` is the timeline chart's div (Plotly JS is inlined here)."""
    from plotly.offline import get_plotlyjs

    facts = document["table"]
    doctor = document["doctor"]
    clean = document["dry_runs"]["clean"]
    release = _e(dry_run_release(document))
    status = doctor["status"]
    data = json.dumps(document, default=str).replace("</", "<\\/")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Hudi postmortem: {_e(facts.get('name'))}</title><style>{_CSS}</style>",
        f"<script>{get_plotlyjs()}</script></head><body>",
        f"<h1>Hudi postmortem: {_e(facts.get('name'))}</h1>",
        f"<p class='muted'>{_e(facts.get('uri'))} · generated {_e(document['generated_at'])} by Hudi Timeline "
        f"Inspector (read as Hudi {_e(facts.get('emulated_hudi_release'))} reads it; dry runs emulate Hudi {release})"
        + (" · redacted" if document.get("redacted") else "") + "</p>",
        verdict_html(document["verdict"]),
        f"<p id='status'>Health: <span class='sev {status}'>{_e(status)}</span> "
        f"({doctor['counts']['error']} errors, {doctor['counts']['warning']} warnings, "
        f"{doctor['counts']['info']} info; {len(doctor['checks'])} checks)</p>",
        "<h2>Table facts</h2>",
        _table([{"key": k, "value": v} for k, v in facts.items()], ["key", "value"]),
        "<h2>Timeline</h2>", f"<p class='muted'>{_e(document['timeline']['source'])}</p>", figure_html,
        "<h2 id='doctor'>Doctor</h2>",
        "".join(_finding_html(f) for f in doctor["health_findings"]) or "<p class='healthy sev'>no findings</p>",
        f"<h2>Clean dry-run (Hudi {release})</h2>",
        f"<p>policy {_e(clean['policy'])}; earliest commit to retain <code>{_e(clean['earliest_commit_to_retain'])}"
        f"</code> ({_e(clean['earliest_commit_to_retain_detail'])}); triggered: {_e(clean['triggered'])} "
        f"({_e(clean['trigger_detail'])}); {clean['files_to_delete_total']} files to delete; kept: "
        f"{_e(', '.join(f'{n} {r}' for r, n in clean['kept_by_reason'].items()) or 'none')}</p>",
        _table(clean["files_to_delete"], ["partition", "file_id", "file", "base_instant", "reason"],
               "nothing to delete"),
        (f"<p>Hudi would <b>not</b> schedule this clean: {_e(clean.get('not_scheduled_detail') or '')} "
         f"({_e(clean.get('not_scheduled_reason'))}). If forced, it would delete "
         f"{clean['files_to_delete_if_forced_total']} files:</p>"
         + _table(clean["files_to_delete_if_forced"], ["partition", "file_id", "file", "base_instant", "reason"],
                  "nothing")) if clean.get("not_scheduled_reason") else "",
        f"<h2>Archival dry-run (Hudi {release}), with the HUDI-7779 guard</h2>",
        _archive_html(document["dry_runs"]["archive_with_guard"]),
        f"<h2>Archival dry-run (Hudi {release}), without the guard (as Hudi before HUDI-7779)</h2>",
        _archive_html(document["dry_runs"]["archive_without_guard"]),
        "<h2>Writers</h2>",
        f"<p class='muted'>heartbeat every {document['writers']['heartbeat']['interval_ms']} ms, expired after "
        f"{document['writers']['heartbeat']['expiry_ms']} ms; failed writes "
        f"{_e(document['writers']['heartbeat']['failed_writes_policy'])}; judged at "
        f"{_e(document['writers']['now'])}</p>",
        _table(document["writers"]["pending"], ["instant", "action", "state", "writer", "heartbeat_time",
                                                "heartbeat_age_ms", "rollback", "rollback_reason"], "no pending write"),
        "<h2>Duplicate log-block sequences</h2>",
        _table([{"partition": d["partition"], "file_id": d["file_id"], "instant": d["instant_time"],
                 "attempts": len(d["attempts"]), "risk": d["risk"]["level"]} for d in document["duplicate_sequences"]],
               ["partition", "file_id", "instant", "attempts", "risk"], "none (or not a merge-on-read table)"),
    ]
    for h in document["histories"]:
        parts.append(f"<h2>History of {_e(h['file_id'])}</h2>")
        parts.append(_table(h["events"], ["requested_time", "action", "state", "source", "event", "partition",
                                          "files", "detail"], "no instant names this file group"))
    parts.append("<h2>Findings while reading</h2>")
    parts.append(_table(document["findings"], ["severity", "code", "path", "message"], "none"))
    parts.append(f"<script type='application/json' id='report-data'>{data}</script></body></html>")
    return "".join(parts)


def timeline_figure_html(document: Mapping[str, Any]) -> str:
    """The dashboard's timeline chart of the report's instants and markers, as a Plotly div."""
    import pandas as pd

    tl = document["timeline"]
    frame = pd.DataFrame(tl["instants"])
    marks = [Marker(MarkerKind(m["kind"]), m["instant"], m["source"], m["explanation"],
                    GuardName(m["guard"]) if m["guard"] else None) for m in tl["markers"]]
    fig = charts.timeline_figure(frame, marks, tl["replaced"], timezone=tl["timezone"])
    return str(fig.to_html(full_html=False, include_plotlyjs=False, div_id="timeline-chart"))


def report_html(document: Mapping[str, Any]) -> str:
    """:func:`render_html` with the timeline chart drawn from the document itself."""
    return render_html(document, timeline_figure_html(document))
