"""A loopback S3-compatible server for tests and benchmarks: moto's server behind a middleware that
adds a fixed delay per request, counts requests by kind and can inject faults.

Only 127.0.0.1 is ever bound. Control endpoints (never forwarded to moto):

- ``GET /__stats``: JSON counts ``{"GET": n, "LIST": n, "HEAD": n, "PUT": n, "OTHER": n, "keys": {...}}``
  (``keys`` counts GETs per object key, to prove no file is read twice; ``head_keys`` the HEADs);
- ``POST /__reset``: zero the counts;
- ``POST /__config?delay_ms=20&fail=503&fail_count=2&fail_prefix=KEY``: set the delay and arm a fault:
  the next `fail_count` requests whose key starts with `fail_prefix` get `fail` (503 = SlowDown,
  403 = AccessDenied, 404 = NoSuchKey: an object deleted between listing and reading; listings
  are never failed by 404) instead of an answer.

Run as a process: ``python -m bench.s3server --port 0 --delay-ms 20`` prints ``READY <port>``.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import contextlib
import json
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qs, quote, unquote
from xml.sax.saxutils import escape

_ERRORS = {
    503: ("SlowDown", "Please reduce your request rate."),
    403: ("AccessDenied", "Access Denied"),
    500: ("InternalError", "We encountered an internal error. Please try again."),
    404: ("NoSuchKey", "The specified key does not exist."),  # an object deleted after it was listed
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(proc: subprocess.Popen[Any], port: int, what: str, timeout_s: float = 60) -> None:
    """Return once `port` on 127.0.0.1 accepts a connection; RuntimeError if `proc` exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start (exit {proc.poll()})") from None
            time.sleep(0.2)


def stop_process(proc: subprocess.Popen[Any]) -> None:
    """Terminate a helper server, then kill it if it has not exited after 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _moto_backend() -> Any:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    return s3_backends[DEFAULT_ACCOUNT_ID]["global"]


def _after_prefix(prefix: str) -> str:
    """The smallest string greater than every string that starts with `prefix`."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


class FastListing:
    """ListObjectsV2 answered from moto's in-process store, sorted keys cached per bucket.

    moto serialises a listing through its generic serializer at about 0.5 ms a key (0.5 s a page
    of 1,000), which would make a 100k-object table cost the test server a minute per listing and
    hide what the client does. This produces the same ListBucketResult S3 documents (prefix,
    delimiter, max-keys, continuation-token, start-after, encoding-type=url) from the same objects.
    """

    def __init__(self) -> None:
        self._sorted: dict[str, tuple[int, list[str]]] = {}

    def names(self, bucket: Any) -> list[str]:
        cached = self._sorted.get(bucket.name)
        size = len(bucket.keys)
        if cached is None or cached[0] != size:
            cached = (size, sorted(bucket.keys.keys()))
            self._sorted[bucket.name] = cached
        return cached[1]

    def answer(self, bucket_name: str, query: dict[str, list[str]]) -> bytes | None:
        """The XML body, or None to let moto answer (not a V2 listing, or no such bucket)."""
        if query.get("list-type") != ["2"]:
            return None
        bucket = _moto_backend().buckets.get(bucket_name)
        if bucket is None:
            return None

        def arg(name: str, default: str = "") -> str:
            return query.get(name, [default])[0]

        prefix, delimiter, start_after = arg("prefix"), arg("delimiter"), arg("start-after")
        max_keys = int(arg("max-keys", "1000"))
        token = arg("continuation-token")
        resume = base64.urlsafe_b64decode(token.encode()).decode() if token else start_after
        names = self.names(bucket)
        if resume and delimiter and resume.endswith(delimiter):
            i = bisect.bisect_left(names, _after_prefix(resume))  # past a whole common prefix
        elif resume:
            i = bisect.bisect_right(names, resume)
        else:
            i = 0
        i = max(i, bisect.bisect_left(names, prefix))
        contents: list[str] = []
        prefixes: list[str] = []
        last = ""
        while i < len(names) and names[i].startswith(prefix) and len(contents) + len(prefixes) < max_keys:
            name = names[i]
            cut = name.find(delimiter, len(prefix)) if delimiter else -1
            if cut >= 0:
                common = name[: cut + len(delimiter)]
                prefixes.append(common)
                last = common
                i = bisect.bisect_left(names, _after_prefix(common))
                continue
            contents.append(name)
            last = name
            i += 1
        truncated = i < len(names) and names[i].startswith(prefix)
        url = arg("encoding-type") == "url"

        def text(value: str) -> str:
            return escape(quote(value, safe="/") if url else value)

        parts = ['<?xml version="1.0" encoding="UTF-8"?>',
                 '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
                 f"<Name>{escape(bucket_name)}</Name><Prefix>{text(prefix)}</Prefix>",
                 f"<KeyCount>{len(contents) + len(prefixes)}</KeyCount><MaxKeys>{max_keys}</MaxKeys>",
                 f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>"]
        if delimiter:
            parts.append(f"<Delimiter>{text(delimiter)}</Delimiter>")
        if url:
            parts.append("<EncodingType>url</EncodingType>")
        if token:
            parts.append(f"<ContinuationToken>{escape(token)}</ContinuationToken>")
        if start_after:
            parts.append(f"<StartAfter>{text(start_after)}</StartAfter>")
        if truncated:
            next_token = base64.urlsafe_b64encode(last.encode()).decode()
            parts.append(f"<NextContinuationToken>{next_token}</NextContinuationToken>")
        for name in contents:
            key = bucket.keys[name]
            parts.append(f"<Contents><Key>{text(name)}</Key><LastModified>{key.last_modified_ISO8601}</LastModified>"
                         f"<ETag>{escape(key.etag)}</ETag><Size>{key.size}</Size>"
                         f"<StorageClass>{key.storage_class or 'STANDARD'}</StorageClass></Contents>")
        for common in prefixes:
            parts.append(f"<CommonPrefixes><Prefix>{text(common)}</Prefix></CommonPrefixes>")
        parts.append("</ListBucketResult>")
        return "".join(parts).encode()


Answer = tuple[str, list[tuple[str, str]], bytes]


def fast_object(bucket_name: str, key: str, method: str, range_header: str) -> Answer | None:
    """GET / HEAD of an object answered from moto's in-process store (status, headers, body), or
    None to let moto answer (no such bucket, or a range form this does not parse). moto's own
    GET path costs ~3 ms of server CPU a request, which made the test server, not the client, the
    bottleneck of 1,000 concurrent reads."""
    bucket = _moto_backend().buckets.get(bucket_name)
    if bucket is None:
        return None
    obj = bucket.keys.get(key) if key in bucket.keys else None
    if obj is None:
        body = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code>'
                f"<Message>The specified key does not exist.</Message><Key>{escape(key)}</Key></Error>").encode()
        return _sized("404 Not Found", [("Content-Type", "application/xml")], body, method)
    data = obj.value
    size = len(data)
    headers = [("ETag", obj.etag), ("Last-Modified", obj.last_modified_RFC1123), ("Accept-Ranges", "bytes"),
               ("Content-Type", "binary/octet-stream")]
    status = "200 OK"
    if range_header:
        unit, _, spec = range_header.partition("=")
        first, _, last = spec.partition("-")
        if unit.strip() != "bytes" or "," in spec or not first.isdigit() or (last and not last.isdigit()):
            return None
        start, end = int(first), min(int(last) if last else size - 1, size - 1)
        if start >= size:
            body = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidRange</Code>'
                    b"<Message>The requested range is not satisfiable</Message></Error>")
            return _sized("416 Requested Range Not Satisfiable",
                          [("Content-Type", "application/xml"), ("Content-Range", f"bytes */{size}")], body, method)
        data = data[start : end + 1]
        headers.append(("Content-Range", f"bytes {start}-{end}/{size}"))
        status = "206 Partial Content"
    return _sized(status, headers, data, method)


def _sized(status: str, headers: list[tuple[str, str]], body: bytes, method: str) -> Answer:
    """Content-Length of the body a GET would get; HEAD gets the headers only."""
    return status, [*headers, ("Content-Length", str(len(body)))], b"" if method == "HEAD" else body


class S3Middleware:
    """WSGI middleware: delay, count and fault injection around moto's application."""

    def __init__(self, app: Callable[..., Iterable[bytes]], delay_ms: float = 0.0) -> None:
        self.app = app
        self.delay_s = delay_ms / 1000.0
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.keys: Counter[str] = Counter()
        self.head_keys: Counter[str] = Counter()
        self.fail_status = 0
        self.fail_count = 0
        self.fail_prefix = ""
        self.fast_listing = FastListing()

    def stats(self) -> dict[str, Any]:
        with self.lock:
            out: dict[str, Any] = {k: self.counts.get(k, 0) for k in ("GET", "LIST", "HEAD", "PUT", "OTHER")}
            out["keys"] = dict(self.keys)
            out["head_keys"] = dict(self.head_keys)
            return out

    def reset(self) -> None:
        with self.lock:
            self.counts.clear()
            self.keys.clear()
            self.head_keys.clear()

    def configure(self, query: dict[str, list[str]]) -> None:
        with self.lock:
            if "delay_ms" in query:
                self.delay_s = float(query["delay_ms"][0]) / 1000.0
            self.fail_status = int(query.get("fail", ["0"])[0])
            self.fail_count = int(query.get("fail_count", ["0"])[0])
            self.fail_prefix = query.get("fail_prefix", [""])[0]

    @staticmethod
    def _kind(method: str, path: str, query: str) -> tuple[str, str]:
        parts = unquote(path).lstrip("/").split("/", 1)
        key = parts[1] if len(parts) > 1 else ""
        if method == "GET":
            if not key or "list-type" in query or "prefix=" in query or "delimiter=" in query:
                return "LIST", key
            return "GET", key
        if method == "HEAD":
            return "HEAD", key
        if method == "PUT":
            return "PUT", key
        return "OTHER", key

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        query = environ.get("QUERY_STRING", "")
        if path == "/__stats":
            body = json.dumps(self.stats()).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        if path == "/__reset":
            self.reset()
            start_response("200 OK", [("Content-Length", "0")])
            return [b""]
        if path == "/__config":
            self.configure(parse_qs(query))
            start_response("200 OK", [("Content-Length", "0")])
            return [b""]
        kind, key = self._kind(method, path, query)
        with self.lock:
            self.counts[kind] += 1
            if kind == "GET":
                self.keys[key] += 1
            elif kind == "HEAD":
                self.head_keys[key] += 1
            fail = 0
            if (self.fail_count > 0 and key.startswith(self.fail_prefix) and kind != "PUT"
                    and not (self.fail_status == 404 and kind == "LIST")):
                self.fail_count -= 1
                fail = self.fail_status
        if self.delay_s:
            time.sleep(self.delay_s)
        if fail:
            code, message = _ERRORS.get(fail, ("Error", "injected"))
            body = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>{message}</Message>'
                    f"<Resource>{path}</Resource><RequestId>0</RequestId></Error>").encode()
            status = {503: "503 Slow Down", 403: "403 Forbidden", 500: "500 Internal Server Error",
                      404: "404 Not Found"}.get(
                fail, f"{fail} Error")
            start_response(status, [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))])
            return [] if method == "HEAD" else [body]
        if kind in ("GET", "HEAD") and key and set(parse_qs(query, keep_blank_values=True)) <= {"x-id"}:
            answer = fast_object(unquote(path).lstrip("/").split("/", 1)[0], key, method,
                                 environ.get("HTTP_RANGE", ""))
            if answer is not None:
                status, headers, body = answer
                start_response(status, headers)
                return [body]
        if kind == "LIST" and method == "GET":
            bucket_name = unquote(path).lstrip("/").split("/", 1)[0]
            body = self.fast_listing.answer(bucket_name, parse_qs(query, keep_blank_values=True))
            if body is not None:
                start_response("200 OK", [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))])
                return [body]
        return self.app(environ, start_response)


class LoopbackS3:
    """moto's S3 on 127.0.0.1:`port` (free port by default), in a thread of this process."""

    def __init__(self, port: int = 0, delay_ms: float = 0.0) -> None:
        from moto.server import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        self.port = port or free_port()
        self.middleware = S3Middleware(DomainDispatcherApplication(create_backend_app), delay_ms)
        self._server = make_server("127.0.0.1", self.port, self.middleware, threaded=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackS3:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join(timeout=10)


#: Credentials the loopback server accepts (moto accepts any); tests and bench pass them explicitly.
ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"


def storage_options(endpoint: str) -> dict[str, Any]:
    """fsspec/s3fs options for the loopback server."""
    return {"key": ACCESS_KEY, "secret": SECRET_KEY, "endpoint_url": endpoint,
            "client_kwargs": {"region_name": REGION}}


def cli_storage_args(endpoint: str) -> list[str]:
    """The same options as `--storage-option` arguments of `hudi-inspect`."""
    return ["--storage-option", f"key={ACCESS_KEY}", "--storage-option", f"secret={SECRET_KEY}",
            "--storage-option", f"endpoint_url={endpoint}"]


def upload_tree(endpoint: str, local_dir: str, bucket: str, prefix: str, threads: int = 32) -> int:
    """Upload every file under `local_dir` to ``s3://bucket/prefix/`` (creating the bucket); returns
    the number of files. Uses boto3 with a thread pool (moto keeps objects in memory)."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    import boto3
    from botocore.config import Config

    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY,
                          aws_secret_access_key=SECRET_KEY, region_name=REGION,
                          config=Config(max_pool_connections=threads))
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=bucket)
    files = []
    for root, _dirs, names in os.walk(local_dir):
        for name in names:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, local_dir).replace(os.sep, "/")
            files.append((full, f"{prefix.strip('/')}/{rel}" if prefix.strip("/") else rel))

    def put(item: tuple[str, str]) -> None:
        full, key = item
        with open(full, "rb") as fh:
            client.put_object(Bucket=bucket, Key=key, Body=fh.read())

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(put, files))
    return len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    args = parser.parse_args()
    server = LoopbackS3(args.port, args.delay_ms).start()
    print(f"READY {server.port}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
