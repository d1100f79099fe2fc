"""CLI command `writers`: pending writes and their writers' heartbeats, locks, markers (exit 0 fine, 1 incomplete,
2 a problem found)."""

from __future__ import annotations

import argparse
from typing import Any

from hudi_core.cli.output import render_json
from hudi_core.cli.plans import AddFn, _add_conf, _config, _now

EXIT_PROBLEM = 2

_WRITER_WORDS = {"alive": "alive", "expired": "dead (heartbeat expired)", "no_heartbeat": "dead (no heartbeat file)"}
_ROLLBACK_WORDS = {"next_write": "the next write", "next_clean": "the next clean", None: "nobody"}


def _cli() -> Any:
    from hudi_core import cli

    return cli


def cmd_writers(args: argparse.Namespace) -> int:
    """`hudi-inspect writers TABLE [--now T] [--conf K=V ...]`."""
    from hudi_core.services.writers import analyse_writers, human_ms

    table = _cli()._open(args)
    report = analyse_writers(table, _config(args), now=_now(args), with_concurrency=True)
    args._extra_findings = [*getattr(args, "_extra_findings", []), *report.files.findings]
    code = EXIT_PROBLEM if report.problems else 0
    payload = report.to_dict()
    if args.format == "json":
        print(render_json(_cli().with_findings(args, payload)))
        return code
    rows = [{"instant": p["instant"], "action": p["action"], "state": p["state"], "writer": p["writer"],
             "heartbeat_time": p["heartbeat_time"], "heartbeat_age_ms": p["heartbeat_age_ms"],
             "rollback": p["rollback"], "reason": p["rollback_reason"]} for p in payload["pending"]]
    if args.format == "csv":
        _cli()._emit(args, rows, columns=list(rows[0]) if rows else ["instant"])
        return code
    s = report.settings
    print(f"Heartbeats: every {human_ms(s.interval_ms)}, expired after {s.tolerable_misses} missed "
          f"= {human_ms(s.expiry_ms)} ({s.interval_source})")
    print(f"Failed writes: {s.failed_writes_policy} ({s.failed_writes_policy_source}); concurrency mode "
          f"{s.concurrency_mode}")
    print(f"Measured at {payload['now']}")
    if not report.pending:
        print("No pending write.")
    for p in report.pending:
        beat = (f"last heartbeat {p.heartbeat_time}, {human_ms(p.heartbeat.age_ms)} ago" if p.heartbeat.file_present
                else "no heartbeat file")
        print(f"\n{p.action} {p.instant} ({p.state.lower()}, {p.kind.value.replace('_', ' ')})")
        print(f"  writer: {_WRITER_WORDS[p.writer.value]}; {beat}")
        by = _ROLLBACK_WORDS[p.rollback.value if p.rollback else None]
        print(f"  rolled back by: {by}: {p.rollback_reason}")
        if p.pending_rollback:
            print(f"  pending rollback {p.pending_rollback} already plans it (re-run first)")
    lock = report.lock
    print()
    if lock is None:
        print(f"Lock file: none ({report.lock_provider or 'no lock provider given'})")
    elif lock.error:
        print(f"Lock file {lock.path}: unreadable ({lock.error})")
    else:
        until = payload["locks"]["lock_file"]["valid_until"]
        state = ("released" if lock.released else "held" if lock.held else "held past its expiry")
        print(f"Lock file {lock.path}: {state}; owner {lock.owner}; valid until {until}")
    for a in report.audit:
        print(f"  audit {a.path}: {' -> '.join(a.states)}{'' if a.ended else ' (no END)'}")
    for m in report.markers:
        status = f"{m.instant_action} {m.instant_state.lower()}" if m.instant_state else "not on the timeline"
        print(f"Markers {m.instant}: {m.count} {m.marker_type.lower()} ({status})")
    conc = report.concurrency
    for c in conc.concurrent if conc is not None else []:
        shared = f"both wrote {', '.join(c.shared_file_groups)}" if c.shared_file_groups else "no common file group"
        print(f"Concurrent: {c.first} and {c.second} ran at the same time ({shared})")
    for conflict in conc.likely_conflicts if conc is not None else []:
        print(f"Likely conflict: {conflict.rolled_back} (rolled back by {conflict.rollback}) was pending when "
              f"{conflict.completed} committed on {', '.join(conflict.file_groups)}")
    if report.findings:
        print()
        for f in report.findings:
            print(f"{'PROBLEM' if f.severity == 'warning' else 'NOTE'} [{f.code}] {f.message}")
            print(f"  why: {f.why}")
            print(f"  what to do: {f.what_to_do}")
    return code


def register(add: AddFn, sub: Any) -> None:
    """Add `writers` to the CLI."""
    p = add("writers", cmd_writers, "pending writes: is the writer alive (heartbeat), who rolls it back; locks, "
                                    "markers (exit 2 when a problem is found)")
    _add_conf(p, "writer/cleaner")
    p.add_argument("--now", metavar="INSTANT", help="judge heartbeats and locks at this instant time (UTC)")
