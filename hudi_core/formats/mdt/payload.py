"""How a newer `files` record combines with an older one: `HoodieMetadataPayload.preCombine` (Hudi 1.1).

Whole records (`HoodieMetadataPayload.preCombine`):

* a newer whole-record delete wins (the key has no record after it);
* after an older whole-record delete, the newer record stands alone (nothing older is combined);
* otherwise both must be of the same type and key, and their entries combine.

Entries (`HoodieTableMetadataUtil.combineFileSystemMetadata(older, newer)`, types 1 and 2 alike), each
newer entry folded into the older map:

* a name the older map lacks is added as it is, a tombstone included;
* a tombstone over a live entry removes the entry (the tombstone does not stay);
* a tombstone over a tombstone keeps the newer tombstone;
* a live entry keeps the larger size of the two (since Hudi 0.10; 0.7-0.9 added them up), live.

The order of combination is the caller's (see :mod:`hudi_core.table.listing.metadata`): Hudi merges the log
records among themselves, oldest first, then the merged log record onto the base file's record, so a
tombstone with no entry before it in the logs survives the first stage.
"""

from __future__ import annotations

from hudi_core.formats.mdt.records import FileEntry, FilesRecord, MetadataRecordError


def combine_entries(older: dict[str, FileEntry], newer: dict[str, FileEntry]) -> dict[str, FileEntry]:
    """`combineFileSystemMetadata`: the entries of `newer` folded into a copy of `older`."""
    out = dict(older)
    for name, entry in newer.items():
        before = out.get(name)
        if before is None:
            out[name] = entry
        elif entry.is_deleted:
            if before.is_deleted:
                out[name] = entry
            else:
                del out[name]
        else:
            out[name] = FileEntry(max(before.size, entry.size), False)
    return out


def combine(older: FilesRecord | None, newer: FilesRecord) -> FilesRecord:
    """`newer.preCombine(older)`: the record that stands for the key after both."""
    if older is None or newer.deleted or older.deleted:
        return newer
    if older.record_type != newer.record_type:
        raise MetadataRecordError(
            f"record {newer.key!r}: cannot combine a type {newer.record_type} record with a type "
            f"{older.record_type} one (Hudi refuses it too)")
    return FilesRecord(newer.key, newer.record_type, combine_entries(older.entries, newer.entries))
