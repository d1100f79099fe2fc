"""Tables on Google Cloud Storage (`gs://`, through gcsfs, the `.[gcs]` extra) against gcp-storage-emulator, a
GCS JSON-API emulator from PyPI, on a free 127.0.0.1 port.

Every command must answer on `gs://` exactly as on local disk (layout-1 completion times excepted: they come
from the object's upload time), and a store error must be one readable line.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from object_stores import (
    BACKEND_COMMANDS,
    assert_one_line_error,
    assert_pages_render,
    assert_same_answer,
    comparable_columns,
    overview_after_looking_for_tables,
    run_cli,
    upload_tables,
)

from bench.s3server import free_port, stop_process, wait_for_port

REPO = Path(__file__).resolve().parents[2]

BUCKET = "warehouse"
TABLES = ("v9_txns_simple_meta", "v6_simplekeygen_nonhivestyle_overwritetable")


def _options(endpoint: str) -> list[str]:
    return ["--storage-option", f"endpoint_url={endpoint}", "--storage-option", "token=anon",
            "--storage-option", "project=hudi-inspector-test"]


@pytest.fixture(scope="module")
def gcs(table_path) -> Iterator[tuple[str, dict[str, Path]]]:  # type: ignore[no-untyped-def]
    pytest.importorskip("gcsfs", reason="gcsfs (the .[gcs] extra, in requirements-dev.txt) is not installed")
    emulator = shutil.which("gcp-storage-emulator", path=str(Path(sys.executable).parent)) or shutil.which(
        "gcp-storage-emulator")
    if emulator is None:
        pytest.fail("gcp-storage-emulator (requirements-dev.txt) is not installed")
    from gcsfs.core import GCSFileSystem

    port = free_port()
    proc = subprocess.Popen([emulator, "start", "--host", "127.0.0.1", "--port", str(port), "--in-memory",
                             "--default-bucket", BUCKET, "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(proc, port, "gcp-storage-emulator")
        fs = GCSFileSystem(endpoint_url=endpoint, token="anon", project="hudi-inspector-test")
        # One at a time: the emulator answers concurrent uploads slowly (56 s for 284 small files, against
        # 3.7 s one after another).
        local = upload_tables(table_path, TABLES, lambda key, data: fs.pipe_file(f"{BUCKET}/{key}", data))
        yield endpoint, local
    finally:
        stop_process(proc)


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("command", BACKEND_COMMANDS, ids=" ".join)
def test_every_command_answers_the_same_on_gcs_as_on_local_disk(gcs, name: str, command: list[str]) -> None:
    endpoint, local = gcs
    assert_same_answer(command, f"gs://{BUCKET}/tables/{name}", local[name], _options(endpoint),
                       layout_1=name.startswith("v6_"))


def test_arrow_api_on_gcs_matches_local(gcs) -> None:
    from hudi_core import TableInspector, open_table

    endpoint, local = gcs
    options = {"endpoint_url": endpoint, "token": "anon", "project": "hudi-inspector-test"}
    remote = open_table(f"gs://{BUCKET}/tables/{TABLES[0]}", options)
    here = open_table(str(local[TABLES[0]]))
    for name in ("instants", "file_slices"):
        got, want = getattr(TableInspector(remote), name)(), getattr(TableInspector(here), name)()
        assert got.num_rows == want.num_rows > 0
        assert comparable_columns(got).equals(comparable_columns(want))


#: `python -m hudi_core` with gcsfs's back-off between two attempts cut to a hundredth (1 s, 2 s, ... 16 s and a
#: random second each become 10-170 ms): the same six attempts, the same retry log records with their tracebacks
#: and the same final error, without ~33 s of sleeping. gcsfs takes no setting for its retries (a class-level
#: decorator argument), so the pause is shortened where gcsfs looks it up, in this process only.
QUICK_RETRY_CLI = [sys.executable, "-c",
                   "import asyncio, runpy, types\n"
                   "import gcsfs.retry\n"
                   "gcsfs.retry.asyncio = types.SimpleNamespace(sleep=lambda s: asyncio.sleep(s / 100))\n"
                   "runpy.run_module('hudi_core', run_name='__main__', alter_sys=True)\n"]


def test_gcs_errors_are_one_readable_line(gcs) -> None:
    """A missing bucket, a missing table and an endpoint that is down: one line each, exit 1, no traceback
    (gcsfs logs its retries with tracebacks; the CLI keeps library logging quiet)."""
    endpoint, _ = gcs
    cases = ((f"gs://no-such-bucket/tables/{TABLES[0]}", endpoint, "does not exist"),
             (f"gs://{BUCKET}/tables/no_such_table", endpoint, "does not exist"))
    for url, at, needle in cases:
        assert_one_line_error(run_cli(["info", url, *_options(at)]), needle)
    down = subprocess.run([*QUICK_RETRY_CLI, "info", f"gs://{BUCKET}/tables/{TABLES[0]}",
                           *_options(f"http://127.0.0.1:{free_port()}")],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert_one_line_error(down, "cannot reach the storage endpoint")


def test_dashboard_pages_on_gcs(gcs, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`HUDI_INSPECTOR_ROOTS=gs://bucket/prefix` with the emulator named the standard way
    (`STORAGE_EMULATOR_HOST`): the picker finds the tables, and every page renders a GCS table."""
    endpoint, _ = gcs
    for key, value in {"STORAGE_EMULATOR_HOST": endpoint, "HUDI_INSPECTOR_ROOTS": f"gs://{BUCKET}/tables",
                       "HUDI_INSPECTOR_CACHE": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(key, value)
    url = f"gs://{BUCKET}/tables/{TABLES[0]}"
    at = overview_after_looking_for_tables(url)
    assert set(TABLES) <= {b.label for b in at.sidebar.button}
    assert_pages_render(url)
