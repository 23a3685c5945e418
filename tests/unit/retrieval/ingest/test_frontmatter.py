from __future__ import annotations

import time

import pytest

from services.retrieval.ingest.bounded_yaml import MAX_DEPTH, MAX_NODES
from services.retrieval.ingest.documents import DocumentError, FrontMatter
from services.retrieval.ingest.frontmatter import split_front_matter
from tests.unit.retrieval.ingest.helpers import alias_bomb


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
    with pytest.raises(DocumentError, match=r"front matter is broken at line 3: "):
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


@pytest.mark.parametrize(
    "yaml_text",
    [
        "title: &t Shared",  # an anchor alone
        "base: {a: 1}\nother: *base",  # an alias of an undefined anchor is refused the same way
        "base: &b {a: 1}\nother:\n  <<: *b",  # merge keys need aliases too
    ],
)
def test_anchors_and_aliases_are_refused(yaml_text: str) -> None:
    with pytest.raises(DocumentError, match=r"^front matter uses YAML aliases or anchors .* not accepted$"):
        split_front_matter(f"---\n{yaml_text}\n---\nbody")


def test_an_alias_bomb_is_refused_before_anything_is_built() -> None:
    started = time.perf_counter()
    with pytest.raises(DocumentError, match="front matter uses YAML aliases") as caught:
        split_front_matter(alias_bomb(9))
    assert time.perf_counter() - started < 1  # 44 s and 5.4 GB when it was expanded
    assert "lol" not in str(caught.value)


def test_too_many_values() -> None:
    items = ", ".join(["x"] * MAX_NODES)
    with pytest.raises(DocumentError, match=f"front matter has more than {MAX_NODES:,} YAML values"):
        split_front_matter(f"---\ntags: [{items}]\n---\nbody")
    fits = ", ".join(["x"] * (MAX_NODES - 3))  # with the mapping, its key and the sequence itself
    assert split_front_matter(f"---\ntags: [{fits}]\n---\nbody")[1] == "body"


# 30,000 crashed libyaml's composer; PyYAML 6.0.4's scanner refuses it with a message of its own:
# ours is given first, whichever PyYAML is installed.
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 30_000])
@pytest.mark.parametrize("brackets", ["[]", "{}"])
def test_too_deep_nesting(depth: int, brackets: str) -> None:
    opening, closing = brackets
    with pytest.raises(
        DocumentError, match=f"^front matter nests lists and mappings more than {MAX_DEPTH} levels deep$"
    ):
        split_front_matter("---\nx: " + opening * depth + closing * depth + "\n---\nbody")


def test_brackets_in_quotes_and_comments_are_not_nesting() -> None:
    deep = "[" * 1000
    content = f"---\ntitle: \"{deep}\"\ndescription: '{deep} it''s'\nslug: a # {deep}\n---\nbody"
    front_matter, body = split_front_matter(content)
    assert (front_matter.title, front_matter.description, front_matter.slug) == (deep, f"{deep} it's", "a")
    assert body == "body"


def test_size_limit() -> None:
    content = "---\ndescription: " + "é" * 600 + "\n---\nbody"  # 1,214 bytes of front matter
    with pytest.raises(DocumentError, match=r"^front matter is 1,214 bytes, over the limit of 1,024 bytes$"):
        split_front_matter(content, max_bytes=1024)
    assert split_front_matter(content, max_bytes=2048)[0].description == "é" * 600
    with pytest.raises(DocumentError, match=r"over the limit of 65,536 bytes"):  # the default
        split_front_matter("---\ndescription: " + "x" * 65_536 + "\n---\nbody")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "sidebar_position: [" + ", ".join(["lol"] * 1000) + "]",
            "'sidebar_position' must be a number, not list",
        ),
        ("sidebar_position: {lol: lol}", "'sidebar_position' must be a number, not dict"),
        ("sidebar_position: " + "9" * 400, "'sidebar_position' must be a number a float can hold"),
        ("title: {lol: lol}", "'title' must be text, not dict"),
    ],
)
def test_errors_name_the_type_never_the_value(line: str, message: str) -> None:
    with pytest.raises(DocumentError) as caught:
        split_front_matter(f"---\n{line}\n---\nbody")
    assert str(caught.value) == f"front matter {message}"


@pytest.mark.parametrize(
    "line",
    [
        "date: 2024-13-45",
        "id: " + "1" * 5000,  # past Python's 4,300 digits for int()
        "id: !!int lolcats",
        "id: !!bool maybe",
        "date: !!timestamp lolcats",
        "id: !!float ''",
    ],
)
def test_values_yaml_cannot_build_are_document_errors(line: str) -> None:
    with pytest.raises(DocumentError) as caught:
        split_front_matter(f"---\n{line}\n---\nbody")
    assert str(caught.value).startswith("front matter holds a value YAML cannot build (")
    assert "lol" not in str(caught.value) and "maybe" not in str(caught.value)
