"""The metadata table's record formats (formats layer): `HoodieMetadataRecord` and its payload rules.

Hudi 1.x keeps a metadata table under `.hoodie/metadata`; its `files` partition lists the data
table's partitions and files. This package decodes and encodes its records (:mod:`.records`) and
combines a newer record with an older one as `HoodieMetadataPayload` does (:mod:`.payload`).
Reading the partition as a whole (which file slice, which log blocks count) is the table layer's
job: :mod:`hudi_core.table.listing.metadata`.

Imports only the bytes layer, the other formats (HFile, log blocks) and the shared modules.
"""
