"""The table configuration: every `hoodie.properties` key with its value, what it means, the
default Hudi documents for it (:mod:`hudi_core.io.properties` reads its defaults here), and how the file
differs from `hoodie.properties.backup`; and the Java properties syntax both files are written in.

The meanings are short notes written for this inspector from Hudi 1.1's `HoodieTableConfig` (its
`ConfigProperty` definitions and the generated "Hudi Table Config" documentation), `KeyGeneratorOptions` and
`TimestampKeyGeneratorConfig`; a default is given where Hudi documents one. A key this module has no note for
is listed as it is, marked ``known: false`` (a writer's own key, a newer release's, or a typo).

Hudi writes `hoodie.properties.backup` before it changes the table configuration and deletes it once the new
file is written and verified (`HoodieTableConfig.modify`); readers fall back to it when the main file is
missing or damaged. A backup left behind means an update did not finish: the differences say what it was
changing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hudi_core.errors import Finding, HudiInspectError, PropertiesError, Severity
from hudi_core.io.storage import ReadOnlyStorage

# -- Java properties syntax -----------------------------------------------------------------------------------

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _logical_lines(text: str) -> list[str]:
    """Join continuation lines (an odd number of trailing backslashes) as `Properties.load` does."""
    out: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f") if pending else raw
        if not pending and (not line.strip() or line.lstrip(" \t\f")[:1] in ("#", "!")):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def _unescape(text: str) -> str:
    result: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and i + 5 < len(text) + 0:
                hex_part = text[i + 2 : i + 6]
                try:
                    result.append(chr(int(hex_part, 16)))
                    i += 6
                    continue
                except ValueError as exc:
                    raise PropertiesError(f"malformed \\u escape {text[i:i+6]!r}") from exc
            result.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        result.append(ch)
        i += 1
    return "".join(result)


def parse_java_properties(text: str) -> dict[str, str]:
    """Parse the text of a Java `.properties` file (ISO-8859-1/UTF-8 text already decoded)."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        line = line.lstrip(" \t\f")
        key_chars: list[str] = []
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == "\\" and i + 1 < len(line):
                key_chars.append(line[i : i + 2])
                i += 2
                continue
            if ch in "=: \t\f":
                break
            key_chars.append(ch)
            i += 1
        rest = line[i:]
        rest = rest.lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        props[_unescape("".join(key_chars))] = _unescape(rest)
    return props


#: Where the table configuration and its backup live (the same paths as `hudi_core.table`).
PROPERTIES_FILE = ".hoodie/hoodie.properties"
BACKUP_FILE = ".hoodie/hoodie.properties.backup"


@dataclass(frozen=True)
class KeyDoc:
    """What one table-config key means and its documented default (``None``: Hudi documents none)."""

    meaning: str
    default: str | None = None


#: Every table-config key the inspector knows: the keys of Hudi 1.1's `HoodieTableConfig`, the key-generator
#: keys Hudi persists in `hoodie.properties`, older spellings still found in tables, and the writer keys this
#: project's readers consult.
KEY_DOCS: dict[str, KeyDoc] = {
    # identity and versions
    "hoodie.table.name": KeyDoc("The table's name, as registered with catalogs (Hive and others); part of the "
                                "checksum, so it never changes after creation."),
    "hoodie.database.name": KeyDoc("The database the table belongs to; also tells apart tables of the same name "
                                   "in incremental queries, and is part of the checksum."),
    "hoodie.table.type": KeyDoc("COPY_ON_WRITE (every write rewrites base files) or MERGE_ON_READ (updates go to "
                                "log files that readers merge and compaction folds in).", "COPY_ON_WRITE"),
    "hoodie.table.version": KeyDoc("The table format version (6 = Hudi 0.14/0.15, 8 = 1.0, 9 = 1.1); upgrades and "
                                   "downgrades move it, and it decides the timeline layout.", "9"),
    "hoodie.table.initial.version": KeyDoc("The table version the table was created with (written since 1.0): "
                                           "which upgrades it went through.", "9"),
    "hoodie.table.checksum": KeyDoc("CRC32 of \"<database>.<table name>\", written as the last entry so that a "
                                    "half-written hoodie.properties is caught when it is read."),
    "hoodie.table.format": KeyDoc("The table format the writer used (native Hudi, or a plug-in format).", "native"),
    # timeline location
    "hoodie.timeline.layout.version": KeyDoc("Timeline layout: 1 keeps instant files directly in .hoodie and the "
                                             "archive as log files, 2 keeps them in .hoodie/<timeline path> with the "
                                             "completion time in completed file names and an LSM archive."),
    "hoodie.timeline.path": KeyDoc("Layout 2: the folder under .hoodie holding the active timeline.", "timeline"),
    "hoodie.timeline.history.path": KeyDoc("Layout 2: the archived (LSM) timeline's folder, relative to the "
                                           "timeline folder.", "history"),
    "hoodie.archivelog.folder": KeyDoc("Layout 1: the folder under .hoodie holding the archived timeline's log "
                                       "files (deprecated since 1.0).", "archived"),
    "hoodie.table.timeline.timezone": KeyDoc("The zone instant times are written and read in: LOCAL (the writer's "
                                             "clock zone) or UTC.", "LOCAL"),
    # keys and partitions
    "hoodie.table.recordkey.fields": KeyDoc("The column(s) whose values form each record's key (comma separated)."),
    "hoodie.table.partition.fields": KeyDoc("The column(s) the table is partitioned by (comma separated; custom key "
                                            "generators add the partition type, as in region:SIMPLE)."),
    "hoodie.table.keygenerator.class": KeyDoc("The key generator class that builds record keys and partition paths "
                                              "(deprecated since 1.0 in favour of the type)."),
    "hoodie.table.keygenerator.type": KeyDoc("The key generator by type (SIMPLE, COMPLEX, TIMESTAMP, CUSTOM, "
                                             "NON_PARTITION, ...; HOODIE_TABLE_METADATA for a metadata table); since "
                                             "1.0."),
    "hoodie.datasource.write.hive_style_partitioning": KeyDoc("Whether partition folders are named column=value "
                                                              "(true) or by the value alone (false).", "false"),
    "hoodie.datasource.write.partitionpath.urlencode": KeyDoc("Whether partition values are URL-encoded in folder "
                                                              "names.", "false"),
    "hoodie.datasource.write.drop.partition.columns": KeyDoc("Whether partition columns are left out of the data "
                                                             "files (their values then come from the folder "
                                                             "names).", "false"),
    "hoodie.partition.metafile.use.base.format": KeyDoc("Whether each partition's .hoodie_partition_metadata is "
                                                        "written in the base file format instead of as a "
                                                        "properties file.", "false"),
    # merging
    "hoodie.table.ordering.fields": KeyDoc("The column(s) that decide which of two records with the same key wins "
                                           "(the larger value; the next field breaks ties); the 1.1 name of the "
                                           "precombine field."),
    "hoodie.table.precombine.field": KeyDoc("The column(s) that decide which of two records with the same key wins "
                                            "(the larger value); the name before 1.1 (hoodie.table.ordering.fields)."),
    "hoodie.record.merge.mode": KeyDoc("How updates merge with what is stored: COMMIT_TIME_ORDERING (the later "
                                       "write wins), EVENT_TIME_ORDERING (the larger ordering value wins) or CUSTOM "
                                       "(a merger or payload class decides); since 1.0.",
                                       "COMMIT_TIME_ORDERING without an ordering field, else EVENT_TIME_ORDERING"),
    "hoodie.record.merge.strategy.id": KeyDoc("The id of the merge strategy; readers pick the record merger "
                                              "implementation that declares it."),
    "hoodie.compaction.record.merger.strategy": KeyDoc("The older name of hoodie.record.merge.strategy.id (0.13 to "
                                                       "0.15)."),
    "hoodie.compaction.payload.class": KeyDoc("The payload class that merges records (log records into base files, "
                                              "updates into stored ones); deprecated since 1.0 for the merge mode."),
    "hoodie.table.legacy.payload.class": KeyDoc("The payload class the table was created with, kept for reference "
                                                "once 1.1 replaced it by a merge mode; no longer used."),
    "hoodie.table.partial.update.mode": KeyDoc("How a record that carries only some columns merges with the stored "
                                               "one; since 1.1."),
    "hoodie.populate.meta.fields": KeyDoc("Whether the _hoodie_* meta columns (commit time, record key, partition, "
                                          "file name) are written; without them incremental queries do not work.",
                                          "true"),
    # files
    "hoodie.table.base.file.format": KeyDoc("The format of base files: PARQUET, ORC or HFILE (HFILE for a metadata "
                                            "table).", "PARQUET"),
    "hoodie.table.log.file.format": KeyDoc("The format of log files.", "HOODIE_LOG"),
    "hoodie.table.ro.file.format": KeyDoc("The old name of hoodie.table.base.file.format.", "PARQUET"),
    "hoodie.table.rt.file.format": KeyDoc("The old name of hoodie.table.log.file.format.", "HOODIE_LOG"),
    "hoodie.table.multiple.base.file.formats.enable": KeyDoc("Whether base files of several formats may coexist in "
                                                             "the table; since 1.0.", "false"),
    "hoodie.table.create.schema": KeyDoc("The Avro schema the table was created with (the latest schema is in the "
                                         "commit metadata)."),
    # metadata table and indexes
    "hoodie.table.metadata.partitions": KeyDoc("The metadata table's partitions that are built and in sync (files, "
                                               "column_stats, record_index, ...); readers use only these. With "
                                               "files here, Hudi 1.x lists files through the metadata table."),
    "hoodie.table.metadata.partitions.inflight": KeyDoc("The metadata table's partitions still being built; readers "
                                                        "do not use them yet."),
    "hoodie.table.index.defs.path": KeyDoc("Where the index definitions (secondary and expression indexes) are "
                                           "stored, relative to the base path; since 1.0."),
    "hoodie.table.secondary.indexes.metadata": KeyDoc("The definitions of secondary indexes (0.13 to 0.15)."),
    # change data capture
    "hoodie.table.cdc.enabled": KeyDoc("Whether writes also record the change data, so the table can be read as a "
                                       "CDC stream.", "false"),
    "hoodie.table.cdc.supplemental.logging.mode": KeyDoc("What the change data keeps: OP_KEY_ONLY, DATA_BEFORE or "
                                                         "DATA_BEFORE_AFTER (before and after images).",
                                                         "DATA_BEFORE_AFTER"),
    # bootstrap
    "hoodie.bootstrap.base.path": KeyDoc("The existing dataset a bootstrapped table was built from."),
    "hoodie.bootstrap.index.enable": KeyDoc("Whether the bootstrap index (which maps base files to the bootstrap "
                                            "source files) is used.", "true"),
    "hoodie.bootstrap.index.class": KeyDoc("The bootstrap index implementation (deprecated since 1.0 for the type).",
                                           "org.apache.hudi.common.bootstrap.index.hfile.HFileBootstrapIndex"),
    "hoodie.bootstrap.index.type": KeyDoc("The bootstrap index by type; since 1.0.", "HFILE"),
    # timestamp key generator settings Hudi persists (`HoodieTableConfig.PERSISTED_CONFIG_LIST`)
    "hoodie.keygen.timebased.timestamp.type": KeyDoc("Timestamp key generator: how the partition column is read "
                                                     "(UNIX_TIMESTAMP, DATE_STRING, EPOCHMILLISECONDS, SCALAR, ...)."),
    "hoodie.keygen.timebased.timestamp.scalar.time.unit": KeyDoc("Timestamp key generator: the unit of a SCALAR "
                                                                 "partition value."),
    "hoodie.keygen.timebased.input.dateformat": KeyDoc("Timestamp key generator: the format(s) of a DATE_STRING "
                                                       "partition value."),
    "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex": KeyDoc("Timestamp key generator: what "
                                                                            "separates several input formats."),
    "hoodie.keygen.timebased.input.timezone": KeyDoc("Timestamp key generator: the zone of input values."),
    "hoodie.keygen.timebased.output.dateformat": KeyDoc("Timestamp key generator: the format of partition paths."),
    "hoodie.keygen.timebased.output.timezone": KeyDoc("Timestamp key generator: the zone of partition paths."),
    "hoodie.keygen.timebased.timezone": KeyDoc("Timestamp key generator: the zone for both input and output."),
    "hoodie.keygen.datetime.parser.class": KeyDoc("Timestamp key generator: the class that parses input dates."),
    # a writer setting the inspector reads when a table carries it
    "hoodie.parquet.compression.codec": KeyDoc("A writer setting, not a table key: the Parquet codec (the inspector's "
                                               "archive writer uses it for the LSM timeline).", "gzip"),
}

#: Families of keys known by their prefix: (prefix, what a key of it means).
KEY_PREFIXES: tuple[tuple[str, str], ...] = (
    ("hoodie.record.merge.property.", "A property handed to the record merger (Hudi stores merger settings under "
                                      "this prefix so readers merge as the writer did)."),
)


def key_doc(key: str) -> KeyDoc | None:
    """The note on one key (by prefix for key families), or ``None`` when the inspector does not know it."""
    doc = KEY_DOCS.get(key)
    if doc is not None:
        return doc
    for prefix, meaning in KEY_PREFIXES:
        if key.startswith(prefix):
            return KeyDoc(meaning)
    return None


@dataclass(frozen=True)
class ConfigEntry:
    """One `hoodie.properties` key: its value, meaning, documented default, whether the inspector knows it, and
    whether `hoodie.properties.backup` holds something else for it (``None`` without a backup)."""

    key: str
    value: str
    meaning: str | None
    default: str | None
    known: bool
    differs_from_backup: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "meaning": self.meaning, "default": self.default,
                "known": self.known, "differs_from_backup": self.differs_from_backup}


@dataclass(frozen=True)
class BackupDifference:
    """A key on which `hoodie.properties` and its backup differ: ``added`` (only in the properties),
    ``removed`` (only in the backup) or ``changed``, with both values (``None`` where absent)."""

    key: str
    change: str
    value: str | None
    backup_value: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "change": self.change, "value": self.value, "backup_value": self.backup_value}


@dataclass
class TableConfiguration:
    """The table configuration as stored: every key of `hoodie.properties` in file order (of the backup when
    the main file cannot be read: `source`), and the differences from the backup when there is one."""

    entries: list[ConfigEntry]
    has_backup: bool
    backup_differences: list[BackupDifference]
    source: str = PROPERTIES_FILE
    findings: list[Finding] = field(default_factory=list)

    @property
    def unknown_keys(self) -> list[str]:
        return [e.key for e in self.entries if not e.known]

    def to_dict(self) -> dict[str, Any]:
        return {"config": [e.to_dict() for e in self.entries],
                "backup_differences": [d.to_dict() for d in self.backup_differences],
                "config_source": self.source, "has_properties_backup": self.has_backup}


def backup_differences(properties: Mapping[str, str], backup: Mapping[str, str]) -> list[BackupDifference]:
    """Every key on which the two differ, sorted by key."""
    out = []
    for key in sorted(set(properties) | set(backup)):
        value, old = properties.get(key), backup.get(key)
        if value == old:
            continue
        change = "added" if old is None else "removed" if value is None else "changed"
        out.append(BackupDifference(key, change, value, old))
    return out


def table_configuration(properties: Mapping[str, str], backup: Mapping[str, str] | None = None,
                        source: str = PROPERTIES_FILE) -> TableConfiguration:
    """The configuration of parsed `properties` (in their order), compared with a parsed `backup` if given."""
    differ = {d.key for d in backup_differences(properties, backup)} if backup is not None else set()
    entries = []
    for key, value in properties.items():
        doc = key_doc(key)
        entries.append(ConfigEntry(key, value, doc.meaning if doc else None, doc.default if doc else None,
                                   doc is not None, (key in differ) if backup is not None else None))
    diffs = backup_differences(properties, backup) if backup is not None else []
    return TableConfiguration(entries, backup is not None, diffs, source)


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_table_configuration(storage: ReadOnlyStorage, properties_file: str = PROPERTIES_FILE,
                             backup_file: str = BACKUP_FILE) -> TableConfiguration:
    """Read `hoodie.properties` and, when it exists, its backup, from a table's storage (a metadata table's
    storage reads the metadata table's). A file that cannot be read becomes a finding; when the main file
    cannot be, the backup's keys are listed (as Hudi reads it then), with no differences."""
    findings: list[Finding] = []

    def read(path: str) -> dict[str, str] | None:
        try:
            return parse_java_properties(_text(storage.read(path)))
        except HudiInspectError as exc:  # unreadable storage, over its size limit, a bad escape
            findings.append(Finding(Severity.ERROR, "table_config_unreadable", storage.uri_of(path),
                                    f"cannot read {path.rsplit('/', 1)[-1]}: {exc}"))
            return None

    try:
        has_backup = storage.exists(backup_file)
    except HudiInspectError as exc:
        has_backup = False
        findings.append(Finding(Severity.WARNING, "table_config_unreadable", storage.uri_of(backup_file),
                                f"cannot tell whether {backup_file.rsplit('/', 1)[-1]} exists: {exc}"))
    backup = read(backup_file) if has_backup else None
    main = read(properties_file)
    if main is None:
        config = table_configuration(backup or {}, None, backup_file if backup is not None else properties_file)
        config.has_backup = backup is not None
    else:
        config = table_configuration(main, backup)
    config.findings = findings
    return config
