"""The reader's side of the browser path, shared by tests/browser and bench/browser_first_token.py:
the widget built from clients/web, a docs site on loopback that embeds it (the project's docs/,
rendered from the same parse the ingest uses, so citations land on real heading anchors), the
edge in front of the agent, and the node scripts that drive headless Chromium (playwright-core).
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from bench.harness import ROOT
from services.common.text.display import display_text
from services.retrieval.ingest import ParsedDocument, SourceError, parse_document, read_folder

WIDGET_DIR = ROOT / "clients" / "web"
DOCS_DIR = ROOT / "docs"
CHROMIUM = Path(os.environ.get("GLOSSATOR_CHROMIUM", "/usr/bin/chromium"))
WIDGET_SCRIPT = "/glossator-widget.js"


def missing_browser_tools() -> str | None:
    """Why the browser path cannot run here (None: it can): node, Chromium, clients/web's packages."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not CHROMIUM.exists():
        return f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    if not (WIDGET_DIR / "node_modules" / "playwright-core").is_dir():
        return "clients/web has no node_modules (npm ci --prefix clients/web)"
    return None


def build_widget() -> Path:
    """Generates the contracts' code and bundles the widget (clients/web/build.mjs); the embed's path."""
    built = subprocess.run(
        ["node", "build.mjs"], cwd=WIDGET_DIR, capture_output=True, text=True, timeout=120, check=False
    )
    if built.returncode != 0:
        raise RuntimeError(f"the widget did not build:\n{built.stdout}\n{built.stderr}")
    return WIDGET_DIR / "dist" / "glossator-widget.js"


def docs_pages(base_url: str, folder: Path = DOCS_DIR) -> dict[str, ParsedDocument]:
    """The folder's pages as the ingest parses them, by URL path under base_url."""
    pages = {}
    for item in read_folder(folder):
        if not isinstance(item, SourceError):
            parsed = parse_document(item, base_url)
            pages[urlsplit(parsed.url).path] = parsed
    return pages


def render_page(page: ParsedDocument, widget_tag: str) -> str:
    """A plain docs page: headings with the anchors the citations point at, prose, code."""
    body = []
    for section in page.sections:
        for block in section.blocks:
            if block.kind == "heading":
                level = min(max(block.level, 1), 6)
                anchor = html.escape(block.anchor or section.anchor, quote=True)
                body.append(f'<h{level} id="{anchor}">{html.escape(block.title)}</h{level}>')
            elif block.kind == "code":
                body.append(f"<pre>{html.escape(block.text)}</pre>")
            else:
                body.append(f"<p>{html.escape(display_text(block.text))}</p>")
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(page.title)}</title>"
        "<style>body{font:16px/1.6 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;"
        "color:#1c1e21}pre{background:#f4f5f7;padding:.6rem;overflow:auto}</style>"
        f"</head><body><main>{''.join(body)}</main>{widget_tag}</body></html>"
    )


def widget_tag(endpoint: str, collection: str = "", widget_key: str = "") -> str:
    """The embed snippet, as a site's owner writes it."""
    attributes = {"data-endpoint": endpoint, "data-collection": collection, "data-widget-key": widget_key}
    data = "".join(
        f' {name}="{html.escape(value, quote=True)}"' for name, value in attributes.items() if value
    )
    return f'<script src="{WIDGET_SCRIPT}"{data} defer></script>'


class DocsSite:
    """A docs site on a free loopback port: its pages, each with the widget's tag, and the bundle.
    Its port is known before its pages (they link to the edge, which needs the site's origin)."""

    def __init__(self, bundle: Path) -> None:
        self.pages: dict[str, ParsedDocument] = {}
        self.widget_tag = ""
        self.page_tags: dict[str, str] = {}  # pages embedding the widget otherwise (another key)
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                if path == WIDGET_SCRIPT:
                    self._send(200, "text/javascript", bundle.read_bytes())
                elif path in site.pages:
                    self._send(
                        200,
                        "text/html; charset=utf-8",
                        render_page(site.pages[path], site.page_tags.get(path, site.widget_tag)).encode(),
                    )
                else:
                    self._send(404, "text/plain", b"not found")

            def _send(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """A page's URL; another host name (localhost) is another origin on the same server."""
        return f"http://{host}:{self.port}{path}"

    @contextmanager
    def serving(self) -> Iterator[DocsSite]:
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()


async def run_driver(script: str, config: dict, timeout: float = 120) -> dict:
    """Runs clients/web/test/<script> with the config as JSON on stdin; its JSON report from stdout.
    A failing script's stderr (the browser's console, the step that failed) is in the error."""
    process = await asyncio.create_subprocess_exec(
        "node",
        str(WIDGET_DIR / "test" / script),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ, GLOSSATOR_CHROMIUM=str(CHROMIUM)),
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(json.dumps(config).encode()), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        raise RuntimeError(f"{script} failed ({process.returncode}):\n{stderr.decode()[-4000:]}")
    return json.loads(stdout)


@asynccontextmanager
async def edge(agent_port: int, allowed_origins: list[str], **settings: str) -> AsyncIterator[str]:
    """`glossator web` (Envoy in front of the agent) on a free port for the allowed origins, with
    more GLOSSATOR_EDGE_* settings by field name; yields its URL once it says ready."""
    with tempfile.TemporaryDirectory(prefix="glossator-edge-") as config_dir:
        values = {
            "port": "0",
            "admin_port": "0",
            "agent_target": f"127.0.0.1:{agent_port}",
            "allowed_origins": json.dumps(allowed_origins),
            "config_dir": config_dir,
            **settings,
        }
        env = dict(os.environ, **{f"GLOSSATOR_EDGE_{name.upper()}": value for name, value in values.items()})
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "services.cli",
            "web",
            "--log-format",
            "json",
            cwd=ROOT,
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        lines: deque[str] = deque(maxlen=50)
        try:
            address = await asyncio.wait_for(_edge_address(process, lines), 60)
            # Envoy and the command go on logging: keep reading, or a full pipe would stall them.
            draining = asyncio.create_task(_drain(process, lines))
            try:
                yield f"http://{address}"
            finally:
                process.terminate()
                await process.wait()
                await draining
        except BaseException:
            if process.returncode is None:
                process.kill()
                await process.wait()
            raise


async def _edge_address(process: asyncio.subprocess.Process, lines: deque[str]) -> str:
    """The edge's host:port from `glossator web`'s JSON start-up events, once it is ready."""
    address = ""
    while line := await process.stderr.readline():
        lines.append(line.decode(errors="replace"))
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "listening" and event.get("service") == "edge":
            address = event["address"]
        elif event.get("event") == "ready" and address:
            return address
    await process.wait()
    raise RuntimeError(f"glossator web ended ({process.returncode}) before it was ready:\n{''.join(lines)}")


async def _drain(process: asyncio.subprocess.Process, lines: deque[str]) -> None:
    while line := await process.stderr.readline():
        lines.append(line.decode(errors="replace"))
