"""Tables on Azure Blob / ADLS (`abfs://`, through adlfs, the `.[azure]` extra) against Azurite, Microsoft's
storage emulator, on a free 127.0.0.1 port (issue 12).

Azurite comes from the npm registry (pinned, installed on first use into the inspector's cache folder, never
into the repository); without node/npm the tests skip and say so. Every command must answer on `abfs://`
exactly as on local disk (layout-1 completion times excepted: they come from the blob's upload time), and a
store error must be one readable line.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.s3server import free_port

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "hudi_core"]
AZURITE_VERSION = "3.35.0"
AZURITE_DIR = Path(os.environ.get("HUDI_INSPECTOR_AZURITE_DIR", Path.home() / ".cache" / "hudi-inspector" / "azurite"))
#: Azurite's documented development account and key (public, emulator only).
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CONTAINER = "warehouse"
TABLES = ("v9_txns_simple_meta", "v6_simplekeygen_nonhivestyle_overwritetable")
COMMANDS = (["info"], ["timeline"], ["timeline", "--all"], ["fsview"], ["markers"], ["plan-clean"],
            ["plan-archive"], ["log-blocks"], ["duplicates"], ["archive"])


def _azurite() -> Path | None:
    binary = AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob"
    if binary.exists():
        return binary
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        return None
    AZURITE_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(AZURITE_DIR),
                    f"azurite@{AZURITE_VERSION}"], capture_output=True, timeout=600, check=False)
    return binary if binary.exists() else None


def connection_string(endpoint: str, key: str = KEY) -> str:
    return (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={key};"
            f"BlobEndpoint={endpoint}/{ACCOUNT};")


@pytest.fixture(scope="module")
def azure(table_path) -> Iterator[tuple[str, dict[str, Path]]]:  # type: ignore[no-untyped-def]
    pytest.importorskip("adlfs", reason="adlfs (the .[azure] extra, in requirements-dev.txt) is not installed")
    from azure.storage.blob import BlobServiceClient

    binary = _azurite()
    if binary is None:
        pytest.skip("Azurite needs node and npm (npm install azurite): not available here")
    port = free_port()
    data = tempfile.mkdtemp(prefix="hti-azurite-")
    proc = subprocess.Popen([str(binary), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", data,
                             "--silent", "--skipApiVersionCheck", "--disableTelemetry"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Azurite did not start (exit {proc.poll()})")
                time.sleep(0.2)
        service = BlobServiceClient.from_connection_string(connection_string(endpoint))
        container = service.create_container(CONTAINER)
        local: dict[str, Path] = {}
        for name in TABLES:
            local[name] = root = table_path(name)
            for folder, _dirs, names in os.walk(root):
                for file_name in names:
                    path = Path(folder) / file_name
                    container.upload_blob(f"tables/{name}/{path.relative_to(root).as_posix()}", path.read_bytes())
        yield endpoint, local
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data, ignore_errors=True)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=REPO, timeout=300)


def _without_completion(value: object) -> object:
    if isinstance(value, list):
        return [_without_completion(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_completion(v) for k, v in value.items() if k not in ("completion_time",
                                                                                  "completion_time_source")}
    return value


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_answers_the_same_on_azure_as_on_local_disk(azure, name: str, command: list[str]) -> None:
    endpoint, local = azure
    url = f"abfs://{CONTAINER}/tables/{name}"
    remote = _run([*command, url, "--format", "json", "--engine", "local",
                   "--storage-option", f"connection_string={connection_string(endpoint)}"])
    here = _run([*command, str(local[name]), "--format", "json", "--engine", "local"])
    assert remote.returncode == here.returncode, remote.stderr
    assert "Traceback" not in remote.stderr
    got, want = remote.stdout.replace(url, "<T>"), here.stdout.replace(str(local[name]), "<T>")
    assert remote.stdout.strip()
    if name.startswith("v6_"):
        # Layout 1 takes a completion time from the file's modification time: on Azure that is the upload time.
        got, want = _without_completion(json.loads(got)), _without_completion(json.loads(want))
    assert got == want


def test_azure_errors_are_one_readable_line(azure) -> None:
    endpoint, _ = azure
    wrong_key = connection_string(endpoint, key="d3Jvbmcta2V5" * 4)
    cases = ((f"abfs://{CONTAINER}/tables/{TABLES[0]}", wrong_key, "access denied"),
             (f"abfs://no-such-container/tables/{TABLES[0]}", connection_string(endpoint), "does not exist"))
    for url, conn, needle in cases:
        proc = _run(["info", url, "--storage-option", f"connection_string={conn}"])
        assert proc.returncode == 1
        assert "Traceback" not in proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hudi-inspect: ") and needle in lines[0], proc.stderr
