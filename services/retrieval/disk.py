"""The free-space reserve of the data directory, checked before every write an Ingest makes.

The embedded store maps its files into memory: a write that finds the disk full ends the process
by SIGBUS, with no log line, and a restart crash-loops. So writes stop while less than the reserve
is free (RESOURCE_EXHAUSTED "disk full"; Search goes on), well before the store could hit the wall.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import structlog

from services.common.errors import ResourceExhausted

log = structlog.get_logger(__name__)


class DiskReserve:
    def __init__(self, folder: Path, reserve_bytes: int) -> None:
        self._folder = folder
        self._reserve_bytes = reserve_bytes

    def free_bytes(self) -> int:
        folder = self._folder
        while not folder.exists() and folder != folder.parent:  # the data dir may not exist yet
            folder = folder.parent
        return shutil.disk_usage(folder).free

    def check(self) -> None:
        """ResourceExhausted while less than the reserve is free."""
        if self._reserve_bytes and (free := self.free_bytes()) < self._reserve_bytes:
            raise ResourceExhausted(
                f"disk full: {free / 2**20:,.0f} MiB free under {self._folder}, below the reserve of "
                f"{self._reserve_bytes / 2**20:,.0f} MiB (GLOSSATOR_RETRIEVAL_MIN_FREE_DISK_BYTES); "
                "searches go on, ingests wait for space"
            )

    def warn_if_full(self) -> None:
        """At start: a full disk serves read-only, and says so."""
        try:
            self.check()
        except ResourceExhausted as full:
            log.warning("disk_full_read_only", folder=str(self._folder), message=str(full))
