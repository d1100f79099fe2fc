"""CLI commands of the dry-run services: `markers`, `plan-clean`, `plan-archive`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hudi_core.cli.output import render_json, render_table, wrap_lines, write_json
from hudi_core.cli.settings import config_of as _config
from hudi_core.cli.settings import now_of as _now
from hudi_core.errors import HudiInspectError
from hudi_core.services.config import DEFAULT_HUDI_RELEASE, HUDI_RELEASES, conf_layers

if TYPE_CHECKING:
    from hudi_core.services.lsm_archive import LsmArchivalPlan

AddFn = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def _cli() -> Any:
    from hudi_core import cli

    return cli


def _note_clean_inputs(args: argparse.Namespace, table: Any) -> None:
    """Markers rest on the last completed clean: an unreadable one makes the answer incomplete."""
    from hudi_core.services.inputs import last_clean_inputs

    if last_clean_inputs(table.timeline):
        args._plan_incomplete = True


def cmd_markers(args: argparse.Namespace) -> int:
    """`hudi-inspect markers TABLE`."""
    from hudi_core.services.markers import compute_markers  # the engine: not at start-up

    table = _cli()._open(args)
    markers = compute_markers(table, _config(args), now=_now(args))
    args._analyses = {"markers": markers}  # the table's verdict reuses it (DoctorContext.markers)
    payload = markers.to_dict()
    _note_clean_inputs(args, table)
    if args.format == "json":
        payload = _cli().with_findings(args, payload)
        print(render_json(payload))
    else:
        rows: list[dict[str, Any]] = []
        for key, value in payload.items():
            if isinstance(value, dict):
                rows.extend({"marker": f"{key}.{k}", "value": v} for k, v in value.items())
            else:
                rows.append({"marker": key, "value": value})
        print(render_table(rows, ["marker", "value"]))
    return 0


def _print_derived(lines: list[str]) -> None:
    if lines:
        print("metadata table: settings derived from the data table's configuration (as Hudi derives them):")
        for line in lines:
            print(f"  {line}")


def cmd_plan_clean(args: argparse.Namespace) -> int:
    """`hudi-inspect plan-clean TABLE [--conf K=V ...]`."""
    from hudi_core.services.clean import plan_clean

    table = _cli()._open(args)
    plan = plan_clean(table, _config(args), now=_now(args))
    args._analyses = {"clean_plan": plan}  # the table's verdict reuses it (DoctorContext.clean_plan)
    args._plan_incomplete = plan.incomplete
    if args.format == "json":
        # Streamed, the per-file lists built as written (the plan of a million files as dicts and
        # one string took 1.7 GB).
        write_json(_cli().with_findings(args, plan.to_dict(lazy=True)), sys.stdout, _cli().JSON_CHUNK_ROWS)
        return 0
    payload = plan.to_dict()
    # Not scheduled: the files a forced clean would delete are shown as such, never as "delete".
    if plan.would_schedule:
        rows = [{**d, "decision": "delete"} for d in payload["files_to_delete"]]
    else:
        rows = [{**d, "decision": "delete_if_forced"} for d in payload["files_to_delete_if_forced"]]
    rows += [{**d, "decision": "keep"} for d in payload["kept"]]
    if args.format == "csv":
        _cli()._emit(args, rows, columns=["decision", "partition", "file_id", "base_instant", "file", "reason"])
        return 0
    ectr = f"ECTR {plan.ectr}: {plan.ectr_detail}" if plan.ectr else f"ECTR: {plan.ectr_detail}"
    print(f"Hudi {plan.config.release_label}; policy {plan.policy}; {ectr}")
    _print_derived(plan.metadata_table_config)
    for item in payload["not_emulated"]:
        print(f"NOT EMULATED: {item['key']}={item['value']}: {item['reason']}")
    for item in payload["unverified_config_keys"]:
        print(f"UNVERIFIED KEY: {item['key']}={item['value']}: {item['reason']}")
    print(f"partitions ({plan.partition_mode}): {', '.join(plan.partitions) or '(none)'} — {plan.partition_detail}")
    print(f"trigger: {'yes' if plan.triggered else 'no'} ({plan.trigger_detail})")
    for p in plan.pending_cleans:
        print(f"pending clean {p.requested_time} ({p.state}, {p.files} files) runs first")
    first = plan.rollbacks_first
    if first is not None and first.failed_writes_policy == "LAZY":
        print(f"failed writes first: {first.detail}")
        for r in first.rollbacks:
            print(f"  rollback of {r.action or 'instant'} {r.instant}: {r.reason}")
    if plan.empty_clean is not None:
        print(f"empty clean: {'yes' if plan.empty_clean.would_write else 'no'} ({plan.empty_clean.detail})")
    if plan.would_schedule:
        print(f"scheduled: yes; {len(plan.files_to_delete)} files to delete")
    else:
        print(f"scheduled: no ({plan.not_scheduled_detail}); nothing is deleted. A forced clean would delete "
              f"{len(plan.files_if_forced)} files (decision delete_if_forced)")
    print(render_table(rows, ["decision", "partition", "file_id", "base_instant", "file", "reason"]))
    if plan.partitions_to_delete:
        print(f"partitions to delete: {', '.join(plan.partitions_to_delete)}")
    elif plan.partitions_if_forced:
        print(f"partitions a forced clean would delete: {', '.join(plan.partitions_if_forced)}")
    return 0


def cmd_plan_archive(args: argparse.Namespace) -> int:
    """`hudi-inspect plan-archive TABLE [--conf K=V ...] [--without-savepoint-guard]`."""
    from hudi_core.services.archive import plan_archive

    table = _cli()._open(args)
    plan = plan_archive(table, _config(args), savepoint_guard=not args.without_savepoint_guard)
    if not args.without_savepoint_guard:  # the verdict plans with the guard: the same plan
        args._analyses = {"archive_plan": plan}
    payload = plan.to_dict()
    args._plan_incomplete = plan.incomplete
    # Replaced file groups the archival would expose: a problem of the table (exit 2).
    args._table_problem = bool(plan.exposed_file_groups)
    if args.format == "json":
        print(render_json(_cli().with_findings(args, payload)))
        return 0
    rows = [{**d, "reasons": "; ".join(d["reasons"])} for d in payload["instants"]]
    if args.format == "csv":
        _cli()._emit(args, rows, columns=["requested_time", "action", "state", "decision", "reasons"])
        return 0
    _print_derived(plan.metadata_table_config)
    for item in payload["not_emulated"]:
        print(f"NOT EMULATED: {item['key']}={item['value']}: {item['reason']}")
    for item in payload["unverified_config_keys"]:
        print(f"UNVERIFIED KEY: {item['key']}={item['value']}: {item['reason']}")
    print(f"{plan.archiver} (Hudi {plan.config.release_label}); keep min {plan.min_to_keep} / max {plan.max_to_keep}: "
          f"{plan.min_max_detail}")
    if plan.boundary_instant:
        print(f"boundary: {plan.boundary_instant}" + (f", set by {plan.boundary_guard}" if plan.boundary_guard else ""))
    else:
        print("boundary: none (no guard or limit stops archival)")
    for g in plan.guards:
        print(f"  {g.name}: {g.instant or '-'} — {g.detail}")
    print(render_table(rows, ["requested_time", "action", "state", "decision", "reasons"]))
    for e in plan.exposed_file_groups:
        print(f"EXPOSED: {e.partition}/{e.file_id} (replaced by {e.replaced_by}) would be read again next to "
              f"{', '.join(e.replacement_file_ids)}: duplicate data")
    if plan.lsm is not None:
        _print_lsm(plan.lsm)
    return 0


def _print_lsm(lsm: LsmArchivalPlan) -> None:
    """The LSM history lines of `plan-archive`'s text output."""
    print(f"LSM timeline {lsm.history_dir}: snapshot {lsm.latest_version} ({lsm.version_source}) -> "
          f"{lsm.final_version}")
    for step in lsm.steps:
        made = f"snapshot {step.version}" if step.version is not None else "no new snapshot"
        inputs = f" from {', '.join(step.inputs)}" if step.inputs else ""
        print(f"  {step.kind.value}: {step.file_name} (level {step.level}, {made}){inputs}; {step.detail}")
    if lsm.failure:
        print(f"  FAILS: {lsm.failure}")
        return
    if lsm.versions_kept is None:
        print(f"  cleaning: {lsm.snapshot_count} snapshot(s), at most {lsm.most_versions_kept} kept "
              f"({lsm.retained_rule}): nothing deleted")
    else:
        print(f"  cleaning keeps snapshots {', '.join(map(str, lsm.versions_kept))} ({lsm.retained_rule}); "
              f"deletes {len(lsm.manifests_deleted)} manifest(s), {len(lsm.data_files_deleted)} data file(s)")
        for d in lsm.deletions:
            print(f"    delete {d.name}: {d.reason}")
    for note in lsm.notes:
        print(f"  note: {note}")


def cmd_compare_releases(args: argparse.Namespace) -> int:
    """`hudi-inspect compare-releases TABLE [--conf K=V ...]`: where Hudi 1.1 and 1.2 plan differently."""
    from hudi_core.services.releases import ListComparison, compare_releases

    table = _cli()._open(args)
    layers = conf_layers(getattr(args, "conf_file", None), args.conf)
    comparison = compare_releases(table, layers, now=_now(args))
    payload = comparison.to_dict()
    if args.format == "json":
        print(render_json(_cli().with_findings(args, payload)))
        return 0
    if args.format == "csv":
        _cli()._emit(args, [{"aspect": d["aspect"], "values": d["values"], "why": d["why"]}
                            for d in payload["differences"]], columns=["aspect", "values", "why"])
        return 0
    for release, summary in payload["summary"].items():
        c, a = summary["clean"], summary["archive"]
        ectr = f"clean ECTR {c['earliest_commit_to_retain']}" if c["earliest_commit_to_retain"] else "no clean ECTR"
        scheduled = "scheduled" if c["would_schedule"] else (
            f"not scheduled: {str(c['not_scheduled_reason']).replace('_', ' ')}" if c["not_scheduled_reason"]
            else "not scheduled")
        boundary = f"archival boundary {a['boundary']}" if a["boundary"] else "no archival boundary"
        print(f"Hudi {release}: {ectr}, {scheduled}; {c['files_to_delete']} files to delete in {c['partitions']} "
              f"partitions ({c['partition_mode']}); {boundary}, {a['instants_to_archive']} instants to archive")
    if comparison.agree:
        print("The releases plan the same clean and archival for this table and configuration.")
        return 0
    for d in comparison.differences:
        print(f"DIFFERS {d.aspect}:")
        for key, value in d.values.items():
            print(f"  {key}: {value.describe(5) if isinstance(value, ListComparison) else value}")
        print(f"  why: {d.why}")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """`hudi-inspect doctor TABLE [--conf K=V ...] [--check ID ...]` (exit 0 healthy, 2 problems, 1 incomplete)."""
    from hudi_core.services.doctor import DoctorOptions, run_doctor

    table = _cli()._open(args)
    options = DoctorOptions(now=_now(args), savepoint_guard=not args.without_savepoint_guard,
                            stale_hours=args.stale_hours)
    report = run_doctor(table, _config(args), options, only=args.check or None)
    if args.format == "json":
        write_json(_cli().with_findings(args, report.to_dict(lazy=True)), sys.stdout, _cli().JSON_CHUNK_ROWS)
    else:
        rows = [{"severity": f.severity.value, "check": f.check, "title": f.title,
                 "instants": list(f.evidence.instants), "files": len(f.evidence.files)} for f in report.findings]
        if args.format == "csv":
            _cli()._emit(args, rows, columns=["severity", "check", "title", "instants", "files"])
        else:
            status = report.worst.value if report.worst else "healthy"
            guard = "with" if report.savepoint_guard else "without"
            print(f"{len(report.checks)} checks; status {status}; {len(report.findings)} findings (Hudi "
                  f"{_config(args).release_label} cleaner/archiver {guard} the HUDI-7779 savepoint guard)")
            for n, f in enumerate(report.findings, 1):
                print()
                print(wrap_lines(finding_lines(n, f)))
    # Findings of the engine itself are a check (`engine_findings`): they count in the report's own exit code.
    args._findings_reported = True
    args._verdict_given = True  # every check the verdict runs, and more
    return report.exit_code


#: Evidence items listed in full up to this many; more are counted (`--format json` lists them all).
EVIDENCE_SHOWN = 20


def _listed(label: str, values: Sequence[str]) -> list[str]:
    if not values:
        return []
    if len(values) == 1:
        return [f"  {label}: {values[0]}"]
    out = [f"  {label} ({len(values)}):"] + [f"    {v}" for v in values[:EVIDENCE_SHOWN]]
    if len(values) > EVIDENCE_SHOWN:
        out.append(f"    and {len(values) - EVIDENCE_SHOWN} more (--format json lists them all)")
    return out


def finding_lines(n: int, f: Any) -> list[str]:
    """One doctor finding for a terminal: severity, check and title, then its evidence (files, file groups,
    instants, partitions, what it blocks, measured values), why it matters and what to do."""
    ev = f.evidence
    lines = [f"{n}. {f.severity.value.upper()} [{f.check}] {f.title}"]
    lines += _listed("files", ev.files)
    lines += _listed("file groups", [f"{g.partition}/{g.file_id}" if g.partition else g.file_id
                                     for g in ev.file_groups])
    lines += _listed("instants", list(ev.instants))
    lines += _listed("partitions", list(ev.partitions))
    lines += _listed("blocks", list(ev.blocks))
    measured = [x for x in (f"{ev.count:,} counted" if ev.count is not None else "",
                            f"limit {ev.limit:,}" if ev.limit is not None else "",
                            f"{ev.bytes:,} bytes" if ev.bytes is not None else "") if x]
    if measured:
        lines.append(f"  measured: {', '.join(measured)}")
    if ev.detail:
        lines.append(f"  detail: {ev.detail}")
    lines.append(f"  why: {f.why}")
    lines.append(f"  what to do: {f.what_to_do}")
    return lines


def cmd_history(args: argparse.Namespace) -> int:
    """`hudi-inspect history TABLE --file-id F [--partition P] | --path FILE`."""
    from hudi_core.services.history import file_group_history

    table = _cli()._open(args)
    history = file_group_history(table, args.file_id, args.partition, args.path, args.since, args.until)
    rows = [e.to_dict() for e in history.events]
    columns = ["requested_time", "action", "state", "source", "event", "partition", "files", "detail"]
    if args.format == "json":
        print(render_json(_cli().with_findings(args, history.to_dict())))
    elif args.format == "csv":
        _cli()._emit(args, rows, columns=columns)
    else:
        what = history.path or f"{history.partition + '/' if history.partition else ''}{history.file_id}"
        print(f"history of {what}: {len(rows)} events in {history.instants_read} instants (active and archived)")
        print(render_table(rows, columns))
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    """`hudi-inspect diff TABLE --from T1 --to T2` or `diff TABLE --against OLD_COPY`."""
    from hudi_core.services.diff import diff_copies, diff_instants

    table = _cli()._open(args)
    if args.against:
        if args.from_time or args.to_time:
            raise HudiInspectError("diff takes --from/--to or --against, not both")
        from hudi_core.table import open_table

        copy = open_table(args.against, dict(table.storage.spec.options))
        args._opened_tables.append(copy)
        changes = diff_copies(copy, table)
        if args.format == "json":
            print(render_json(_cli().with_findings(args, changes.to_dict())))
            return 0
        rows = [c.to_dict() for c in changes.instants]
        columns = ["requested_time", "action", "change", "before", "after", "detail"]
        if args.format == "csv":
            _cli()._emit(args, rows, columns=columns)
            return 0
        print(f"{args.against} (saved copy) against {table.uri}: {len(rows)} instants changed")
        print(render_table(rows, columns))
        for key, (before, after) in sorted(changes.properties.items()):
            print(f"hoodie.properties {key}: {before!r} -> {after!r}")
        if changes.since is not None:
            print(f"written since the copy ({changes.since.from_time} to {changes.since.to_time}): "
                  f"{len(changes.since.files_added)} files added, {len(changes.since.files_removed)} removed")
        return 0
    if not (args.from_time and args.to_time):
        raise HudiInspectError("diff needs --from T1 --to T2, or --against OLD_COPY")
    diff = diff_instants(table, args.from_time, args.to_time)
    if args.format == "json":
        print(render_json(_cli().with_findings(args, diff.to_dict())))
        return 0
    rows = [a.to_dict() for a in diff.actions]
    columns = ["requested_time", "action", "state", "operation", "records_written", "bytes_written",
               "files_written", "files_deleted", "groups_replaced"]
    if args.format == "csv":
        _cli()._emit(args, rows, columns=columns)
        return 0
    print(f"from {diff.from_time} to {diff.to_time}: {len(diff.actions)} instants")
    for label, values in (("file groups added", diff.groups_added), ("file groups removed", diff.groups_removed),
                          ("file groups replaced", diff.groups_replaced)):
        print(f"{label}: {len(values)}" + "".join(f"\n  {p}/{f}" if p else f"\n  {f}" for p, f in values))
    print(f"files added: {len(diff.files_added)}; files removed: {len(diff.files_removed)}")
    print(f"partitions created: {', '.join(diff.partitions_created) or '-'}; "
          f"deleted: {', '.join(diff.partitions_deleted) or '-'}")
    print(render_table(rows, columns))
    return 0


def _add_conf(p: argparse.ArgumentParser, what: str, release: bool = True) -> None:
    p.add_argument("--conf", action="append", metavar="KEY=VALUE", help=f"Hudi {what} config; repeatable")
    p.add_argument("--conf-file", action="append", metavar="FILE",
                   help="Java properties / hudi-defaults.conf / spark-defaults.conf (spark.hadoop.hoodie.* keys); "
                        "repeatable, --conf wins; keys that do not affect the dry run are listed as ignored")
    if not release:
        return
    p.add_argument("--hudi-release", choices=HUDI_RELEASES, default=DEFAULT_HUDI_RELEASE,
                   help=f"the Hudi release whose cleaner/archiver is emulated (default {DEFAULT_HUDI_RELEASE}); "
                        "recorded in every plan")


def register(add: AddFn, sub: Any) -> None:
    """Add `markers`, `plan-clean`, `plan-archive`, `compare-releases` and `doctor` to the CLI."""
    p = add("markers", cmd_markers, "ECTR, EarliestCommitToNotArchive (proposed and Hudi's), savepoints, "
                                    "replaced file groups")
    _add_conf(p, "cleaner/archiver")
    p.add_argument("--now", metavar="INSTANT", help="planning time for KEEP_LATEST_BY_HOURS (UTC instant time)")
    p = add("plan-clean", cmd_plan_clean, "dry run of the next clean: every file's decision and reason")
    _add_conf(p, "cleaner")
    p.add_argument("--now", metavar="INSTANT", help="planning time for KEEP_LATEST_BY_HOURS (UTC instant time)")
    p = add("plan-archive", cmd_plan_archive, "dry run of the next archival: every instant, guards, boundary")
    _add_conf(p, "archiver")
    p.add_argument("--without-savepoint-guard", action="store_true",
                   help="run the archiver as before HUDI-7779 (no savepoint bound on the replacecommit guard)")
    p = add("compare-releases", cmd_compare_releases, "the next clean and archival under Hudi 1.1 and 1.2 from the "
                                                     "same configuration, and every point where they differ")
    _add_conf(p, "cleaner/archiver", release=False)  # both releases are planned
    p.add_argument("--now", metavar="INSTANT", help="planning time for KEEP_LATEST_BY_HOURS (UTC instant time)")
    p = add("doctor", cmd_doctor, "health checks with evidence, why and what to do (exit 0 healthy, 2 warnings "
                                  "or errors, 1 a check could not read its input)")
    _add_conf(p, "cleaner/archiver")
    p.add_argument("--now", metavar="INSTANT", help="measure ages from this instant time (UTC) instead of now")
    p.add_argument("--check", action="append", metavar="ID", help="run only this check; repeatable")
    p.add_argument("--stale-hours", type=float, default=24.0,
                   help="pending instants and plans older than this are warnings (default 24)")
    p.add_argument("--without-savepoint-guard", action="store_true",
                   help="plan archival as Hudi did before HUDI-7779 (releases without the guard)")
    p = add("history", cmd_history, "every instant, active and archived, that wrote, compacted, clustered, "
                                    "replaced, cleaned or rolled back a file group or file")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--file-id", help="the file group's id")
    which.add_argument("--path", help="one base or log file (table-relative path or file name)")
    p.add_argument("--partition", help="only the group in this partition (with --file-id)")
    p.add_argument("--since", help="only instants requested at or after this time")
    p.add_argument("--until", help="only instants requested at or before this time")
    p = add("diff", cmd_diff, "file groups, files and partitions added, removed and replaced between two instants, "
                              "with records and bytes written per instant")
    p.add_argument("--from", dest="from_time", metavar="T1", help="the earlier instant time")
    p.add_argument("--to", dest="to_time", metavar="T2", help="the later instant time")
    p.add_argument("--against", metavar="OLD_COPY", help="a saved copy of this table (at least its .hoodie) to "
                                                         "compare the table now with")
