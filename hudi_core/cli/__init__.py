"""`hudi-inspect`: the command-line face of the engine (also `python -m hudi_core`).

Every command takes `--format table|json|csv`. JSON keys are stable snake_case. Errors print one
line on stderr saying what failed and where; never a traceback. Exit codes, one contract for every command
(:data:`hudi_core.errors.EXIT_CODES_EPILOG`, at the end of every --help): 0 read completely and nothing wrong,
1 incomplete or no answer, 2 the table has a problem the command found.

A face: one module per command group (:data:`COMMAND_MODULES`), the renderers (:mod:`.output`) and the engine
options. Imports any layer below and the scenario writers; no other package imports it or argparse.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hudi_core.cli.engine_options import add_engine_options, executor_from_args
from hudi_core.cli.output import (
    render_csv,
    render_json,
    render_table,
    wrap_lines,
    write_arrow_json_list,
    write_json,
)
from hudi_core.errors import EXIT_CODES_EPILOG, Finding, HudiInspectError, Severity, exit_code_for
from hudi_core.formats.timeline.instant import Instant
from hudi_core.io.memory import prefer_system_allocator

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

EXIT_OK = 0
#: No answer: the table cannot be opened, the arguments or the query are wrong.
EXIT_ERROR = 1
#: Bad arguments or a bad query: no answer, as any other failure (the contract keeps 2 for table problems).
EXIT_USAGE = 1
#: The answer was printed but is incomplete: some input could not be read (a finding of severity
#: ``error`` bears on it, or a plan lists `missing_inputs`). Same code as an error, on purpose: a
#: script that checks `$?` must not take a partial answer for a complete one.
EXIT_INCOMPLETE = 1
#: The table has a problem the command found (:data:`hudi_core.errors.EXIT_PROBLEM`).
EXIT_PROBLEM = 2
#: Rows encoded at a time when a long JSON list is streamed (:func:`~hudi_core.cli.output.write_json_list`).
JSON_CHUNK_ROWS = 20_000

#: Feature modules that add subcommands. Each defines ``register(add, sub)`` where
#: ``add(name, fn, help) -> argparse.ArgumentParser`` creates a subcommand with the common options
#: (table, --format, --storage-option, --metadata-table) and binds ``fn(args) -> exit code``.
#: ``sub`` is the argparse subparsers object, for commands without a table argument.
#: Helpers such as `_open`, `_emit` and `instant_json` are importable from this module.
COMMAND_MODULES: tuple[str, ...] = (
    "hudi_core.cli.logs",
    "hudi_core.cli.timeline",
    "hudi_core.cli.plans",
    "hudi_core.cli.scenarios",
    "hudi_core.cli.scan",
    "hudi_core.cli.report",
    "hudi_core.cli.hfile",
    "hudi_core.cli.metadata",
    "hudi_core.cli.ui",
    "hudi_core.cli.sql",
    "hudi_core.cli.schema",
    "hudi_core.cli.watch",
    "hudi_core.cli.writers",
)


def _storage_options(pairs: Sequence[str] | None) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise HudiInspectError(f"--storage-option expects KEY=VALUE, got {pair!r}")
        options[key] = value
    return options


#: The commands that read storage's whole listing after a view's check (the doctor's missing and orphan files).
KEEP_STORAGE_LISTING = frozenset({"doctor", "report", "watch", "scan"})


def _open(args: argparse.Namespace) -> HudiTable:
    from hudi_core.table import open_table  # pyarrow and fsspec: not before a command needs a table

    table = open_table(args.table, _storage_options(args.storage_option), executor=executor_from_args(args),
                       listing=getattr(args, "listing", None),
                       storage_check=getattr(args, "storage_check", None))
    # Storage's whole listing, once a view's check has compared it, is read again only by the commands that look
    # for missing and orphan files (the doctor's checks); the others let it go (200 MB on a million files).
    table.keep_storage_listing = getattr(args, "command", None) in KEEP_STORAGE_LISTING
    args._opened_tables = [table]
    if getattr(args, "metadata_table", False):
        mdt = table.metadata_table()
        if mdt is None:
            raise HudiInspectError(f"{args.table} has no metadata table (.hoodie/metadata)")
        args._opened_tables.append(mdt)
        return mdt
    return table


#: The keys of an instant's JSON, in order (`timeline`; `instant` has those up to `duration_ms`).
INSTANT_JSON_KEYS = ("requested_time", "completion_time", "action", "state", "source", "pending_action",
                     "completed_action", "completion_time_source", "files", "inflight_time", "inflight_time_source",
                     "requested_to_inflight_ms", "inflight_to_completed_ms", "duration_ms", "mdt_duration_ms",
                     "rollback_info")


def command_findings(args: argparse.Namespace) -> list[Finding]:
    """Every finding noticed while the command read its table(s): files it could not read or decode,
    names it skipped, plan inputs it lacked. Deduplicated, in the order noticed."""
    seen: dict[tuple[str, str, str], Finding] = {}
    for table in getattr(args, "_opened_tables", []):
        for finding in [*table.findings, *getattr(table.storage, "findings", [])]:
            seen.setdefault((finding.code, finding.path, finding.message), finding)
    for finding in getattr(args, "_extra_findings", []):  # what a command read beside its tables (sql's plans)
        seen.setdefault((finding.code, finding.path, finding.message), finding)
    return list(seen.values())


def listing_used(args: argparse.Namespace) -> dict[str, str] | None:
    """`{"kind", "reason"}` of the listing the command's file-system view was built from (every
    answer says whether it listed storage or the metadata table); None when it built no view."""
    for table in getattr(args, "_opened_tables", []):
        views = [table.__dict__.get(name) for name in ("_fs_view", "_replaced_view")]
        views += list(table.__dict__.get("_partition_views", {}).values())
        for view in views:
            if view is not None:
                return {"kind": view.listing.value, "reason": view.listing_reason,
                        "storage_checked": view.storage_checked}
    return None


def is_incomplete(args: argparse.Namespace, findings: Sequence[Finding] | None = None) -> bool:
    """Whether the answer lacks some input: an error finding, or a plan that says so."""
    findings = command_findings(args) if findings is None else findings
    return bool(getattr(args, "_plan_incomplete", False)) or any(f.severity is Severity.ERROR for f in findings)


def with_findings(args: argparse.Namespace, payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` plus `findings` (path, reason, …) and `incomplete`; existing keys are kept as they are."""
    findings = command_findings(args)
    merged = list(payload.get("findings") or [])
    known = {(f.get("code"), f.get("path"), f.get("message")) for f in merged if isinstance(f, dict)}
    merged += [f.to_dict() for f in findings if (f.code, f.path, f.message) not in known]
    if payload.get("incomplete"):
        args._plan_incomplete = True
    incomplete = is_incomplete(args, findings) or any(f.get("severity") == "error" for f in merged)
    args._findings_reported = True
    args._plan_incomplete = getattr(args, "_plan_incomplete", False) or incomplete
    listing = listing_used(args)
    extra = {"listing": listing} if listing is not None and "listing" not in payload else {}
    return {**payload, **extra, "findings": merged, "incomplete": incomplete}


def problem_found(args: argparse.Namespace, findings: Sequence[Finding] | None = None) -> bool:
    """Whether the command found a problem of the table itself: a finding the verdict counts as one (metadata-table
    drift), or what the command flagged (`args._table_problem`: an exposure in a plan, a health finding)."""
    findings = command_findings(args) if findings is None else findings
    if getattr(args, "_table_problem", False):
        return True
    if not findings or listing_incomplete(args):
        return False  # differences from a listing not read whole are no proof: the answer is incomplete instead
    from hudi_core.services.verdict import is_problem_finding  # the doctor's modules: only when needed

    return any(is_problem_finding(f) for f in findings)


def _judge_table(args: argparse.Namespace) -> tuple[bool, bool]:
    """The table's verdict behind the exit code of a command that does not give it itself: every command's exit
    code tells the same story as `info` (`--no-verdict`: only what the command read). It reuses what the command
    built (the file-system view) and lists files only where drift can be found (a metadata-table listing checked
    against storage) or the command listed them anyway. A verdict with something wrong adds one line to stderr;
    standard output is the command's answer alone. Returns (problem, incomplete)."""
    tables = getattr(args, "_opened_tables", [])
    if not tables or getattr(args, "_verdict_given", False) or getattr(args, "no_verdict", False):
        return False, False
    table = tables[0]
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()  # the answer is out before the table is judged (a pipe reads it at once)
    from hudi_core.services.verdict import compute_verdict  # the doctor's modules: only when needed

    # No view built: the listings alone (drift needs no file group), and only where drift can be found.
    with_listing = ("_fs_view" in table.__dict__
                    or (table.listing_choice()[0] == "metadata" and table.storage_check))
    context = None
    if hasattr(args, "conf"):  # the commands that take Hudi's configuration are judged with it, at their time
        from hudi_core.cli.settings import config_of, now_of
        from hudi_core.services.doctor import DoctorContext, DoctorOptions

        context = DoctorContext(table, config_of(args), DoctorOptions(now=now_of(args)))
        # What the command computed with that configuration is not computed again (a clean plan of every file).
        context.__dict__.update(getattr(args, "_analyses", {}))
    verdict = compute_verdict(table, context.config if context else None, with_listing=with_listing,
                              context=context)
    if verdict.status != "ok":
        print(f"hudi-inspect: verdict {verdict.status}: {_one_line(verdict.headline)} "
              f"(`hudi-inspect info {args.table}` tells more)", file=sys.stderr)
    return verdict.severity is not None, verdict.incomplete


def listing_incomplete(args: argparse.Namespace) -> bool:
    """Whether a view the command built lists files from a metadata table it could not read whole."""
    for table in getattr(args, "_opened_tables", []):
        views = [table.__dict__.get(name) for name in ("_fs_view", "_replaced_view")]
        views += list(table.__dict__.get("_partition_views", {}).values())
        if any(view is not None and view.listing_incomplete for view in views):
            return True
    return False


def _report_findings(args: argparse.Namespace) -> bool:
    """After a command: print the findings its output did not carry (stderr), say if it is incomplete."""
    findings = command_findings(args)
    incomplete = is_incomplete(args, findings)
    if getattr(args, "_findings_reported", False):
        return incomplete
    shown = [f for f in findings if f.severity is not Severity.INFO]
    if not shown and not incomplete:
        return False
    if getattr(args, "format", None) == "json":
        # The rows on stdout keep their shape; the findings that bear on them go to stderr as JSON.
        listing = listing_used(args)
        meta = {"listing": listing} if listing is not None else {}
        print(render_json({**meta, "findings": [f.to_dict() for f in findings], "incomplete": incomplete}),
              file=sys.stderr)
    else:
        for f in shown:
            print(f"hudi-inspect: {f.severity.value}: {f.message} ({f.path})", file=sys.stderr)
        if problem_found(args, findings):
            print("hudi-inspect: the table has a problem (see above; exit 2)", file=sys.stderr)
        elif incomplete:
            print("hudi-inspect: the answer above is incomplete: some input could not be read (exit 1)",
                  file=sys.stderr)
    return incomplete


def instant_json(inst: Instant) -> dict[str, Any]:
    """The stable JSON shape of an instant (the phase timings its own files give; `timeline` adds the metadata
    table's delta commit and `rollback_info`)."""
    from hudi_core.formats.timeline.instant import phase_durations_of

    return {
        "requested_time": inst.requested_time,
        "completion_time": inst.completion_time,
        "action": inst.action,
        "state": inst.state.name,
        "source": inst.source,
        "pending_action": inst.pending_action,
        "completed_action": inst.completed_action,
        "completion_time_source": inst.completion_time_source,
        "files": [f.name for f in inst.files],
        "inflight_time": inst.inflight_time,
        "inflight_time_source": inst.inflight_time_source,
        **phase_durations_of(inst),
    }


def wants_envelope(args: argparse.Namespace) -> bool:
    """`--format json --envelope`: list-shaped answers as one object that carries their findings."""
    return args.format == "json" and bool(getattr(args, "envelope", False))


def _emit(args: argparse.Namespace, rows: list[dict[str, Any]], payload: Any = None,
          columns: Sequence[str] | None = None) -> None:
    if args.format == "json":
        out = rows if payload is None else payload
        if wants_envelope(args):
            # The findings travel in the same JSON document as the rows they bear on.
            out = with_findings(args, out if isinstance(out, dict) else {"rows": out})
        write_json(out, sys.stdout, JSON_CHUNK_ROWS)  # long lists in chunks: no one string of the whole answer
    elif args.format == "csv":
        sys.stdout.write(render_csv(rows, columns))
    else:
        print(render_table(rows, columns))
        print_listing_line(args)


def print_listing_line(args: argparse.Namespace) -> None:
    """Text output: one closing line naming the listing the answer was built from, when it built a view."""
    listing = listing_used(args)
    if listing is not None:
        where = "the metadata table" if listing["kind"] == "metadata" else "storage"
        unchecked = "; not checked against storage (--storage-check)" if not listing["storage_checked"] else ""
        print(f"listing: {where} ({listing['reason']}{unchecked})")


def cmd_info(args: argparse.Namespace) -> int:
    from hudi_core.services.verdict import compute_verdict

    table = _open(args)
    info = table.describe()
    config = None
    if getattr(args, "config", False):
        from hudi_core.io.table_config import read_table_configuration

        # Every hoodie.properties key with its meaning and default, and the backup's differences.
        config = read_table_configuration(table.storage)
        args._extra_findings = [*getattr(args, "_extra_findings", []), *config.findings]
        info = {**info, "config": [e.to_dict() for e in config.entries],
                "backup_differences": [d.to_dict() for d in config.backup_differences]}
    # The verdict first: the doctor's triage checks and what the file listing found (the view's: its findings,
    # every file the listing skipped or the storage check found, are part of info's answer).
    verdict = compute_verdict(table, view=table.fs_view())
    findings = with_findings(args, {})["findings"]
    if args.format == "json":
        print(render_json({"verdict": verdict.to_dict(), **info, "findings": findings,
                           "incomplete": is_incomplete(args)}))
    elif args.format == "csv":
        if config is not None:
            sys.stdout.write(render_csv([e.to_dict() for e in config.entries], _CONFIG_COLUMNS))
        else:
            sys.stdout.write(render_csv([{"key": k, "value": v} for k, v in info.items()]))
    else:
        print(wrap_lines(verdict.text_lines()))
        print()
        facts = {k: v for k, v in info.items() if k not in ("config", "backup_differences")}
        print(render_table([{"key": k, "value": v} for k, v in facts.items()]))
        if config is not None:
            print()
            print(render_table([e.to_dict() for e in config.entries], _CONFIG_COLUMNS))
            if config.backup_differences:
                print(f"\nhoodie.properties differs from hoodie.properties.backup in "
                      f"{len(config.backup_differences)} key(s):")
                print(render_table([d.to_dict() for d in config.backup_differences],
                                   ["key", "change", "value", "backup_value"]))
        for f in findings:
            print(f"{f['severity']}: {f['message']} ({f['path']})")
    args._table_problem = verdict.severity is not None
    args._verdict_given = True
    return EXIT_OK


_CONFIG_COLUMNS = ["key", "value", "default", "known", "differs_from_backup", "meaning"]


def cmd_timeline(args: argparse.Namespace) -> int:
    from hudi_core.table.facts import active_phase_facts, metadata_timeline_of

    table = _open(args)
    if getattr(args, "archived", False) or getattr(args, "all", False):
        from hudi_core.table.facts import instant_listing

        # Archived (or active + archived) instants; the range prunes archive files as Hudi does. Rows come
        # from the Arrow listing: no object per archived instant (a million of them), phase timings
        # computed column-wise. Findings (damaged archive files, instants in both timelines) are
        # reported after the command.
        listing = instant_listing(table, args.since, args.until, archived_only=args.archived)
        selected = _filter_listing(listing, args).select(list(INSTANT_JSON_KEYS))
        if args.format == "json" and not wants_envelope(args):
            # Streamed in slices, written column-wise: a million archived instants as dicts and one string took
            # 4 GB, and a dict per row was half of the command's time.
            write_arrow_json_list(selected, sys.stdout, JSON_CHUNK_ROWS)
            return EXIT_OK
        _emit(args, selected.to_pylist(), columns=_TIMELINE_COLUMNS if args.format != "json" else None)
        return EXIT_OK
    instants = list(table.timeline)
    if args.action:
        instants = [i for i in instants if args.action in (i.action, i.pending_action, i.completed_action)]
    if args.state:
        instants = [i for i in instants if i.state.name == args.state.upper()]
    if args.since:
        instants = [i for i in instants if i.requested_time >= args.since]
    if args.until:
        instants = [i for i in instants if i.requested_time <= args.until]
    phases = active_phase_facts(table.timeline, metadata_timeline_of(table))  # plain Python: no pyarrow here
    rows = [{**instant_json(i), **phases[i.key()]} for i in instants]
    _emit(args, rows, columns=_TIMELINE_COLUMNS if args.format != "json" else None)
    return EXIT_OK


_TIMELINE_COLUMNS = ["requested_time", "action", "state", "completion_time", "inflight_time", "duration_ms",
                     "pending_action", "source", "rollback_info", "files"]


def _filter_listing(listing: Any, args: argparse.Namespace) -> Any:
    """`--action`, `--state`, `--since`, `--until` on an Arrow listing (as on instants above)."""
    import pyarrow.compute as pc

    mask = None

    def both(cond: Any) -> Any:
        cond = pc.fill_null(cond, False)
        return cond if mask is None else pc.and_(mask, cond)

    if args.action:
        mask = both(pc.or_(pc.or_(pc.equal(listing["action"], args.action),
                                  pc.equal(listing["pending_action"], args.action)),
                           pc.equal(listing["completed_action"], args.action)))
    if args.state:
        mask = both(pc.equal(listing["state"], args.state.upper()))
    if args.since:
        mask = both(pc.greater_equal(listing["requested_time"], args.since))
    if args.until:
        mask = both(pc.less_equal(listing["requested_time"], args.until))
    return listing if mask is None else listing.filter(mask)


def cmd_instant(args: argparse.Namespace) -> int:
    table = _open(args)
    tl = table.timeline
    inst = tl.get(args.instant, args.action)
    states = []
    if inst is not None:
        for f in inst.files:
            body = tl.body_of_file(f)
            errors = [e.message for e in tl.body_error(inst) if e.path.endswith(f.name)]
            states.append(_state_json(f.name, f.state.name, f.size, body, errors))
    else:
        # Not active: the archived timeline (layout 1 or 2), pruned to this one time as Hudi does.
        archived = table.archived_timeline(args.instant, args.instant)
        inst = archived.get(args.instant, args.action)
        if inst is None:
            raise HudiInspectError(f"no instant {args.instant} in the active or archived timeline of {table.uri}")
        for f in inst.files:
            body = archived.body(inst, f.state)
            errors = [e.message for e in archived.body_error(inst)
                      if f.state.name in e.message.rsplit(":", 1)[0].split()]
            states.append(_state_json(f.name, f.state.name, f.size, body, errors))
    payload = {**instant_json(inst), "bodies": states}
    if args.format == "json":
        print(render_json(with_findings(args, payload)))
    else:
        rows = [{k: v for k, v in s.items() if k != "record"} for s in states]
        _emit(args, rows)
    return EXIT_OK


def _state_json(name: str, state: str, size: int, body: Any, errors: list[str]) -> dict[str, Any]:
    return {
        "file": name,
        "state": state,
        "size": size,
        "format": body.format.value if body else None,
        "record_type": body.record_type if body else None,
        "record": body.data if body else None,
        "errors": errors,
    }


def slice_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "partition": row["partition"],
        "file_id": row["file_id"],
        "base_instant": row["base_instant"],
        "base_file": row["base_file"],
        "log_files": row["log_files"],
    }


def cmd_fsview(args: argparse.Namespace) -> int:
    table = _open(args)
    # The rows of `inspect.file_slices` (same rule, same values), without the Arrow round trip: 90k
    # slices cost 0.5 s through Arrow and back to Python for JSON.
    # `--partition`: that partition alone is listed (through the metadata table: only its records are read).
    view = table.fs_view(partitions=[args.partition] if args.partition is not None else None)
    rows = view.slice_rows(as_of=args.as_of, latest_only=not args.all_slices)
    if not args.all_slices:
        rows = [r for r in rows if r["is_latest"] and r["replaced_by"] is None]
    if args.partition is not None:
        rows = [r for r in rows if r["partition"] == args.partition]
    out = [slice_json(r) for r in rows]
    _emit(args, out, columns=["partition", "file_id", "base_instant", "base_file", "log_files"])
    return EXIT_OK


#: The distribution whose version `--version` prints (pyproject's `[project] name`).
DISTRIBUTION = "hudi-timeline-inspector"


def package_version() -> str:
    """This package's version: the installed distribution's metadata when that distribution holds the
    `hudi_core` being run (a wheel), else the `pyproject.toml` of the checkout it is run from (an editable
    install or `PYTHONPATH`, whose metadata may be stale or absent), else the metadata, else
    `hudi_core.__version__`."""
    import importlib.metadata
    from pathlib import Path

    import hudi_core

    here = Path(hudi_core.__file__).resolve()
    try:
        dist: importlib.metadata.Distribution | None = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None and Path(str(dist.locate_file("hudi_core/__init__.py"))).resolve() == here:
        return str(dist.version)
    pyproject = here.parent.parent / "pyproject.toml"
    try:
        import tomllib

        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == DISTRIBUTION and project.get("version"):
            return str(project["version"])
    except (OSError, ValueError):
        pass
    return str(dist.version) if dist is not None else hudi_core.__version__


def version_text() -> str:
    """`hudi-inspect --version`: the package version and the Hudi releases it emulates, e.g. ``hudi-inspect
    0.1.0 (readers emulate Hudi 1.1.x; clean/archive dry runs Hudi 1.2.x by default, 1.1.x with
    --hudi-release 1.1)``."""
    from hudi_core.services.config import DEFAULT_HUDI_RELEASE, HUDI_RELEASES
    from hudi_core.table import EMULATED_HUDI_RELEASE

    others = "".join(f", {r}.x with --hudi-release {r}" for r in HUDI_RELEASES if r != DEFAULT_HUDI_RELEASE)
    return (f"hudi-inspect {package_version()} (readers emulate Hudi {EMULATED_HUDI_RELEASE}; clean/archive dry runs "
            f"Hudi {DEFAULT_HUDI_RELEASE}.x by default{others})")


class _VersionAction(argparse.Action):
    """`--version`: prints :func:`version_text` and exits 0; worked out only when asked (start-up)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version and the emulated Hudi releases, then exit", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """argparse with the exit-code contract: bad arguments give no answer (1), never 2 (a table problem); every
    command's --help ends with the contract."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("epilog", EXIT_CODES_EPILOG)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hudi-inspect",
        description="Read-only inspection of Apache Hudi tables (emulates Hudi 1.1.x readers).",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, fn: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("table", help="table base path or URL (s3://…, gs://…, file://…)")
        p.add_argument("--format", choices=["table", "json", "csv"], default="table")
        p.add_argument("--storage-option", action="append", metavar="KEY=VALUE",
                       help="fsspec storage option (credentials, endpoint); repeatable")
        p.add_argument("--metadata-table", action="store_true", help="inspect the table's metadata table")
        p.add_argument("--listing", choices=["metadata", "storage"],
                       help="list files through the metadata table's files partition or from storage (default: as "
                            "a Hudi 1.x reader does: the metadata table when hoodie.properties enables it, v8+)")
        check = p.add_mutually_exclusive_group()
        check.add_argument("--storage-check", dest="storage_check", action="store_true", default=None,
                           help="with the metadata-table listing, also list storage and report every file the two "
                                "disagree on (default on local disk; on object stores it costs a LIST per "
                                "partition, which Hudi never makes: off unless asked)")
        check.add_argument("--no-storage-check", dest="storage_check", action="store_false",
                           help="do not check the metadata-table listing against storage")
        p.add_argument("--no-verdict", action="store_true",
                       help="the exit code says what this command found only, without the table's verdict (which "
                            "may list the table's files to check the metadata table against storage)")
        p.add_argument("--envelope", action="store_true",
                       help="with --format json: list-shaped answers as {\"rows\": [...], \"findings\": [...], "
                            "\"incomplete\": ...} instead of a list (findings then stay off stderr)")
        add_engine_options(p)
        p.set_defaults(func=fn)
        return p

    p = add("info", cmd_info, "table facts and findings")
    p.add_argument("--config", action="store_true",
                   help="also every hoodie.properties key with its value, meaning and documented default, unknown "
                        "keys marked, and the differences from hoodie.properties.backup")
    p = add("timeline", cmd_timeline, "the timeline (active unless --archived/--all), every action and state")
    p.add_argument("--action", help="only this action (matches pending and completed actions)")
    p.add_argument("--state", choices=["requested", "inflight", "completed", "REQUESTED", "INFLIGHT",
                                       "COMPLETED"])
    p.add_argument("--since", help="only instants requested at or after this time")
    p.add_argument("--until", help="only instants requested at or before this time")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--archived", action="store_true", help="only the archived timeline (layout 1 or 2)")
    which.add_argument("--all", action="store_true", help="active and archived instants, in Hudi's order")
    p = add("instant", cmd_instant, "one instant with its decoded bodies")
    p.add_argument("instant", help="requested time of the instant")
    p.add_argument("--action", help="disambiguate when two actions share a time")
    p = add("fsview", cmd_fsview, "latest file slices (or as of an instant)")
    p.add_argument("--as-of", help="show the view as of this instant time")
    p.add_argument("--partition", help="only this partition")
    p.add_argument("--all-slices", action="store_true", help="every committed slice, not just the latest")
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # that capability is not installed in this build
        module.register(add, sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    prefer_system_allocator()
    parser = build_parser()
    args = parser.parse_args(argv)
    _library_logging()
    _escaping_output()
    try:
        code = int(args.func(args))
        incomplete = _report_findings(args)
        if code == EXIT_OK:
            verdict_problem, verdict_incomplete = _judge_table(args)
            return exit_code_for(problem_found(args) or verdict_problem, incomplete or verdict_incomplete)
        return code
    except HudiInspectError as exc:
        print(f"hudi-inspect: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print("hudi-inspect: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # last resort: one line, never a traceback
        print(f"hudi-inspect: unexpected {type(exc).__name__}: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        # What this command decoded goes to the active-timeline index before `run` exits with `os._exit`.
        from hudi_core.formats.timeline.active import flush_index_writes

        flush_index_writes()


def _escaping_output() -> None:
    """Text the terminal's encoding cannot carry (a lone surrogate read from a damaged schema, a name in another
    script on a Latin-1 terminal) is printed escaped (``\\udc80``), never an encoding error instead of the
    answer."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def _library_logging() -> None:
    """Store libraries log their retries with tracebacks (gcsfs's "_request out of retries", through
    logging's last-resort handler on stderr). A command that fails reports the cause itself on one line,
    so library records are shown only when `HUDI_INSPECTOR_LOG_LEVEL` asks (`WARNING`, `DEBUG`): one line
    each, never a traceback."""
    import logging
    import os

    root = logging.getLogger()
    if any(getattr(handler, "hudi_inspect", False) for handler in root.handlers):
        return

    class OneLine(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return f"hudi-inspect: {record.name}: {_one_line(record.getMessage())}"

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    handler.hudi_inspect = True  # type: ignore[attr-defined]
    level = os.environ.get("HUDI_INSPECTOR_LOG_LEVEL", "CRITICAL").upper()
    handler.setLevel(level if level in logging.getLevelNamesMapping() else "CRITICAL")
    root.addHandler(handler)
    if root.level > handler.level:
        root.setLevel(handler.level)


def _one_line(text: str) -> str:
    """An error message on one line (store SDKs put status, code and details on lines of their own)."""
    return " ".join(text.split())


def _spark_context_active() -> bool:
    pyspark = sys.modules.get("pyspark")
    return bool(pyspark is not None and getattr(pyspark.SparkContext, "_active_spark_context", None))


def run() -> None:
    """The process entry point (`hudi-inspect`, `python -m hudi_core`): :func:`main`, then exit.

    The process ends with `os._exit` once its output is flushed: the answer is written, and letting
    the interpreter finalise costs a large command 0.2-0.3 s of freeing objects one by one (a view of
    100k files), and, once obstore's runtime (Rust, tokio threads) has served it, aborted a process
    (SIGABRT) once in a CI run. A started Spark context keeps the normal exit (its shutdown hooks stop
    the JVM), and so does a profiled or traced run (cProfile, coverage write their data at exit)."""
    import gc
    import os

    from hudi_core.lazy import pyarrow_without_pandas

    pyarrow_without_pandas()
    # A command builds its answer once and exits: the cyclic collector's full passes over a view of 100k
    # files (0.2 s each, after every large build) free nothing such a short-lived process needs back.
    gc.disable()
    code = main()
    if sys.getprofile() is None and sys.gettrace() is None and not _spark_context_active():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            pass
        os._exit(code)
    raise SystemExit(code)


if __name__ == "__main__":
    run()
