"""hoodie.properties parsing: Java properties syntax and the table-config keys."""

from __future__ import annotations

import pytest

from hudi_core.errors import PropertiesError, UnsupportedTableVersion
from hudi_core.io.properties import table_properties_from
from hudi_core.io.table_config import parse_java_properties


def test_java_properties_escapes_comments_and_continuations() -> None:
    text = (
        "#Updated at 2026-03-07T22:26:23.352546Z\n"
        "! another comment\n"
        "hoodie.table.create.schema={\"type\"\\:\"record\",\"a\\=b\"\\:1}\n"
        "key\\ with\\ spaces = value one\n"
        "colon.sep: v2\n"
        "space.sep v3\n"
        "multi=line\\\n"
        "    continued\n"
        "unicode=caf\\u00e9\n"
        "tab=a\\tb\n"
        "empty=\n"
    )
    props = parse_java_properties(text)
    assert props["hoodie.table.create.schema"] == '{"type":"record","a=b":1}'
    assert props["key with spaces"] == "value one"
    assert props["colon.sep"] == "v2"
    assert props["space.sep"] == "v3"
    assert props["multi"] == "linecontinued"
    assert props["unicode"] == "café"
    assert props["tab"] == "a\tb"
    assert props["empty"] == ""
    assert len(props) == 8


def test_table_properties_defaults_follow_hudi() -> None:
    props = table_properties_from({"hoodie.table.version": "6", "hoodie.table.name": "t"}, "x")
    assert props.timeline_layout_version == 1
    assert props.timeline_dir == ".hoodie"
    assert props.archive_dir == ".hoodie/archived"
    assert props.table_type == "COPY_ON_WRITE"
    assert props.base_file_format == "PARQUET"
    # HoodieTableConfig.TIMELINE_TIMEZONE defaults to LOCAL (the spec says UTC; Hudi wins).
    assert props.timezone == "LOCAL"


def test_layout_two_paths() -> None:
    props = table_properties_from(
        {
            "hoodie.table.version": "9",
            "hoodie.timeline.layout.version": "2",
            "hoodie.timeline.path": "tl",
            "hoodie.timeline.history.path": "hist",
            "hoodie.table.partition.fields": "region:SIMPLE,day",
            "hoodie.table.metadata.partitions": "files,record_index",
            "hoodie.table.timeline.timezone": "UTC",
        },
        "x",
    )
    assert props.timeline_dir == ".hoodie/tl"
    assert props.archive_dir == ".hoodie/tl/hist"
    assert props.partition_fields == ("region", "day")
    assert props.metadata_partitions == ("files", "record_index")
    assert props.metadata_table_available
    assert props.timezone == "UTC"


@pytest.mark.parametrize(
    ("props", "error", "text"),
    [
        ({"hoodie.table.name": "t"}, UnsupportedTableVersion, "no hoodie.table.version"),
        ({"hoodie.table.version": "42"}, UnsupportedTableVersion, "hoodie.table.version=42"),
        ({"hoodie.table.version": "six"}, PropertiesError, "is not a number"),
        ({"hoodie.table.version": "6", "hoodie.table.type": "WEIRD"}, PropertiesError, "WEIRD"),
        # HoodieTimelineTimeZone.valueOf: exact enum names only.
        ({"hoodie.table.version": "6", "hoodie.table.timeline.timezone": "utc"}, PropertiesError, "'utc'"),
        ({"hoodie.table.version": "6", "hoodie.table.timeline.timezone": "Europe/Paris"}, PropertiesError,
         "Europe/Paris"),
        ({"hoodie.table.version": "9", "hoodie.timeline.layout.version": "7"}, UnsupportedTableVersion,
         "layout.version=7"),
    ],
)
def test_bad_properties_name_the_file(props: dict[str, str], error: type[Exception], text: str) -> None:
    with pytest.raises(error) as info:
        table_properties_from(props, "/t/.hoodie/hoodie.properties")
    assert "/t/.hoodie/hoodie.properties" in str(info.value)
    assert text in str(info.value)
