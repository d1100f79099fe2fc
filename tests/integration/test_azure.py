"""Tables on Azure Blob / ADLS (`abfs://`, through adlfs, the `.[azure]` extra) against Azurite, Microsoft's
storage emulator, on a free 127.0.0.1 port.

Azurite comes from the npm registry (pinned, installed on first use into the inspector's cache folder, never
into the repository); without node/npm the tests skip and say so. Every command must answer on `abfs://`
exactly as on local disk (layout-1 completion times excepted: they come from the blob's upload time), and a
store error must be one readable line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from object_stores import BACKEND_COMMANDS, assert_one_line_error, assert_same_answer, run_cli, upload_tables

from bench.s3server import free_port, stop_process, wait_for_port

AZURITE_VERSION = "3.35.0"
AZURITE_DIR = Path(os.environ.get("HUDI_INSPECTOR_AZURITE_DIR", Path.home() / ".cache" / "hudi-inspector" / "azurite"))
#: Azurite's documented development account and key (public, emulator only).
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CONTAINER = "warehouse"
TABLES = ("v9_txns_simple_meta", "v6_simplekeygen_nonhivestyle_overwritetable")


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
        wait_for_port(proc, port, "Azurite")
        service = BlobServiceClient.from_connection_string(connection_string(endpoint))
        container = service.create_container(CONTAINER)
        local = upload_tables(table_path, TABLES, container.upload_blob)
        yield endpoint, local
    finally:
        stop_process(proc)
        shutil.rmtree(data, ignore_errors=True)


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("command", BACKEND_COMMANDS, ids=" ".join)
def test_every_command_answers_the_same_on_azure_as_on_local_disk(azure, name: str, command: list[str]) -> None:
    endpoint, local = azure
    assert_same_answer(command, f"abfs://{CONTAINER}/tables/{name}", local[name],
                       ["--storage-option", f"connection_string={connection_string(endpoint)}"],
                       layout_1=name.startswith("v6_"))


def test_azure_errors_are_one_readable_line(azure) -> None:
    endpoint, _ = azure
    wrong_key = connection_string(endpoint, key="d3Jvbmcta2V5" * 4)
    cases = ((f"abfs://{CONTAINER}/tables/{TABLES[0]}", wrong_key, "access denied"),
             (f"abfs://no-such-container/tables/{TABLES[0]}", connection_string(endpoint), "does not exist"))
    for url, conn, needle in cases:
        assert_one_line_error(run_cli(["info", url, "--storage-option", f"connection_string={conn}"]), needle)
