"""`streamlit run app.py` on a free loopback port, for the browser tests and the dashboard benchmark."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from bench.s3server import free_port, stop_process

REPO_ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def streamlit_server(env: dict[str, str], log: IO[str] | None = None, start_timeout_s: float = 60,
                     root: Path | None = None) -> Iterator[str]:
    """Start the dashboard headless with `env`; yield its base URL once `/_stcore/health` answers;
    stop it (terminate, then kill) on exit. Raises RuntimeError if it does not start in time. `root`: the
    checkout whose `app.py` runs (this one by default; Streamlit puts the script's folder first on the path)."""
    port = free_port()
    root = root or REPO_ROOT
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(root / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=root, env=env, stdout=log or subprocess.DEVNULL,
        stderr=subprocess.STDOUT if log else subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start (exit {proc.poll()})")
            time.sleep(0.3)
        yield base
    finally:
        stop_process(proc)
