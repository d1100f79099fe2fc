"""Process trees and their memory high-water marks, from Linux's /proc (the benchmarks' view of a command's
processes: the Python process, a Spark driver JVM it starts, the workers a Spark worker runs)."""

from __future__ import annotations

from pathlib import Path


def children_by_parent() -> dict[int, list[int]]:
    """Parent pid -> child pids of every process now."""
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            out.setdefault(ppid, []).append(int(entry.name))
    return out


def descendants(root: int, children: dict[int, list[int]] | None = None) -> list[int]:
    """Process ids below `root` (`children`: a :func:`children_by_parent` already taken)."""
    children = children_by_parent() if children is None else children
    out, stack = [], [root]
    while stack:
        for kid in children.get(stack.pop(), []):
            out.append(kid)
            stack.append(kid)
    return out


def peak_rss_bytes(pid: int) -> int:
    """The process's peak resident memory (VmHWM), 0 when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def process_kind(pid: int) -> str | None:
    """``jvm`` or ``python`` (anything else not a JVM), ``None`` when the process is gone."""
    try:
        program = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].decode(errors="replace")
    except OSError:
        return None
    return "jvm" if "java" in program else "python"
