"""`hudi-inspect ui`: the packaged dashboard started by the CLI on given tables and roots.

The real command runs as a subprocess on a free port, from a folder that is not the checkout: it prints its
URL once Streamlit answers, listens on 127.0.0.1 only (read from `/proc/net/tcp`, and a connection through
the machine's non-loopback address is refused), opens on the table given (or the tables under the root
given), refuses a path outside them in the page, warns when `--host` exposes it, and stops on SIGINT /
SIGTERM with exit 0 and one line. A wheel built from the checkout holds the dashboard (entry script and
every page), and installed from that wheel the command serves it from any folder. Tables are built with the
scenario builder (no fixtures needed); browser tests drive Debian's Chromium with Playwright and skip with a
reason when either is missing.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hudi_core.cli import build_parser
from hudi_core.cli.ui import browse_host, dashboard_url, is_loopback, resolve_paths
from hudi_core.dashboard import PAGE_FILES
from hudi_core.errors import HudiInspectError

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_CANDIDATES = [os.environ.get("CHROMIUM_PATH", ""), "/usr/bin/chromium", "/usr/bin/chromium-browser"]
ERROR_SELECTORS = ['[data-testid="stException"]', '[data-testid="stAlertContentError"]']
IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
STOP_LINE = "hudi-inspect: dashboard stopped ({})"


# -- without a server ------------------------------------------------------------------------------------

def test_building_the_parser_imports_no_streamlit() -> None:
    """`ui` is registered with the other commands; the parser (`--help`) loads neither Streamlit nor the
    dashboard's packages."""
    code = ("import sys; from hudi_core.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('streamlit', 'tornado', 'hudi_core.dashboard', 'hudi_core.dashboard', 'pyarrow', "
            "'fsspec') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    args = build_parser().parse_args(["ui", "t1", "s3://b/w", "--port", "9000", "--host", "0.0.0.0",
                                      "--storage-option", "anon=true"])
    assert (args.paths, args.port, args.host, args.storage_option) == (["t1", "s3://b/w"], 9000, "0.0.0.0",
                                                                     ["anon=true"])
    defaults = build_parser().parse_args(["ui"])
    assert (defaults.paths, defaults.port, defaults.host) == ([], 8501, "127.0.0.1")


def test_loopback_and_urls() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("[::1]") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("192.0.2.7")
    assert not is_loopback("no-such-host.invalid")
    assert browse_host("0.0.0.0") == "127.0.0.1" and browse_host("::") == "[::1]" and browse_host("::1") == "[::1]"
    assert dashboard_url("127.0.0.1", 8501, "/data/t 1", True) == "http://127.0.0.1:8501/?table=/data/t%201"
    assert dashboard_url("0.0.0.0", 9, "s3://b/w", False) == "http://127.0.0.1:9/?root=s3://b/w"
    assert dashboard_url("127.0.0.1", 8501, None, False) == "http://127.0.0.1:8501/"


def test_allowed_host_names() -> None:
    from hudi_core.cli.ui import allowed_hosts, streamlit_argv

    assert allowed_hosts("127.0.0.1", None) == ["localhost", "127.0.0.1", "::1"]
    assert allowed_hosts("127.0.0.1", ["inspector.example.com", "localhost"]) == [
        "localhost", "127.0.0.1", "::1", "inspector.example.com"]
    assert allowed_hosts("0.0.0.0", None) == []  # exposed on purpose: any name
    assert allowed_hosts("0.0.0.0", ["inspector.example.com"])[-1] == "inspector.example.com"
    argv = streamlit_argv("127.0.0.1", 8501, ["localhost", "a.example"])
    assert argv[1:3] == ["-m", "hudi_core.dashboard.serve"]
    assert argv[3:7] == ["--server.allowedHosts", "localhost", "--server.allowedHosts", "a.example"]


def test_paths_become_roots(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert resolve_paths([str(tmp_path / "link"), "s3://bucket/warehouse/", f"file://{tmp_path}/real"]) == [
        str((tmp_path / "real").resolve()), "s3://bucket/warehouse", str((tmp_path / "real").resolve())]
    with pytest.raises(HudiInspectError, match="no such folder"):
        resolve_paths([str(tmp_path / "missing")])
    with pytest.raises(HudiInspectError, match="comma"):
        resolve_paths(["s3://bucket/a,b"])


def test_storage_options_reach_the_dashboards_loaders(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--storage-option K=V` travels as HUDI_INSPECTOR_STORAGE_OPTIONS (JSON) to the Streamlit process, whose
    loaders open URL tables and roots with it (local paths take none)."""
    from hudi_core.cli.ui import child_env
    from hudi_core.dashboard.roots import STORAGE_OPTIONS_ENV, storage_options_for

    env = child_env(["s3://b/w"], {"endpoint_url": "http://127.0.0.1:9000", "key": "k"})
    assert env["HUDI_INSPECTOR_ROOTS"] == "s3://b/w"
    monkeypatch.setenv(STORAGE_OPTIONS_ENV, env[STORAGE_OPTIONS_ENV])
    assert storage_options_for("s3://b/w/t") == {"endpoint_url": "http://127.0.0.1:9000", "key": "k"}
    assert storage_options_for("/data/t") is None
    monkeypatch.setenv(STORAGE_OPTIONS_ENV, '{"key": "secret-value"')
    with pytest.raises(HudiInspectError, match="not valid JSON") as bad:
        storage_options_for("s3://b/w/t")
    assert "secret-value" not in str(bad.value)
    monkeypatch.setenv(STORAGE_OPTIONS_ENV, '{"retries": 3}')
    with pytest.raises(HudiInspectError, match="JSON object of strings"):
        storage_options_for("s3://b/w/t")


# -- the command as a process ------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class UiProcess:
    """`python -m hudi_core ui ...` running: its printed URL, its stderr, and how to stop it."""

    def __init__(self, proc: subprocess.Popen[str], port: int) -> None:
        self.proc, self.port = proc, port
        self.lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self.stderr: list[str] = []
        self.stdout: list[str] = []
        for name, stream in (("out", proc.stdout), ("err", proc.stderr)):
            threading.Thread(target=self._pump, args=(name, stream), daemon=True).start()

    def _pump(self, name: str, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            (self.stdout if name == "out" else self.stderr).append(line.rstrip("\n"))
            self.lines.put((name, line.rstrip("\n")))

    def wait_for_url(self, timeout_s: float = 90) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                name, line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if name == "out" and line.startswith("hudi-inspect: dashboard on "):
                return line.removeprefix("hudi-inspect: dashboard on ").split(" ", 1)[0]
        raise AssertionError(f"no URL printed (exit {self.proc.poll()}): {self.stdout} {self.stderr}")

    def stop(self, signum: int = signal.SIGINT, timeout_s: float = 30) -> int:
        self.proc.send_signal(signum)
        code = self.proc.wait(timeout=timeout_s)
        time.sleep(0.2)  # the pump threads read the last lines
        return code


@contextmanager
def ui_command(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> Iterator[UiProcess]:
    """Start `hudi-inspect ui ARGS --port P` from a folder outside the checkout; kill it if a test left it."""
    port = _free_port()
    cwd = tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    # No ambient AWS configuration: an s3:// table is reached through --storage-option alone.
    base = {k: v for k, v in os.environ.items() if k != "HUDI_INSPECTOR_ROOTS" and not k.startswith("AWS_")}
    base.update({"HUDI_INSPECTOR_CACHE": str(tmp_path / "cache"), "AWS_EC2_METADATA_DISABLED": "true",
                 "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
                 "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials")})
    proc = subprocess.Popen([sys.executable, "-m", "hudi_core", "ui", *args, "--port", str(port)], cwd=cwd,
                            env={**base, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ui = UiProcess(proc, port)
    try:
        yield ui
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _decode_address(hex_addr: str) -> str:
    raw = bytes.fromhex(hex_addr)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    return socket.inet_ntop(socket.AF_INET6, b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4)))


def listening_addresses(port: int) -> list[str] | None:
    """The local addresses of the TCP sockets listening on `port` (`/proc/net/tcp` and `tcp6`); ``None``
    where /proc cannot be read."""
    found: list[str] = []
    readable = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        readable = True
        for row in rows:
            fields = row.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
                found.append(_decode_address(address))
    return sorted(found) if readable else None


def outward_address() -> str | None:
    """This machine's address on its default route (a UDP "connection" sends nothing), if not loopback."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            address = str(s.getsockname()[0])
    except OSError:
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def _health(port: int, host: str = "127.0.0.1") -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://{host}:{port}/_stcore/health", timeout=2) as response:
            return bool(response.read().strip() == b"ok")
    except OSError:
        return False


def assert_stopped_cleanly(ui: UiProcess, code: int, signame: str) -> None:
    """Exit 0, exactly one line on stderr (no traceback, nothing from Streamlit), the server gone."""
    assert code == 0, ui.stderr
    assert ui.stderr == [STOP_LINE.format(signame)], ui.stderr
    assert not _health(ui.port)
    assert listening_addresses(ui.port) in ([], None)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A root folder with two built tables (HUDI-7779 case b, full and up to step 5), one table outside it."""
    from hudi_core.scenarios.build import build_scenario
    from hudi_core.scenarios.builtin import load_builtin

    base = tmp_path_factory.mktemp("ui-tables")
    scenario = load_builtin("hudi7779_case_b")
    out = {"root": base / "warehouse", "one": base / "warehouse" / "team_a" / "case_b",
           "two": base / "warehouse" / "case_b_early", "outside": base / "elsewhere" / "case_b"}
    build_scenario(scenario, out["one"], 9)
    build_scenario(scenario, out["two"], 9, upto_step=5)
    build_scenario(scenario, out["outside"], 9)
    return {k: v.resolve() for k, v in out.items()}


def _chromium() -> str | None:
    for candidate in CHROMIUM_CANDIDATES:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("chromium")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    path = _chromium()
    if path is None:
        pytest.skip("no Chromium binary (install Debian's chromium, or set CHROMIUM_PATH)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=path, headless=True,
                                      args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            yield chromium
        finally:
            chromium.close()


def _open(browser: object, url: str, ready: str) -> object:
    page = browser.new_context(viewport={"width": 1400, "height": 1400}).new_page()  # type: ignore[attr-defined]
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector(ready, timeout=120_000)
    page.wait_for_function(IDLE, timeout=120_000)
    page.wait_for_timeout(300)
    return page


def _errors(page: object) -> list[str]:
    return [e.inner_text()[:300] for selector in ERROR_SELECTORS
            for e in page.locator(selector).all()]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_ui_on_a_table_opens_it_on_loopback_only(tables: dict[str, Path], browser: object, tmp_path: Path) -> None:
    table = tables["one"]
    with ui_command([str(table)], tmp_path) as ui:
        url = ui.wait_for_url()
        assert url == f"http://127.0.0.1:{ui.port}/?table={urllib.parse.quote(str(table), safe='/:')}"
        assert ui.stdout == [f"hudi-inspect: dashboard on {url} (Ctrl-C stops it)"]
        assert ui.stderr == []
        # Loopback only: the one listening socket is 127.0.0.1's; the machine's own address is refused.
        assert listening_addresses(ui.port) in (["127.0.0.1"], None)
        outward = outward_address()
        if outward is not None:
            with pytest.raises(OSError), socket.create_connection((outward, ui.port), timeout=3):
                pass
        page = _open(browser, url, '[data-testid="stPlotlyChart"]')
        assert page.locator("h1").first.inner_text() == "hudi7779_case_b"  # the Overview of that table
        main = page.locator('[data-testid="stMain"]').inner_text()
        assert "At a glance" in main and str(table) in main
        sidebar = page.locator('[data-testid="stSidebar"]')
        assert sidebar.locator("input").first.input_value() == str(table)
        assert f"Allowed roots: {table}," in sidebar.inner_text().replace("\n", " ")
        assert _errors(page) == []
        # A table outside the roots given is refused in the page (the open table stays).
        sidebar.locator("input").first.fill(str(tables["outside"]))
        sidebar.get_by_test_id("stBaseButton-secondaryFormSubmit").click()
        page.wait_for_selector('[data-testid="stSidebar"] [data-testid="stAlertContentError"]', timeout=60_000)
        refusal = sidebar.locator('[data-testid="stAlertContentError"]').first.inner_text()
        assert f"{tables['outside']} is outside the allowed roots" in refusal
        assert page.locator("h1").first.inner_text() == "hudi7779_case_b"
        # Ctrl-C: Streamlit stops, exit 0, one line.
        assert_stopped_cleanly(ui, ui.stop(signal.SIGINT), "SIGINT")


@pytest.mark.slow
def test_ui_on_a_root_lists_its_tables(tables: dict[str, Path], browser: object, tmp_path: Path) -> None:
    root = tables["root"]
    with ui_command([str(root), str(tables["outside"])], tmp_path) as ui:
        url = ui.wait_for_url()
        assert url == f"http://127.0.0.1:{ui.port}/?root={root}"
        page = _open(browser, url, '[data-testid="stButton"]')
        assert page.locator("h1").first.inner_text() == "Tables"
        main = page.locator('[data-testid="stMain"]')
        assert f"{root}: 2 table(s)" in main.inner_text()
        labels = sorted(b.inner_text() for b in main.locator('[data-testid="stButton"]').all())
        assert labels == ["case_b_early", "team_a/case_b"]
        assert _errors(page) == []
        main.get_by_role("button", name="case_b_early").click()
        page.wait_for_selector('[data-testid="stPlotlyChart"]', timeout=120_000)
        page.wait_for_function(IDLE, timeout=120_000)
        assert page.locator("h1").first.inner_text() == "hudi7779_case_b"
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
        assert query["table"] == [str(tables["two"])] and "root" not in query
        assert _errors(page) == []
        assert_stopped_cleanly(ui, ui.stop(signal.SIGTERM), "SIGTERM")


@pytest.mark.slow
def test_ui_on_s3_with_storage_options(tables: dict[str, Path], browser: object, tmp_path: Path) -> None:
    """`--storage-option` reaches the dashboard: a table on the loopback S3 server (moto), whose endpoint and
    keys are given only as options, opens on its Overview."""
    pytest.importorskip("moto", reason="moto (the loopback S3 server) is not installed")
    import logging

    from bench.s3server import LoopbackS3, cli_storage_args, upload_tree

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = LoopbackS3().start()
    try:
        assert upload_tree(server.endpoint, str(tables["one"]), "warehouse", "tables/case_b") > 0
        url_table = "s3://warehouse/tables/case_b"
        with ui_command([url_table, *cli_storage_args(server.endpoint)], tmp_path) as ui:
            url = ui.wait_for_url()
            assert url == f"http://127.0.0.1:{ui.port}/?table={url_table}"
            page = _open(browser, url, '[data-testid="stPlotlyChart"]')
            assert page.locator("h1").first.inner_text() == "hudi7779_case_b"
            assert url_table in page.locator('[data-testid="stMain"]').inner_text()
            assert _errors(page) == []
            assert_stopped_cleanly(ui, ui.stop(signal.SIGINT), "SIGINT")
    finally:
        server.stop()


@pytest.mark.slow
def test_ui_deep_link_on_a_fresh_server(tables: dict[str, Path], browser: object, tmp_path: Path) -> None:
    """The packaged entry script has its `pages/` beside it (Streamlit's first run the old pages-directory
    way): a link to a page as the server's first request opens that page with the sidebar and the table."""
    table = str(tables["one"])
    with ui_command([table], tmp_path) as ui:
        ui.wait_for_url()
        page = _open(browser, f"http://127.0.0.1:{ui.port}/cleaner?table={urllib.parse.quote(table)}",
                     '[data-testid="stPlotlyChart"]')
        assert page.locator("text=Page not found").count() == 0
        assert page.locator("h1").first.inner_text() == "Cleaner & archival dry-run"
        assert page.url.split("?")[0].endswith("/cleaner")
        assert page.locator('[data-testid="stSidebar"] input').first.input_value() == table
        assert _errors(page) == []
        assert_stopped_cleanly(ui, ui.stop(signal.SIGINT), "SIGINT")


@pytest.mark.slow
def test_ui_on_every_interface_warns(tables: dict[str, Path], tmp_path: Path) -> None:
    """`--host 0.0.0.0` is explicit and says on stderr that the dashboard has no authentication."""
    with ui_command([str(tables["one"]), "--host", "0.0.0.0"], tmp_path) as ui:
        url = ui.wait_for_url()
        assert url.startswith(f"http://127.0.0.1:{ui.port}/?table=")
        assert len(ui.stderr) == 1 and ui.stderr[0].startswith("hudi-inspect: warning: the dashboard listens on "
                                                                "0.0.0.0")
        assert "no authentication" in ui.stderr[0] and "credentials" in ui.stderr[0]
        assert listening_addresses(ui.port) in (["0.0.0.0"], None)
        code = ui.stop(signal.SIGTERM)
        assert code == 0 and ui.stderr[1:] == [STOP_LINE.format("SIGTERM")], ui.stderr


@pytest.mark.slow
def test_streamlit_ends_with_the_command(tables: dict[str, Path], tmp_path: Path) -> None:
    """A command killed outright (SIGKILL: no handler runs) does not leave its Streamlit server behind."""
    with ui_command([str(tables["one"])], tmp_path) as ui:
        ui.wait_for_url()
        ui.proc.kill()
        ui.proc.wait()
        deadline = time.monotonic() + 20
        while _health(ui.port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _health(ui.port)


def test_ui_refuses_a_busy_port(tables: dict[str, Path], tmp_path: Path) -> None:
    """A port another server holds is refused before Streamlit starts (that server would answer the health
    probe in its place)."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run([sys.executable, "-m", "hudi_core", "ui", str(tables["one"]), "--port", str(port)],
                             capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip() == f"hudi-inspect: ui: port {port} is in use on 127.0.0.1: choose another with --port"


def websocket_handshake(port: int, host_header: str) -> str:
    """The status line Streamlit answers a websocket handshake on `/_stcore/stream` with, sent with this Host
    (and the same-origin Origin a browser would send for it)."""
    import base64

    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        key = base64.b64encode(os.urandom(16)).decode()
        conn.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: {host_header}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      f"Origin: http://{host_header}\r\n\r\n").encode())
        return conn.recv(4096).decode(errors="replace").split("\r\n", 1)[0]


@pytest.mark.slow
def test_ui_refuses_other_host_names(tables: dict[str, Path], tmp_path: Path) -> None:
    """On loopback the websocket opens only for the loopback names and those given with --allowed-host: a
    page served under another name that rebinds it to 127.0.0.1 (DNS rebinding) is refused."""
    with ui_command([str(tables["one"]), "--allowed-host", "inspector.example.com"], tmp_path) as ui:
        ui.wait_for_url()
        port = ui.port
        for name in ("127.0.0.1", "localhost", "[::1]", "inspector.example.com"):
            assert websocket_handshake(port, f"{name}:{port}").startswith("HTTP/1.1 101"), name
        assert websocket_handshake(port, f"rebound.attacker.example:{port}").startswith("HTTP/1.1 403")
        code = ui.stop(signal.SIGTERM)
    assert code == 0 and ui.stderr[-1] == STOP_LINE.format("SIGTERM")
    assert not any("Traceback" in line for line in ui.stderr)


def test_ui_refuses_a_missing_folder(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "hudi_core", "ui", str(tmp_path / "missing")], capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 1 and out.stderr.strip() == f"hudi-inspect: ui: no such folder: {tmp_path / 'missing'}"


# -- the package ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the checkout's package sources (`pip wheel --no-deps`; the copy keeps
    the build's `build/` and egg-info out of the working tree)."""
    src = tmp_path_factory.mktemp("wheel-src")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / name, src / name)
    for folder in ("hudi_core", "pages"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp_path_factory.mktemp("wheel-dist")
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(src), "-w", str(dist)],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0 and "No matching distribution" in out.stdout + out.stderr:
        pytest.skip("pip cannot reach the build backend (setuptools) to build a wheel")
    assert out.returncode == 0, out.stdout + out.stderr
    return next(dist.glob("hudi_timeline_inspector-*.whl"))


def test_the_wheel_ships_the_dashboard(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"hudi_core/dashboard/__init__.py", "hudi_core/dashboard/app.py", "hudi_core/cli/ui.py"} <= names
    # The checkout's top-level pages/ (beside app.py) is installed as the package's dashboard/pages/.
    pages = {f"hudi_core/dashboard/pages/{p.name}" for p in (REPO / "pages").glob("*.py")}
    assert {f"hudi_core/dashboard/pages/{f}" for f in PAGE_FILES.values()} <= pages  # every page has its file
    assert pages <= names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "hudi-inspect = hudi_core.cli:run" in zipfile.ZipFile(wheel).read(entry_points).decode()


@pytest.mark.slow
def test_installed_from_the_wheel_it_serves_the_dashboard_from_any_folder(wheel: Path, tables: dict[str, Path],
                                                                          browser: object, tmp_path: Path) -> None:
    """Installed (`pip install --no-deps --target`, first on the path), `ui` runs the dashboard files of the
    installation, from a folder that is not the checkout."""
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(site),
                    str(wheel)], check=True, capture_output=True, timeout=300)
    env = {"PYTHONPATH": str(site)}
    where = subprocess.run([sys.executable, "-c", "import json, hudi_core.dashboard as d; "
                            "print(json.dumps([str(d.APP), sorted(p.name for p in d.PAGES_DIR.glob('*.py'))]))"],
                           capture_output=True, text=True, check=True, cwd=tmp_path, env={**os.environ, **env})
    app, pages = json.loads(where.stdout)
    assert app == str((site / "hudi_core" / "dashboard" / "app.py").resolve())
    assert sorted(PAGE_FILES.values()) == pages
    with ui_command([str(tables["one"])], tmp_path, env=env) as ui:
        page = _open(browser, ui.wait_for_url(), '[data-testid="stPlotlyChart"]')
        assert page.locator("h1").first.inner_text() == "hudi7779_case_b"
        assert _errors(page) == []
        assert_stopped_cleanly(ui, ui.stop(signal.SIGINT), "SIGINT")


def test_make_run_serves_the_dashboard_as_hudi_inspect_ui_does() -> None:
    """`make run` starts Streamlit with the options `hudi-inspect ui` uses for privacy and a served tool: no usage
    statistics, no Deploy button, loopback by default."""
    from hudi_core.cli.ui import streamlit_argv

    makefile = (REPO / "Makefile").read_text()
    run = makefile.split("\nrun: install\n", 1)[1].split("\n\n", 1)[0].replace("\\\n", " ")
    served = streamlit_argv("127.0.0.1", 8501)
    for option in ("--browser.gatherUsageStats", "--client.toolbarMode", "--server.headless"):
        value = served[served.index(option) + 1]
        assert f"{option} {value}" in " ".join(run.split()), option
    assert "DASHBOARD_HOST ?= 127.0.0.1" in makefile and "--server.address $(DASHBOARD_HOST)" in run
