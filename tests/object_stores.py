"""What the object-store tests (S3, GCS, Azure) share: running the CLI as a process, comparing a remote
answer with the same table's answer on local disk, the one-line error contract, and the dashboard's pages
rendering a remote table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from hudi_core.dashboard import PAGES_DIR

if TYPE_CHECKING:
    import pyarrow as pa

REPO = Path(__file__).resolve().parent.parent
#: The dashboard's entry script, shipped in the package (its `pages/` beside it, the paths PAGES are relative to).
DASHBOARD_APP = REPO / "hudi_core" / "dashboard" / "app.py"
CLI = [sys.executable, "-m", "hudi_core"]
#: What another fsspec backend (GCS, Azure) must answer as local disk does: the timeline listed and read (active
#: and archived), partitions listed, log files read by ranges. The whole command matrix runs once, against S3
#: (tests/integration/test_s3.py); the commands above the reading layer do not depend on the store.
BACKEND_COMMANDS = (["timeline", "--all"], ["fsview"], ["log-blocks"])
PAGES = (str(PAGES_DIR / "2_instant.py"), str(PAGES_DIR / "3_cleaner.py"), str(PAGES_DIR / "4_file-groups.py"),
         str(PAGES_DIR / "5_log-blocks.py"))


def upload_tables(table_path: Callable[[str], Path], names: Iterable[str],
                  put: Callable[[str, bytes], object]) -> dict[str, Path]:
    """Put every file of each fixture table under `tables/<name>/` with `put(key, data)`, one after another;
    the local copies by name."""
    local: dict[str, Path] = {}
    for name in names:
        local[name] = root = table_path(name)
        for folder, _dirs, files in os.walk(root):
            for file_name in files:
                path = Path(folder) / file_name
                put(f"tables/{name}/{path.relative_to(root).as_posix()}", path.read_bytes())
    return local


def run_cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=REPO, timeout=300)


#: Keys taken from a timeline file's modification time in every layout (the inflight time and the
#: phases around it); on an object store that is the upload time.
MTIME_KEYS = ("inflight_time", "requested_to_inflight_ms", "inflight_to_completed_ms")
#: Keys layout 1 also takes from modification times: completion times and the durations up to them.
LAYOUT_1_MTIME_KEYS = ("completion_time", "completion_time_source", "duration_ms", "mdt_duration_ms")


def without_mtimes(value: object, layout_1: bool) -> object:
    """A JSON answer without what the files' modification times give (see :data:`MTIME_KEYS`)."""
    drop = MTIME_KEYS + (LAYOUT_1_MTIME_KEYS if layout_1 else ())
    if isinstance(value, list):
        return [without_mtimes(v, layout_1) for v in value]
    if isinstance(value, dict):
        return {k: without_mtimes(v, layout_1) for k, v in value.items() if k not in drop}
    return value


def comparable_columns(table: pa.Table) -> pa.Table:
    """An Arrow listing without what differs between a remote table and its local copy by nature: paths and
    URIs, and the columns taken from modification times in every layout (:data:`MTIME_KEYS`)."""
    return table.drop_columns([c for c in table.column_names if "path" in c or "uri" in c or c in MTIME_KEYS])


def assert_same_answer(command: list[str], url: str, local: Path, store_args: list[str], layout_1: bool) -> None:
    """`command` on the remote `url` answers exactly as on the local copy of the table (for a layout-1
    table, completion times aside), the metadata-table listing checked against storage on both."""
    # The metadata-table listing is checked against storage on both sides (by default only on local disk). The
    # command's own answer and code: the table's verdict is compared through `info`, which prints it.
    remote = run_cli([*command, url, "--format", "json", "--engine", "local", "--storage-check", "--no-verdict",
                      *store_args])
    here = run_cli([*command, str(local), "--format", "json", "--engine", "local", "--storage-check", "--no-verdict"])
    assert remote.returncode == here.returncode, remote.stderr
    assert "Traceback" not in remote.stderr
    assert remote.stdout.strip()
    got, want = remote.stdout.replace(url, "<T>"), here.stdout.replace(str(local), "<T>")
    assert without_mtimes(json.loads(got), layout_1) == without_mtimes(json.loads(want), layout_1)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    """Exit 1 with exactly one `hudi-inspect: ...` line on stderr that contains `needle`, never a traceback."""
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hudi-inspect: ") and needle in lines[0], proc.stderr


def overview_after_looking_for_tables(url: str) -> object:
    """The dashboard opened on `url` (no exception, no error box), after the picker's "Look for tables":
    the AppTest, whose sidebar buttons then name the tables found under the allowed roots."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=120)
    at.query_params["table"] = url
    at.run()
    assert not at.exception and not at.error, [*at.exception, *at.error]
    assert at.query_params["table"] == url
    at.sidebar.button[[b.label for b in at.sidebar.button].index("Look for tables")].click().run()
    return at


def assert_pages_render(url: str) -> None:
    """Every page beyond the overview renders the table at `url` without an exception or error box."""
    from streamlit.testing.v1 import AppTest

    for page in PAGES:
        at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=120)
        at.query_params["table"] = url
        at.run()
        at.switch_page(page).run()
        assert not at.exception and not at.error, (page, [*at.exception, *at.error])
