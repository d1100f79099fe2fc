"""CLI subcommands `log-blocks` and `duplicates` (registered through `hudi_core.cli.COMMAND_MODULES`).

* ``hudi-inspect log-blocks TABLE [--partition P] [--file-id F] [--counts]``: one row per log block
  (header-only scan; ``--counts`` also decodes record counts). JSON keys: ``path``, ``offset``,
  ``size``, ``block_type``, ``instant_time``, ``attempt``, ``seq``, ``corrupt`` plus the rest of the
  inventory columns.
* ``hudi-inspect log-scenarios OUT [--table-version 6|9]``: write the seed's scenario table.
* ``hudi-inspect duplicates TABLE [--partition P] [--file-id F] [--all]``: the HUDI-6758 analysis per
  (file group, instant); by default only groups with duplicates, corrupt blocks, rollbacks or risks.
  JSON keys: ``partition``, ``file_id``, ``instant_time``, ``attempts`` (each with ``attempt``,
  ``files``, ``seqs``), ``verdict_proposal``, ``verdict_hudi_014``, ``verdict_commit_metadata``,
  ``risk``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

AddCommand = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]

BLOCK_COLUMNS = ["path", "offset", "size", "block_type", "instant_time", "attempt", "seq", "corrupt"]


def block_json(row: dict[str, Any]) -> dict[str, Any]:
    """The stable JSON shape of one inventory row (renames `block_offset`/`block_size`)."""
    out = {
        "path": row["path"],
        "offset": row["block_offset"],
        "size": row["block_size"],
        "block_type": row["block_type"],
        "instant_time": row["instant_time"],
        "attempt": row["attempt"],
        "seq": row["seq"],
        "corrupt": row["corrupt"],
    }
    for key, value in row.items():
        if key not in ("block_offset", "block_size") and key not in out:
            out[key] = value
    return out


def cmd_log_blocks(args: argparse.Namespace) -> int:
    """`log-blocks`: the block inventory of the table's log files."""
    from hudi_core.cli import EXIT_OK, _emit, _open
    from hudi_core.services.log_inventory import log_block_inventory  # pyarrow: not at start-up

    table = _open(args)
    inventory = log_block_inventory(table, args.partition, args.file_id, decode_counts=args.counts)
    if args.format == "json":
        _stream_json_rows(inventory, args)
        return EXIT_OK
    rows = [block_json(r) for r in inventory.to_pylist()]
    columns = BLOCK_COLUMNS + (["record_count"] if args.counts else []) + ["target_instant", "corrupt_reason"]
    _emit(args, rows, columns=columns)
    return EXIT_OK


def _stream_json_rows(inventory: Any, args: argparse.Namespace, batch_rows: int = 20_000) -> None:
    """`render_json([block_json(r) …])` (or the `--envelope` object around it), text for text, written a
    batch of rows at a time: a damaged file can hold one corrupt block per 6 bytes, and all rows as
    dicts plus their text at once took gigabytes."""
    import sys

    from hudi_core.cli import wants_envelope, with_findings
    from hudi_core.cli.output import render_json

    out = sys.stdout
    envelope = wants_envelope(args)
    # Inside the envelope the list is the value of "rows": every line one level deeper.
    pad = "    " if envelope else "  "
    close = "  ]" if envelope else "]"
    if envelope:
        out.write('{\n  "rows": ')
    first = True
    for batch in inventory.to_batches(max_chunksize=batch_rows):
        parts = []
        for row in batch.to_pylist():
            # An item of an indented list: the object's own lines, indented one more level.
            parts.append(pad + render_json(block_json(row)).replace("\n", "\n" + pad))
        if parts:
            out.write(("[\n" if first else ",\n") + ",\n".join(parts))
            first = False
    out.write("[]" if first else "\n" + close)
    if envelope:
        tail = render_json(with_findings(args, {}))  # {"findings": [...], "incomplete": ...}
        out.write(",\n" + tail[2:] + "\n")  # its keys continue the envelope object
    else:
        out.write("\n")


def cmd_duplicates(args: argparse.Namespace) -> int:
    """`duplicates`: attempts and the three verdicts per (file group, instant)."""
    from hudi_core.cli import EXIT_OK, _emit, _open
    from hudi_core.services.duplicates import duplicate_analysis, duplicates_to_arrow

    table = _open(args)
    results = duplicate_analysis(table, args.partition, args.file_id, only_interesting=not args.all)
    rows = duplicates_to_arrow(results).to_pylist()
    for row in rows:
        if row["commit_keeps"] is None:
            row["commit_keeps"] = "unknown"
    _emit(args, rows, payload=[r.to_dict() for r in results])
    return EXIT_OK


def cmd_log_scenarios(args: argparse.Namespace) -> int:
    """`log-scenarios OUT`: write the HUDI-6758 scenario table into a new directory."""
    from hudi_core.cli import EXIT_OK
    from hudi_core.scenarios.log_tables import build_log_scenario_table

    built = build_log_scenario_table(args.out, args.table_version, args.scenario or None)
    print(built.path)
    return EXIT_OK


def register(add: AddCommand, sub: Any) -> None:
    """Add `log-blocks` and `duplicates` to the `hudi-inspect` parser."""
    p = add("log-blocks", cmd_log_blocks, "every block of every log file (header-only scan)")
    p.add_argument("--partition", help="only this partition")
    p.add_argument("--file-id", help="only this file group")
    p.add_argument("--counts", action="store_true", help="also decode record counts (reads content)")
    p = add("duplicates", cmd_duplicates,
            "HUDI-6758 duplicate log-block analysis per file group and instant, three verdicts")
    p.add_argument("--partition", help="only this partition")
    p.add_argument("--file-id", help="only this file group")
    p.add_argument("--all", action="store_true", help="every (file group, instant), not only the interesting ones")
    p = sub.add_parser("log-scenarios", help="write the HUDI-6758 log scenarios as a MOR table into a new directory")
    p.add_argument("out", help="a new (or empty) directory")
    p.add_argument("--table-version", type=int, choices=[6, 8, 9], default=9)
    p.add_argument("--scenario", action="append", help="only this scenario (repeatable); default: all")
    p.set_defaults(func=cmd_log_scenarios)
