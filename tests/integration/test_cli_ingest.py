"""`glossator ingest` at its edges: a site that cannot be reached, a folder without a page, a
single file, and Ctrl-C in the middle of a crawl."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
import pytest

from bench.harness import ROOT, free_port
from glossator.v1 import retrieval_pb2
from services.cli import main
from services.commands import exit_codes
from tests.integration.test_cli import run_cli

PAGE = "<html><head><title>Page {n}</title></head><body><main><h1>Page {n}</h1><p>{text}</p></main></body></html>"


def _retrieval(suite) -> list[str]:
    return ["--retrieval", f"127.0.0.1:{suite.servers['retrieval'].port}"]


async def _collections(suite) -> list[str]:
    reply = await suite.retrieval.ListCollections(retrieval_pb2.ListCollectionsRequest(), timeout=10)
    return [c.name for c in reply.collections]


async def test_an_unreachable_site_exits_3_with_its_cause_and_creates_no_collection(suite, capsys):
    port, collection = free_port(), f"site-{uuid.uuid4().hex[:8]}"
    sitemap = f"http://127.0.0.1:{port}/sitemap.xml"
    code = await run_cli(["ingest", sitemap, "--collection", collection, "--quiet", *_retrieval(suite)])
    err = capsys.readouterr().err
    assert code == exit_codes.UNREACHABLE  # a scheduler may retry it (k8s/examples/ingest-job.yaml)
    assert (
        err == f"error: cannot fetch sitemap {sitemap}: cannot reach 127.0.0.1:{port}: connection refused\n"
    )
    assert collection not in await _collections(suite)


async def test_a_crawl_that_fails_prunes_nothing(suite, tmp_path, capsys):
    """The source failed, so the run is not complete: --prune must not take it for the whole site."""
    collection = f"kept-{uuid.uuid4().hex[:8]}"
    (tmp_path / "tides.md").write_text("# Tides\n\nTides rise and fall twice a day.")
    assert await run_cli(["ingest", str(tmp_path), "--collection", collection, *_retrieval(suite)]) == 0
    sitemap = f"http://127.0.0.1:{free_port()}/sitemap.xml"
    argv = ["ingest", sitemap, "--collection", collection, "--prune", "--quiet", *_retrieval(suite)]
    assert await run_cli(argv) == exit_codes.UNREACHABLE
    stats = await suite.retrieval.Stats(retrieval_pb2.StatsRequest(collection=collection), timeout=10)
    assert stats.documents == 1


def test_a_folder_without_pages_says_which_files_are_read(tmp_path, capsys):
    (tmp_path / "index.rst").write_text("Title\n=====\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    code = main(["ingest", str(tmp_path), "--embedded", str(tmp_path / ".data")])
    assert code == exit_codes.NOT_FOUND
    assert capsys.readouterr().err == (
        f"error: no pages in {tmp_path}: glossator reads .htm, .html, .markdown, .md, .mdx, .txt files "
        "(found 2 .png, 1 .rst)\n"
    )


async def test_a_single_file_is_ingested_under_its_name(suite, tmp_path, capsys):
    page = tmp_path / "lighthouses.md"
    page.write_text("# Lighthouses\n\nKeepers tend the lamp and log every passing ship.")
    collection = f"file-{uuid.uuid4().hex[:8]}"
    code = await run_cli(["ingest", str(page), "--collection", collection, *_retrieval(suite)])
    assert code == exit_codes.OK, capsys.readouterr().err
    listed = await suite.retrieval.ListDocuments(retrieval_pb2.ListDocumentsRequest(collection=collection))
    assert [d.source_path for d in listed.documents] == ["lighthouses.md"]

    # One file is not the whole source: pruning with it would delete every other document.
    prune = ["ingest", str(page), "--collection", collection, "--prune", *_retrieval(suite)]
    assert await run_cli(prune) == exit_codes.USAGE
    assert "--prune with one file would delete every other document" in capsys.readouterr().err

    (tmp_path / "notes.rst").write_text("Notes\n=====\n")
    assert await run_cli(["ingest", str(tmp_path / "notes.rst"), *_retrieval(suite)]) == exit_codes.USAGE
    assert "is not a file glossator reads: it reads .htm, .html" in capsys.readouterr().err
    with pytest.raises(grpc.aio.AioRpcError):  # nothing was sent: no collection "default" made
        await suite.retrieval.Stats(retrieval_pb2.StatsRequest(collection="never-" + collection))


class _SlowSite:
    """A site on loopback whose pages take a while each; `requested` is set at the third page."""

    def __init__(self, pages: int, seconds_per_page: float) -> None:
        self.requested = threading.Event()
        self.pages_served = 0
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/sitemap.xml":
                    urls = "".join(f"<url><loc>{site.url}/p{n}.html</loc></url>" for n in range(pages))
                    body, kind = f"<urlset>{urls}</urlset>", "application/xml"
                elif self.path.startswith("/p"):
                    site.pages_served += 1
                    if site.pages_served >= 3:
                        site.requested.set()
                    threading.Event().wait(seconds_per_page)
                    n = self.path[2:].removesuffix(".html")
                    body, kind = (
                        PAGE.format(n=n, text=f"Page {n} tells of tides, lamps and keepers."),
                        "text/html",
                    )
                else:  # robots.txt: none, everything allowed
                    self.send_error(404)
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@contextmanager
def _serving(site: _SlowSite) -> Iterator[_SlowSite]:
    thread = threading.Thread(target=site.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.server.shutdown()
        site.server.server_close()


def test_ctrl_c_mid_crawl_says_run_again_exits_130_and_a_run_again_finishes(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith("GLOSSATOR_")}
    with _serving(_SlowSite(pages=12, seconds_per_page=0.2)) as site:
        argv = [sys.executable, "-m", "services.cli", "ingest", f"{site.url}/sitemap.xml"]
        argv += ["--embedded", str(tmp_path / "data")]
        process = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert site.requested.wait(120), "the crawl never reached its pages"
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            process.kill()
        assert process.returncode == exit_codes.INTERRUPTED, err
        assert err.rstrip().endswith(
            "interrupted; run again to resume (documents already stored are skipped)"
        )
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        assert out == ""

        again = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert again.returncode == exit_codes.OK, again.stderr
    assert again.stdout.startswith("12 documents: ")
