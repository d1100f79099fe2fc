"""The verdict: one answer per table to "is anything wrong?", computed once here and shown the same way by every
face (the Overview and Health pages, `info`, the report, `watch`) and behind every command's exit code.

It rests on two sources, not on the slowest of the doctor's checks:

* the doctor's checks that need no full comparison of every file with storage and no log scan
  (:data:`~hudi_core.services.doctor.VERDICT_CHECKS`: pending and failing instants, archival exposing or having
  exposed replaced file groups, savepoints, the cleaner and archiver falling behind, the metadata table's
  timeline, ``hoodie.properties.backup``...), the same `watch` alerts on;
* what the file listing found: files a Hudi reader lists and then fails on (the metadata table lists a file of a
  latest file slice that storage lacks), other drift between the metadata table and storage, and inputs that
  could not be read (the answer is then incomplete).

Severity uses the one scale of :class:`~hudi_core.errors.Severity`: ``error`` = readers fail or see wrong data,
``warning`` = a problem that does not break reads yet. Every command's exit code follows the contract of
:func:`~hudi_core.errors.exit_code_for`; which engine findings are a problem of the table (exit 2) is
:data:`PROBLEM_FINDING_CODES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.errors import Finding, Severity, exit_code_for
from hudi_core.services.config import ServiceConfig
from hudi_core.services.doctor import CHECKS, VERDICT_CHECKS, DoctorOptions, HealthFinding, run_doctor
from hudi_core.table.listing.compare import DIFFERENCE_FINDINGS, DifferenceKind, ListingCheck

if TYPE_CHECKING:
    from hudi_core.services.doctor import DoctorContext, DoctorReport
    from hudi_core.table import HudiTable
    from hudi_core.table.fsview import FileSystemView

#: Engine finding codes that are a problem of the table itself (not of the inspector's reading): each
#: difference between the metadata table's listing and storage that Hudi's validator does not tolerate.
PROBLEM_FINDING_CODES: frozenset[str] = frozenset(code for code, _ in DIFFERENCE_FINDINGS.values())

#: The check id the listing's own items carry (the doctor's check of the same question).
LISTING_CHECK = "metadata_listing"

_CATALOGUE = {c.id: c for c in CHECKS}


def is_problem_finding(finding: Finding) -> bool:
    """Whether an engine finding is a problem of the table (exit 2) rather than something unread."""
    return finding.code in PROBLEM_FINDING_CODES


@dataclass(frozen=True)
class VerdictItem:
    """One reason for the verdict: which check or listing question, how bad, what, where, why, what to do."""

    check: str
    severity: Severity
    title: str
    files: Sequence[str] = ()  # the finding's evidence: a tuple, or a StringColumn where there may be a million
    instants: tuple[str, ...] = ()
    why: str = ""
    what_to_do: str = ""

    @property
    def file(self) -> str | None:
        """The first file named (table-relative), if any."""
        return self.files[0] if self.files else None

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "severity": self.severity.value, "title": self.title, "file": self.file,
                "files": list(self.files), "instants": list(self.instants), "why": self.why,
                "what_to_do": self.what_to_do}


@dataclass(frozen=True)
class Verdict:
    """The table's verdict: its items worst first, whether some input could not be read, what was judged."""

    table: str
    items: tuple[VerdictItem, ...]
    incomplete: bool
    checks: tuple[str, ...]
    listing_checked: bool
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def errors(self) -> list[VerdictItem]:
        return [i for i in self.items if i.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[VerdictItem]:
        return [i for i in self.items if i.severity is Severity.WARNING]

    @property
    def severity(self) -> Severity | None:
        """The worst severity (None: nothing wrong found)."""
        if self.errors:
            return Severity.ERROR
        return Severity.WARNING if self.warnings else None

    @property
    def status(self) -> str:
        """``error``, ``warning``, ``incomplete`` (nothing wrong found, but not everything read) or ``ok``."""
        if self.severity is not None:
            return self.severity.value
        return "incomplete" if self.incomplete else "ok"

    @property
    def judged_by(self) -> str:
        """What the verdict rests on, in words (every face says it the same way)."""
        checks = f"{len(self.checks)} of the doctor's checks"
        if self.options.get("listing") is None:
            return f"{checks} (the files were not listed: the Health page lists them)"
        if not self.listing_checked:
            return f"{checks} and the file listing (not checked against storage: --storage-check)"
        return f"{checks} and the file listing"

    @property
    def first_error(self) -> VerdictItem | None:
        errors = self.errors
        return errors[0] if errors else None

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.severity is not None, self.incomplete)

    @property
    def opens_health(self) -> bool:
        """Whether a face should lead with the health checks: readers would fail or data is exposed."""
        return bool(self.errors)

    @property
    def headline(self) -> str:
        """One sentence: the first error and its file, or the count of warnings, or that nothing is wrong."""
        first = self.first_error
        if first is not None:
            where = f": {first.file}" if first.file else ""
            more = len(self.errors) - 1
            tail = f" (and {more} more error{'s' if more != 1 else ''})" if more else ""
            return f"{first.title}{where}{tail}"
        if self.warnings:
            n = len(self.warnings)
            others = f" (and {n - 1} more)" if n > 1 else ""
            return f"{n} warning{'s' if n != 1 else ''}: {self.warnings[0].title}{others}"
        if self.incomplete:
            return "nothing wrong found, but some input could not be read: the answer is incomplete"
        return f"nothing wrong found by {self.judged_by}"

    def counts(self) -> dict[str, int]:
        return {"error": len(self.errors), "warning": len(self.warnings)}

    def text_lines(self) -> list[str]:
        """The verdict for a terminal: the status and headline, then each item with its files, why and what to
        do (every face that prints text prints these lines)."""
        lines = [f"verdict: {self.status} — {self.headline}"]
        for item in self.items:
            lines.append(f"  {item.severity.value}: {item.title}")
            for f in item.files[:5]:
                lines.append(f"    file: {f}")
            if len(item.files) > 5:
                lines.append(f"    and {len(item.files) - 5} more files")
            if item.instants:
                lines.append(f"    instants: {', '.join(item.instants[:5])}"
                             + (f" and {len(item.instants) - 5} more" if len(item.instants) > 5 else ""))
            if item.why:
                lines.append(f"    why: {item.why}")
            if item.what_to_do:
                lines.append(f"    what to do: {item.what_to_do}")
        lines.append(f"  judged by {self.judged_by}; `hudi-inspect doctor` runs every check")
        return lines

    def to_dict(self) -> dict[str, Any]:
        first = self.first_error
        return {"status": self.status, "severity": self.severity.value if self.severity else None,
                "headline": self.headline, "exit_code": self.exit_code, "counts": self.counts(),
                "first_error": first.to_dict() if first else None, "incomplete": self.incomplete,
                "listing_checked": self.listing_checked, "checks": list(self.checks),
                "options": dict(self.options), "items": [i.to_dict() for i in self.items]}


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def listing_items(check: ListingCheck) -> list[VerdictItem]:
    """What the metadata-table listing's check against storage found, one item per kind: a file of a latest file
    slice listed but missing on storage is an error (a snapshot query opens it and fails), every other
    difference Hudi's validator does not tolerate a warning. None from a listing that could not be read whole."""
    diffs = [d for d in (check.differences or []) if d.tolerated is None]
    if not diffs or check.incomplete:  # a listing not read whole proves no difference: incomplete instead
        return []
    missing = frozenset(d.partition for d in diffs if d.kind is DifferenceKind.MISSING_ON_STORAGE)
    latest = check.latest_files(missing) if missing and check.latest_files is not None else set()
    check_entry = _CATALOGUE[LISTING_CHECK]
    groups: dict[tuple[DifferenceKind, bool], list[Any]] = {}
    for d in diffs:
        in_latest = d.kind is DifferenceKind.MISSING_ON_STORAGE and (d.partition, d.file) in latest
        groups.setdefault((d.kind, in_latest), []).append(d)
    what = {
        (DifferenceKind.MISSING_ON_STORAGE, True): "listed by the metadata table in a latest file slice but missing "
                                                   "on storage: readers fail on it (FileNotFoundException)",
        (DifferenceKind.MISSING_ON_STORAGE, False): "listed by the metadata table (older slices) but missing on "
                                                    "storage: time travel and incremental reads to it fail",
        (DifferenceKind.MISSING_IN_METADATA, False): "on storage but not listed by the metadata table: invisible "
                                                     "to Hudi 1.x readers, never cleaned",
        (DifferenceKind.SIZE_DIFFERS, False): "of another size in the metadata table than on storage",
        (DifferenceKind.PARTITION_MISSING_ON_STORAGE, False): "partitions listed by the metadata table but missing "
                                                              "on storage",
        (DifferenceKind.PARTITION_MISSING_IN_METADATA, False): "partitions on storage the metadata table does not "
                                                               "list",
    }
    items = []
    for (kind, in_latest), ds in groups.items():
        files = tuple(_rel(d.partition, d.file) if d.file else d.partition for d in ds)
        noun = "" if kind.value.startswith("partition") else ("file " if len(ds) == 1 else "files ")
        text = what[(kind, in_latest)] if len(ds) == 1 else what[(kind, in_latest)].replace(" on it ", " on them ")
        title = f"{len(ds)} {noun}{text}"
        items.append(VerdictItem(LISTING_CHECK, Severity.ERROR if in_latest else Severity.WARNING, title, files,
                                 tuple(sorted({d.instant for d in ds if d.instant})), check_entry.why,
                                 check_entry.what_to_do))
    return items


def _from_health(f: HealthFinding) -> VerdictItem:
    files = f.evidence.files or tuple(f"{g.partition}/{g.file_id}" if g.partition else g.file_id
                                      for g in f.evidence.file_groups)
    return VerdictItem(f.check, f.severity, f.title, files, f.evidence.instants, f.why, f.what_to_do)


def unread_findings(table: HudiTable) -> list[Finding]:
    """The error findings of everything read so far: inputs that could not be read (the answer lacks them)."""
    seen: dict[tuple[str, str, str], Finding] = {}
    for f in [*table.findings, *getattr(table.storage, "findings", [])]:
        if f.severity is Severity.ERROR:
            seen.setdefault((f.code, f.path, f.message), f)
    return list(seen.values())


def verdict_checks(table: HudiTable) -> tuple[str, ...]:
    """The checks a verdict of `table` runs: :data:`VERDICT_CHECKS`, or on a heavy timeline (many commit bodies or a
    big archive to decode, :func:`~hudi_core.services.first_look.timeline_weight`) the quick triage checks only,
    which need neither (the verdict then names the checks it ran; `doctor` runs them all)."""
    from hudi_core.services.first_look import QUICK_TRIAGE_CHECKS, timeline_weight

    return QUICK_TRIAGE_CHECKS if timeline_weight(table).heavy else VERDICT_CHECKS


def compute_verdict(table: HudiTable, conf: Mapping[str, Any] | ServiceConfig | None = None,
                    options: DoctorOptions | None = None, checks: Iterable[str] | None = None,
                    triage: DoctorReport | None = None, view: FileSystemView | None = None,
                    with_listing: bool = True, context: DoctorContext | None = None) -> Verdict:
    """The verdict of `table`: the doctor's `checks` (:data:`VERDICT_CHECKS` unless given; `triage`: a report the
    caller has, the full doctor's too, of which only `checks` count) and the file listing (`view`, the table's
    own view unless given; `with_listing=False`: no file listing, the verdict then says the listing was not
    checked). `context`: a doctor context holding what the caller computed already (a command's clean or archive
    plan), so the checks do not compute it again. Errors first, then warnings; info findings are not part of a
    verdict."""
    options = context.options if context is not None else options or DoctorOptions()
    checks = tuple(checks) if checks is not None else verdict_checks(table)
    report = triage if triage is not None else run_doctor(table, conf, options, only=checks, context=context)
    # The listing: the given view's, else the table's (its view when built; otherwise the listings alone).
    listing = (table.listing_check() if view is None else ListingCheck.of_view(view)) \
        if with_listing or view is not None else None
    # A full doctor report may be given: the verdict keeps to its own checks.
    items = [_from_health(f) for f in report.findings if f.severity is not Severity.INFO and f.check in checks]
    items += listing_items(listing) if listing is not None else []
    unread = unread_findings(table)
    incomplete = (bool(unread) or (listing is not None and listing.incomplete)
                  or any(c in checks for c in report.incomplete_checks))
    order = {Severity.ERROR: 0, Severity.WARNING: 1}
    items.sort(key=lambda i: order[i.severity])  # stable: checks in catalogue order, then the listing's items
    config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
    judged = {"hudi_release": config.hudi_release, "savepoint_guard": options.savepoint_guard,
              "stale_hours": options.stale_hours, "listing": listing.listing.value if listing is not None else None}
    ran = tuple(c for c in report.checks if c in checks)
    return Verdict(table.uri, tuple(items), incomplete, ran, listing is not None and listing.storage_checked, judged)

