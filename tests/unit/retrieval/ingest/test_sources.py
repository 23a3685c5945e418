from __future__ import annotations

from pathlib import Path

import pytest

from services.retrieval.ingest.documents import SourceDocument, SourceError
from services.retrieval.ingest.sources import read_folder
from tests.unit.retrieval.ingest.helpers import PHYSICAL_AI_DOCS, corpus


def write(root: Path, relative: str, content: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def test_pages_in_sorted_order_with_category_labels_and_per_file_errors(tmp_path: Path) -> None:
    write(tmp_path, "02-guides/_category_.json", '{"label": "User Guides", "position": 2}')
    write(tmp_path, "02-guides/10-advanced/_category_.yml", "label: Advanced topics\n")
    write(tmp_path, "02-guides/10-advanced/b.mdx", "# B")
    write(tmp_path, "02-guides/a.md", "\ufeff# A")  # a BOM is not content
    write(tmp_path, "01-intro/notes.txt", "plain")
    write(tmp_path, "01-intro/page.html", "<p>x</p>")
    write(tmp_path, "01-intro/latin1.md", "caf\xe9".encode("latin-1"))
    write(tmp_path, "01-intro/binary.md", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(tmp_path, "01-intro/big.md", "x" * 2000)
    for skipped in ("node_modules/pkg/readme.md", ".docusaurus/x.md", "_partials/p.md", "01-intro/_part.mdx"):
        write(tmp_path, skipped, "# skipped")
    write(tmp_path, "01-intro/image.png", b"\x89PNG")
    write(tmp_path, "03-broken/_category_.json", "{not json")
    write(tmp_path, "03-broken/c.md", "# C")

    items = list(read_folder(tmp_path, max_bytes=1000))
    assert [item.source_path for item in items] == [
        "01-intro/big.md",
        "01-intro/binary.md",
        "01-intro/latin1.md",
        "01-intro/notes.txt",
        "01-intro/page.html",
        "02-guides/10-advanced/b.mdx",
        "02-guides/a.md",
        "03-broken/c.md",
    ]
    errors = {item.source_path: item.message for item in items if isinstance(item, SourceError)}
    assert errors == {
        "01-intro/big.md": "file is 2,000 bytes, over the limit of 1,000",
        "01-intro/binary.md": "binary file (it holds NUL bytes), not text",
        "01-intro/latin1.md": "not UTF-8 text: unexpected end of data at byte 3",
    }
    documents = {item.source_path: item for item in items if isinstance(item, SourceDocument)}
    assert documents["02-guides/10-advanced/b.mdx"].category_labels == ("User Guides", "Advanced topics")
    assert documents["02-guides/10-advanced/b.mdx"].format == "mdx"
    assert documents["01-intro/notes.txt"].category_labels == ("intro",)  # no category file: the folder
    assert documents["03-broken/c.md"].category_labels == ("broken",)  # a broken one only loses its label
    assert documents["02-guides/a.md"].content == "# A"
    assert documents["01-intro/page.html"].format == "html"


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        list(read_folder(tmp_path / "nope"))


def test_real_docusaurus_folder() -> None:
    items = list(read_folder(corpus(PHYSICAL_AI_DOCS)))
    assert all(isinstance(item, SourceDocument) for item in items)
    paths = [item.source_path for item in items]
    assert paths == sorted(paths)
    assert len(paths) == 58
    labels = {item.source_path: item.category_labels for item in items}
    assert labels["tutorial-extras/manage-docs-versions.md"] == ("Tutorial - Extras",)
    assert labels["module-2/urdf-sdf-formats/conversion-guide.md"] == ("module-2", "URDF/SDF Formats")


@pytest.mark.parametrize(
    "category_yaml",
    [
        "base: &b Shared\nlabel: *b\n",  # aliases are refused in category files as in front matter
        "label: Deep\nx: " + "[" * 30_000 + "]" * 30_000 + "\n",  # used to crash libyaml's composer
    ],
)
def test_a_category_file_out_of_bounds_only_loses_its_label(tmp_path: Path, category_yaml: str) -> None:
    write(tmp_path, "04-odd/_category_.yml", category_yaml)
    write(tmp_path, "04-odd/d.md", "# D")
    [document] = read_folder(tmp_path)
    assert document.category_labels == ("odd",)
