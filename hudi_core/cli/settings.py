"""The service settings a command's arguments give: Hudi's configuration (`--conf-file`, `--conf`, `--hudi-release`)
and the planning time (`--now`). Read here once, for the commands that plan and for the verdict behind every exit
code; this module imports no command."""

from __future__ import annotations

import argparse
import datetime as dt

from hudi_core.errors import HudiInspectError
from hudi_core.formats.timeline.instant import parse_instant_time
from hudi_core.services.config import DEFAULT_HUDI_RELEASE, ServiceConfig, conf_layers


def now_of(args: argparse.Namespace) -> dt.datetime | None:
    """`--now INSTANT`: the planning time for KEEP_LATEST_BY_HOURS (the table's zone), else the current time."""
    value = getattr(args, "now", None)
    if not value:
        return None
    moment = parse_instant_time(value, "UTC")
    if moment is None:
        raise HudiInspectError(f"--now expects an instant time (yyyyMMddHHmmss[SSS]), got {value!r}")
    return moment


def config_of(args: argparse.Namespace) -> ServiceConfig:
    """`--conf-file` files, then `--conf` pairs (later wins), as Hudi reads them."""
    return ServiceConfig.from_layers(conf_layers(getattr(args, "conf_file", None), getattr(args, "conf", None)),
                                     getattr(args, "hudi_release", None) or DEFAULT_HUDI_RELEASE)
