"""`hudi-inspect sql TABLE "SELECT ..."`: SQL (DuckDB) over the inspector's tables.

Views (each computed only when the query names it): ``instants``, ``write_stats``, ``file_slices``,
``log_blocks``, ``clean_plan``, ``archive_plan``, ``findings``, ``metadata_files``; ``--schema`` lists them
with their documented columns (no table needed). A query that does not run (not one SELECT, a syntax error,
an unknown column, a file it may not read) is one line with DuckDB's message on stderr and exit 1 (no answer); so
is a query that runs longer than ``--timeout`` seconds (interrupted) or needs more than ``--memory-limit``. The
rows print as a table, JSON (a list of objects, streamed) or CSV; findings go to stderr as for every list-shaped
answer (``--envelope`` keeps them in the JSON document). The dry-run views take ``--conf``, ``--conf-file``,
``--hudi-release``, ``--now`` and ``--without-savepoint-guard`` as `plan-clean` and `plan-archive` do.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

AddCommand = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]

#: hudi_core.inspect.sql.DEFAULT_TIMEOUT_S, not imported here: the parser is built before any command needs pyarrow
DEFAULT_TIMEOUT_S = 60.0

EXAMPLE = 'SELECT action, state, count(*) AS n FROM instants GROUP BY ALL ORDER BY n DESC'


def cmd_sql(args: argparse.Namespace) -> int:
    """`sql`: run one SELECT over the table's views, or `--schema`."""
    from hudi_core import cli
    from hudi_core.cli.output import render_csv, render_json, render_table

    if args.schema:
        from hudi_core.inspect.sql import MACROS, VIEW_DOCS, schema_rows

        rows = schema_rows()
        if args.format == "json":
            views = {name: {"doc": doc, "columns": [{k: r[k] for k in ("column", "type", "doc")}
                                                    for r in rows if r["view"] == name]}
                     for name, doc in VIEW_DOCS.items()}
            print(render_json({"views": views, "macros": {k: v[1] for k, v in MACROS.items()}}))
        elif args.format == "csv":
            sys.stdout.write(render_csv(rows, ["view", "column", "type", "doc"]))
        else:
            for name, doc in VIEW_DOCS.items():
                print(f"{name}: {doc}")
                print(render_table([r for r in rows if r["view"] == name], ["column", "type", "doc"]))
                print()
            for _, doc in MACROS.values():
                print(f"macro {doc}")
        return cli.EXIT_OK
    if not args.table or not args.query:
        print('hudi-inspect: sql: needs TABLE and a query, e.g. hudi-inspect sql TABLE "' + EXAMPLE + '" '
              "(or --schema)", file=sys.stderr)
        return cli.EXIT_USAGE
    from hudi_core.cli.plans import _config, _now
    from hudi_core.inspect.sql import SqlError, check_query, run_query

    try:
        check_query(args.query)  # before the table is opened: a bad query costs nothing
    except SqlError as exc:
        print(f"hudi-inspect: sql: {exc}", file=sys.stderr)
        return cli.EXIT_USAGE
    table = cli._open(args)
    try:
        result = run_query(table, args.query, _config(args), now=_now(args),
                           savepoint_guard=not args.without_savepoint_guard, timeout=args.timeout,
                           memory_limit=args.memory_limit)
    except SqlError as exc:
        print(f"hudi-inspect: sql: {exc}", file=sys.stderr)
        return cli.EXIT_USAGE
    if result.incomplete:
        args._plan_incomplete = True
    args._extra_findings = result.findings
    _print(args, result.table)
    return cli.EXIT_OK


def _print(args: argparse.Namespace, table: Any) -> None:
    from hudi_core import cli
    from hudi_core.cli.output import write_json_list
    from hudi_core.inspect.sql import plain_numbers

    table = plain_numbers(table)
    columns = table.column_names
    if args.format == "json" and not cli.wants_envelope(args):
        write_json_list((b.to_pylist() for b in table.to_batches(max_chunksize=cli.JSON_CHUNK_ROWS)), sys.stdout)
        return
    rows = table.to_pylist()
    cli._emit(args, rows, columns=columns)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}")
    return value


def register(add: AddCommand, sub: Any) -> None:
    """Add `sql` to the CLI."""
    from hudi_core.cli.plans import _add_conf

    p = add("sql", cmd_sql, "SQL (DuckDB) over the table's inspector views: instants, write_stats, file_slices, "
                            "log_blocks, clean_plan, archive_plan, findings, metadata_files (--schema lists them)")
    for action in p._actions:  # `sql --schema` needs no table
        if action.dest == "table":
            action.nargs = "?"
            action.default = None
    p.add_argument("query", nargs="?", help=f"one SELECT (or WITH ... SELECT), e.g. \"{EXAMPLE}\"")
    p.add_argument("--schema", action="store_true", help="list the views and their documented columns, then exit")
    _add_conf(p, "cleaner/archiver (the clean_plan and archive_plan views)")
    p.add_argument("--now", metavar="INSTANT", help="planning time of the clean_plan view for KEEP_LATEST_BY_HOURS "
                                                     "(UTC instant time)")
    p.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"interrupt the query after this many seconds, exit 1: no answer (default "
                        f"{DEFAULT_TIMEOUT_S:g}; 0: no limit)")
    p.add_argument("--memory-limit", metavar="SIZE", default=None,
                   help="DuckDB's memory limit, e.g. 512MB or 4GB (default: a quarter of the memory, at most 2GB)")
    p.add_argument("--without-savepoint-guard", action="store_true",
                   help="the archive_plan view as Hudi planned before HUDI-7779")
