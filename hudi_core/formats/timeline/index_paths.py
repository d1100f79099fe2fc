"""The inspector's cache folder, where the derived indexes live (the archive index, the active-timeline index)
and their on/off switches; the dashboard keeps its demo tables and recent list there too.

Plain `os` and `pathlib`, no pyarrow: a command decides whether to open an index before it pays for Arrow.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "HUDI_INSPECTOR_CACHE"
_OFF = ("0", "false", "no", "off")


def cache_dir() -> Path:
    """The inspector's cache folder: ``$HUDI_INSPECTOR_CACHE`` (set and not empty), else ``~/.cache/hudi-inspector``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "hudi-inspector").expanduser()


def cache_folder(switch_env: str, folder: str) -> Path:
    """A derived index's folder: the path `switch_env` names, else `folder` in :func:`cache_dir`."""
    switch = os.environ.get(switch_env, "").strip()
    if switch and switch.lower() not in _OFF and switch.lower() not in ("1", "true", "yes", "on"):
        return Path(switch).expanduser()
    return cache_dir() / folder


def switch_enabled(switch_env: str) -> bool:
    """Whether `switch_env` leaves a derived index on (``0``/``false``/``no``/``off`` turn it off)."""
    return os.environ.get(switch_env, "1").strip().lower() not in _OFF


#: The active-timeline index (:mod:`hudi_core.formats.timeline.active_index`): ``0`` turns it off, a path moves it.
ACTIVE_SWITCH_ENV = "HUDI_INSPECTOR_ACTIVE_INDEX"
#: Below this many instant files a timeline is decoded without the active-timeline index: decoding them costs
#: less than loading pyarrow (~0.1 s; a body of 100 write stats decodes in ~1 ms), so small-table commands stay
#: without it. ``HUDI_INSPECTOR_ACTIVE_INDEX_MIN_FILES`` sets another number (the tests use 0).
ACTIVE_MIN_FILES_ENV = "HUDI_INSPECTOR_ACTIVE_INDEX_MIN_FILES"
ACTIVE_MIN_FILES = 100


def active_index_wanted(files: int) -> bool:
    """Whether a timeline of `files` instant files uses the active-timeline index (switched on, and at least
    :data:`ACTIVE_MIN_FILES` files)."""
    try:
        least = int(os.environ.get(ACTIVE_MIN_FILES_ENV, ACTIVE_MIN_FILES))
    except ValueError:
        least = ACTIVE_MIN_FILES
    return switch_enabled(ACTIVE_SWITCH_ENV) and files >= least


#: The files-partition listing index (:mod:`hudi_core.table.listing.metadata_index`): ``0`` turns it off, a path
#: moves it.
LISTING_SWITCH_ENV = "HUDI_INSPECTOR_LISTING_INDEX"
#: Listings of fewer files than this are not kept (reading their files partition costs less than the index's
#: file); ``HUDI_INSPECTOR_LISTING_INDEX_MIN_FILES`` sets another number (the tests use 0).
LISTING_MIN_FILES_ENV = "HUDI_INSPECTOR_LISTING_INDEX_MIN_FILES"
LISTING_MIN_FILES = 20_000


def listing_index_min_files() -> int:
    """The fewest files a listing has for the listing index to keep it."""
    try:
        return int(os.environ.get(LISTING_MIN_FILES_ENV, LISTING_MIN_FILES))
    except ValueError:
        return LISTING_MIN_FILES
