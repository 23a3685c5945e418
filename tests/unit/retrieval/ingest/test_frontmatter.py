from __future__ import annotations

import pytest

from services.retrieval.ingest.documents import DocumentError, FrontMatter
from services.retrieval.ingest.frontmatter import split_front_matter


def test_keys_are_read_and_the_body_follows() -> None:
    content = (
        "---\ntitle: 'Install: the easy way'\nslug: /setup\nid: install\nsidebar_position: 3\n"
        "description: How to install\ntags: [a, b]\n---\n\n# Heading\n"
    )
    front_matter, body = split_front_matter(content)
    assert front_matter == FrontMatter(
        title="Install: the easy way",
        slug="/setup",
        id="install",
        description="How to install",
        sidebar_position=3,
    )
    assert body == "# Heading\n"


def test_no_front_matter_leaves_the_content_alone() -> None:
    content = "# Title\n\n---\n\nnot: front matter\n---\n"
    assert split_front_matter(content) == (FrontMatter(), content)


def test_empty_front_matter() -> None:
    assert split_front_matter("---\n---\nbody") == (FrontMatter(), "body")


def test_broken_yaml_names_the_line() -> None:
    with pytest.raises(DocumentError, match=r"broken front matter at line 3"):
        split_front_matter("---\ntitle: ok\ndescription: a: b\n---\nbody")


def test_unclosed_front_matter() -> None:
    with pytest.raises(DocumentError, match="never closed"):
        split_front_matter("---\ntitle: x\n\n# Body without the closing line\n")


def test_front_matter_that_is_not_a_mapping() -> None:
    with pytest.raises(DocumentError, match="mapping"):
        split_front_matter("---\n- a\n- b\n---\nbody")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("title: [a, b]", "'title' must be text"),
        ("sidebar_position: first", "'sidebar_position' must be a number"),
    ],
)
def test_wrong_value_types(line: str, message: str) -> None:
    with pytest.raises(DocumentError, match=message):
        split_front_matter(f"---\n{line}\n---\nbody")
