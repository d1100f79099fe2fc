"""`hoodie.properties`: the table-config keys the engine uses.

Keys follow `HoodieTableConfig` of Hudi 1.1 (spec `01` §1.2); their defaults are the documented ones of
:data:`hudi_core.io.table_config.KEY_DOCS`. Where the spec and Hudi disagree, Hudi wins:
`hoodie.table.timeline.timezone` defaults to ``LOCAL`` in Hudi.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_core.errors import PropertiesError, UnsupportedTableVersion
from hudi_core.io.table_config import KEY_DOCS

#: Table versions and the timeline layout each one uses (`HoodieTableVersion`).
LAYOUT_BY_TABLE_VERSION = {0: 0, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 8: 2, 9: 2}
#: Versions this engine reads and is tested on; 1-5 and 7 read with a warning.
TESTED_TABLE_VERSIONS = frozenset({6, 8, 9})

@dataclass(frozen=True)
class TableProperties:
    """The table config of one Hudi table, from `.hoodie/hoodie.properties`."""

    name: str
    table_type: str
    version: int
    initial_version: int | None
    timeline_layout_version: int
    timeline_path: str
    history_path: str
    archive_folder: str
    partition_fields: tuple[str, ...]
    record_key_fields: tuple[str, ...]
    base_file_format: str
    metadata_partitions: tuple[str, ...]
    timezone: str
    raw: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def timeline_dir(self) -> str:
        """Active timeline folder relative to the base path (`TimelinePathProviderV1/V2`)."""
        if self.timeline_layout_version >= 2:
            return f".hoodie/{self.timeline_path}"
        return ".hoodie"

    @property
    def archive_dir(self) -> str:
        """Archived timeline folder: `.hoodie/archived` (layout 1) or `.hoodie/timeline/history`."""
        if self.timeline_layout_version >= 2:
            return f"{self.timeline_dir}/{self.history_path}"
        return f".hoodie/{self.archive_folder}"

    @property
    def metadata_table_available(self) -> bool:
        return bool(self.metadata_partitions)

    @property
    def metadata_partitions_inflight(self) -> tuple[str, ...]:
        """`hoodie.table.metadata.partitions.inflight`: metadata-table partitions being built (spec `06` §2)."""
        return _split_list(self.raw.get("hoodie.table.metadata.partitions.inflight"))

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "table_type": self.table_type,
            "version": self.version,
            "initial_version": self.initial_version,
            "timeline_layout_version": self.timeline_layout_version,
            "timeline_dir": self.timeline_dir,
            "archive_dir": self.archive_dir,
            "partition_fields": list(self.partition_fields),
            "record_key_fields": list(self.record_key_fields),
            "base_file_format": self.base_file_format,
            "metadata_partitions": list(self.metadata_partitions),
            "metadata_partitions_inflight": list(self.metadata_partitions_inflight),
            "timezone": self.timezone,
        }


def _default(key: str) -> str:
    """The default Hudi documents for `key` (:data:`~hudi_core.io.table_config.KEY_DOCS`)."""
    default = KEY_DOCS[key].default
    assert default is not None, key
    return default


def _split_list(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(v.strip() for v in value.split(",") if v.strip())


def _int_or_none(props: dict[str, str], key: str, where: str) -> int | None:
    value = props.get(key)
    if value is None or value.strip() == "":
        return None
    try:
        return int(value.strip())
    except ValueError as exc:
        raise PropertiesError(f"{where}: {key}={value!r} is not a number") from exc


def table_properties_from(props: dict[str, str], where: str) -> TableProperties:
    """Build :class:`TableProperties`; `where` names the file for error messages."""
    version = _int_or_none(props, "hoodie.table.version", where)
    if version is None:
        # Hudi treats a missing version as ZERO; such tables predate every supported release.
        raise UnsupportedTableVersion(f"{where}: no hoodie.table.version (table version 0 is not supported)")
    if version not in LAYOUT_BY_TABLE_VERSION:
        known = ", ".join(str(v) for v in sorted(TESTED_TABLE_VERSIONS))
        raise UnsupportedTableVersion(
            f"{where}: hoodie.table.version={version} is not a table version this tool knows (reads {known})"
        )
    layout = _int_or_none(props, "hoodie.timeline.layout.version", where)
    if layout is None:
        layout = LAYOUT_BY_TABLE_VERSION[version]
    if layout not in (0, 1, 2):
        raise UnsupportedTableVersion(f"{where}: hoodie.timeline.layout.version={layout} is unknown")
    table_type = props.get("hoodie.table.type", _default("hoodie.table.type")).strip().upper()
    if table_type not in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        raise PropertiesError(f"{where}: hoodie.table.type={table_type!r} is neither COPY_ON_WRITE nor MERGE_ON_READ")
    partition_fields = props.get("hoodie.table.partition.fields")
    # `HoodieTableConfig.getTimelineTimezone`: `HoodieTimelineTimeZone.valueOf(...)`, an exact Java enum
    # name (LOCAL or UTC); anything else throws, so the table is refused rather than read as LOCAL.
    timezone = (props.get("hoodie.table.timeline.timezone") or _default("hoodie.table.timeline.timezone")).strip()
    if timezone not in ("LOCAL", "UTC"):
        raise PropertiesError(f"{where}: hoodie.table.timeline.timezone={timezone!r} is not LOCAL or UTC "
                              "(Hudi's HoodieTimelineTimeZone.valueOf refuses it)")
    return TableProperties(
        name=props.get("hoodie.table.name", ""),
        table_type=table_type,
        version=version,
        initial_version=_int_or_none(props, "hoodie.table.initial.version", where),
        timeline_layout_version=layout,
        timeline_path=props.get("hoodie.timeline.path") or _default("hoodie.timeline.path"),
        history_path=props.get("hoodie.timeline.history.path") or _default("hoodie.timeline.history.path"),
        archive_folder=props.get("hoodie.archivelog.folder") or _default("hoodie.archivelog.folder"),
        # Partition fields may carry a key-generator type suffix (`region:SIMPLE`).
        partition_fields=tuple(f.split(":")[0] for f in _split_list(partition_fields)),
        record_key_fields=_split_list(props.get("hoodie.table.recordkey.fields")),
        base_file_format=(props.get("hoodie.table.base.file.format")
                          or _default("hoodie.table.base.file.format")).strip().upper(),
        metadata_partitions=_split_list(props.get("hoodie.table.metadata.partitions")),
        timezone=timezone,
        raw=dict(props),
    )
