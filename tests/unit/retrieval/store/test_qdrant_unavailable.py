"""A Qdrant server that is down is UNAVAILABLE, named by URL, and the store recovers when it returns."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from services.common.errors import Unavailable
from services.retrieval.store import SearchMode
from services.retrieval.store.qdrant import QdrantClientStore
from tests.unit.retrieval.store.helpers import DIMS, ENCODER, MODEL, query_vector


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _CollectionsOnly(BaseHTTPRequestHandler):
    """Just enough of Qdrant's REST API for list_collections: GET /collections."""

    def do_GET(self) -> None:
        if self.path.split("?")[0] != "/collections":
            self.send_error(404)
            return
        names = [{"name": "books"}, {"name": "books.documents"}, {"name": "unrelated"}]
        body = json.dumps({"result": {"collections": names}, "status": "ok", "time": 0.0}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@contextmanager
def fake_qdrant(port: int) -> Iterator[None]:
    server = ThreadingHTTPServer(("127.0.0.1", port), _CollectionsOnly)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_closed_port_is_unavailable_with_the_url_and_the_store_recovers():
    port = closed_port()
    url = f"http://127.0.0.1:{port}"
    store = QdrantClientStore(url, timeout_seconds=2)
    try:
        for call in (
            store.list_collections,
            lambda: store.ensure_collection("books", DIMS, MODEL),
            lambda: store.collection_info("books"),
            lambda: store.search("books", query_vector(), ENCODER.encode_query("x"), SearchMode.HYBRID, 5),
        ):
            with pytest.raises(Unavailable, match=f"Qdrant at {url} is unreachable"):
                call()
        with fake_qdrant(port):
            assert store.list_collections() == ["books"]  # the same client works once the server is back
        with pytest.raises(Unavailable):
            store.list_collections()
    finally:
        store.close()
