"""Fuzz targets for every parser, property-based with hypothesis.

Each target mutates real files (seeds from the fixture zips and from built scenario tables: instant
bodies, `hoodie.properties`, log files, layout-1 archive files, LSM parquet files and manifests)
and checks the parser's contract: it returns, or raises only its own documented error type, never a
crash behind the catch-all. The normal test run uses a small fixed, derandomised budget (profile
``ci``); ``make fuzz`` runs the ``fuzz`` profile (``HUDI_FUZZ_PROFILE=fuzz``, thousands of examples,
random). Every crash found becomes a regression test below (``test_regression_*``).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import struct
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_core.errors import DecodeError, PropertiesError, UnsupportedTableVersion
from hudi_core.formats.logfile.reader import LogFileReader
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.archived_v1 import read_archive_file_rows
from hudi_core.formats.timeline.archived_v2 import _parse_manifest, read_lsm_file_rows
from hudi_core.formats.timeline.bodies import decode_body
from hudi_core.formats.timeline.instant import State
from hudi_core.io.properties import table_properties_from
from hudi_core.io.table_config import parse_java_properties

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                                       HealthCheck.filter_too_much]}
settings.register_profile("ci", max_examples=30, derandomize=True, database=None, **_COMMON)
settings.register_profile("fuzz", max_examples=3000, **_COMMON)
FUZZ = settings.get_profile(os.environ.get("HUDI_FUZZ_PROFILE", "ci"))

REPO = Path(__file__).resolve().parents[2]


# -- seeds -------------------------------------------------------------------------------------------


def _fixture_zips() -> list[Path]:
    env = os.environ.get("HUDI_FIXTURES")
    roots = [Path(env)] if env else []
    roots.append(REPO.parent / "shared" / "fixtures" / "hudi-rs")
    for root in roots:
        if root.is_dir():
            return sorted(root.rglob("*.zip"))
    return []


@functools.lru_cache(maxsize=1)
def _built_tables() -> list[Path]:
    """Two built scenario tables with archives (layout 1 log archive, layout 2 LSM), built once."""
    from hudi_core.scenarios.build import build_scenario
    from hudi_core.scenarios.builtin import load_builtin

    out = Path(tempfile.mkdtemp(prefix="hudi-fuzz-seeds-"))
    return [Path(build_scenario(load_builtin("hudi7779_option_c"), out / f"v{v}", v).path) for v in (6, 9)]


def _kind(name: str, path: str) -> str | None:
    if name.endswith(".hfile"):
        return "hfile"
    if name.startswith("hoodie.properties"):
        return "properties"
    if "/archived/" in path and ".archive." in name:
        return "archive_v1"
    if "/history/" in path:
        if name.endswith(".parquet"):
            return "lsm"
        if name.startswith("manifest_"):
            return "manifest"
        return None
    if ".log." in name:
        return "log"
    if "/.hoodie/" in f"/{path}" and name[:1].isdigit():
        for layout in (2, 1):
            if ia.parse_instant_file_name(name, layout) is not None:
                return "instant"
    return None


@functools.lru_cache(maxsize=1)
def seeds() -> dict[str, list[tuple[str, bytes]]]:
    """`{kind: [(file name, bytes), …]}` from the fixtures' own files and the built tables."""
    out: dict[str, list[tuple[str, bytes]]] = {}
    for archive in _fixture_zips():
        with zipfile.ZipFile(archive) as zf:
            for member in zf.infolist():
                if member.is_dir() or member.filename.startswith("__MACOSX/") or member.file_size > 2_000_000:
                    continue
                name = member.filename.rsplit("/", 1)[-1]
                kind = _kind(name, member.filename)
                if kind is not None and len(out.setdefault(kind, [])) < 400:
                    out[kind].append((name, zf.read(member)))
    for base in _built_tables():
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.stat().st_size <= 2_000_000:
                kind = _kind(path.name, path.relative_to(base).as_posix())
                if kind is not None:
                    out.setdefault(kind, []).append((path.name, path.read_bytes()))
    out.setdefault("hfile", []).extend(_written_hfiles())
    return out


def _written_hfiles() -> list[tuple[str, bytes]]:
    """HFiles from the package's writer: uncompressed and gzip, one and several data blocks, a repeated key."""
    from hudi_core.formats.hfile import HFileReader, write_hfile

    items = [(f"key{i:04d}", f"value {i}".encode() * 3) for i in range(60)]
    blocks = write_hfile(items, block_size=200, compression="NONE", create_time_ms=0)
    second = HFileReader.from_bytes(blocks).root_index[1].key  # the second block's first key
    last, later = (b"key%04d" % (int(second[3:]) + d) for d in (-1, 1))
    return [("one-block.hfile", write_hfile(items, compression="NONE", create_time_ms=0)),
            ("blocks.hfile", blocks),
            # The first block's last key renamed as a key of the second block: two blocks that overlap.
            ("overlap.hfile", blocks.replace(b"\x00\x07" + last, b"\x00\x07" + later, 1)),
            ("gz.hfile", write_hfile(items, block_size=300, compression="GZ", create_time_ms=0)),
            ("repeats.hfile", write_hfile([*items[:5], items[5], (items[5][0], b"second"), *items[6:9]],
                                          compression="NONE", allow_duplicates=True, create_time_ms=0))]


def _no_seed(kind: str, what: str = "") -> str:
    """Why a test has no seed of `kind`: log files, for one, come only from the fixture zips."""
    where = ("the built scenario tables have none and the hudi-rs fixtures are not available (set HUDI_FIXTURES "
             "or provide ../shared/fixtures/hudi-rs)") if not _fixture_zips() else "neither the fixtures nor the " \
        "built scenario tables hold one"
    return f"no {what}{kind} seed file: {where}"


def _seed(kind: str) -> st.SearchStrategy[tuple[str, bytes]]:
    found = seeds().get(kind, [])
    if not found:
        pytest.skip(_no_seed(kind))
    return st.sampled_from(found)


def _first_seed(kind: str, wanted: Any = None) -> tuple[str, bytes]:
    """The first seed file of `kind` (that `wanted(name, data)` accepts); the test skips, saying why, when
    there is none (a checkout without the fixtures) instead of failing on StopIteration or KeyError."""
    for name, data in seeds().get(kind, []):
        if wanted is None or wanted(name, data):
            return name, data
    pytest.skip(_no_seed(kind, "suitable " if wanted is not None else ""))


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> tuple[str, bytes]:
    """A seed file of `kind` with a few byte-level mutations (flip, truncate, insert, splice, repeat)."""
    name, data = draw(_seed(kind))
    buf = bytearray(data)
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["flip", "truncate", "insert", "delete", "repeat", "magic"]))
        at = draw(st.integers(0, max(len(buf), 0)))
        if op == "flip" and buf:
            i = min(at, len(buf) - 1)
            buf[i] ^= draw(st.integers(1, 255))
        elif op == "truncate":
            del buf[at:]
        elif op == "insert":
            buf[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del buf[at:at + draw(st.integers(1, 64))]
        elif op == "repeat":
            buf[at:at] = bytes(buf[at:at + draw(st.integers(1, 32))]) * draw(st.integers(1, 8))
        elif op == "magic":
            buf[at:at] = draw(st.sampled_from([b"#HUDI#", b"Obj\x01", b"{", b"PAR1", b"[" * 2000]))
    return name, bytes(buf)


class MemoryStorage:
    """Just enough of ReadOnlyStorage over bytes in memory (read, ranged read, stat, open)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def uri_of(self, path: str) -> str:
        return f"mem://{path}"

    def read(self, path: str) -> bytes:
        return self.files[path]

    def read_range(self, path: str, start: int, length: int) -> bytes:
        return self.files[path][start:start + length]

    def stat(self, path: str) -> Any:
        return type("Info", (), {"size": len(self.files[path])})()

    def open_read(self, path: str, block_size: int | None = None) -> io.BytesIO:
        return io.BytesIO(self.files[path])


# -- targets --------------------------------------------------------------------------------------------


@FUZZ
@given(st.one_of(mutated("properties").map(lambda s: s[1].decode("latin-1")), st.text(max_size=300)))
def test_fuzz_properties(text: str) -> None:
    props = parse_java_properties(text)
    assert isinstance(props, dict)
    try:
        table = table_properties_from(props, "fuzz")
    except (PropertiesError, UnsupportedTableVersion):
        return
    assert table.timezone in ("LOCAL", "UTC")
    assert table.timeline_layout_version in (0, 1, 2)


@FUZZ
@given(st.one_of(mutated("instant").map(lambda s: s[0].encode().decode("latin-1")),
                 st.text(alphabet=st.sampled_from("0123456789_.abcdefghijklmnoprstuvwx٢０\n"), max_size=40),
                 st.text(max_size=40)),
       st.sampled_from([1, 2]))
def test_fuzz_instant_names(name: str, layout: int) -> None:
    parsed = ia.parse_instant_file_name(name, layout)
    if parsed is None:
        return
    assert parsed.requested_time.isascii() and parsed.requested_time.isdigit()
    assert parsed.action in ia.VALID_ACTIONS
    assert parsed.completion_time is None or (parsed.completion_time.isascii() and parsed.completion_time.isdigit())
    assert "\n" not in name


_ACTION_STATES = [(a, s) for a in sorted(ia.VALID_ACTIONS) for s in State]


@FUZZ
@given(mutated("instant"), st.sampled_from(_ACTION_STATES), st.booleans())
def test_fuzz_bodies(seed: tuple[str, bytes], action_state: tuple[str, State], own: bool) -> None:
    name, data = seed
    action, state = action_state
    if own:
        parsed = ia.parse_instant_file_name(name, 2) or ia.parse_instant_file_name(name, 1)
        if parsed is not None:
            action, state = parsed.action, parsed.state
    try:
        body = decode_body(data, action, state)
    except DecodeError:
        return
    if body.record_type is not None:
        from hudi_core.formats.timeline.bodies import allowed_record_types

        assert body.record_type in allowed_record_types(action, state)


@FUZZ
@given(mutated("log"))
def test_fuzz_log_framing(seed: tuple[str, bytes]) -> None:
    _, data = seed
    reader = LogFileReader(MemoryStorage({"f": data}), "f")
    scan = reader.scan()  # a hard stop is kept in scan.error, never raised
    pos = 0
    for block in scan.blocks:
        assert block.offset == pos and block.end > block.offset and block.end <= len(data)
        pos = block.end
    assert reader.bytes_requested <= 4 * len(data) + 64 * 1024 * (len(scan.blocks) + 2)


@FUZZ
@given(mutated("log"))
def test_fuzz_log_inventory(seed: tuple[str, bytes]) -> None:
    from hudi_core.formats.logfile.inventory import scan_log_files

    name, data = seed
    table = scan_log_files(MemoryStorage({name: data}), [name])  # Arrow rows, whatever the headers hold
    assert table.num_rows >= 0  # a 1-5 byte tail is EOF (spec 03 §1.8): no rows


class _RemoteMemoryStorage(MemoryStorage):
    """The same bytes as a store that is not local: every file is walked by the block reader."""

    is_local = False


@FUZZ
@given(mutated("log"))
def test_fuzz_log_inventory_whole_file_parse_is_the_readers(seed: tuple[str, bytes]) -> None:
    """A small file read whole is parsed straight from its bytes when its frames are all well formed: the rows are
    the block reader's, whatever the damage (the reader walks every file the parse refuses)."""
    from hudi_core.formats.logfile.inventory import _whole_file_blocks, scan_log_files

    name, data = seed
    fast = scan_log_files(MemoryStorage({name: data}), [name])
    assert fast.to_pylist() == scan_log_files(_RemoteMemoryStorage({name: data}), [name]).to_pylist()
    blocks = _whole_file_blocks(data)  # any size: the parse itself, beyond the first window too
    if blocks is not None:
        walked = scan_log_files(_RemoteMemoryStorage({name: data}), [name])
        columns = walked.schema.names[6:]
        assert blocks == [tuple(row[c] for c in columns) for row in walked.to_pylist()]


@FUZZ
@given(mutated("archive_v1"))
def test_fuzz_archive_layout1(seed: tuple[str, bytes]) -> None:
    name, data = seed
    rows = read_archive_file_rows(MemoryStorage({f".hoodie/archived/{name}": data}),  # type: ignore[arg-type]
                                  f".hoodie/archived/{name}")
    assert rows.num_rows >= 0


@FUZZ
@given(mutated("lsm"))
def test_fuzz_archive_layout2_lsm(seed: tuple[str, bytes]) -> None:
    name, data = seed
    path = f".hoodie/timeline/history/{name}"
    rows = read_lsm_file_rows(MemoryStorage({path: data}), path)  # type: ignore[arg-type]
    assert rows.num_rows >= 0


@FUZZ
@given(st.one_of(mutated("manifest").map(lambda s: s[1]), st.binary(max_size=200),
                 st.recursive(st.none() | st.integers() | st.text(max_size=8),
                              lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                           max_size=3),
                              max_leaves=10).map(lambda v: repr(v).encode())))
def test_fuzz_lsm_manifest(data: bytes) -> None:
    try:
        files = _parse_manifest(data)
    except (ValueError, UnicodeDecodeError, TypeError):
        return  # what `resolve_snapshot` catches and reports as a finding
    assert all(isinstance(f.name, str) for f in files)


@FUZZ
@given(mutated("hfile"))
def test_fuzz_hfile_reader(seed: tuple[str, bytes]) -> None:
    """Damaged HFiles are an HFileError naming the file, and where the whole file reads, every key lookup
    answers the key's first value: a lookup and a whole-file read never disagree. Where the whole-file read
    fails, an absent answer fails too (never "absent" from a file whose keys are not all in order)."""
    from hudi_core.formats.hfile import HFileError, HFileReader

    name, data = seed
    try:
        reader = HFileReader.from_bytes(data, name)
        try:
            cells = list(reader.scan())
        except HFileError:
            fresh = HFileReader.from_bytes(data, name)
            with pytest.raises(HFileError):
                fresh.get("\U0010ffff-past-every-key")
            raise
        first: dict[str, bytes] = {}
        for key, value in cells:
            first.setdefault(key, value)
        for key in list(first)[:20]:
            assert reader.get(key) == first[key], key
        assert reader.get("\U0010ffff-past-every-key") is None
    except HFileError as exc:
        assert exc.path == name


@st.composite
def moved_key_hfile(draw: st.DrawFn) -> tuple[bytes, list[str], str, str]:
    """An uncompressed HFile of one to a dozen data blocks whose cell of one key is renamed in place to another key
    of the same length: a key moved into another block (blocks that overlap), within its block, onto a key that is
    there (a repeat), or a block's first key changed under its index key. Returns (bytes, keys written, old, new)."""
    from hudi_core.formats.hfile import write_hfile

    keys = [f"key{n:04d}" for n in sorted(draw(st.sets(st.integers(0, 9999), min_size=6, max_size=40)))]
    data = write_hfile([(k, k.encode() * 3) for k in keys], block_size=draw(st.integers(40, 400)),
                       compression="NONE", create_time_ms=0)
    old = draw(st.sampled_from(keys))
    new = draw(st.sampled_from(keys) | st.integers(0, 9999).map(lambda n: f"key{n:04d}"))
    row = struct.pack(">H", 7) + old.encode()
    return data.replace(row, struct.pack(">H", 7) + new.encode(), 1), keys, old, new


@FUZZ
@given(moved_key_hfile())
def test_fuzz_hfile_moved_key(case: tuple[bytes, list[str], str, str]) -> None:
    """One key moved: a lookup (on a fresh reader: its first and only question) answers what the whole-file read
    answers, the key's first value or None; it fails only where the whole-file read fails, and then never answers
    "absent" (a found key is answered: its cell is there)."""
    from hudi_core.formats.hfile import HFileFormatError, HFileReader

    data, keys, old, new = case
    cells: list[tuple[str, bytes]] | None
    try:
        cells = list(HFileReader.from_bytes(data, "moved.hfile").scan())
    except HFileFormatError as exc:
        assert exc.path == "moved.hfile"
        cells = None
    first: dict[str, bytes] = {}
    for key, value in cells or []:
        first.setdefault(key, value)
    for key in sorted({old, new, *keys[::4], "key", "key0000x", "key99999"}):
        try:
            answer = HFileReader.from_bytes(data, "moved.hfile").get(key)
        except HFileFormatError as exc:
            assert cells is None and exc.path == "moved.hfile", (key, exc)
            continue
        if cells is not None:
            assert answer == first.get(key), key
        else:
            assert answer is not None, key


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 80), 1 << 80) | st.floats(allow_nan=True) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "name", "fields", "size", "precision", "scale", "logicalType", "default", "items",
                         "values", "symbols", "key", "filesystemMetadata", "isDeleted"]) | st.text(max_size=4),
        inner, max_size=5),
    max_leaves=20)


@FUZZ
@given(st.one_of(_JSONISH, st.builds(lambda k, t, m: {"key": k, "type": t, "filesystemMetadata": m}, _JSONISH,
                                     _JSONISH, st.dictionaries(st.text(max_size=4), _JSONISH, max_size=3))))
def test_fuzz_metadata_files_record(row: Any) -> None:
    """Any decoded row: a files record with typed fields, or a MetadataRecordError naming why."""
    from hudi_core.formats.mdt.records import MetadataRecordError, files_record_of

    try:
        record = files_record_of(row)
    except MetadataRecordError:
        return
    assert isinstance(record.key, str) and record.record_type in (1, 2)
    assert all(isinstance(e.size, int) and e.size >= 0 and isinstance(e.is_deleted, bool)
               for e in record.entries.values())


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_metadata_record_bytes(value: bytes) -> None:
    """Any cell value under the bundled writer schema: a record or a MetadataRecordError."""
    from hudi_core.formats.mdt.records import MetadataRecordError, bundled_schema, decode_files_record

    with contextlib.suppress(MetadataRecordError):
        decode_files_record("k", value, bundled_schema())


@FUZZ
@given(st.one_of(_JSONISH.map(lambda v: __import__("json").dumps(v)), _JSONISH.map(lambda v: {
    "type": "record", "name": "r", "fields": [{"name": "a", "type": v}, {"name": "b", "type": "long",
                                                                           "default": v}]}),
    st.text(max_size=200)))
def test_fuzz_schema_parser(schema: Any) -> None:
    """Any schema text: parsed and flattened, or a SchemaError naming why."""
    from hudi_core.services.schema_rules import SchemaError, comparable, flatten, parse_schema

    try:
        root = parse_schema(schema)
    except SchemaError:
        return
    flatten(root)
    comparable(root)


# -- regressions found by the fuzzers --------------------------------------------------------------------


def test_regression_archive_v1_schema_header_not_utf8() -> None:
    """Found by test_fuzz_archive_layout1: a schema header byte that is not UTF-8 crashed building
    the Arrow rows (UnicodeEncodeError on a surrogate); now an error row naming the block."""
    name, data = _first_seed("archive_v1")
    at = data.index(b'"null"') + 1  # inside a JSON string of the schema header, as the fuzzer found it
    damaged = data[:at] + b"\xee" + data[at + 1:]
    rows = read_archive_file_rows(MemoryStorage({name: damaged}), name)  # type: ignore[arg-type]
    errors = [e for e in rows.column("error").to_pylist() if e]
    assert errors and "\\xee" in errors[0]


def test_regression_log_header_not_utf8() -> None:
    from hudi_core.formats.logfile.inventory import scan_log_files

    name, data = _first_seed("log", lambda n, d: b"INSTANT" in d or len(d) > 100)
    damaged = data.replace(b"2024", b"\xff024", 1) if b"2024" in data else data
    table = scan_log_files(MemoryStorage({name: damaged}), [name])
    assert table.num_rows >= 1


def test_regression_lsm_footer_not_utf8() -> None:
    """Found by test_fuzz_archive_layout2_lsm: a parquet footer whose column name is not UTF-8 raised
    UnicodeDecodeError out of pyarrow; now an `lsm_file_unreadable` row."""
    name, data = _first_seed("lsm")
    damaged = data.replace(b"instantTime", b"\xe9nstantTime")
    rows = read_lsm_file_rows(MemoryStorage({name: damaged}), name)  # type: ignore[arg-type]
    assert rows.column("error_code").to_pylist() == ["lsm_file_unreadable"]
    assert "\\xe9" in rows.column("error").to_pylist()[0] or "decode" in rows.column("error").to_pylist()[0]


def test_regression_manifest_nested_too_deeply() -> None:
    with pytest.raises(ValueError):
        _parse_manifest(b"[" * 100_000 + b"]" * 100_000)


def test_regression_body_nested_too_deeply() -> None:
    with pytest.raises(DecodeError, match="nested too deeply"):
        decode_body(b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}", ia.COMMIT, State.COMPLETED)


def test_regression_instant_name_trailing_newline_and_wide_digits() -> None:
    assert ia.parse_instant_file_name("20240101000000000.commit\n", 1) is None
    assert ia.parse_instant_file_name("２0240101000000000.commit", 2) is None


@pytest.mark.parametrize("regression", [test_regression_archive_v1_schema_header_not_utf8,
                                        test_regression_log_header_not_utf8, test_regression_lsm_footer_not_utf8])
def test_regressions_skip_with_a_reason_without_seeds(monkeypatch: pytest.MonkeyPatch, regression: Any) -> None:
    """A checkout without ../shared: the seed-based regressions skip and say why, never raise
    StopIteration or KeyError."""
    monkeypatch.setattr(f"{__name__}.seeds", lambda: {})
    monkeypatch.setattr(f"{__name__}._fixture_zips", lambda: [])
    with pytest.raises(pytest.skip.Exception, match="fixtures are not available"):
        regression()
