"""CLI commands of the dry-run services: `markers`, `plan-clean`, `plan-archive`."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable
from typing import Any

from hudi_core.errors import HudiInspectError
from hudi_core.output import render_json, render_table
from hudi_core.services.config import DEFAULT_HUDI_RELEASE, HUDI_RELEASES, ServiceConfig, conf_layers
from hudi_core.timeline.instant import parse_instant_time

AddFn = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def _now(args: argparse.Namespace) -> dt.datetime | None:
    """`--now INSTANT`: the planning time for KEEP_LATEST_BY_HOURS (the table's zone), else the current time."""
    value = getattr(args, "now", None)
    if not value:
        return None
    moment = parse_instant_time(value, "UTC")
    if moment is None:
        raise HudiInspectError(f"--now expects an instant time (yyyyMMddHHmmss[SSS]), got {value!r}")
    return moment


def _cli() -> Any:
    from hudi_core import cli

    return cli


def _note_clean_inputs(args: argparse.Namespace, table: Any) -> None:
    """Markers rest on the last completed clean: an unreadable one makes the answer incomplete."""
    from hudi_core.services.inputs import last_clean_inputs

    if last_clean_inputs(table.timeline):
        args._plan_incomplete = True


def _config(args: argparse.Namespace) -> ServiceConfig:
    """`--conf-file` files, then `--conf` pairs (later wins), as Hudi reads them."""
    return ServiceConfig.from_layers(conf_layers(getattr(args, "conf_file", None), args.conf),
                                     getattr(args, "hudi_release", None) or DEFAULT_HUDI_RELEASE)


def cmd_markers(args: argparse.Namespace) -> int:
    """`hudi-inspect markers TABLE`."""
    from hudi_core.services.markers import compute_markers  # the engine: not at start-up (issue 11)

    table = _cli()._open(args)
    payload = compute_markers(table, _config(args), now=_now(args)).to_dict()
    _note_clean_inputs(args, table)
    if args.format == "json":
        payload = _cli().with_findings(args, payload)
        print(render_json(payload))
    else:
        rows = []
        for key, value in payload.items():
            if isinstance(value, dict):
                rows.extend({"marker": f"{key}.{k}", "value": v} for k, v in value.items())
            else:
                rows.append({"marker": key, "value": value})
        print(render_table(rows, ["marker", "value"], max_width=100))
    return 0


def cmd_plan_clean(args: argparse.Namespace) -> int:
    """`hudi-inspect plan-clean TABLE [--conf K=V ...]`."""
    from hudi_core.services.clean import plan_clean

    table = _cli()._open(args)
    plan = plan_clean(table, _config(args), now=_now(args))
    payload = plan.to_dict()
    args._plan_incomplete = plan.incomplete
    if args.format == "json":
        print(render_json(_cli().with_findings(args, payload)))
        return 0
    # Not scheduled: the files a forced clean would delete are shown as such, never as "delete".
    if plan.would_schedule:
        rows = [{**d, "decision": "delete"} for d in payload["files_to_delete"]]
    else:
        rows = [{**d, "decision": "delete_if_forced"} for d in payload["files_to_delete_if_forced"]]
    rows += [{**d, "decision": "keep"} for d in payload["kept"]]
    if args.format == "csv":
        _cli()._emit(args, rows, columns=["decision", "partition", "file_id", "base_instant", "file", "reason"])
        return 0
    print(f"Hudi {plan.config.release_label}; policy {plan.policy}; ECTR {plan.ectr} ({plan.ectr_detail})")
    for item in payload["not_emulated"]:
        print(f"NOT EMULATED: {item['key']}={item['value']}: {item['reason']}")
    print(f"partitions ({plan.partition_mode}): {', '.join(plan.partitions) or '(none)'} — {plan.partition_detail}")
    print(f"trigger: {'yes' if plan.triggered else 'no'} ({plan.trigger_detail})")
    for p in plan.pending_cleans:
        print(f"pending clean {p.requested_time} ({p.state}, {p.files} files) runs first")
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
    payload = plan.to_dict()
    args._plan_incomplete = plan.incomplete
    if args.format == "json":
        print(render_json(_cli().with_findings(args, payload)))
        return 0
    rows = [{**d, "reasons": "; ".join(d["reasons"])} for d in payload["instants"]]
    if args.format == "csv":
        _cli()._emit(args, rows, columns=["requested_time", "action", "state", "decision", "reasons"])
        return 0
    for item in payload["not_emulated"]:
        print(f"NOT EMULATED: {item['key']}={item['value']}: {item['reason']}")
    print(f"{plan.archiver} (Hudi {plan.config.release_label}); keep min {plan.min_to_keep} / max {plan.max_to_keep} "
          f"({plan.min_max_detail})")
    print(f"boundary: {plan.boundary_instant} set by {plan.boundary_guard}")
    for g in plan.guards:
        print(f"  {g.name}: {g.instant or '-'} — {g.detail}")
    print(render_table(rows, ["requested_time", "action", "state", "decision", "reasons"], max_width=110))
    for e in plan.exposed_file_groups:
        print(f"EXPOSED: {e.partition}/{e.file_id} (replaced by {e.replaced_by}) would be read again next to "
              f"{', '.join(e.replacement_file_ids)}: duplicate data")
    return 0


def _add_conf(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--conf", action="append", metavar="KEY=VALUE", help=f"Hudi {what} config; repeatable")
    p.add_argument("--conf-file", action="append", metavar="FILE",
                   help="Java properties / hudi-defaults.conf / spark-defaults.conf (spark.hadoop.hoodie.* keys); "
                        "repeatable, --conf wins; keys that do not affect the dry run are listed as ignored")
    p.add_argument("--hudi-release", choices=HUDI_RELEASES, default=DEFAULT_HUDI_RELEASE,
                   help=f"the Hudi release whose cleaner/archiver is emulated (default {DEFAULT_HUDI_RELEASE}); "
                        "recorded in every plan")


def register(add: AddFn, sub: Any) -> None:
    """Add `markers`, `plan-clean` and `plan-archive` to the CLI."""
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
