"""`hudi-inspect ui [TABLE|ROOT ...]`: the dashboard (shipped in the package, `hudi_core/dashboard/`) on the
given tables, from any directory (registered through `hudi_core.cli.COMMAND_MODULES`).

The paths given are exactly the allowed roots of the dashboard (`HUDI_INSPECTOR_ROOTS`; a table's own path is
a root, a root is a folder or URL prefix holding tables; the inspector's own cache stays allowed for its
scenario tables). The dashboard opens on the first path: the table, or the list of tables under the root.
Streamlit runs in a child process bound to 127.0.0.1 unless `--host` says otherwise; this process prints the
URL once the server answers, and on Ctrl-C (SIGINT) or SIGTERM stops it and exits 0 with one line.
`--storage-option K=V` reaches the dashboard's loaders as `HUDI_INSPECTOR_STORAGE_OPTIONS` (JSON).

Nothing here imports Streamlit (nor pyarrow): `hudi-inspect --help` stays fast; a URL table is probed
through the read-only storage layer only when the first path is a URL.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit

AddCommand = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8501
#: Seconds the server has to answer `/_stcore/health` before the command gives up.
START_TIMEOUT_S = 60.0
#: Seconds Streamlit has to stop after SIGTERM before it is killed.
STOP_TIMEOUT_S = 10.0
ROOTS_ENV = "HUDI_INSPECTOR_ROOTS"  # hudi_core.dashboard.roots.ROOTS_ENV (not imported: it would load the dashboard)
STORAGE_OPTIONS_ENV = "HUDI_INSPECTOR_STORAGE_OPTIONS"  # hudi_core.dashboard.roots.STORAGE_OPTIONS_ENV
WARM_TABLE_ENV = "HUDI_INSPECTOR_WARM_TABLE"  # hudi_core.dashboard.serve.WARM_TABLE_ENV
NO_AUTH_WARNING = ("hudi-inspect: warning: the dashboard listens on {host}, beyond this machine: it has no "
                   "authentication, and anyone who reaches port {port} reads every table under the roots with "
                   "this machine's credentials. Put an authenticating proxy in front of 127.0.0.1 instead "
                   "(docs/dashboard.md: \"Behind an authenticating proxy\").")


def register(add: AddCommand, sub: Any) -> None:
    """Add `ui` (no table options: its paths are roots)."""
    p = sub.add_parser(
        "ui", help="start the dashboard on the given tables or roots (http://127.0.0.1:8501)",
        description="Start the dashboard (Streamlit) on the given tables and roots: they are exactly the folders "
                    "and URL prefixes it may open. It opens on the first one (a table, or the tables found under a "
                    "root), listens on 127.0.0.1 unless --host says otherwise, and stops on Ctrl-C.")
    p.add_argument("paths", nargs="*", metavar="TABLE|ROOT",
                   help="a table (its own path becomes a root) or a folder / URL prefix holding tables (s3://…); "
                        "none: HUDI_INSPECTOR_ROOTS or the default roots, and the demo table")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help="address to listen on (default 127.0.0.1, this machine only; any other address, e.g. "
                        "0.0.0.0, exposes an unauthenticated dashboard and prints a warning)")
    p.add_argument("--storage-option", action="append", metavar="KEY=VALUE",
                   help="fsspec storage option for URL tables and roots (credentials, endpoint); repeatable")
    p.add_argument("--allowed-host", action="append", metavar="NAME",
                   help="a host name browsers reach the dashboard by besides localhost, 127.0.0.1 and ::1 (the "
                        "Host its websocket is opened with, e.g. an authenticating proxy's name); repeatable. "
                        "Other names are refused, so a web page cannot reach it by DNS rebinding; with a --host "
                        "beyond loopback and no --allowed-host, any name is accepted")
    p.set_defaults(func=cmd_ui)


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or a name) reaches this machine only: every address it resolves to is a
    loopback address. `0.0.0.0` and `::` (every interface) are not; a name that does not resolve is not."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def browse_host(host: str) -> str:
    """The host part of the URL to open: loopback for "every interface", brackets around IPv6."""
    bare = host.strip("[]")
    if bare in ("0.0.0.0", ""):
        return "127.0.0.1"
    if bare == "::":
        return "[::1]"
    return f"[{bare}]" if ":" in bare else bare


def _is_url(value: str) -> bool:
    scheme = urlsplit(value).scheme
    return "://" in value and len(scheme) > 1 and scheme != "file"


def resolve_paths(raw: list[str]) -> list[str]:
    """The roots as the dashboard checks them: URLs without a trailing slash, local folders resolved
    (they must exist). A path with a comma (the roots' separator) or, locally, `os.pathsep` is refused."""
    from hudi_core.errors import HudiInspectError

    out: list[str] = []
    for value in (v.strip() for v in raw):
        if not value:
            raise HudiInspectError("ui: an empty path was given")
        if "," in value:
            raise HudiInspectError(f"ui: {value} has a comma, which separates the roots in {ROOTS_ENV}")
        if _is_url(value):
            out.append(value.rstrip("/"))
            continue
        local = urlsplit(value).path if value.startswith("file://") else value
        resolved = os.path.realpath(os.path.expanduser(local))
        if os.pathsep in resolved:
            raise HudiInspectError(f"ui: {resolved} has {os.pathsep!r}, which separates local roots in {ROOTS_ENV}")
        if not os.path.isdir(resolved):
            raise HudiInspectError(f"ui: no such folder: {value}")
        out.append(resolved)
    return out


def is_table(path: str, storage_options: dict[str, str]) -> bool:
    """Whether `path` is a Hudi table (has `.hoodie/hoodie.properties`), not a root holding tables. A URL is
    asked through the read-only storage layer; a store error is a HudiInspectError (one line)."""
    if not _is_url(path):
        return os.path.isfile(os.path.join(path, ".hoodie", "hoodie.properties"))
    from hudi_core.io.storage import ReadOnlyStorage

    return ReadOnlyStorage(path, storage_options or None).exists(".hoodie/hoodie.properties")


def dashboard_url(host: str, port: int, first: str | None, first_is_table: bool) -> str:
    """The URL printed: the first table (`?table=`), or the list of tables under the first root (`?root=`)."""
    base = f"http://{browse_host(host)}:{port}/"
    if first is None:
        return base
    return f"{base}?{'table' if first_is_table else 'root'}={quote(first, safe='/:')}"


def child_env(roots: list[str], storage_options: dict[str, str], warm_table: str | None = None) -> dict[str, str]:
    """The Streamlit process's environment: the roots, the storage options, the table to read while the browser
    loads (`warm_table`), and this `hudi_core` on the path (an uninstalled checkout run as `python -m
    hudi_core` from its folder has it on no other path)."""
    import hudi_core

    env = dict(os.environ)
    env.pop(WARM_TABLE_ENV, None)
    if warm_table:
        env[WARM_TABLE_ENV] = warm_table
    if roots:
        env[ROOTS_ENV] = ",".join(roots)
    if storage_options:
        env[STORAGE_OPTIONS_ENV] = json.dumps(storage_options)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(hudi_core.__file__)))
    if package_parent not in _site_dirs():
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    return env


def _site_dirs() -> set[str]:
    import site

    dirs = set(site.getsitepackages()) | {site.getusersitepackages()}
    return {os.path.abspath(d) for d in dirs}


#: The names a browser on this machine reaches a loopback-bound dashboard by.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def allowed_hosts(host: str, given: list[str] | None) -> list[str]:
    """Streamlit's `server.allowedHosts` (its websocket refuses any other Host header): the loopback names and
    the names given (a web page that rebinds its own name to 127.0.0.1 opens the websocket with that name, and
    is refused); none, i.e. any name, when the dashboard listens beyond loopback and no name is given (it was
    exposed on purpose, by whatever names reach it)."""
    names = [name.strip() for name in given or [] if name.strip()]
    if not names and not is_loopback(host):
        return []
    return [*LOOPBACK_NAMES, *(n for n in names if n not in LOOPBACK_NAMES)]


def streamlit_argv(host: str, port: int, hosts: list[str] | None = None) -> list[str]:
    """`streamlit run` on the packaged dashboard, through :mod:`hudi_core.dashboard.serve` (which warms the
    first page while the browser loads Streamlit's frontend)."""
    allowed = [arg for name in hosts or [] for arg in ("--server.allowedHosts", name)]
    return [sys.executable, "-m", "hudi_core.dashboard.serve", *allowed, "--server.address", host.strip("[]"),
            "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none", "--server.runOnSave", "false", "--logger.level", "warning",
            # No welcome message (the URL is printed here): with it, Streamlit bound to 0.0.0.0 asks a web
            # service for the machine's external IP; no "Deploy" / developer menu in a served tool.
            "--logger.hideWelcomeMessage", "true", "--client.toolbarMode", "minimal"]


def port_free(host: str, port: int) -> bool:
    """Whether `port` can be bound on `host` now (checked before starting Streamlit: a server already there
    would answer the health probe in its place)."""
    bare = host.strip("[]")
    try:
        infos = socket.getaddrinfo(bare or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return True  # Streamlit will say what is wrong with the address
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Streamlit's server binds
        try:
            probe.bind(address)
        except OSError:
            return False
    return True


def _die_with_parent() -> None:
    """In the Streamlit child, before exec: SIGTERM when this command's process ends, however it ends (a
    SIGKILL leaves no chance to stop the child; Linux `PR_SET_PDEATHSIG`, elsewhere nothing)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _health(url: str) -> bool:
    import urllib.request

    # No proxy: an http_proxy in the environment must not carry a loopback probe elsewhere.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=1) as response:
            return bool(response.read().strip() == b"ok")
    except OSError:
        return False


def cmd_ui(args: argparse.Namespace) -> int:
    """`ui`: start Streamlit on the packaged dashboard, print its URL, stop it on SIGINT/SIGTERM (exit 0)."""
    from hudi_core.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, _storage_options
    from hudi_core.errors import HudiInspectError

    if not 1 <= args.port <= 65535:
        print(f"hudi-inspect: ui: --port must be 1-65535, got {args.port}", file=sys.stderr)
        return EXIT_USAGE
    host = args.host.strip() or DEFAULT_HOST
    options = _storage_options(args.storage_option)
    roots = resolve_paths(args.paths)
    first_is_table = bool(roots) and is_table(roots[0], options)
    if not port_free(host, args.port):
        print(f"hudi-inspect: ui: port {args.port} is in use on {host}: choose another with --port", file=sys.stderr)
        return EXIT_ERROR
    if not is_loopback(host):
        print(NO_AUTH_WARNING.format(host=host, port=args.port), file=sys.stderr)
    url = dashboard_url(host, args.port, roots[0] if roots else None, first_is_table)
    health = f"http://{browse_host(host)}:{args.port}/_stcore/health"

    stop: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        stop.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        proc = subprocess.Popen(streamlit_argv(host, args.port, allowed_hosts(host, args.allowed_host)),
                                env=child_env(roots, options, roots[0] if first_is_table else None),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    except OSError as exc:
        for s, handler in previous.items():
            signal.signal(s, handler)
        raise HudiInspectError(f"ui: cannot start Streamlit: {exc}") from None
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not stop and proc.poll() is None and not _health(health):
            if time.monotonic() > deadline:
                print(f"hudi-inspect: ui: the dashboard did not answer on {health} within {START_TIMEOUT_S:.0f} s",
                      file=sys.stderr)
                return EXIT_ERROR
            time.sleep(0.05)
        if not stop and proc.poll() is None:
            print(f"hudi-inspect: dashboard on {url} (Ctrl-C stops it)", flush=True)
        while not stop and proc.poll() is None:
            time.sleep(0.2)  # a signal handler runs between sleeps; `stop` then ends the loop
        if stop:
            return EXIT_OK
        print(f"hudi-inspect: ui: the dashboard stopped (Streamlit exit {proc.returncode}); see its message above",
              file=sys.stderr)
        return EXIT_ERROR
    finally:
        _stop(proc)
        if stop:
            print(f"hudi-inspect: dashboard stopped ({signal.Signals(stop[0]).name})", file=sys.stderr, flush=True)
        for s, handler in previous.items():
            signal.signal(s, handler)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop Streamlit (SIGTERM: it shuts down cleanly), then kill it if it lingers; reap it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
