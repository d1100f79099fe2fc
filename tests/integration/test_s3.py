"""Tables on S3: a real S3-compatible server (moto) on a loopback port, fixture tables and a
built scenario uploaded to it, and the CLI run on `s3://` URLs with the same answers as on local disk.

No network beyond 127.0.0.1. The server must start: there is no silent skip.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import fresh_index
from object_stores import (
    assert_pages_render,
    comparable_columns,
    overview_after_looking_for_tables,
    without_mtimes,
)

from bench.s3server import LoopbackS3, cli_storage_args, storage_options, upload_tree
from hudi_core import open_table
from hudi_core.errors import StorageError
from hudi_core.formats.timeline.index_paths import LISTING_MIN_FILES_ENV, LISTING_SWITCH_ENV
from hudi_core.inspect import TableInspector

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "hudi_core"]
BUCKET = "warehouse"

#: (table name in the bucket, fixture name or scenario)
TABLES = ("v9_txns_simple_meta", "v6_trips_8i1u")
COMMANDS = (["info"], ["timeline"], ["timeline", "--all"], ["fsview"], ["fsview", "--all-slices"], ["markers"],
            ["plan-clean"], ["plan-archive"], ["log-blocks"], ["duplicates"], ["archive"],
            ["doctor", "--now", "20260401000000000"])


@pytest.fixture(scope="module")
def s3(table_path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LoopbackS3, dict[str, Path]]]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = LoopbackS3().start()
    local: dict[str, Path] = {}
    try:
        for name in TABLES:
            local[name] = table_path(name)
            assert upload_tree(server.endpoint, str(local[name]), BUCKET, f"tables/{name}") > 0
        scenario = tmp_path_factory.mktemp("s3-scenario") / "case_b"
        subprocess.run([*CLI, "scenario", "build", "hudi7779_case_b", str(scenario), "--table-version", "6",
                        "--upto-step", "12"], check=True, capture_output=True, cwd=REPO)
        local["case_b"] = scenario
        assert upload_tree(server.endpoint, str(scenario), BUCKET, "tables/case_b") > 0
        logs = tmp_path_factory.mktemp("s3-logs") / "logs"
        subprocess.run([*CLI, "log-scenarios", str(logs), "--table-version", "9"], check=True, capture_output=True,
                       cwd=REPO)
        local["logs"] = logs
        assert upload_tree(server.endpoint, str(logs), BUCKET, "tables/logs") > 0
        yield server, local
    finally:
        server.stop()


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=REPO, timeout=300,
                          env={**os.environ, **(env or {})})


def _stats(server: LoopbackS3, reset: bool = False) -> dict:
    if reset:
        urllib.request.urlopen(urllib.request.Request(server.endpoint + "/__reset", data=b"", method="POST"))
        return {}
    return json.loads(urllib.request.urlopen(server.endpoint + "/__stats").read())


@pytest.mark.parametrize("name", [*TABLES, "case_b"])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_answers_the_same_on_s3_as_on_local_disk(s3, name: str, command: list[str]) -> None:
    server, local = s3
    url = f"s3://{BUCKET}/tables/{name}"
    # The metadata-table listing is checked against storage on both sides (by default only on local disk).
    remote = _run([*command, url, "--format", "json", "--engine", "local", "--storage-check",
                   *cli_storage_args(server.endpoint)])
    here = _run([*command, str(local[name]), "--format", "json", "--engine", "local", "--storage-check"])
    assert remote.returncode == here.returncode, remote.stderr
    assert "Traceback" not in remote.stderr and "unexpected" not in remote.stderr
    got, want = remote.stdout.replace(url, "<T>"), here.stdout.replace(str(local[name]), "<T>")
    # Inflight times (and layout 1's completion times) are the files' modification times: on S3 that is the
    # upload time (LastModified), as Hudi would see it too. Everything else must be identical.
    layout_1 = name in ("v6_trips_8i1u", "case_b")
    assert without_mtimes(json.loads(got), layout_1) == without_mtimes(json.loads(want), layout_1)
    assert remote.stdout.strip()


def test_arrow_api_on_s3_matches_local(s3) -> None:
    server, local = s3
    remote = open_table(f"s3://{BUCKET}/tables/v9_txns_simple_meta", storage_options(server.endpoint))
    here = open_table(str(local["v9_txns_simple_meta"]))
    for name in ("instants", "file_slices"):
        got, want = getattr(TableInspector(remote), name)(), getattr(TableInspector(here), name)()
        assert got.num_rows == want.num_rows > 0
        assert comparable_columns(got).equals(comparable_columns(want))


@pytest.mark.parametrize(("name", "command"), [
    *(("case_b", c) for c in (["info"], ["timeline"], ["timeline", "--all"], ["fsview"], ["plan-clean"],
                              ["plan-archive"], ["markers"])),
    *(("logs", c) for c in (["log-blocks"], ["log-blocks", "--counts"], ["duplicates"])),
], ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_no_file_is_read_twice_in_one_command(s3, name: str, command: list[str]) -> None:
    """Every object is fetched at most once per command, by one GET (no HEAD per file: a handful of
    HEADs check the table's folders), whatever the command reads: bodies, log headers, contents."""
    server, local = s3
    url = f"s3://{BUCKET}/tables/{name}"
    verdict = _run(["info", url, "--format", "json", "--engine", "local", *cli_storage_args(server.endpoint)])
    _stats(server, reset=True)
    out = _run([*command, url, "--format", "json", "--engine", "local", *cli_storage_args(server.endpoint)])
    # Every command exits with the table's verdict: case b's deleted savepoint is a warning (exit 2), as info says.
    assert out.returncode == verdict.returncode == (2 if name == "case_b" else out.returncode), out.stderr
    stats = _stats(server)
    assert stats["GET"] > 0
    # The verdict reads what the command read from the same caches: still no object twice.
    assert {k: v for k, v in stats["keys"].items() if v > 1} == {}
    # The verdict's checks also look for a leftover hoodie.properties.backup and the metadata table's
    # properties: at most two HEADs more than the command alone.
    assert stats["HEAD"] <= 5, stats["head_keys"]
    if name == "logs" and command[0] == "duplicates":
        log_files = [p for p in local["logs"].rglob(".*.log.*") if ".hoodie" not in p.parts]
        assert len(log_files) == 20
        # One GET per log file (headers and record counts from its first window), plus the timeline.
        assert sum(1 for k in stats["keys"] if ".log." in k) == len(log_files)


def test_throttling_is_retried_and_the_answer_is_complete(s3) -> None:
    server, local = s3
    url = f"s3://{BUCKET}/tables/v9_txns_simple_meta"
    urllib.request.urlopen(urllib.request.Request(
        server.endpoint + "/__config?fail=503&fail_count=2&fail_prefix=tables/v9_txns_simple_meta/.hoodie", data=b"",
        method="POST"))
    remote = _run(["timeline", url, "--format", "json", "--engine", "local", *cli_storage_args(server.endpoint)])
    here = _run(["timeline", str(local["v9_txns_simple_meta"]), "--format", "json", "--engine", "local"])
    assert remote.returncode == 0, remote.stderr
    # Inflight times are the files' modification times: on S3 the upload time (see MTIME_KEYS).
    assert without_mtimes(json.loads(remote.stdout), False) == without_mtimes(json.loads(here.stdout), False)


@pytest.mark.parametrize(("setup", "needle"), [
    ("fail=403&fail_count=50&fail_prefix=tables/case_b", "denied"),
    ("", "does not exist"),
])
def test_store_errors_are_one_readable_line(s3, setup: str, needle: str) -> None:
    server, _ = s3
    url = f"s3://{BUCKET}/tables/case_b" if setup else f"s3://no-such-bucket-{os.getpid()}/t"
    urllib.request.urlopen(urllib.request.Request(server.endpoint + "/__config?" + setup, data=b"", method="POST"))
    try:
        out = _run(["info", url, "--engine", "local", *cli_storage_args(server.endpoint)])
    finally:
        urllib.request.urlopen(urllib.request.Request(server.endpoint + "/__config?fail=0", data=b"", method="POST"))
    assert out.returncode == 1
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hudi-inspect: "), out.stderr
    assert needle in lines[0].lower()
    assert "Traceback" not in out.stderr


def test_endpoint_down_is_one_readable_line(s3) -> None:
    from bench.s3server import free_port

    # botocore's own setting for its attempts (the AWS environment): one retry of the refused connection instead
    # of four, whose random back-off (up to 1 + 2 + 4 + 8 s) made this test take 4 to 14 s.
    out = _run(["info", f"s3://{BUCKET}/tables/case_b", "--engine", "local",
                *cli_storage_args(f"http://127.0.0.1:{free_port()}")], env={"AWS_MAX_ATTEMPTS": "2"})
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hudi-inspect: "), out.stderr


def _configure(server: LoopbackS3, query: str) -> None:
    urllib.request.urlopen(urllib.request.Request(server.endpoint + "/__config?" + query, data=b"", method="POST"))


def test_reads_are_single_ranged_gets(s3) -> None:
    """A whole-file read and a range read are one GET each, with no HEAD first; an empty object and a
    range past the end read as empty (S3 answers those with 416 InvalidRange)."""
    import boto3

    from bench.s3server import ACCESS_KEY, REGION, SECRET_KEY
    from hudi_core.io.storage import ReadOnlyStorage

    server, _ = s3
    client = boto3.client("s3", endpoint_url=server.endpoint, aws_access_key_id=ACCESS_KEY,
                          aws_secret_access_key=SECRET_KEY, region_name=REGION)
    client.put_object(Bucket=BUCKET, Key="ranges/empty.commit.requested", Body=b"")
    client.put_object(Bucket=BUCKET, Key="ranges/x.log", Body=b"0123456789")
    storage = ReadOnlyStorage(f"s3://{BUCKET}/ranges", storage_options(server.endpoint))
    _stats(server, reset=True)
    assert storage.read("empty.commit.requested") == b""
    assert storage.read("x.log") == b"0123456789"
    assert storage.read_range("x.log", 3, 4) == b"3456"
    assert storage.read_range("x.log", 8, 10) == b"89"
    assert storage.read_range("x.log", 12, 4) == b""
    with pytest.raises(StorageError, match="larger than the 5-byte limit"):
        storage.read("x.log", max_bytes=5)
    stats = _stats(server)
    assert (stats["GET"], stats["HEAD"]) == (6, 0)


def test_throttling_that_never_ends_is_one_readable_line(s3) -> None:
    server, _ = s3
    _configure(server, "fail=503&fail_count=1000&fail_prefix=tables/case_b")
    try:
        # botocore's own setting for its attempts (the AWS environment): one retry inside each of s3fs's five
        # attempts instead of four, whose random back-off (up to 1 + 2 + 4 + 8 s) made this test take 4 to 13 s.
        out = _run(["timeline", f"s3://{BUCKET}/tables/case_b", "--engine", "local",
                    *cli_storage_args(server.endpoint)], env={"AWS_MAX_ATTEMPTS": "2"})
    finally:
        _configure(server, "fail=0")
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "throttl" in lines[0], out.stderr


def test_missing_credentials_is_one_readable_line(s3, tmp_path: Path) -> None:
    server, _ = s3
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
                "AWS_EC2_METADATA_DISABLED": "true", "PYTHONPATH": str(REPO)})
    out = subprocess.run([*CLI, "info", f"s3://{BUCKET}/tables/case_b", "--engine", "local",
                          "--storage-option", f"endpoint_url={server.endpoint}"],
                         capture_output=True, text=True, cwd=REPO, timeout=120, env=env)
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "no credentials found" in lines[0], out.stderr


def test_object_deleted_between_listing_and_reading(s3) -> None:
    """The listing names a replacecommit that is gone when its body is read (NoSuchKey): the answer
    says which file it could not read and is incomplete (exit 1), never a silent change."""
    server, local = s3
    hoodie = local["case_b"] / ".hoodie"
    victim = sorted(p.name for p in hoodie.iterdir() if p.name.endswith(".replacecommit"))[0]
    url = f"s3://{BUCKET}/tables/case_b"
    _configure(server, f"fail=404&fail_count=1000&fail_prefix=tables/case_b/.hoodie/{victim}")
    try:
        out = _run(["plan-clean", url, "--format", "json", "--engine", "local", "--no-verdict",
                    *cli_storage_args(server.endpoint)])
    finally:
        _configure(server, "fail=0")
    assert out.returncode == 1, out.stderr  # the plan's own answer (with the verdict: case b's warning, 2)
    assert "Traceback" not in out.stderr and "unexpected" not in out.stderr
    plan = json.loads(out.stdout)
    assert plan["incomplete"] is True
    assert any(f["path"].endswith(victim) and "does not exist" in f["message"] for f in plan["findings"])
    assert any(m["path"].endswith(victim) for m in plan["missing_inputs"])


def test_obstore_listing_is_used_and_lists_as_s3fs_does(s3, monkeypatch: pytest.MonkeyPatch) -> None:
    """Folder listings go through obstore (Rust) where it applies, entry for entry what s3fs lists;
    an error falls back to s3fs for good; `HUDI_INSPECTOR_FAST_S3_LIST=0` turns it off."""
    from hudi_core.io.backends import ObstoreS3Backend
    from hudi_core.io.s3_listing import S3Lister
    from hudi_core.io.storage import ReadOnlyStorage

    server, _ = s3
    url = f"s3://{BUCKET}/tables/case_b"
    fast = ReadOnlyStorage(url, storage_options(server.endpoint))
    assert isinstance(fast.backend, ObstoreS3Backend) and isinstance(fast.backend.lister, S3Lister)
    monkeypatch.setenv("HUDI_INSPECTOR_FAST_S3_LIST", "0")
    slow = ReadOnlyStorage(url, storage_options(server.endpoint))
    slow.backend.fs.invalidate_cache()  # type: ignore[attr-defined]
    assert not isinstance(slow.backend, ObstoreS3Backend)
    partition = next(i.path for i in fast.list("") if i.is_dir and i.name != ".hoodie")
    for folder in ("", ".hoodie", partition):
        assert fast.list(folder) == slow.list(folder)
        assert fast.list(folder)
    assert sorted(fast.walk_files(), key=lambda i: i.path) == sorted(slow.walk_files(), key=lambda i: i.path)
    listed = next(i for i in fast.list(".hoodie") if not i.is_dir)
    _stats(server, reset=True)
    assert fast.stat(listed.path) == listed  # from the listing: no HEAD
    assert _stats(server)["HEAD"] == 0
    # A store that refuses the listing: s3fs takes over and words the error.
    _configure(server, "fail=403&fail_count=100")  # every request, listings included
    monkeypatch.delenv("HUDI_INSPECTOR_FAST_S3_LIST")  # obstore serves the fresh storage, and fails
    try:
        fresh = ReadOnlyStorage(url, {**storage_options(server.endpoint), "token": "other-session"})
        assert isinstance(fresh.backend, ObstoreS3Backend)
        with pytest.raises(StorageError, match="access denied"):
            fresh.list(".hoodie")
        assert fresh.backend.lister is None  # type: ignore[attr-defined]
    finally:
        _configure(server, "fail=0")


def test_dashboard_pages_on_s3(s3, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`HUDI_INSPECTOR_ROOTS=s3://bucket/prefix` with the standard AWS environment: the picker finds the
    tables under the prefix, and every page renders an S3 table without an error."""
    server, _ = s3
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_ENDPOINT_URL": server.endpoint, "AWS_REGION": "us-east-1",
                       "HUDI_INSPECTOR_ROOTS": f"s3://{BUCKET}/tables",
                       "HUDI_INSPECTOR_CACHE": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(key, value)
    url = f"s3://{BUCKET}/tables/case_b"
    at = overview_after_looking_for_tables(url)
    labels = {b.label for b in at.sidebar.button}
    assert {"v9_txns_simple_meta", "v6_trips_8i1u", "case_b", "logs"} <= labels
    glance = next(str(md.value) for md in at.markdown if str(md.value).startswith("**At a glance**"))
    assert "recorded ECTR `20240101000700000`" in glance
    assert_pages_render(url)


def test_obstore_served_commands_never_load_s3fs(s3) -> None:
    """Where obstore serves the bucket, `info` and `timeline` open, stat, list and read with it
    alone: s3fs and botocore (half a second of imports) are never loaded, and the answers are the
    ones every other test compares with local disk."""
    server, _ = s3
    url = f"s3://{BUCKET}/tables/v9_txns_simple_meta"
    probe = ("import sys; from hudi_core.cli import main; code = main(sys.argv[1:]); "
             "print(sorted(m for m in ('s3fs', 'botocore', 'aiobotocore') if m in sys.modules), file=sys.stderr)")
    for command in ("info", "timeline"):
        proc = subprocess.run([sys.executable, "-c", probe, command, url, "--format", "json",
                               *cli_storage_args(server.endpoint)], capture_output=True, text=True, cwd=REPO,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.strip().splitlines()[-1] == "[]"
        assert json.loads(proc.stdout)


def test_missing_table_on_s3_is_a_readable_error_without_s3fs_needed(s3) -> None:
    """obstore answers "no such object / no objects under it" itself; the table error is the same line."""
    server, _ = s3
    proc = _run(["info", f"s3://{BUCKET}/tables/no_such_table", *cli_storage_args(server.endpoint)])
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"hudi-inspect: s3://{BUCKET}/tables/no_such_table does not exist"


def test_listing_index_on_s3(s3, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The metadata table's files partition read on S3 is kept (keyed by the listing's sizes and times, no local
    version key) and read back the same; the same listing as the local copy's."""
    from hudi_core.table.listing import metadata_index
    from hudi_core.table.listing.metadata import MetadataTableListing

    fresh_index(monkeypatch, tmp_path / "index", LISTING_SWITCH_ENV, LISTING_MIN_FILES_ENV)
    monkeypatch.setattr(metadata_index, "SETTLE_MS", 0)  # uploaded a moment ago: settled for the test
    server, local = s3
    url = f"s3://{BUCKET}/tables/v9_txns_simple_meta"

    def facts(uri: str, options: dict | None = None) -> tuple:
        source = open_table(uri, options).metadata_listing()
        assert source is not None
        read = source.read()
        return (read.partitions, {p: [(f.name, f.size) for f in read.files_of(p)] for p in read.partitions},
                read.blocks, read.findings)

    first = facts(url, storage_options(server.endpoint))
    assert first[0] and not first[3]
    assert len(list((tmp_path / "index").glob("*.arrow"))) == 1

    def refuse(*_: object) -> None:
        raise AssertionError("decoded although kept")

    with monkeypatch.context() as patched:
        patched.setattr(MetadataTableListing, "_merged", refuse)
        assert facts(url, storage_options(server.endpoint)) == first
    here = facts(str(local["v9_txns_simple_meta"]))
    assert here[:2] == first[:2]
