"""`hudi-inspect watch TABLE [--interval S] [--format text|jsonl] [--until-idle S] [--from-start]`.

Follows a table while it is written (:class:`~hudi_core.table.follow.TableFollower`, reading only what changed) and
prints one line (text) or one JSON object (jsonl) per event as it happens, flushed at once: instants requested,
inflight, completed, rolled back, archived; markers moved; a guard starting or stopping to hold archival;
alerts raised or cleared (:mod:`hudi_core.services.watch`).

It stops on Ctrl-C, after `--until-idle` seconds without a change, or when the table is removed (one line on
stderr, exit 1). Its exit code is then `doctor`'s for the alerts in force: 0 none, 2 a warning or error in force.
It first says what it judges alerts with (release, savepoint guard, stale age, conf; on stderr with jsonl): with
the same configuration `doctor` raises the same findings of those checks.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any

import orjson

from hudi_core.errors import HudiInspectError, StorageError

#: Consecutive failed polls (storage trouble) after which `watch` gives up.
MAX_FAILED_POLLS = 5


def _line(payload: dict[str, Any]) -> str:
    return orjson.dumps(payload, default=str).decode("utf-8")


def run_watch(args: argparse.Namespace, stop: threading.Event | None = None) -> int:
    """The `watch` loop; `stop` (tests, an embedding program) ends it like Ctrl-C."""
    from hudi_core import cli
    from hudi_core.cli.plans import _config
    from hudi_core.services.watch import TableReplacedError, TableWatcher
    from hudi_core.table.follow import TableFollower, TableRemovedError

    stop = stop or threading.Event()
    follower = TableFollower(args.table, cli._storage_options(args.storage_option), full_every=args.full_every)
    watcher = TableWatcher(follower, _config(args), savepoint_guard=not args.without_savepoint_guard,
                           stale_hours=args.stale_hours, from_start=args.from_start)
    out = sys.stdout
    judged = watcher.judged_with()
    if args.format == "jsonl":
        print(_line({"watching": args.table, "judged_with": judged}), file=sys.stderr, flush=True)
    else:
        conf = ", ".join(f"{k}={v}" for k, v in judged["conf"].items()) or "defaults"
        guard = "with" if judged["savepoint_guard"] else "without"
        out.write(f"watching {args.table}: alerts judged as doctor judges them, with Hudi {judged['hudi_release']} "
                  f"cleaner/archiver {guard} the HUDI-7779 savepoint guard, pending instants stale after "
                  f"{judged['stale_hours']:g} h, conf {conf}; doctor's checks except "
                  f"{', '.join(judged['left_to_doctor'])}\n")
        out.flush()
    last_change = time.monotonic()
    failures = 0
    try:
        while not stop.is_set():
            started = time.monotonic()
            try:
                update = watcher.poll()
                failures = 0
            except (TableRemovedError, TableReplacedError) as exc:
                print(f"hudi-inspect: {exc}", file=sys.stderr, flush=True)
                return cli.EXIT_ERROR
            except StorageError as exc:
                if follower.state is None:
                    raise  # never opened: one line from main, as any command
                failures += 1
                if failures >= MAX_FAILED_POLLS:
                    raise HudiInspectError(f"{args.table}: {failures} polls failed in a row: {exc}") from exc
                if failures > 1:  # one failure alone is often a table caught while it is being removed
                    print(f"hudi-inspect: warning: {failures} polls failed ({exc}); trying again", file=sys.stderr,
                          flush=True)
            else:
                for event in update.events:
                    out.write((_line(event.to_dict()) if args.format == "jsonl" else event.text()) + "\n")
                out.flush()
                if update.changed:
                    last_change = time.monotonic()
            if args.until_idle is not None and time.monotonic() - last_change >= args.until_idle:
                break
            stop.wait(max(0.0, args.interval - (time.monotonic() - started)))
    except KeyboardInterrupt:
        pass  # Ctrl-C: a clean end, with the exit code of the alerts in force
    analysis = watcher.analysis
    return analysis.exit_code if analysis is not None else cli.EXIT_OK


def cmd_watch(args: argparse.Namespace) -> int:
    """`hudi-inspect watch TABLE ...`."""
    args._findings_reported = True  # a follower's findings belong to its states, reported as alerts
    args._verdict_given = True  # its alerts are the verdict's checks, poll after poll
    return run_watch(args)


def register(add: Any, sub: Any) -> None:
    """Add `watch` to the CLI (its own options: `--format text|jsonl`, not the table/json/csv of other commands)."""
    from hudi_core.cli.plans import _add_conf

    p = sub.add_parser("watch", help="follow a table while it is written: one line per event",
                       description=(__doc__ or "").split("\n\n", 1)[1].strip())
    p.add_argument("table", help="table base path or URL (s3://…, gs://…, file://…)")
    p.add_argument("--format", choices=["text", "jsonl"], default="text",
                   help="one line per event (text) or one JSON object per line (jsonl)")
    p.add_argument("--storage-option", action="append", metavar="KEY=VALUE",
                   help="fsspec storage option (credentials, endpoint); repeatable")
    p.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between polls (default 1)")
    p.add_argument("--until-idle", type=float, default=None, metavar="S",
                   help="stop after S seconds without a change to the table")
    p.add_argument("--from-start", action="store_true",
                   help="first report the table's existing instants (their states, in timeline order), markers, "
                        "guard and alerts")
    p.add_argument("--full-every", type=int, default=10, metavar="N",
                   help="on object stores, list the whole timeline folder every N polls (default 10): a change that "
                        "only deletes old instants (an archival on its own) is seen within N polls")
    p.add_argument("--stale-hours", type=float, default=24.0,
                   help="pending instants older than this raise an alert (default 24)")
    p.add_argument("--without-savepoint-guard", action="store_true",
                   help="plan archival as Hudi did before HUDI-7779 (alerts for releases without the guard)")
    _add_conf(p, "cleaner/archiver")
    p.set_defaults(func=cmd_watch)
