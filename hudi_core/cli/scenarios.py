"""CLI commands of the scenario package (`COMMAND_MODULES` in :mod:`hudi_core.cli`).

* ``hudi-inspect scenario list`` — the built-in scenarios;
* ``hudi-inspect scenario build NAME|FILE OUT_DIR [--table-version 6|8|9] [--upto-step K] [--metadata-table]`` —
  write a scenario as a real Hudi table into the new directory OUT_DIR (with its metadata table's `files`
  partition for table versions 8 and 9);
* ``hudi-inspect scenario play NAME|FILE OUT_DIR [--interval S] [--table-version V] [--format text|jsonl]`` —
  write it step by step in real time, each step's files in the order Hudi writes them, one line per step.

Other subcommands of this module (the generator's) register in :func:`register` too.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from hudi_core.cli.output import render_csv, render_json, render_table

AddFn = Callable[..., argparse.ArgumentParser]


def _print(args: argparse.Namespace, rows: list[dict[str, Any]], payload: Any = None) -> None:
    fmt = getattr(args, "format", "table")
    if fmt == "json":
        print(render_json(rows if payload is None else payload))
    elif fmt == "csv":
        sys.stdout.write(render_csv(rows))
    else:
        print(render_table(rows))


def cmd_scenario_list(args: argparse.Namespace) -> int:
    """`scenario list`: name, title, table type, versions, step count and source of each built-in."""
    from hudi_core.scenarios.builtin import builtin_names, load_builtin

    rows = []
    for name in builtin_names():
        summary = load_builtin(name).summary()
        summary["table_versions"] = ",".join(map(str, summary["table_versions"]))
        rows.append(summary)
    if args.format == "json":
        for row in rows:
            row["table_versions"] = [int(v) for v in str(row["table_versions"]).split(",")]
    _print(args, rows)
    return 0


def cmd_scenario_build(args: argparse.Namespace) -> int:
    """`scenario build`: write the scenario into OUT_DIR (a new or empty directory)."""
    from hudi_core.scenarios.build import build_scenario
    from hudi_core.scenarios.builtin import resolve_scenario

    scenario = resolve_scenario(args.scenario)
    version = args.table_version
    if version is None:
        version = 9 if 9 in scenario.table_versions else max(scenario.table_versions)
    result = build_scenario(scenario, args.out_dir, int(version), upto_step=args.upto_step,
                            metadata_table=bool(getattr(args, "metadata_table", False)))
    if args.format == "json":
        print(render_json(result.to_dict()))
        return 0
    rows = [{"step": r.index, "op": r.op, "at": r.label or "", "instant": r.instant or ""} for r in result.results]
    if args.format == "csv":
        sys.stdout.write(render_csv(rows))
        return 0
    print(render_table(rows))
    print(f"built {scenario.name} as table version {version} in {result.uri} "
          f"({result.steps_applied} steps, {result.seconds:.2f}s)")
    return 0


#: Exit code of a play ended by Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


def cmd_scenario_play(args: argparse.Namespace) -> int:
    """`scenario play`: write the scenario into OUT_DIR one step every --interval seconds; Ctrl-C stops it
    between steps (exit 130), the table left as written so far."""
    from hudi_core.scenarios.builtin import resolve_scenario
    from hudi_core.scenarios.play import PlayedStep, PlayResult, play_scenario

    scenario = resolve_scenario(args.scenario)
    total = len(scenario.steps)
    stop = threading.Event()
    interrupted = threading.Event()

    def on_sigint(signum: int, frame: Any) -> None:
        # The step being written finishes first; a second Ctrl-C interrupts at once.
        interrupted.set()
        stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def on_start(result: PlayResult) -> None:
        if args.format == "text":
            print(f"created {scenario.name} ({scenario.table_type}, table version {result.table_version}) in "
                  f"{result.uri}: {total} steps, one every {args.interval:g} s", flush=True)

    def on_step(step: PlayedStep) -> None:
        if args.format == "jsonl":
            print(json.dumps(step.to_dict()), flush=True)
            return
        r = step.result
        at = " ".join(x for x in (r.label, r.instant and f"({r.instant})") if x)
        note = f" - {step.note}" if step.note else ""
        clock = step.to_dict()["time"][11:23]
        print(f"[{clock}] step {r.index + 1}/{total} {r.op}{' ' + at if at else ''}: {step.written} written, "
              f"{step.deleted} deleted{note}", flush=True)

    previous = signal.signal(signal.SIGINT, on_sigint) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        result = play_scenario(scenario, args.out_dir, args.table_version, args.interval, on_step=on_step,
                               on_start=on_start, stop=stop, metadata_table=bool(args.metadata_table))
    except KeyboardInterrupt:
        interrupted.set()
        result = None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    if interrupted.is_set():
        done = result.steps_applied if result is not None else "some"
        print(f"hudi-inspect: interrupted after {done} of {total} steps; {args.out_dir} is left as written so far",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    assert result is not None
    if args.format == "text":
        print(f"played {result.steps_applied} steps of {scenario.name} in {result.uri} ({result.seconds:.1f} s)")
    return 0


def register(add: AddFn, sub: Any) -> None:
    """Add `scenario list`, `scenario build` and `scenario play` (a `scenario` command with its own subcommands)."""
    parser = sub.add_parser("scenario", help="built-in and file scenarios written as real Hudi tables",
                            description="Declarative scenarios written as real Hudi tables (table version 6, 8 "
                                        "or 9) into a new directory.")
    ssub = parser.add_subparsers(dest="scenario_command", required=True)
    p = ssub.add_parser("list", help="list the built-in scenarios")
    p.add_argument("--format", choices=["table", "json", "csv"], default="table")
    p.set_defaults(func=cmd_scenario_list)
    p = ssub.add_parser("build", help="write a scenario as a Hudi table into a new directory")
    p.add_argument("scenario", metavar="NAME|FILE", help="a built-in scenario name or a scenario .json/.yaml file")
    p.add_argument("out_dir", metavar="OUT_DIR", help="new (or empty) directory to write the table into")
    p.add_argument("--table-version", type=int, choices=[6, 8, 9], default=None,
                   help="table version to write (default 9, or the highest the scenario supports)")
    p.add_argument("--upto-step", type=int, default=None, metavar="K",
                   help="stop after step K (0-based), to see the table before a later step")
    p.add_argument("--metadata-table", action="store_true",
                   help="also write the metadata table's files partition as Hudi 1.1 does (table versions 8, 9)")
    p.add_argument("--format", choices=["table", "json", "csv"], default="table")
    p.set_defaults(func=cmd_scenario_build)
    p = ssub.add_parser("play", help="write a scenario step by step in real time, for following it live",
                        description="Write a scenario into a new directory step by step: the table first, then "
                                    "one step every --interval seconds, each step's files in the order Hudi "
                                    "writes them. One line per step; Ctrl-C stops between steps (exit 130).")
    p.add_argument("scenario", metavar="NAME|FILE", help="a built-in scenario name or a scenario .json/.yaml file")
    p.add_argument("out_dir", metavar="OUT_DIR", help="new (or empty) directory to write the table into")
    p.add_argument("--interval", type=_seconds, default=2.0, metavar="S",
                   help="seconds between two steps (default 2; 0 writes them back to back)")
    p.add_argument("--table-version", type=int, choices=[6, 8, 9], default=None,
                   help="table version to write (default 9, or the highest the scenario supports)")
    p.add_argument("--metadata-table", action="store_true",
                   help="also write the metadata table's files partition as Hudi 1.1 does (table versions 8, 9)")
    p.add_argument("--format", choices=["text", "jsonl"], default="text",
                   help="text lines, or one JSON object per step (index, op, label, instant, written, deleted, "
                        "time, seconds, note)")
    p.set_defaults(func=cmd_scenario_play)
    _register_generate(sub)  # `generate`: synthetic tables of a chosen size


def _seconds(text: str) -> float:
    """A non-negative number of seconds (argparse type)."""
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds >= 0")
    return value


#: The size presets of :data:`hudi_core.scenarios.scale.SIZES` (a test keeps them equal): the parser is
#: built without importing the generator, which imports pyarrow (`--help` stays fast).
GENERATE_SIZES = ("L", "M", "S")


def _cmd_generate(args: argparse.Namespace) -> int:
    from hudi_core.scenarios.scale import cmd_generate

    return cmd_generate(args)


def _register_generate(sub: Any) -> None:
    """Add the `generate` subcommand to the `hudi-inspect` subparsers (called from
    `hudi_core.cli.scenarios.register`)."""
    p = sub.add_parser("generate", help="write a synthetic Hudi table of a chosen size (S, M, L)",
                       description="Write a synthetic Hudi table into a new directory: partitions, file groups, "
                                   "an active timeline with real metadata naming the files on disk, and an "
                                   "archived timeline in the table's layout.")
    p.add_argument("out_dir", help="new (or empty) directory to create the table in")
    p.add_argument("--size", default="S", choices=GENERATE_SIZES, help="preset size (default S)")
    p.add_argument("--layout", type=int, choices=[1, 2], help="timeline layout (1: table v6, 2: v8/v9)")
    p.add_argument("--table-type", default="COPY_ON_WRITE", type=str.upper, choices=["COPY_ON_WRITE", "MERGE_ON_READ"])
    p.add_argument("--table-version", type=int, choices=[6, 8, 9])
    for name in ("partitions", "file-groups", "active-instants", "archived-instants", "log-files", "files"):
        p.add_argument(f"--{name}", type=int, dest=name.replace("-", "_"), help=f"override the preset's {name}")
    p.add_argument("--lsm-codec", default="zstd", choices=["gzip", "snappy", "zstd", "none"],
                   help="parquet codec of layout-2 history files (Hudi's default is gzip)")
    p.add_argument("--no-metadata-table", action="store_true",
                   help="do not write the metadata table (written by default for table versions 8 and 9)")
    p.add_argument("--mdt-drift", type=int, default=0, metavar="N",
                   help="delete N files the metadata table lists from storage and leave N files on storage out "
                        "of it (the report names them)")
    p.add_argument("--mdt-drift-seed", type=int, default=0, metavar="S", help="seed choosing the drifted files")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=_cmd_generate)

