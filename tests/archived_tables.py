"""Helpers shared by the archived-timeline tests: small real tables written into a scratch dir.

A table here is `hoodie.properties` plus timeline files whose bodies are encoded as Hudi 1.1 writes
them for the table version (`hudi_core.formats.timeline.encode`). The archive bytes themselves are built
by the tests (by hand, following spec `04`) or by `hudi_core.scenarios.archive_writer`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hudi_core.formats.timeline import encode
from hudi_core.formats.timeline.active import ActiveTimeline, load_active_timeline
from hudi_core.formats.timeline.instant import State, instant_file_name
from hudi_core.io.properties import TableProperties, table_properties_from
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.io.table_config import parse_java_properties
from hudi_core.scenarios.scratch import ScratchDir


def instant_time(base: int) -> str:
    """A 17-digit instant time `base` seconds after 2026-01-01 00:00:00 UTC (millis `000`)."""
    moment = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=base)
    return moment.strftime("%Y%m%d%H%M%S") + "000"


def epoch_ms(time: str) -> int:
    """Epoch millis of a 17-digit UTC instant time."""
    moment = dt.datetime.strptime(time[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1000) + int(time[14:])


@dataclass
class ScratchTable:
    """A scratch table under construction: where it is, its properties, what was written."""

    scratch: ScratchDir
    props: TableProperties
    records: dict[tuple[str, str, State], dict[str, Any] | None] = field(default_factory=dict)

    @property
    def version(self) -> int:
        return self.props.version

    @property
    def layout(self) -> int:
        return self.props.timeline_layout_version

    def active(self) -> ActiveTimeline:
        return load_active_timeline(ReadOnlyStorage(self.scratch.uri), self.props)

    def write_state(self, rt: str, action: str, state: State, record: dict[str, Any] | None,
                    completion: str | None = None, record_type: str | None = None) -> str:
        """Write one state file with the body format Hudi uses for this version."""
        fmt, expected = encode.body_format_for(self.version, action, state)
        rtype = record_type or expected
        data = encode.encode_body(record, rtype, fmt, self.version) if record is not None else b""
        if record_type is not None and record is not None and fmt == "empty":
            data = encode.encode_body(record, rtype, "avro", self.version)
        name = instant_file_name(rt, action, state, self.layout, completion)
        mtime = epoch_ms(completion) if completion else None
        self.scratch.write_bytes(f"{self.props.timeline_dir}/{name}", data, mtime_ms=mtime)
        self.records[(rt, action, state)] = record if data else None
        return name

    def commit(self, rt: str, ct: str, action: str = "commit", files: int = 1, operation: str = "UPSERT") -> None:
        """A completed commit/deltacommit writing `files` base files in partition `p1`."""
        stats = [encode.write_stat("p1", f"fg{rt[-6:]}-{i}", f"fg{rt[-6:]}-{i}_0-1-1_{rt}.parquet",
                                   num_writes=10 + i, num_inserts=10 + i, file_size=1000 + i)
                 for i in range(files)]
        meta = encode.commit_metadata(stats, operation)
        self.write_state(rt, action, State.REQUESTED, None)
        self.write_state(rt, action, State.INFLIGHT, encode.commit_metadata([], operation))
        self.write_state(rt, action, State.COMPLETED, meta, ct)

    def compaction(self, rt: str, ct: str) -> None:
        """A completed compaction: plan in `.compaction.requested`, completes as `commit`."""
        plan = encode.compaction_plan([encode.compaction_operation("p1", "fgA", "20250101000000000",
                                                                  "fgA_0-1-1_20250101000000000.parquet",
                                                                  [".fgA_20250101000000000.log.1_0-1-1"])])
        self.write_state(rt, "compaction", State.REQUESTED, plan)
        self.write_state(rt, "compaction", State.INFLIGHT, None)
        meta = encode.commit_metadata([encode.write_stat("p1", "fgA", f"fgA_0-1-1_{rt}.parquet", num_writes=5)],
                                      "COMPACT", compacted=True)
        self.write_state(rt, "commit", State.COMPLETED, meta, ct)

    def clean(self, rt: str, ct: str, ectr: str) -> None:
        """A completed clean deleting one file."""
        plan = encode.cleaner_plan({"p1": [f"{self.scratch.uri}/p1/old_0-1-1_{ectr}.parquet"]},
                                   earliest_instant_to_retain=(ectr, "commit", "COMPLETED"),
                                   last_completed_commit=ectr)
        self.write_state(rt, "clean", State.REQUESTED, plan)
        self.write_state(rt, "clean", State.INFLIGHT, plan if self.version < 8 else None)
        meta = encode.clean_metadata(rt, {"p1": [f"old_0-1-1_{ectr}.parquet"]}, earliest_commit_to_retain=ectr,
                                     last_completed_commit=ectr)
        self.write_state(rt, "clean", State.COMPLETED, meta, ct)

    def replace(self, rt: str, ct: str) -> None:
        """A completed insert_overwrite replacecommit replacing file group `fgOld`."""
        self.write_state(rt, "replacecommit", State.REQUESTED, encode.requested_replace_metadata(None, None))
        self.write_state(rt, "replacecommit", State.INFLIGHT, encode.commit_metadata([], "INSERT_OVERWRITE"))
        meta = encode.commit_metadata([encode.write_stat("p1", "fgNew", f"fgNew_0-1-1_{rt}.parquet", num_writes=7)],
                                      "INSERT_OVERWRITE", replaced_file_ids={"p1": ["fgOld"]})
        self.write_state(rt, "replacecommit", State.COMPLETED, meta, ct)


def new_table(root: Path, version: int, table_type: str = "COPY_ON_WRITE") -> ScratchTable:
    """An empty table of `version` (6 → layout 1, 8/9 → layout 2) in a new scratch dir."""
    scratch = ScratchDir.create(root)
    layout = 1 if version < 8 else 2
    text = "\n".join([
        "hoodie.table.name=archived_test",
        f"hoodie.table.version={version}",
        f"hoodie.timeline.layout.version={layout}",
        f"hoodie.table.type={table_type}",
        "hoodie.archivelog.folder=archived",
        "hoodie.timeline.path=timeline",
        "hoodie.timeline.history.path=history",
        "hoodie.table.timeline.timezone=UTC",
        "hoodie.table.recordkey.fields=id",
        "",
    ])
    scratch.write_text(".hoodie/hoodie.properties", text)
    props = table_properties_from(parse_java_properties(text), "test")
    scratch.mkdirs(props.timeline_dir)
    return ScratchTable(scratch, props)


def test_instant_time_helpers() -> None:
    assert instant_time(0) == "20260101000000000"
    assert instant_time(61) == "20260101000101000"
    assert epoch_ms("20260101000101000") == 1767225661000
