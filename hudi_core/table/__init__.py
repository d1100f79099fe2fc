"""The table layer. `open_table()` is the entry point: a :class:`HudiTable` ties storage, properties and timelines.

Hudi release emulated: 1.1.x readers (table versions 6, 8 and 9; timeline layouts 1 and 2).

Beside the table itself: :mod:`.listing` (where a table's file list comes from: storage, or the metadata table's
`files` partition, and the two compared), :mod:`.file_group` (file groups and slices built from a listing),
:mod:`.fsview` (the file-system view: latest, merged and as-of slices, replaced groups, savepoint pins),
:mod:`.facts` (savepoints, cleans, rollbacks, restores), :mod:`.discovery` (tables under a folder) and
:mod:`.follow` (a table polled, only what changed read).

Imports the formats, engines and bytes layers; never the services or a face.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from hudi_core.errors import (
    Finding,
    HudiInspectError,
    PropertiesError,
    Severity,
    StorageError,
    TableNotFoundError,
)
from hudi_core.formats.timeline.active import ActiveTimeline, load_active_timeline
from hudi_core.io.properties import (
    TESTED_TABLE_VERSIONS,
    TableProperties,
    table_properties_from,
)
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.io.table_config import parse_java_properties

if TYPE_CHECKING:
    from hudi_core.engines.executor import Executor
    from hudi_core.formats.timeline.unified import ArchivedTimeline, UnifiedTimeline
    from hudi_core.table.fsview import FileSystemView
    from hudi_core.table.listing import ListedFile, Listing, ListingSource
    from hudi_core.table.listing.compare import ListingCheck, ListingDifference
    from hudi_core.table.listing.metadata import MetadataTableListing
    from hudi_core.table.listing.storage import StorageListing

PROPERTIES_PATH = ".hoodie/hoodie.properties"
PROPERTIES_BACKUP_PATH = ".hoodie/hoodie.properties.backup"
METADATA_TABLE_PATH = ".hoodie/metadata"

#: The Hudi release whose reader and table services this engine emulates.
EMULATED_HUDI_RELEASE = "1.1.x"

#: `--listing` choices: where the file-system view takes its files from (``None``: as Hudi 1.x would).
LISTING_CHOICES = ("metadata", "storage")
#: Why storage is listed when `hoodie.properties` names the files partition but there is no metadata table.
MISSING_MDT_REASON = "the metadata table hoodie.properties names is missing: storage, as Hudi falls back to"


def _decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_table_properties(storage: ReadOnlyStorage, findings: list[Finding]) -> TableProperties:
    """Read `hoodie.properties`, falling back to the `.backup` copy as `HoodieTableConfig` does."""
    where = storage.uri_of(PROPERTIES_PATH)
    try:
        text = _decode_text(storage.read(PROPERTIES_PATH))
        props = parse_java_properties(text)
        if "hoodie.table.version" not in props and "hoodie.table.name" not in props:
            raise PropertiesError(f"{where} has no Hudi table keys (hoodie.table.name, hoodie.table.version)")
        return table_properties_from(props, where)
    except (StorageError, PropertiesError) as primary:
        if storage.exists(PROPERTIES_BACKUP_PATH):
            backup_where = storage.uri_of(PROPERTIES_BACKUP_PATH)
            try:
                props = parse_java_properties(_decode_text(storage.read(PROPERTIES_BACKUP_PATH)))
                table = table_properties_from(props, backup_where)
            except (StorageError, PropertiesError):
                raise PropertiesError(f"cannot read table properties: {primary}") from primary
            findings.append(Finding(Severity.WARNING, "properties_from_backup", where,
                                    f"{primary}; read {backup_where} instead, as Hudi does"))
            return table
        if isinstance(primary, PropertiesError):
            raise
        raise PropertiesError(f"cannot read table properties {where}: {primary}") from primary


class HudiTable:
    """One Hudi table opened read-only: properties, timelines, file-system views, inspection."""

    def __init__(self, storage: ReadOnlyStorage, properties: TableProperties, findings: list[Finding],
                 executor: Executor | None = None, is_metadata_table: bool = False,
                 data_table_properties: TableProperties | None = None, listing: str | None = None,
                 storage_check: bool | None = None) -> None:
        self.storage = storage
        self.properties = properties
        self.is_metadata_table = is_metadata_table
        #: For a metadata table: its data table's properties, whose `hoodie.table.metadata.partitions`
        #: (and `.inflight`) name the metadata table's partitions (spec `06` §2); ``None`` if unreadable.
        self.data_table_properties = data_table_properties
        self._findings = findings
        self._executor = executor
        if listing is not None and listing not in LISTING_CHOICES:
            raise HudiInspectError(f"unknown listing {listing!r}: choose {' or '.join(LISTING_CHOICES)}")
        #: The listing asked for (``None``: the one a Hudi 1.x reader uses, see :meth:`listing_choice`).
        self.listing_requested = listing
        #: Whether a view listed through the metadata table is checked against a storage listing (each
        #: difference a finding; Hudi itself never checks, a reader fails when it opens a missing file).
        #: ``None``: on local disk (a directory read per partition), off on object stores (a LIST request
        #: per partition, which reading through the metadata table exists to avoid).
        self.storage_check = storage.is_local if storage_check is None else storage_check
        #: Whether storage's whole listing is kept once a view's check has compared it (the doctor reads it again
        #: for its missing and orphan files); a command that needs it no more lets it go (200 MB on a million files).
        self.keep_storage_listing = True

    @property
    def uri(self) -> str:
        return self.storage.uri

    @property
    def executor(self) -> Executor:
        if self._executor is None:
            from hudi_core.engines.executor import LocalExecutor

            self._executor = LocalExecutor()
        return self._executor

    @cached_property
    def timeline(self) -> ActiveTimeline:
        """The active timeline (listed once, bodies decoded on demand)."""
        return load_active_timeline(self.storage, self.properties)

    def archived_timeline(self, since: str | None = None, until: str | None = None) -> ArchivedTimeline:
        """The archived timeline (layout 1 or 2), optionally bounded by requested time; cached per range."""
        from hudi_core.formats.timeline.unified import load_archived_timeline

        cache: dict[tuple[str | None, str | None], ArchivedTimeline] = self.__dict__.setdefault("_archived", {})
        if (since, until) not in cache:
            cache[(since, until)] = load_archived_timeline(self.storage, self.properties, since, until, self._executor,
                                                           file_rows=self.__dict__.get("archive_file_rows"))
        return cache[(since, until)]

    def unified_timeline(self, since: str | None = None, until: str | None = None) -> UnifiedTimeline:
        """Active + archived instants in Hudi's order, optionally bounded by requested time; cached per range."""
        from hudi_core.formats.timeline.unified import UnifiedTimeline

        cache: dict[tuple[str | None, str | None], UnifiedTimeline] = self.__dict__.setdefault("_unified", {})
        if (since, until) not in cache:
            cache[(since, until)] = UnifiedTimeline(self.timeline, self.archived_timeline(since, until))
        return cache[(since, until)]

    @property
    def findings(self) -> list[Finding]:
        """Everything noticed so far while loading this table (grows as more is read), its storage's
        included (names skipped while listing, modification times that are no date)."""
        seen = list(self._findings)
        seen.extend(f for f in getattr(self.storage, "findings", ()) if f not in seen)
        if "timeline" in self.__dict__:
            seen.extend(self.timeline.findings)
        for archived in self.__dict__.get("_archived", {}).values():
            seen.extend(f for f in archived.findings if f not in seen)
        for unified in self.__dict__.get("_unified", {}).values():
            seen.extend(f for f in unified.findings if f not in seen)
        views = [self.__dict__[v] for v in ("_fs_view", "_replaced_view") if v in self.__dict__]
        views += [*self.__dict__.get("_partition_views", {}).values(), *self.__dict__.get("_views_by_listing",
                                                                                          {}).values()]
        for view in views:
            seen.extend(f for f in view.findings if f not in seen)
        if "_listing_check" in self.__dict__:  # the verdict's listing, made without a view
            seen.extend(f for f in self.__dict__["_listing_check"].findings if f not in seen)
        if self.__dict__.get("_metadata_listing") is not None and self.__dict__.get("_mdt") is not None:
            # The listing came from the metadata table: what its own loading ran into bears on it.
            seen.extend(f for f in self.__dict__["_mdt"].findings if f not in seen)
        return seen

    # -- where files are listed from --------------------------------------------------------------

    def metadata_files_enabled(self) -> bool:
        """Whether `hoodie.properties` makes the metadata table's `files` partition readable
        (`HoodieTableConfig.isMetadataPartitionAvailable(FILES)`): `files` in `hoodie.table.metadata.partitions`."""
        return not self.is_metadata_table and "files" in self.properties.metadata_partitions

    def listing_choice(self) -> tuple[str, str]:
        """`(listing, reason)`: the listing the file-system view uses and why.

        By default the one a Hudi 1.x reader, cleaner or archiver uses: the metadata table when
        `hoodie.properties` enables its `files` partition on table version 8+ (readers' `hoodie.metadata.enable`
        defaults to true since 1.0, HUDI-8557), else storage; `--listing` overrides it.
        """
        if self.is_metadata_table:
            return "storage", "a metadata table is listed from storage"
        if self.listing_requested == "storage":
            return "storage", "--listing storage"
        if self.listing_requested == "metadata":
            return "metadata", "--listing metadata"
        if not self.metadata_files_enabled():
            return "storage", "hoodie.table.metadata.partitions does not name the files partition"
        if self.properties.version < 8:
            return "storage", (f"table version {self.properties.version}: Hudi 0.x readers list storage by default "
                               "(--listing metadata reads the metadata table, as 0.x writers and table services do)")
        if not self.has_metadata_table():
            return "storage", MISSING_MDT_REASON
        return "metadata", (f"hoodie.properties enables the files partition on table version "
                            f"{self.properties.version}: Hudi 1.x lists through it")

    @cached_property
    def _metadata_listing(self) -> MetadataTableListing | None:
        from hudi_core.table.listing.metadata import MetadataTableListing

        mdt = self.metadata_table()
        if mdt is None:
            return None
        return MetadataTableListing(self.storage, self.timeline, self.properties.version, mdt.storage, mdt.properties,
                                    mdt.timeline, reason=self.listing_choice()[1])

    def metadata_listing(self) -> MetadataTableListing | None:
        """The reader of the metadata table's `files` partition (``None`` without a metadata table)."""
        return None if self.is_metadata_table else self._metadata_listing

    def listing_source(self) -> ListingSource:
        """The :class:`~hudi_core.table.listing.ListingSource` of :meth:`listing_choice`. A metadata table named by
        `hoodie.properties` but missing falls back to storage with a warning, as `NativeTableMetadataFactory`
        does; one asked for with `--listing metadata` but missing is an error."""
        kind, reason = self.listing_choice()
        if kind == "metadata":
            source = self.metadata_listing()
            if source is not None:
                return source
            if self.listing_requested == "metadata":
                raise HudiInspectError(f"{self.uri} has no metadata table (.hoodie/metadata): --listing metadata "
                                       "cannot be used")
            reason = MISSING_MDT_REASON
        if reason == MISSING_MDT_REASON:
            finding = Finding(Severity.WARNING, "metadata_table_missing", self.storage.uri_of(METADATA_TABLE_PATH),
                              "hoodie.properties names the metadata table's files partition, but there is no "
                              "metadata table: listed from storage, as Hudi falls back to")
            if finding not in self._findings:
                self._findings.append(finding)
        return self._storage_source(reason)

    def _storage_source(self, reason: str = "") -> StorageListing:
        """The table's one storage listing source (its whole listing is made once and shared)."""
        from hudi_core.table.listing.storage import StorageListing

        source = self.__dict__.get("_storage_src")
        if source is None:
            data_props = self.data_table_properties if self.is_metadata_table else None
            source = StorageListing(self.storage, self.executor,
                                    metadata_partitions=data_props.metadata_partitions if data_props else None,
                                    metadata_partitions_inflight=data_props.metadata_partitions_inflight if data_props
                                    else (), reason=reason)
            self.__dict__["_storage_src"] = source
        elif reason and not source.reason:
            source.reason = reason
        return source

    def storage_listing(self) -> Listing:
        """Every partition and file on storage (listed once), whichever listing the view uses: what checks
        against storage need (the doctor's missing and orphan files, the metadata table's validation)."""
        return self._storage_source().list()

    def _build_view(self, replaced_only: bool = False, partitions: frozenset[str] | None = None) -> FileSystemView:
        # Imported here, not at the top: it brings pyarrow, which `info` and `timeline` never need.
        from hudi_core.table.fsview import FileSystemView
        from hudi_core.table.listing import ListingKind

        data_props = self.data_table_properties if self.is_metadata_table else None
        source = self.listing_source()
        if source.kind is ListingKind.METADATA and self.storage_check and not replaced_only and partitions is None:
            self._storage_source().prefetch()  # storage's listing beside the metadata table's read
        view = FileSystemView.build(
            self.storage, self.timeline, self.properties.version, self.properties.base_file_format, self.executor,
            metadata_partitions=data_props.metadata_partitions if data_props else None,
            metadata_partitions_inflight=data_props.metadata_partitions_inflight if data_props else (),
            replaced_only=replaced_only, source=source, partitions=partitions,
        )
        if view.listing == "metadata" and self.storage_check and not replaced_only:
            self._check_against_storage(view, partitions)
        return view

    def _check_against_storage(self, view: FileSystemView, partitions: frozenset[str] | None = None) -> None:
        """Compare the view's metadata-table listing with a storage listing: each difference Hudi's validator
        does not tolerate becomes a finding on the view (`view.listing_differences` keeps them all)."""
        from hudi_core.table.listing.compare import DIFFERENCE_FINDINGS, HUDI_EFFECT, DifferenceKind

        differences, storage_findings = self._differences_with_storage(view.partition_files, partitions)
        if not self.keep_storage_listing:
            self._storage_source().forget()
        view.findings.extend(storage_findings)
        view.listing_differences = differences
        for d in differences:
            if d.tolerated is not None:
                continue
            code, what = DIFFERENCE_FINDINGS[d.kind]
            path = (f"{d.partition}/{d.file}" if d.partition else d.file) if d.file else d.partition
            sizes = (f" ({d.metadata_size} bytes in the metadata table, {d.storage_size} on storage)"
                     if d.kind is DifferenceKind.SIZE_DIFFERS else "")
            view.findings.append(Finding(Severity.WARNING, code, self.storage.uri_of(path),
                                         f"{path or '(root)'} {what}{sizes}: {HUDI_EFFECT[d.kind]}"))

    def _differences_with_storage(self, metadata_files: Mapping[str, Sequence[ListedFile]],
                                  partitions: frozenset[str] | None = None) -> tuple[list[ListingDifference],
                                                                                     list[Finding]]:
        """Every difference between a metadata-table listing and storage's (of `partitions`, or the whole table),
        with what storage's listing ran into: the one comparison behind the view's storage check and the
        verdict's listings-alone check."""
        from hudi_core.table.listing.compare import compare_listings

        on_storage = self.storage_listing() if partitions is None else self._storage_source().list(partitions)
        comparison = compare_listings(metadata_files, on_storage.partitions, self.timeline,
                                      self.properties.base_file_format, self.storage, self.properties.version)
        return comparison.differences, list(on_storage.findings)

    def listing_check(self) -> ListingCheck:
        """The file listing as the verdict judges it (:class:`~hudi_core.table.listing.compare.ListingCheck`):
        from the file-system view when it is built; otherwise from the listing and, for a metadata-table listing
        with the storage check on, storage's listing compared with it, without building a file group (the same
        comparison as the view's check, :meth:`_differences_with_storage`). Made once."""
        from hudi_core.table.listing import ListingKind
        from hudi_core.table.listing.compare import ListingCheck

        def latest_files(partitions: frozenset[str]) -> set[tuple[str, str]]:
            return self.fs_view(partitions=partitions).latest_file_keys(partitions)

        view = self.__dict__.get("_fs_view")
        if view is not None:
            return ListingCheck.of_view(view)
        check: ListingCheck | None = self.__dict__.get("_listing_check")
        if check is None:
            source = self.listing_source()
            if source.kind is ListingKind.METADATA and self.storage_check:
                self._storage_source().prefetch()
            listing = source.list()
            findings = list(listing.findings)
            differences = None
            if listing.kind is ListingKind.METADATA and self.storage_check:
                differences, storage_findings = self._differences_with_storage(listing.partitions)
                if not self.keep_storage_listing:
                    self._storage_source().forget()
                findings.extend(storage_findings)
            check = ListingCheck(listing.kind, listing.incomplete, differences, findings, latest_files)
            self.__dict__["_listing_check"] = check
        return check

    @cached_property
    def _fs_view(self) -> FileSystemView:
        return self._build_view()

    def fs_view(self, partitions: Iterable[str] | None = None, listing: str | None = None) -> FileSystemView:
        """The file-system view over the active timeline (built once), or a view of some partitions only
        (listing just those; through the metadata table, reading just their records), unless the whole view
        is built already. `listing` (``"metadata"`` / ``"storage"``): the whole view from that listing instead
        of the table's own (:meth:`listing_choice`), built once too (the dashboard's listing selector)."""
        if listing is not None and listing != self.listing_choice()[0]:
            other: dict[str, FileSystemView] = self.__dict__.setdefault("_views_by_listing", {})
            if listing not in other:
                twin = HudiTable(self.storage, self.properties, [], self._executor, self.is_metadata_table,
                                 self.data_table_properties, listing=listing, storage_check=self.storage_check)
                # The twin shares what does not depend on the listing: timeline, metadata table, storage listing.
                for name in ("timeline", "_mdt", "_storage_src"):
                    if name in self.__dict__:
                        twin.__dict__[name] = self.__dict__[name]
                twin.__dict__["timeline"] = self.timeline
                other[listing] = twin.fs_view()
            return other[listing]
        if partitions is None or "_fs_view" in self.__dict__:
            return self._fs_view
        scope = frozenset(partitions)
        cache: dict[frozenset[str], FileSystemView] = self.__dict__.setdefault("_partition_views", {})
        if scope not in cache:
            cache[scope] = self._build_view(partitions=scope)
        return cache[scope]

    def replaced_groups_view(self) -> FileSystemView:
        """A view whose replaced file groups are :meth:`fs_view`'s, listing only the partitions that
        replacecommits name (the whole view when it is built already)."""
        if "_fs_view" in self.__dict__:
            return self._fs_view
        return self._replaced_view

    @cached_property
    def _replaced_view(self) -> FileSystemView:
        return self._build_view(replaced_only=True)

    def has_metadata_table(self) -> bool:
        """Whether `.hoodie/metadata/.hoodie/hoodie.properties` exists (asked once)."""
        if "_has_mdt" not in self.__dict__:
            timeline = self.__dict__.get("timeline")
            if (timeline is not None and timeline.timeline_dir.rstrip("/") == METADATA_TABLE_PATH.rsplit("/", 1)[0]
                    and METADATA_TABLE_PATH.rsplit("/", 1)[1] not in timeline.folders):
                # Layout 1 lists `.hoodie` for its timeline: no `metadata` folder there, no metadata table
                # (saves an object store a HEAD).
                self.__dict__["_has_mdt"] = False
            else:
                self.__dict__["_has_mdt"] = self.storage.exists(f"{METADATA_TABLE_PATH}/{PROPERTIES_PATH}")
        return self.__dict__["_has_mdt"]

    def metadata_table(self) -> HudiTable | None:
        """The metadata table (`.hoodie/metadata`) opened as a table, if there is one (opened once)."""
        if self.is_metadata_table:
            return None
        if "_mdt" not in self.__dict__:
            mdt = None
            if self.has_metadata_table():
                child = self.storage.child(METADATA_TABLE_PATH)
                findings: list[Finding] = []
                props = read_table_properties(child, findings)
                mdt = HudiTable(child, props, findings, self._executor, is_metadata_table=True,
                                data_table_properties=self.properties)
            self.__dict__["_mdt"] = mdt
        return self.__dict__["_mdt"]

    def describe(self) -> dict[str, Any]:
        """Table facts for `info` and the overview page."""
        tl = self.timeline
        return {
            "uri": self.uri,
            **self.properties.to_dict(),
            "is_metadata_table": self.is_metadata_table,
            "has_metadata_table": self.has_metadata_table(),
            "listing": self.listing_choice()[0],
            "listing_reason": self.listing_choice()[1],
            "emulated_hudi_release": EMULATED_HUDI_RELEASE,
            "active_instants": len(tl),
            "completed_instants": len(tl.completed()),
            "pending_instants": len(tl.pending()),
            "first_instant": first.requested_time if (first := tl.first()) else None,
            "last_instant": last.requested_time if (last := tl.last()) else None,
        }


def open_table(uri: str, storage_options: dict[str, Any] | None = None,
               executor: Executor | None = None, confine_to: tuple[str, ...] | None = None,
               listing: str | None = None, storage_check: bool | None = None) -> HudiTable:
    """Open a Hudi table read-only from a local path or any fsspec URL (``s3://…``, ``gs://…``).

    Raises :class:`TableNotFoundError` when the path is not a Hudi table and
    :class:`~hudi_core.errors.PropertiesError` / :class:`~hudi_core.errors.UnsupportedTableVersion`
    when `hoodie.properties` cannot be used. `confine_to` (local tables): every path read must resolve,
    symlinks followed, under one of these folders (the dashboard passes its allowed roots). `listing`:
    ``"metadata"`` or ``"storage"`` to choose where files are listed from (default: as Hudi 1.x does,
    :meth:`HudiTable.listing_choice`); `storage_check`: check a metadata-table listing against storage
    (default: on local disk only, see :attr:`HudiTable.storage_check`).
    """
    storage = ReadOnlyStorage(uri, storage_options, confine_to=confine_to)
    if not storage.exists(".hoodie"):
        if not storage.exists(""):
            raise TableNotFoundError(f"{uri} does not exist")
        raise TableNotFoundError(f"{uri} is not a Hudi table: it has no .hoodie folder")
    if not storage.exists(PROPERTIES_PATH) and not storage.exists(PROPERTIES_BACKUP_PATH):
        raise PropertiesError(f"{storage.uri_of(PROPERTIES_PATH)} is missing: not a Hudi table, or a damaged one")
    findings: list[Finding] = []
    props = read_table_properties(storage, findings)
    if props.version not in TESTED_TABLE_VERSIONS:
        findings.append(Finding(Severity.WARNING, "untested_table_version", storage.uri_of(PROPERTIES_PATH),
                                f"table version {props.version} is read with the rules of the nearest tested "
                                f"version ({', '.join(map(str, sorted(TESTED_TABLE_VERSIONS)))})"))
    is_mdt = storage.uri.rstrip("/").endswith(f"/{METADATA_TABLE_PATH}")
    data_props = _data_table_properties(storage, findings) if is_mdt else None
    return HudiTable(storage, props, findings, executor, is_metadata_table=is_mdt, data_table_properties=data_props,
                     listing=listing, storage_check=storage_check)


def _data_table_properties(mdt_storage: ReadOnlyStorage, findings: list[Finding]) -> TableProperties | None:
    """The data table's properties of a metadata table opened by its own path, or ``None`` (with a finding)."""
    uri = mdt_storage.uri.rstrip("/")
    spec = mdt_storage.spec
    parent = ReadOnlyStorage(uri[: -len(METADATA_TABLE_PATH) - 1], dict(spec.options),
                             confine_to=spec.confine_to or None)
    try:
        return read_table_properties(parent, findings)
    except (PropertiesError, StorageError) as exc:
        findings.append(Finding(Severity.WARNING, "data_table_properties_unreadable", parent.uri_of(PROPERTIES_PATH),
                                f"the data table's properties cannot be read ({exc}): the metadata table's "
                                "partitions are found from storage only"))
        return None
