"""Room on the data directory's disk, checked before the embedded store writes.

The embedded engine maps its segment and WAL files: on a full filesystem it died by SIGBUS (no
Python error, no log line), on collection creation and mid-ingest, and restarts crash-looped
until space was freed. So every write that adds data first checks that the disk keeps a reserve
free after it (GLOSSATOR_RETRIEVAL_MIN_FREE_DISK_MB). Under it, Ingest is RESOURCE_EXHAUSTED
"disk full" while Search goes on; deletes, which make room, go on too. Opening a collection's files
writes too (a new log segment): with too little room for that, the call is refused, not the process killed.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from services.common.errors import ResourceExhausted

MB = 1024 * 1024
NEW_COLLECTION_BYTES = 96 * MB
"""What creating a collection writes at once: its two shards' write-ahead logs and first segment
files (77 MB measured on a tmpfs). The logs grow by 32 MB segments: keep the reserve above 64 MB."""


OPEN_MARGIN_BYTES = 8 * MB


@dataclass(frozen=True)
class DiskReserve:
    """Keeps `reserve_bytes` free on the filesystem of `path` (0: no check)."""

    path: Path
    reserve_bytes: int

    def free_bytes(self) -> int:
        return shutil.disk_usage(self.path).free

    def is_short(self) -> bool:
        return bool(self.reserve_bytes) and self.free_bytes() < self.reserve_bytes

    def check_room_to_open(self, opening_bytes: int) -> None:
        """ResourceExhausted when opening files that write `opening_bytes` would fill the disk: the
        reserve is for ingests, so a start under it still opens collections and serves Search."""
        free = self.free_bytes()
        if free < opening_bytes + OPEN_MARGIN_BYTES:
            raise ResourceExhausted(
                f"disk full: {free / MB:,.0f} MB free on the data directory's disk, too little to open "
                f"this collection's files (they need about {opening_bytes / MB:,.0f} MB); free space and retry"
            )

    def check(self, writing_bytes: int = 0) -> None:
        """ResourceExhausted when writing `writing_bytes` would leave less than the reserve free."""
        if not self.reserve_bytes:
            return
        free = self.free_bytes()
        if free - writing_bytes < self.reserve_bytes:
            raise ResourceExhausted(
                f"disk full: {free / MB:,.0f} MB free on the data directory's disk, under the "
                f"{self.reserve_bytes / MB:,.0f} MB the retrieval service keeps in reserve "
                "(GLOSSATOR_RETRIEVAL_MIN_FREE_DISK_MB); free space, then ingest again: the documents "
                "already acknowledged are stored, and Search goes on meanwhile"
            )
