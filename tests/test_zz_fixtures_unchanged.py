"""Runs last: the fixture trees every other test read are byte-for-byte what was unzipped."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import _CHECKSUMS, fixtures_root, tree_checksum


def test_unzipped_fixture_trees_unchanged(fixtures_dir: Path) -> None:
    assert _CHECKSUMS.get("fixtures"), "fixtures were unzipped by this session"
    assert tree_checksum(fixtures_dir) == _CHECKSUMS["fixtures"]


def test_shared_fixture_archives_match_their_sums() -> None:
    root = fixtures_root()
    if root is None:
        pytest.skip("no Hudi fixtures: set HUDI_FIXTURES or provide ../shared/fixtures/hudi-rs")
    sums = root.parent / "SHA256SUMS"
    if not sums.exists():
        return
    for line in sums.read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        path = root.parent / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, name
