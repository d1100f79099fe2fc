"""`hudi-inspect schema-history TABLE [--since T] [--until T]`: every schema the table's commits
recorded, and what changed between consecutive ones (:mod:`hudi_core.services.schema_history`).

JSON (one object): `schemas` (each `instant` (null for the create schema), `completion_time`, `action`,
`operation`, `source` (`active`, `archived`, `table_config`), `path`, `commits`, `last_instant`, `fields`:
the flattened field list, each `name` (dotted), `type`, `nullable`, `default`, `has_default`), `changes`
(each `instant`, `action`, `operation`, `source`, `field`, `change`, `from`, `to`, `breaks_readers`, `reason`,
`previous_instant`), `commits`, `commits_with_schema`, `since`, `until`, plus `findings` and `incomplete`.
The text format prints the versions, then the changes, then the findings; CSV prints the changes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

AddCommand = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]

CHANGE_COLUMNS = ["instant", "action", "operation", "source", "field", "change", "from", "to", "breaks_readers"]


def cmd_schema_history(args: argparse.Namespace) -> int:
    """`schema-history`: the schema versions and their changes, active and archived."""
    from hudi_core import cli
    from hudi_core.cli.output import render_csv, render_json, render_table, wrap_lines
    from hudi_core.services.schema_history import schema_history

    table = cli._open(args)
    history = schema_history(table, args.since, args.until)
    args._extra_findings = history.findings
    schemas = [v.to_dict() for v in history.versions]
    changes = [c.to_dict() for c in history.changes]
    if args.format == "json":
        payload = {"commits": history.commits, "commits_with_schema": history.commits_with_schema,
                   "since": args.since, "until": args.until, "schemas": schemas, "changes": changes}
        print(render_json(cli.with_findings(args, payload)))
    elif args.format == "csv":
        sys.stdout.write(render_csv(changes, CHANGE_COLUMNS))
    else:
        findings = cli.with_findings(args, {})["findings"]
        summary = _changes_by_instant(changes)
        rows = [{"instant": s["instant"] or "table_config", "action": s["action"], "operation": s["operation"],
                 "source": s["source"], "commits": s["commits"], "last_instant": s["last_instant"],
                 "fields": len(s["fields"]), "changed": summary.get(s["instant"], "")} for s in schemas]
        print(f"schemas ({history.commits_with_schema} of {history.commits} commits recorded one)")
        print(render_table(rows))
        for s in schemas:
            if s["note"]:
                print(wrap_lines([f"note on {s['instant'] or 'table_config'}: {s['note']}"]))
        print()
        print("changes")
        print(render_table(changes, CHANGE_COLUMNS))
        for f in findings:
            print(f"{f['severity']}: {f['message']} ({f['path']})")
    return cli.EXIT_OK


def _changes_by_instant(changes: list[dict[str, Any]]) -> dict[str | None, str]:
    out: dict[str | None, list[str]] = {}
    for c in changes:
        out.setdefault(c["instant"], []).append(f"{c['field'] or '(record)'} {c['change']}")
    return {k: ", ".join(v) for k, v in out.items()}


def register(add: AddCommand, sub: Any) -> None:
    p = add("schema-history", cmd_schema_history,
            "every schema the table's commits recorded (active and archived, and hoodie.table.create.schema) and "
            "what changed between them: fields added, removed, promoted, narrowed, made nullable or required, "
            "defaults")
    p.add_argument("--since", help="only schemas and changes recorded at or after this instant time")
    p.add_argument("--until", help="only schemas and changes recorded at or before this instant time")
