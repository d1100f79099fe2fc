"""CLI command of the report face: `hudi-inspect report TABLE --out report.html`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hudi_core.cli.output import render_json
from hudi_core.errors import HudiInspectError

AddFn = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def cmd_report(args: argparse.Namespace) -> int:
    """Write the postmortem report: HTML to `--out` (JSON with `--format json`, to `--out` or stdout)."""
    from hudi_core import cli
    from hudi_core.cli.plans import _config, _now
    from hudi_core.dashboard.report import build_report, redact, report_html

    table = cli._open(args)
    if args.out:
        _refuse_inside(args.out, table.uri)
    document = build_report(table, _config(args), now=_now(args), histories=args.history or ())
    document = cli.with_findings(args, document)
    args._table_problem = document["verdict"]["severity"] is not None
    args._verdict_given = True
    if args.redact:
        document = redact(document, table.uri)
    if args.format == "json":
        text = render_json(document)
        if args.out:
            _write(args.out, text)
        else:
            print(text)
        return 0
    if not args.out:
        raise HudiInspectError("report needs --out FILE for HTML (or --format json)")
    _write(args.out, report_html(document))
    print(f"wrote {args.out}: verdict {document['verdict']['status']} — {document['verdict']['headline']}; doctor "
          f"{document['doctor']['status']}, {len(document['doctor']['health_findings'])} findings")
    return 0


def _refuse_inside(out: str, table_uri: str) -> None:
    """The inspector never writes into a table it reads: `--out` inside a local table is refused."""
    if "://" in table_uri and not table_uri.startswith("file://"):
        return
    base = Path(table_uri.removeprefix("file://")).resolve()
    target = Path(out).resolve()
    if target == base or base in target.parents:
        raise HudiInspectError(f"--out {out} is inside the table {table_uri}: write the report elsewhere")


def _write(path: str, text: str) -> None:
    """The report is the one file this tool writes, where the user asked (never inside the table)."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise HudiInspectError(f"cannot write {path}: {exc}") from exc


def register(add: AddFn, sub: Any) -> None:
    """Add `report` to the CLI."""
    from hudi_core.cli.plans import _add_conf

    p = add("report", cmd_report, "a self-contained postmortem report (HTML, or JSON with --format json): facts, "
                                  "timeline chart, doctor findings, both dry-runs, duplicates, histories")
    p.add_argument("--out", metavar="FILE", help="where to write the report (HTML needs it)")
    _add_conf(p, "cleaner/archiver")  # --conf, --conf-file, --hudi-release: as the dry runs take them
    p.add_argument("--now", metavar="INSTANT", help="measure ages from this instant time (UTC) instead of now")
    p.add_argument("--history", action="append", metavar="FILE_ID", help="add this file group's history; repeatable")
    p.add_argument("--redact", action="store_true", help="replace the table's path and bucket in every string")
