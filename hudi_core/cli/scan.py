"""The `scan` subcommand (registered through `hudi_core.cli.COMMAND_MODULES`). Kept apart from
:mod:`hudi_core.inspect.scan`, whose Arrow schemas import pyarrow: `hudi-inspect --help` must
not (its start-up time)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

AddCommand = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def cmd_scan(args: argparse.Namespace) -> int:
    """`scan`: every bulk stage on the chosen engine, with row counts, timings and digests."""
    from hudi_core.cli import _emit, _open
    from hudi_core.engines.engine import describe_executor
    from hudi_core.inspect.scan import SCAN_STAGES, full_scan, table_digest

    table = _open(args)
    timings: dict[str, float] = {}
    tables = full_scan(table, timings)
    stages = [
        {"stage": s, "rows": tables[s].num_rows, "seconds": timings[s], "sha256": table_digest(tables[s])}
        for s in SCAN_STAGES if s in tables
    ]
    info = describe_executor(table.executor)
    payload = {
        "table": table.uri,
        "engine": info.pop("engine"),
        "spark": info or None,
        "stages": stages,
        "spark_jobs": list(getattr(table.executor, "history", [])),
    }
    if args.format == "json":
        _emit(args, stages, payload=payload)
    else:
        _emit(args, [{**s, "sha256": s["sha256"][:16]} for s in stages],
              columns=["stage", "rows", "seconds", "sha256"])
    return 0


def register(add: AddCommand, sub: Any) -> None:
    """Add the `scan` subcommand."""
    add("scan", cmd_scan, "run every bulk stage (listing, instant decoding, fs view, log headers, archive) "
                          "on the chosen engine; rows, timings and digests per stage")
