"""`HoodieMetadataRecord`: the records of the metadata table, as Hudi 1.x writes them.

A record is stored as an HFile cell (base files and HFile log blocks) whose key is the record key
and whose value is *schemaless* Avro binary under the writer schema that travels with the data: the
base HFile's file-info entry ``schema`` or the log block's ``SCHEMA`` header (`HoodieHFileDataBlock
.serializeRecord`). The writer schema is `HoodieMetadataRecord` with Hudi's five meta fields put in
front; it grew between releases (1.1 added column-stats fields), so records are always decoded with
the schema that came with them. The ``key`` field inside the value is written empty
(`truncateRecordKey`): the cell key is the record key.

Only the `files` partition's two record types are modelled (:class:`FilesRecord`); any record can be
decoded generically for display (:func:`decode_metadata_record`).
"""

from __future__ import annotations

import functools
import io
import json
from dataclasses import dataclass
from enum import IntEnum
from importlib import resources
from typing import Any, NamedTuple

import fastavro

from hudi_core.errors import DecodeError

#: Key of the record listing the data table's partitions (`HoodieTableMetadata.RECORDKEY_PARTITION_LIST`).
ALL_PARTITIONS_KEY = "__all_partitions__"
#: The partition name of a non-partitioned table (`NON_PARTITIONED_NAME`): the data table's ``""``.
NON_PARTITIONED_NAME = "."
#: The `files` partition's name and its one file group (`FilesIndexer`: one file group).
FILES_PARTITION = "files"


class MetadataRecordType(IntEnum):
    """`MetadataPartitionType.recordType`: the ``type`` field of a record."""

    ALL_PARTITIONS = 1
    FILES = 2
    COLUMN_STATS = 3
    BLOOM_FILTER = 4
    RECORD_INDEX = 5
    PARTITION_STATS = 6
    SECONDARY_INDEX = 7


class MetadataRecordError(DecodeError):
    """A metadata-table record whose bytes do not decode under its writer schema."""


class FileEntry(NamedTuple):
    """`HoodieMetadataFileInfo`: a file's size in bytes and whether this entry deletes it (a tombstone).

    In the partition list (type 1) an entry is a partition, size 0. A named tuple: a million are made reading
    the `files` partition of a large table (a third of the time and memory of a frozen dataclass).
    """

    size: int
    is_deleted: bool = False


@dataclass(frozen=True)
class FilesRecord:
    """A record of the `files` partition: the partition list (type 1) or one partition's files (type 2).

    `entries` maps a file name (or, for the partition list, a partition path) to its entry, tombstones
    included. `deleted` is a whole-record delete (an empty payload, a delete-block key): the key has no
    record at all after it.
    """

    key: str
    record_type: int
    entries: dict[str, FileEntry]
    deleted: bool = False

    def live_names(self) -> list[str]:
        """The names a reader lists (`getFileList`: entries that are not tombstones), sorted."""
        return sorted(name for name, e in self.entries.items() if not e.is_deleted)

    @classmethod
    def delete(cls, key: str) -> FilesRecord:
        """The whole-record delete of `key`."""
        return cls(key, 0, {}, deleted=True)


def partition_key(partition: str) -> str:
    """The `files` record key of a data-table partition path (`getPartitionIdentifier`: ``""`` -> ``"."``)."""
    return partition or NON_PARTITIONED_NAME


def partition_of_key(key: str) -> str:
    """The data-table partition path of a record key or partition-list entry (``"."`` -> ``""``)."""
    return "" if key == NON_PARTITIONED_NAME else key


@functools.lru_cache(maxsize=32)
def _parsed(schema_json: str) -> Any:
    try:
        return fastavro.parse_schema(json.loads(schema_json))
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as exc:
        raise MetadataRecordError(f"the metadata record's writer schema is not a usable Avro schema: {exc}") from exc


def decode_raw(value: bytes, schema_json: str) -> dict[str, Any]:
    """The Avro record of one cell value under `schema_json` (the writer schema), every field."""
    buf = io.BytesIO(value)
    try:
        record = fastavro.schemaless_reader(buf, _parsed(schema_json), None)
    except MetadataRecordError:
        raise
    except Exception as exc:  # fastavro raises many types on bad bytes
        raise MetadataRecordError(f"metadata record does not decode under its writer schema: {exc!r}") from exc
    if buf.tell() != len(value):
        raise MetadataRecordError(f"metadata record has {len(value) - buf.tell()} trailing bytes")
    if not isinstance(record, dict):
        raise MetadataRecordError("metadata record is not an Avro record")
    return record


def decode_files_record(key: str, value: bytes, schema_json: str) -> FilesRecord:
    """A `files`-partition record from its cell key and value.

    An empty value is a deleted record (Hudi writes deletes into delete blocks; an empty cell value is
    read the same way). A record of another type than 1 or 2 is refused: it does not belong here.
    """
    if not value:
        return FilesRecord.delete(key)
    return files_record_of(decode_raw(value, schema_json), key)


def files_record_of(record: Any, key: str | None = None) -> FilesRecord:
    """A `files`-partition record from its decoded fields, every field's type checked as read: a writer schema
    that declares other types (a string size, a list of file infos) is damage, a
    :class:`MetadataRecordError` naming the record, never a wrong listing or a bare ``TypeError``. `key`: the
    cell key (HFile), else the record's own `key` field (Avro blocks)."""
    if not isinstance(record, dict):
        raise MetadataRecordError(f"a files-partition record is a record, not {type(record).__name__}")
    if key is None:
        key = record.get("key")
        if not isinstance(key, str):
            raise MetadataRecordError(f"record key {key!r} is {type(key).__name__}, not a string")
    record_type = record.get("type")
    if isinstance(record_type, bool) or not isinstance(record_type, int):
        raise MetadataRecordError(f"record {key!r} has type {record_type!r} ({type(record_type).__name__}), "
                                  "not an integer")
    if record_type not in (MetadataRecordType.ALL_PARTITIONS, MetadataRecordType.FILES):
        raise MetadataRecordError(f"record {key!r} has type {record_type}, not a files-partition record (1 or 2)")
    raw = record.get("filesystemMetadata") or {}
    if not isinstance(raw, dict):
        raise MetadataRecordError(f"record {key!r}: filesystemMetadata is {type(raw).__name__}, not a map")
    entries: dict[str, FileEntry] = {}
    for name, info in raw.items():
        if not isinstance(name, str) or not isinstance(info, dict) or "size" not in info or "isDeleted" not in info:
            raise MetadataRecordError(f"record {key!r}: entry {name!r} is not a HoodieMetadataFileInfo")
        size, deleted = info["size"], info["isDeleted"]
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise MetadataRecordError(f"record {key!r}: entry {name!r} has size {size!r} "
                                      f"({type(size).__name__}), not a byte count")
        if not isinstance(deleted, bool):
            raise MetadataRecordError(f"record {key!r}: entry {name!r} has isDeleted {deleted!r} "
                                      f"({type(deleted).__name__}), not a boolean")
        entries[name] = FileEntry(size, deleted)
    return FilesRecord(key, int(record_type), entries)


def decode_metadata_record(value: bytes, schema_json: str | None = None) -> dict[str, Any]:
    """Any metadata record, for display: its fields with unset unions dropped and bytes as hex.

    Without a schema the bundled 1.1 writer schema is tried.
    """
    record = decode_raw(value, schema_json or bundled_schema())
    return {k: _displayable(v) for k, v in record.items() if v is not None}


def _displayable(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {k: _displayable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_displayable(v) for v in value]
    return value


@functools.cache
def bundled_schema() -> str:
    """The writer schema Hudi 1.1 uses for metadata records (meta fields included), as compact JSON;
    copied out of a Hudi 1.1.1 metadata table's log-block header. Used to write records."""
    return resources.files("hudi_core.formats.mdt").joinpath("avro/HoodieMetadataRecord.avsc").read_text("utf-8")


