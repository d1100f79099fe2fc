"""S3 listings and batched reads through obstore (Rust `object_store`), for
:class:`~hudi_core.io.storage.ReadOnlyStorage`.

Why: s3fs parses every ListObjectsV2 page with botocore's generic XML parser and dateutil, about
0.4 ms a key on the client: a 100k-file table cost 40-90 s of CPU per full listing, measured on the
loopback S3 server, where obstore's listing of the same 10,315 keys took 0.3-0.5 s (s3fs 4.5-9 s).
A GET costs s3fs/aiobotocore about 6 ms of client CPU: 1,000 concurrent ranged reads took 7.7 s
against 1.8 s through obstore on the same server. Single reads, stats and existence checks stay on
s3fs; a read obstore fails is retried through s3fs, which words the error.

It is used only where it answers exactly as s3fs would: S3 URLs whose storage options are the usual
credentials / endpoint / region keys, and a region known (explicit, from the environment, or a
custom endpoint), because s3fs follows a bucket's region redirect and object_store does not. Any
error makes the caller fall back to s3fs for good, so access denied, missing buckets and endpoints
that are down keep s3fs's messages. ``HUDI_INSPECTOR_FAST_S3_LIST=0`` turns it off.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # obstore's option dicts (TypedDicts in its stubs only)
    from obstore.store import ClientConfig, RetryConfig

FAST_LIST_ENV = "HUDI_INSPECTOR_FAST_S3_LIST"
#: s3fs storage options that map one to one onto obstore's S3 configuration.
_MAPPED_OPTIONS = frozenset({"key", "secret", "token", "endpoint_url", "client_kwargs", "anon"})


#: Requests in flight at once in a batch of reads.
CONCURRENCY = 64


class S3Lister:
    """Lists the direct children of an S3 "folder" as fsspec `ls(detail=True)` entries, and keeps
    what it listed so that a later `info` of a listed file needs no HEAD (as s3fs's listing cache
    does; one lister per bucket and options in a process, like fsspec's instances); reads batches
    of ranges concurrently (:meth:`get_ranges`)."""

    _instances: ClassVar[dict[tuple[Any, ...], S3Lister | None]] = {}

    def __init__(self, store: Any, bucket: str) -> None:
        self._store = store
        self._bucket = bucket
        self._listed: dict[str, dict[str, Any]] = {}

    def cached_info(self, name: str) -> dict[str, Any] | None:
        """The entry of a file this lister listed (`name` as fsspec names it), if any."""
        return self._listed.get(name.strip("/"))

    @classmethod
    def for_options(cls, protocol: str, root: str, options: dict[str, Any]) -> S3Lister | None:
        """A lister for the storage, or None where s3fs must list (see the module doc)."""
        bucket = root.strip("/").split("/", 1)[0]
        key = (protocol, bucket, repr(sorted(options.items())), os.environ.get(FAST_LIST_ENV, "1").strip())
        if key not in cls._instances:
            cls._instances[key] = cls._build(protocol, bucket, options)
        return cls._instances[key]

    @classmethod
    def _build(cls, protocol: str, bucket: str, options: dict[str, Any]) -> S3Lister | None:
        if protocol not in ("s3", "s3a") or os.environ.get(FAST_LIST_ENV, "1").strip() == "0":
            return None
        if set(options) - _MAPPED_OPTIONS:
            return None
        client_kwargs = options.get("client_kwargs") or {}
        if not isinstance(client_kwargs, dict) or set(client_kwargs) - {"region_name", "endpoint_url"}:
            return None
        if "key" not in options and (os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE")):
            return None  # named profiles are botocore's to resolve
        endpoint = (options.get("endpoint_url") or client_kwargs.get("endpoint_url")
                    or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL"))
        region = client_kwargs.get("region_name") or os.environ.get("AWS_REGION") or os.environ.get(
            "AWS_DEFAULT_REGION")
        if not region and not endpoint:
            return None
        try:
            from obstore.store import S3Store
        except ImportError:
            return None
        config: dict[str, Any] = {}
        if options.get("key"):
            config["access_key_id"] = options["key"]
        if options.get("secret"):
            config["secret_access_key"] = options["secret"]
        if options.get("token"):
            config["session_token"] = options["token"]
        if options.get("anon"):
            config["skip_signature"] = True
        if endpoint:
            config["endpoint"] = endpoint
        config["region"] = region or "us-east-1"
        client_options: ClientConfig = {"allow_http": True} if str(endpoint or "").startswith("http://") else {}
        retry: RetryConfig = {"max_retries": 3, "retry_timeout": dt.timedelta(seconds=10),
                 "backoff": {"init_backoff": dt.timedelta(milliseconds=100), "max_backoff": dt.timedelta(seconds=2),
                             "base": 2.0}}
        try:
            store = S3Store(bucket, client_options=client_options, retry_config=retry, **config)
        except Exception:  # an option obstore refuses: s3fs lists instead
            return None
        return cls(store, bucket)

    def ls(self, folder: str) -> list[dict[str, Any]]:
        """Children of ``bucket/prefix`` (`folder` as fsspec names it, without protocol), as
        ``{"name", "size", "type", "last_modified"}`` entries. Raises whatever obstore raises."""
        import obstore

        key_prefix = folder.strip("/").split("/", 1)[1] if "/" in folder.strip("/") else ""
        result = obstore.list_with_delimiter(self._store, prefix=f"{key_prefix}/" if key_prefix else None)
        entries: list[dict[str, Any]] = [
            {"name": f"{self._bucket}/{p.rstrip('/')}", "size": 0, "type": "directory"}
            for p in result["common_prefixes"]
        ]
        for obj in result["objects"]:
            path = obj["path"]
            if path.endswith("/"):
                continue  # a folder marker object, as s3fs skips it
            entry: dict[str, Any] = {"name": f"{self._bucket}/{path}", "size": obj["size"], "type": "file",
                     "last_modified": obj["last_modified"], "e_tag": obj.get("e_tag")}
            self._listed[entry["name"]] = entry
            entries.append(entry)
        return entries

    def head(self, name: str) -> dict[str, Any]:
        """The fsspec `info` entry of an object (`name` as fsspec names it): one HEAD, remembered like a
        listed entry. Raises whatever obstore raises, "not found" included (the caller then asks s3fs,
        which also knows folders, and words the error)."""
        import obstore

        meta = obstore.head(self._store, _key(name))
        entry: dict[str, Any] = {"name": f"{self._bucket}/{meta['path']}", "size": meta["size"], "type": "file",
                 "last_modified": meta["last_modified"], "e_tag": meta.get("e_tag")}
        self._listed[entry["name"]] = entry
        return entry

    def has_children(self, name: str) -> bool:
        """Whether any object lies under the "folder" `name` (one LIST page, read no further)."""
        import obstore

        key = _key(name)
        for chunk in obstore.list(self._store, prefix=f"{key}/" if key else None, chunk_size=1):
            return bool(chunk)
        return False

    def get_ranges(self, ranges: Sequence[tuple[str, int, int]]) -> list[bytes | BaseException] | None:
        """Bytes ``[start, end)`` of each ``(name, start, end)`` (names as fsspec names them), read
        concurrently; an item that fails is its exception. A range of a listed object is clipped
        to the listed size (past the end: empty, no request). None when no event loop can run here
        (the caller then reads through s3fs)."""
        plan: list[tuple[str, int, int] | bytes] = []
        for name, start, end in ranges:
            listed = self.cached_info(name)
            if listed is not None:
                end = min(end, int(listed["size"]))
                if start >= end:
                    plan.append(b"")
                    continue
            plan.append((_key(name), start, end))

        async def fetch_all() -> list[bytes | BaseException]:
            import obstore

            gate = asyncio.Semaphore(CONCURRENCY)

            async def one(item: tuple[str, int, int] | bytes) -> bytes:
                if isinstance(item, bytes):
                    return item
                async with gate:
                    return bytes(await obstore.get_range_async(self._store, item[0], start=item[1], end=item[2]))

            return await asyncio.gather(*(one(item) for item in plan), return_exceptions=True)

        try:
            asyncio.get_running_loop()
            return None  # inside a running loop: asyncio.run would refuse
        except RuntimeError:
            pass
        return asyncio.run(fetch_all())


def _key(name: str) -> str:
    """The object key of an fsspec name ``bucket/key``."""
    name = name.strip("/")
    return name.split("/", 1)[1] if "/" in name else ""
