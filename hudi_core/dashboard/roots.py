"""Allowed table roots: the dashboard opens only tables under `HUDI_INSPECTOR_ROOTS`.

`HUDI_INSPECTOR_ROOTS` is a comma-separated list (a local entry may also be `os.pathsep`-separated)
of local folders and URL prefixes (``s3://bucket/warehouse``). Without it the roots are the
sample-table folder; the inspector's cache folder (demo and scenario tables) is always allowed.

A local path is resolved with :func:`os.path.realpath` before the check, so ``..`` tricks and
symlinks that lead outside a root are refused; a URL with a ``..`` segment is refused outright.

`HUDI_INSPECTOR_STORAGE_OPTIONS` (a JSON object, set by `hudi-inspect ui --storage-option K=V`) holds the
fsspec options the dashboard opens URL tables and roots with (endpoint, credentials, ...), as the
commands' `--storage-option`; local paths take none.
"""

from __future__ import annotations

import json
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from hudi_core.dashboard.demo import fixtures_root
from hudi_core.errors import HudiInspectError
from hudi_core.formats.timeline.index_paths import cache_dir

ROOTS_ENV = "HUDI_INSPECTOR_ROOTS"
#: fsspec storage options for URL tables, as a JSON object (`hudi-inspect ui --storage-option K=V` sets it).
STORAGE_OPTIONS_ENV = "HUDI_INSPECTOR_STORAGE_OPTIONS"


class PathRefused(HudiInspectError):
    """A table path outside the allowed roots, or malformed."""


@dataclass(frozen=True)
class Root:
    """One allowed root: a resolved local folder or a normalised URL prefix."""

    value: str
    is_url: bool

    def __str__(self) -> str:
        return self.value


def _is_url(value: str) -> bool:
    scheme = urlsplit(value).scheme
    return "://" in value and len(scheme) > 1 and scheme != "file"


def _local(value: str) -> str:
    if value.startswith("file://"):
        value = urlsplit(value).path
    return os.path.realpath(os.path.expanduser(value))


def _url_key(value: str) -> tuple[str, str, str]:
    """(scheme, host, path) compared between a URL and a root: query and fragment dropped, the path
    percent-decoded and normalised (`s3://b/ok%2F..%2Fother` or `?x#y` cannot slip past)."""
    parts = urlsplit(value)
    raw = unquote(parts.path)
    path = posixpath.normpath("/" + raw.lstrip("/")) if raw.strip("/") else "/"
    return parts.scheme.lower(), unquote(parts.netloc).lower(), path


def parse_roots(spec: str | None) -> list[Root]:
    """Parse a `HUDI_INSPECTOR_ROOTS` value; ``None`` or blank gives the default roots."""
    if spec is None or not spec.strip():
        defaults = [cache_dir()]
        fixtures = fixtures_root()
        if fixtures is not None:
            defaults.append(fixtures)
        return [Root(_local(str(p)), False) for p in defaults]
    roots: list[Root] = []
    for entry in (e.strip() for e in spec.split(",")):
        if not entry:
            continue
        if _is_url(entry):
            roots.append(Root(entry.rstrip("/"), True))
            continue
        roots.extend(Root(_local(p), False) for p in entry.split(os.pathsep) if p.strip())
    return roots


def allowed_roots() -> list[Root]:
    """The roots in force (read from the environment on every call).

    The inspector's own cache folder (demo and scenario tables it built) is always allowed.
    """
    roots = parse_roots(os.environ.get(ROOTS_ENV))
    own = Root(_local(str(cache_dir())), False)
    return roots if own in roots else [*roots, own]


def check_table_path(raw: str, roots: list[Root] | None = None) -> str:
    """The canonical form of `raw` if it lies under an allowed root; else :class:`PathRefused`.

    Local paths come back resolved (real path, symlinks followed); URLs come back as given,
    without a trailing slash.
    """
    roots = allowed_roots() if roots is None else roots
    value = (raw or "").strip()
    if not value:
        raise PathRefused("no table path given")
    if "\x00" in value:
        raise PathRefused("the table path contains a NUL character")
    listing = ", ".join(str(r) for r in roots) or "(none)"
    if _is_url(value):
        split = urlsplit(value)
        if split.query or split.fragment or "?" in value or "#" in value:
            raise PathRefused(f"{value} is refused: a table URL has no query or fragment")
        segments = unquote(split.path).split("/")
        if ".." in segments or "\x00" in unquote(value):
            raise PathRefused(f"{value} is refused: '..' is not allowed in a table URL")
        scheme, netloc, path = _url_key(value)
        for root in roots:
            if not root.is_url:
                continue
            r_scheme, r_netloc, r_path = _url_key(root.value)
            if (scheme, netloc) == (r_scheme, r_netloc) and (
                r_path == "/" or path == r_path or path.startswith(r_path.rstrip("/") + "/")
            ):
                return value.rstrip("/")
        raise PathRefused(f"{value} is outside the allowed roots ({listing}); set {ROOTS_ENV} to allow it")
    resolved = _local(value)
    for root in roots:
        if root.is_url:
            continue
        try:
            inside = os.path.commonpath([resolved, root.value]) == root.value
        except ValueError:
            inside = False
        if inside:
            return resolved
    shown = value if resolved == value else f"{value} (resolves to {resolved})"
    raise PathRefused(f"{shown} is outside the allowed roots ({listing}); set {ROOTS_ENV} to allow it")


def storage_options_for(uri: str) -> dict[str, str] | None:
    """The storage options a URL table or root is opened with (`HUDI_INSPECTOR_STORAGE_OPTIONS`, read on
    every call); ``None`` for local paths and when unset. A value that is not a JSON object of strings is
    refused with a message naming the variable (never its value: it may hold a secret)."""
    raw = os.environ.get(STORAGE_OPTIONS_ENV, "").strip()
    if not raw or not _is_url(uri):
        return None
    try:
        options = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise HudiInspectError(f"{STORAGE_OPTIONS_ENV} is not valid JSON (line {exc.lineno}, column {exc.colno})"
                               ) from None
    if not isinstance(options, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                for k, v in options.items()):
        raise HudiInspectError(f'{STORAGE_OPTIONS_ENV} must be a JSON object of strings, e.g. {{"endpoint_url": '
                               '"http://minio:9000"}')
    return options or None


def confinement_for(uri: str, roots: list[Root] | None = None) -> tuple[str, ...] | None:
    """The folders a local table's storage is confined to (the resolved local roots); ``None`` for
    URLs (object stores have no symlinks; their roots are checked by prefix at the picker)."""
    if _is_url(uri):
        return None
    roots = allowed_roots() if roots is None else roots
    return tuple(r.value for r in roots if not r.is_url)


def scenario_output_root() -> Path:
    """Where the dashboard builds scenario tables (inside the default roots)."""
    return cache_dir() / "scenarios"
