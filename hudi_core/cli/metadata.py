"""CLI commands of the metadata table: `validate-metadata`, `metadata-files`.

* ``hudi-inspect validate-metadata TABLE``: the `files` partition against storage (exit 0 consistent,
  2 differences, 1 incomplete). JSON: ``status``, ``exit_code``, ``metadata_slice``, ``partitions``,
  ``files``, ``counts``, ``differences`` (``kind``, ``partition``, ``file``, ``instant``, ``written_by``,
  ``deleted_by``, sizes, ``in_latest_slice``, ``hudi_effect``), ``tolerated`` (plus ``tolerated``,
  ``tolerated_by``, ``why_tolerated``), ``unapplied_instants``, ``findings``, ``incomplete``.
* ``hudi-inspect metadata-files TABLE [--partition P]``: what the `files` partition says, as Hudi reads it:
  the slice read, every log block with the reader's decision, the partitions and their files with sizes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from hudi_core.cli.output import render_csv, render_json, render_table
from hudi_core.errors import HudiInspectError

AddFn = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]

DIFFERENCE_COLUMNS = ["kind", "partition", "file", "instant", "metadata_size", "storage_size", "hudi_effect"]


def cmd_validate_metadata(args: argparse.Namespace) -> int:
    """`validate-metadata`: differences between the metadata table's listing and storage."""
    from hudi_core import cli
    from hudi_core.services.validate_metadata import validate_metadata

    table = cli._open(args)
    result = validate_metadata(table)
    payload = result.to_dict()
    if args.format == "json":
        print(render_json(cli.with_findings(args, payload)))
    elif args.format == "csv":
        sys.stdout.write(render_csv(payload["differences"] + payload["tolerated"], [*DIFFERENCE_COLUMNS, "tolerated"]))
    else:
        print(f"metadata table {result.metadata_table}: {result.status.value}")
        print(f"  read: base {result.base_file or '-'} + {len(result.log_files)} log file(s), latest instant "
              f"{result.latest_metadata_instant or '-'}")
        print(f"  partitions: {result.partitions_in_metadata} in the metadata table, {result.partitions_on_storage} "
              f"on storage; files: {result.files_in_metadata} and {result.files_on_storage}")
        counts = ", ".join(f"{k} {v}" for k, v in result.counts().items() if v)
        print(f"  differences: {len(result.differences)}" + (f" ({counts})" if counts else "")
              + f"; tolerated as Hudi's validator does: {len(result.tolerated)}")
        if result.unapplied_instants:
            shown = ", ".join(result.unapplied_instants[:10])
            more = " …" if len(result.unapplied_instants) > 10 else ""
            print(f"  data-table instants the metadata table has not applied: {shown}{more}")
        if result.differences:
            print(render_table(payload["differences"], DIFFERENCE_COLUMNS))
        if result.tolerated:
            print("tolerated:")
            print(render_table(payload["tolerated"], ["kind", "partition", "file", "tolerated", "tolerated_by"]))
    if result.incomplete:
        args._plan_incomplete = True
    return result.exit_code


def cmd_metadata_files(args: argparse.Namespace) -> int:
    """`metadata-files`: the `files` partition as Hudi 1.1 reads it."""
    from hudi_core import cli

    table = cli._open(args)
    source = table.metadata_listing()
    if source is None:
        raise HudiInspectError(f"{table.uri} has no metadata table (.hoodie/metadata)")
    wanted = frozenset({args.partition}) if args.partition is not None else None
    read = source.read(wanted)
    partitions = read.partitions if wanted is None else [p for p in read.partitions if p in wanted]
    payload: dict[str, Any] = {
        "metadata_table": read.mdt_uri,
        "base_file": read.base_file,
        "log_files": read.log_files,
        "latest_instant": read.latest_instant,
        "blocks": [{"log_file": b.log_file, "offset": b.offset, "block_type": b.block_type,
                    "instant_time": b.instant_time, "decision": b.decision.value, "records": b.records}
                   for b in read.blocks],
        "partitions": [{"partition": p, "files": [{"name": f.name, "size": f.size} for f in read.files_of(p)],
                        "tombstones": read.tombstones_of(p)} for p in partitions],
        "incomplete": read.incomplete,
    }
    if read.incomplete:
        args._plan_incomplete = True
    # What reading the files partition noticed (unreadable, missing or damaged files, repeated keys).
    args._extra_findings = [*getattr(args, "_extra_findings", []), *read.findings]
    if args.format == "json":
        print(render_json(cli.with_findings(args, payload)))
        return cli.EXIT_OK
    rows = [{"partition": p["partition"], "file": f["name"], "size": f["size"]}
            for p in payload["partitions"] for f in p["files"]]
    if args.format == "csv":
        sys.stdout.write(render_csv(rows, ["partition", "file", "size"]))
        return cli.EXIT_OK
    print(f"metadata table {read.mdt_uri}: base {read.base_file or '-'}, {len(read.log_files)} log file(s), "
          f"latest instant {read.latest_instant or '-'}")
    if payload["blocks"]:
        print(render_table(payload["blocks"], ["log_file", "offset", "block_type", "instant_time", "decision",
                                               "records"]))
    print(render_table(rows, ["partition", "file", "size"]))
    return cli.EXIT_OK


def register(add: AddFn, sub: Any) -> None:
    """Add `validate-metadata` and `metadata-files` to the CLI."""
    add("validate-metadata", cmd_validate_metadata,
        "the metadata table's files partition against storage, with Hudi's validator tolerances (exit 0 "
        "consistent, 2 differences, 1 incomplete)")
    p = add("metadata-files", cmd_metadata_files,
            "the metadata table's files partition as Hudi 1.1 reads it: slice, log blocks counted, partitions, files")
    p.add_argument("--partition", help="only this data-table partition (key lookups, not the whole base file)")
