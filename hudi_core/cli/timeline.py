"""`hudi-inspect archive TABLE`: what the archived timeline is made of (files, levels, findings).

The instants themselves are listed by `hudi-inspect timeline TABLE --archived` (or `--all`); this
command describes the archive: its layout and folder, the snapshot version read (layout 2), each
archive file read with its instant count and range (and LSM level), and every finding.
"""

from __future__ import annotations

import argparse
import posixpath
import sys
from collections.abc import Callable
from typing import Any

from hudi_core.cli.output import render_csv, render_json, render_table

EXIT_OK = 0


def archive_summary(table: Any, since: str | None = None, until: str | None = None) -> dict[str, Any]:
    """The archive of `table` (a :class:`~hudi_core.table.HudiTable`) as a JSON-ready dict."""
    import pyarrow as pa  # not at start-up
    import pyarrow.compute as pc

    from hudi_core.formats.timeline.archived_v2 import LsmFile

    arch = table.archived_timeline(since, until)
    listing = arch.listing
    counts: dict[str, tuple[int, str | None, str | None]] = {}
    if listing.num_rows:
        keys = listing.select(["archive_file", "requested_time"])
        keys = keys.set_column(0, "archive_file", keys["archive_file"].cast(pa.string()))
        grouped = keys.group_by("archive_file").aggregate(
            [("requested_time", "count"), ("requested_time", "min"), ("requested_time", "max")]
        )
        for row in grouped.to_pylist():
            counts[row["archive_file"]] = (row["requested_time_count"], row["requested_time_min"],
                                           row["requested_time_max"])
    files = []
    for path in arch.archive_files:
        name = posixpath.basename(path)
        count, first, last = counts.get(path, (0, None, None))
        level = LsmFile.of(name, None).level if name.endswith(".parquet") else None
        files.append({"file": name, "level": level, "instants": count, "first_instant": first,
                      "last_instant": last})
    states = listing["state"] if listing.num_rows else None
    return {
        "layout": arch.layout_version,
        "archive_dir": arch.archive_dir,
        "snapshot_version": arch.snapshot_version,
        "instants": len(arch),
        "completed_instants": int(pc.sum(pc.equal(states, "COMPLETED")).as_py() or 0) if states is not None else 0,
        "first_instant": listing["requested_time"][0].as_py() if listing.num_rows else None,
        "last_instant": listing["requested_time"][-1].as_py() if listing.num_rows else None,
        "files": files,
        "findings": [f.to_dict() for f in arch.findings],
    }


def cmd_archive(args: argparse.Namespace) -> int:
    """Describe the archived timeline of a table."""
    from hudi_core.cli import _open

    table = _open(args)
    summary = archive_summary(table, args.since, args.until)
    if args.format == "json":
        from hudi_core.cli import with_findings

        summary = with_findings(args, summary)
        print(render_json(summary))
    elif args.format == "csv":
        sys.stdout.write(render_csv(summary["files"], ["file", "level", "instants", "first_instant", "last_instant"]))
    else:
        facts = {k: v for k, v in summary.items() if k not in ("files", "findings")}
        print(render_table([{"key": k, "value": v} for k, v in facts.items()]))
        if summary["files"]:
            print(render_table(summary["files"], ["file", "level", "instants", "first_instant", "last_instant"]))
        for f in summary["findings"]:
            print(f"{f['severity']}: {f['message']} ({f['path']})")
    return EXIT_OK


def register(add: Callable[..., argparse.ArgumentParser], sub: Any) -> None:
    """Add `archive` to the CLI (see `hudi_core.cli.COMMAND_MODULES`)."""
    p = add("archive", cmd_archive, "the archived timeline's files (layout 1 log files or LSM levels) and findings")
    p.add_argument("--since", help="only archive files and instants requested at or after this time")
    p.add_argument("--until", help="only archive files and instants requested at or before this time")
