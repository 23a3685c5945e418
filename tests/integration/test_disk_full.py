"""A full disk, for real: `glossator serve retrieval` on a 320 MB tmpfs of its own (a private mount
namespace, so nothing outside the test sees it), the disk filled by a file beside the data.

The embedded store once died by SIGBUS there, on collection creation and mid-ingest, and restarts
crash-looped. Now an Ingest that would leave less than the reserve free ends RESOURCE_EXHAUSTED
"disk full" after the documents it acknowledged, Search goes on, and a start on a full disk says
so and serves Search read-only. Needs root (mount namespaces); skipped elsewhere.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from bench.harness import free_port, wait_serving
from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import async_iter
from services.common.clients import make_channel

ROOT = Path(__file__).resolve().parents[2]
DISK_MB = 320  # a new collection takes 77 MB of it, and opening it again 57 MB
RESERVE_MB = 100
MB = 1024 * 1024

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"),
    reason="needs root, unshare and nsenter to mount a private tmpfs",
)


class SmallDisk:
    """A tmpfs mounted in a private mount namespace, held open by a sleeping process; commands
    run inside it with nsenter."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir()
        script = f"mount -t tmpfs -o size={DISK_MB}m glossator-test {path} && echo mounted && exec sleep 600"
        self.holder = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.holder.stdout.readline().strip() == "mounted"

    def run(self, *command: str, **options) -> subprocess.Popen:
        return subprocess.Popen(["nsenter", "-t", str(self.holder.pid), "-m", *command], **options)

    def free_bytes(self) -> int:
        out = subprocess.run(
            ["nsenter", "-t", str(self.holder.pid), "-m", "stat", "-f", "-c", "%a %S", str(self.path)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        return int(out[0]) * int(out[1])

    def fill_until_free(self, free_bytes: int) -> None:
        """Grows a filler file until `free_bytes` are left."""
        grow = self.free_bytes() - free_bytes
        if grow > 0:
            filler = self.path / f"filler-{grow}"
            assert self.run("fallocate", "-l", str(grow), str(filler)).wait(timeout=30) == 0

    def close(self) -> None:
        self.holder.kill()
        self.holder.wait(timeout=30)


class Retrieval:
    """`glossator serve retrieval` on the small disk, its log in `log`."""

    def __init__(self, disk: SmallDisk, log: Path) -> None:
        self.port = free_port()
        self.log = log
        env = dict(
            os.environ,
            GLOSSATOR_RETRIEVAL_PORT=str(self.port),
            GLOSSATOR_RETRIEVAL_DATA_DIR=str(disk.path / "data"),
            GLOSSATOR_RETRIEVAL_MIN_FREE_DISK_MB=str(RESERVE_MB),
            GLOSSATOR_RETRIEVAL_EMBED_SENTENCES="false",
            GLOSSATOR_RETRIEVAL_LOG_FORMAT="json",
            GLOSSATOR_RETRIEVAL_METRICS_PORT="0",
        )
        with log.open("ab") as out:
            self.process = disk.run(
                sys.executable,
                "-m",
                "services.cli",
                "serve",
                "retrieval",
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=out,
            )

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


def _page(number: int, words: int) -> retrieval_pb2.Document:
    sentences = " ".join(
        f"Lighthouse {number} keeps lamp {i} burning through storm {i % 17} for the sailors of bay {number}."
        for i in range(words // 14)
    )
    return retrieval_pb2.Document(source_path=f"page-{number}.md", content=f"# Page {number}\n\n{sentences}")


async def _ingest(stub, documents) -> tuple[list[retrieval_pb2.DocumentResult], grpc.aio.AioRpcError | None]:
    options = retrieval_pb2.IngestOptions(collection="book")
    requests = [retrieval_pb2.IngestRequest(options=options)]
    requests += [retrieval_pb2.IngestRequest(document=document) for document in documents]
    results = []
    try:
        async for reply in stub.Ingest(async_iter(requests), timeout=120):
            if reply.HasField("document"):
                results.append(reply.document)
    except grpc.aio.AioRpcError as error:
        return results, error
    return results, None


async def _found(stub, query: str) -> list[str]:
    reply = await stub.Search(retrieval_pb2.SearchRequest(query=query, collection="book"), timeout=30)
    return [result.chunk.source_path for result in reply.results]


async def test_a_full_disk_refuses_ingest_keeps_search_and_a_restart_serves_read_only(tmp_path):
    disk = SmallDisk(tmp_path / "disk")
    server = None
    try:
        server = Retrieval(disk, tmp_path / "retrieval.log")
        await wait_serving(server.target, server.process)
        async with make_channel(server.target) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            results, error = await _ingest(stub, [_page(1, 200)])
            assert error is None and [r.status for r in results] == [retrieval_pb2.DOCUMENT_STATUS_INDEXED]

            # 1.5 MB above the reserve: a few pages fit (each is checked for a generous guess of its size).
            disk.fill_until_free(RESERVE_MB * MB + 3 * MB // 2)
            results, error = await _ingest(stub, [_page(number, 6_000) for number in range(2, 12)])
            assert error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
            assert error.details().startswith("disk full: ")
            assert len(results) < 10
            assert all(r.status == retrieval_pb2.DOCUMENT_STATUS_INDEXED for r in results)
            assert disk.free_bytes() >= RESERVE_MB * MB - MB  # the store never wrote into the reserve
            assert "page-1.md" in await _found(stub, "Which lamp does lighthouse 1 keep burning?")
            for result in results:  # what was acknowledged is stored
                number = result.source_path.removeprefix("page-").removesuffix(".md")
                assert result.source_path in await _found(
                    stub, f"lighthouse {number} sailors of bay {number}"
                )
        assert server.process.poll() is None, "the server died"
        server.stop()

        # Under the reserve, with room to open the collection's files: Search, and no Ingest.
        disk.fill_until_free(RESERVE_MB * MB - 10 * MB)
        server = Retrieval(disk, tmp_path / "retrieval.log")
        await wait_serving(server.target, server.process)
        async with make_channel(server.target) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            assert "page-1.md" in await _found(stub, "Which lamp does lighthouse 1 keep burning?")
            results, error = await _ingest(stub, [_page(20, 200)])
            assert error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert results == []
        assert '"event": "disk_full_read_only"' in (tmp_path / "retrieval.log").read_text()
        server.stop()

        # Too little room even to open the files: the call is refused, the process lives on.
        disk.fill_until_free(20 * MB)
        server = Retrieval(disk, tmp_path / "retrieval.log")
        await wait_serving(server.target, server.process)
        async with make_channel(server.target) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await _found(stub, "Which lamp does lighthouse 1 keep burning?")
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "too little to open" in refused.value.details()
        assert server.process.poll() is None, "the server died"
    finally:
        if server is not None:
            server.stop()
        disk.close()
