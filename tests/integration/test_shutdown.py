"""SIGTERM on a real `glossator serve` process: running streams finish within the grace period,
health says NOT_SERVING for the drain delay first, and the process exits within grace plus the
exit margin whatever is still running."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.harness import ROOT, start_services
from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.common.clients import make_channel

GRACE_SECONDS = 15


def _document(i: int) -> retrieval_pb2.IngestRequest:
    text = f"# Page {i}\n\nThis page number {i} explains topic {i} in a short paragraph of plain words."
    return retrieval_pb2.IngestRequest(
        document=retrieval_pb2.Document(source_path=f"page-{i}.md", content=text)
    )


def _slow_document(sections: int) -> retrieval_pb2.IngestRequest:
    """A document whose chunks and sentences take the model many seconds to embed (in a worker
    thread that cancelling the call cannot stop)."""
    words = ["river", "bridge", "engine", "valve", "signal", "harbour", "lantern", "orchard", "quarry"]
    parts = [
        f"## Part {s}\n\n"
        + " ".join(
            f"Section {s} sentence {k} mentions the {words[(s + k) % 9]} and the {words[s * k % 9]}."
            for k in range(14)
        )
        for s in range(sections)
    ]
    text = "# Long\n\n" + "\n\n".join(parts)
    return retrieval_pb2.IngestRequest(document=retrieval_pb2.Document(source_path="long.md", content=text))


async def _health(channel: grpc.aio.Channel) -> str:
    try:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
    except grpc.aio.AioRpcError:
        return "gone"
    return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


async def _exit_seconds(process, since: float) -> float:
    """Seconds from `since` until the process exited (it is killed after 60 s)."""
    await asyncio.to_thread(process.wait, 60)
    return time.monotonic() - since


async def test_sigterm_during_a_long_ingest_stream_lets_it_finish(tmp_path):
    service = await start_services(
        tmp_path, ["retrieval"], {"GLOSSATOR_RETRIEVAL_GRACE_SECONDS": str(GRACE_SECONDS)}
    )
    target = f"127.0.0.1:{service.ports['retrieval']}"
    terminated = asyncio.Event()

    async def requests():
        yield retrieval_pb2.IngestRequest(options=retrieval_pb2.IngestOptions(collection="drain"))
        for i in range(8):
            if i == 3:
                service.process.send_signal(signal.SIGTERM)
                terminated.set()
            yield _document(i)
            await asyncio.sleep(0.3)

    try:
        async with make_channel(target) as channel:
            replies = [
                r
                async for r in retrieval_pb2_grpc.RetrievalServiceStub(channel).Ingest(requests(), timeout=60)
            ]
            assert terminated.is_set()
            assert await _health(channel) in ("NOT_SERVING", "gone")
        documents = [r.document for r in replies if r.HasField("document")]
        assert [d.status for d in documents] == [retrieval_pb2.DOCUMENT_STATUS_INDEXED] * 8
        assert replies[-1].HasField("summary") and replies[-1].summary.documents_indexed == 8
        stop_started = time.monotonic()
        assert service.process.wait(timeout=GRACE_SECONDS + 10) == 0
        assert time.monotonic() - stop_started < GRACE_SECONDS + 10
    finally:
        if service.process.poll() is None:
            service.process.kill()


async def test_a_call_still_running_after_the_grace_period_does_not_keep_the_process_alive(tmp_path):
    grace, margin = 1.0, 2.0
    service = await start_services(
        tmp_path,
        ["retrieval"],
        {
            "GLOSSATOR_RETRIEVAL_GRACE_SECONDS": str(grace),
            "GLOSSATOR_RETRIEVAL_EXIT_MARGIN_SECONDS": str(margin),
        },
    )
    try:
        async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
            options = retrieval_pb2.IngestRequest(options=retrieval_pb2.IngestOptions(collection="slow"))
            call = retrieval_pb2_grpc.RetrievalServiceStub(channel).Ingest(
                iter([options, _slow_document(800)])  # about 15 s of int8 model on 2 cores
            )
            await asyncio.sleep(3)  # the model is embedding the document
            assert not call.done()
            service.process.send_signal(signal.SIGTERM)
            exit_seconds = await _exit_seconds(service.process, time.monotonic())
            assert exit_seconds < grace + margin + 1.0
            try:
                replies = [r async for r in call]
            except grpc.aio.AioRpcError as error:
                assert error.code() in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE)
            else:
                raise AssertionError(f"the call was not cut: {replies}")
    finally:
        if service.process.poll() is None:
            service.process.kill()


async def test_health_says_not_serving_for_the_drain_delay_while_calls_are_still_served(tmp_path):
    drain = 2.0
    service = await start_services(
        tmp_path,
        ["retrieval"],
        {"GLOSSATOR_RETRIEVAL_DRAIN_SECONDS": str(drain), "GLOSSATOR_RETRIEVAL_GRACE_SECONDS": "1"},
    )
    try:
        async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
            retrieval = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            terminated_at = time.monotonic()
            service.process.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.5)
            assert await _health(channel) == "NOT_SERVING"
            with pytest.raises(grpc.aio.AioRpcError) as caught:  # answered by the servicer itself
                await retrieval.Stats(retrieval_pb2.StatsRequest(collection="none"), timeout=5)
            assert caught.value.code() == grpc.StatusCode.NOT_FOUND
            assert service.process.poll() is None
            exit_seconds = await _exit_seconds(service.process, terminated_at)
            assert drain <= exit_seconds < drain + 1 + 2.0
            assert service.process.returncode == 0
    finally:
        if service.process.poll() is None:
            service.process.kill()


# A server whose cleanup blocks the event loop, so that no timeout inside the process can fire.
_STUCK_SERVER = """
import time
from services.common.logging import configure_logging
from services.common.server import create_server, run_server_process, run_until_signal
from services.common.settings import ServiceSettings

async def main():
    settings = ServiceSettings(host="127.0.0.1", port=0, grace_seconds=0.5, exit_margin_seconds=1)
    server = create_server("stuck", settings, lambda grpc_server: [])

    async def blocking_cleanup():
        time.sleep(60)

    server.cleanups.append(blocking_cleanup)
    await run_until_signal([server], on_started=lambda: print(server.port, flush=True))

configure_logging()
run_server_process(main())
"""


async def test_a_shutdown_that_hangs_is_cut_short_by_the_watchdog():
    process = subprocess.Popen(
        [sys.executable, "-c", _STUCK_SERVER],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert (await asyncio.to_thread(process.stdout.readline)).strip().isdigit()
        process.send_signal(signal.SIGTERM)
        exit_seconds = await _exit_seconds(process, time.monotonic())
        assert exit_seconds < 0.5 + 1 + 0.5 + 1.0
        assert process.returncode == 1
        assert '"event": "shutdown_overran"' in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
