"""The disk reserve's arithmetic on this machine's real disk (tests/integration/test_disk_full.py
fills a real one)."""

from __future__ import annotations

import shutil

import pytest

from services.common.errors import ResourceExhausted
from services.retrieval.disk_space import MB, DiskReserve


def test_a_reserve_above_the_free_space_refuses_writes(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    disk = DiskReserve(tmp_path, free + 1024 * MB)
    assert disk.is_short()
    with pytest.raises(
        ResourceExhausted, match=r"^disk full: [\d,]+ MB free .*\(GLOSSATOR_RETRIEVAL_MIN_FREE_DISK_MB\)"
    ):
        disk.check()


def test_a_write_that_would_cross_the_reserve_is_refused(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    disk = DiskReserve(tmp_path, max(free - 1024 * MB, 0))
    assert not disk.is_short()
    disk.check(64 * MB)  # leaves about 960 MB above the reserve (another writer may take some)
    with pytest.raises(ResourceExhausted, match="disk full"):
        disk.check(2048 * MB)


def test_no_reserve_never_refuses(tmp_path):
    disk = DiskReserve(tmp_path, 0)
    assert not disk.is_short()
    disk.check(1 << 60)
