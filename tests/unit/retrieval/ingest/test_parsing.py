from __future__ import annotations

import pytest

from services.retrieval.ingest.documents import (
    DocumentError,
    SourceDocument,
    derive_document_id,
    guess_format,
)
from services.retrieval.ingest.parsing import parse_document


def doc(content: str, source_path: str = "guides/01-setup.md", **fields) -> SourceDocument:
    return SourceDocument(source_path=source_path, content=content, **fields)


def test_binary_content_is_refused() -> None:
    with pytest.raises(DocumentError, match="NUL"):
        parse_document(doc("PK\x03\x04\x00\x00binary"))
    undecodable = "\ufffd\x01\x02" * 100 + "some text"
    with pytest.raises(DocumentError, match="looks binary"):
        parse_document(doc(undecodable))


def test_a_few_control_characters_are_still_text() -> None:
    assert (
        parse_document(doc("# Title\n\nA form feed \x0c and a bell \x07 in a long enough text.")).title
        == "Title"
    )


def test_size_limit_given_by_the_caller() -> None:
    content = "# Big\n\n" + "word " * 300
    with pytest.raises(DocumentError, match=r"1,507 bytes, over the limit of 1,024 bytes"):
        parse_document(doc(content), max_bytes=1024)
    assert parse_document(doc(content), max_bytes=2048).title == "Big"


def test_broken_front_matter_is_a_document_error() -> None:
    with pytest.raises(DocumentError, match="front matter is broken"):
        parse_document(doc("---\ntitle: [oops\n---\n# x\n"))


def test_front_matter_size_limit_given_by_the_caller() -> None:
    content = "---\ndescription: " + "x" * 2000 + "\n---\n# Long description\n"
    with pytest.raises(DocumentError, match=r"front matter is 2,014 bytes, over the limit of 1,024 bytes"):
        parse_document(doc(content), max_front_matter_bytes=1024)
    assert parse_document(doc(content), max_front_matter_bytes=4096).title == "Long description"


@pytest.mark.parametrize(
    "source_path", ["javascript:alert(1).md", "JavaScript:alert(1).html", "file:///etc/x.md"]
)
def test_a_document_url_that_is_no_link_is_a_document_error(source_path: str) -> None:
    """With no base URL and no source_url, the source path is the URL: it must not bring a scheme."""
    with pytest.raises(
        DocumentError, match=r"^the document's URL must be an http\(s\) URL or a relative URL"
    ):
        parse_document(doc("# x", source_path=source_path))
    assert parse_document(doc("# x", source_path=source_path), "https://x.org/docs/").url.startswith(
        "https://x.org/docs/"
    )


def test_formats_from_extensions() -> None:
    assert [
        guess_format(path) for path in ("a.md", "b.MDX", "c.html", "d.htm", "e.txt", "https://s.org/page")
    ] == [
        "markdown",
        "mdx",
        "html",
        "html",
        "text",
        "html",
    ]
    with pytest.raises(DocumentError, match="cannot tell the format"):
        parse_document(doc("x", source_path="image.png"))
    with pytest.raises(DocumentError, match="unknown format"):
        doc("x", format="pdf")


def test_title_comes_from_front_matter_then_h1_then_the_given_title_then_the_path() -> None:
    assert parse_document(doc("---\ntitle: Front\n---\n# Heading\n")).title == "Front"
    assert parse_document(doc("# Heading\n\ntext")).title == "Heading"
    assert parse_document(doc("## Only H2\n", title="Given")).title == "Given"
    assert parse_document(doc("text", source_path="02-install-guide/README.md")).title == "install guide"


def test_document_ids_are_the_normalised_source_path_unless_given() -> None:
    assert parse_document(doc("x", source_path="./guides\\01-setup.md")).document_id == "guides/01-setup.md"
    assert parse_document(doc("x", document_id="my-id")).document_id == "my-id"
    assert derive_document_id("/a//b/../c.md") == "a/c.md"
    assert derive_document_id("HTTPS://Site.ORG/Docs/Page#part") == "https://site.org/Docs/Page"
    with pytest.raises(DocumentError, match="does not name a document"):
        derive_document_id("./")


def test_plain_text_is_one_section_of_paragraphs() -> None:
    parsed = parse_document(doc("First paragraph.\n\nSecond one.\n", source_path="notes.txt"))
    assert parsed.format == "text"
    assert [[block.text for block in section.blocks] for section in parsed.sections] == [
        ["First paragraph.", "Second one."]
    ]
    assert parsed.url == "notes.txt"
