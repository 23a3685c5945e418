from __future__ import annotations

from services.retrieval.ingest.documents import SourceDocument
from services.retrieval.ingest.html import parse_html
from services.retrieval.ingest.parsing import parse_document

DOCUSAURUS_PAGE = """<!doctype html>
<html><head><title>Install | My Site</title><style>.x{color:red}</style></head>
<body>
<nav class="navbar">Home Docs Blog</nav>
<div class="main-wrapper">
  <aside class="theme-doc-sidebar-container"><ul><li>Sidebar link</li></ul></aside>
  <main>
    <nav aria-label="Breadcrumbs" class="theme-doc-breadcrumbs">Docs / Install</nav>
    <article>
      <div class="theme-doc-markdown markdown">
        <header><h1>Install</h1></header>
        <p>Glossator runs <strong>anywhere</strong> Python&nbsp;runs.</p>
        <h2 class="anchor" id="on-linux">On Linux<a href="#on-linux" class="hash-link">\u200b</a></h2>
        <ul><li>Step one<ul><li>detail</li></ul></li><li>Step two</li></ul>
        <pre class="prism-code language-bash"><code><span class="token-line">pip install x<br></span><span
          class="token-line">glossator up<br></span></code></pre>
        <table><thead><tr><th>Name</th><th>Value</th></tr></thead>
          <tbody><tr><td>a|b</td><td>1</td></tr></tbody></table>
        <h3>No id here</h3>
        <p>Text.</p>
      </div>
      <nav class="pagination-nav">Previous Next</nav>
    </article>
    <div class="theme-doc-toc-desktop">On this page</div>
  </main>
</div>
<footer class="footer">Copyright</footer>
<script>console.log("x")</script>
</body></html>"""


def test_main_content_becomes_blocks_without_boilerplate() -> None:
    title, blocks = parse_html(DOCUSAURUS_PAGE)
    assert title == "Install | My Site"
    assert [(block.kind, block.text) for block in blocks] == [
        ("heading", "# Install"),
        ("text", "Glossator runs anywhere Python runs."),
        ("heading", "## On Linux"),
        ("text", "- Step one\n  - detail\n- Step two"),
        ("code", "```bash\npip install x\nglossator up\n```"),
        ("table", "| Name | Value |\n| --- | --- |\n| a\\|b | 1 |"),
        ("heading", "### No id here"),
        ("text", "Text."),
    ]
    assert blocks[2].anchor == "on-linux"


def test_parsed_page_keeps_its_own_url_and_anchors() -> None:
    doc = SourceDocument(
        source_path="https://site.org/docs/install",
        source_url="https://site.org/docs/install",
        content=DOCUSAURUS_PAGE,
    )
    parsed = parse_document(doc, base_url="https://elsewhere.org/")
    assert parsed.format == "html"
    assert parsed.title == "Install"
    assert parsed.url == "https://site.org/docs/install"
    assert [(section.path, section.anchor) for section in parsed.sections] == [
        (("Install",), "install"),
        (("Install", "On Linux"), "on-linux"),
        (("Install", "On Linux", "No id here"), "no-id-here"),
    ]


def test_a_page_without_landmarks_uses_its_body() -> None:
    _, blocks = parse_html("<html><body><header><a href='/'>Logo</a></header><p>Only text</p></body></html>")
    assert [block.text for block in blocks] == ["Only text"]
