from __future__ import annotations

import pytest

from services.retrieval.ingest.documents import Block
from services.retrieval.ingest.headings import Slugger, build_sections, plain_heading_text, slugify


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Hello World!", "hello-world"),
        ("Foo & Bar", "foo--bar"),  # github-slugger removes '&' but keeps both spaces
        ("C++ Package Structure", "c-package-structure"),
        ("What's new in v2.0?", "whats-new-in-v20"),
        ("snake_case_name", "snake_case_name"),
        ("🎯 Before You Begin", "-before-you-begin"),  # the emoji goes, its space stays
        ("Über Straße", "über-straße"),
        ("Variables – Describing Intent", "variables--describing-intent"),
    ],
)
def test_slugify_follows_github_slugger(heading: str, slug: str) -> None:
    assert slugify(heading) == slug


def test_duplicates_are_numbered_like_github_slugger() -> None:
    slugger = Slugger()
    assert [slugger.slug(text) for text in ["Intro", "Intro", "Intro-1", "Intro"]] == [
        "intro",
        "intro-1",
        "intro-1-1",
        "intro-2",
    ]


@pytest.mark.parametrize(
    ("markdown", "text"),
    [
        ("Using `create_task()` **now**", "Using create_task() now"),
        ("[Links](https://example.org) and ![alt](x.png)", "Links and alt"),
        ("`__init__` and _emphasis_ in snake_case", "__init__ and emphasis in snake_case"),
        ("Tom &amp; Jerry <Badge text='x'/>", "Tom & Jerry"),
    ],
)
def test_plain_heading_text(markdown: str, text: str) -> None:
    assert plain_heading_text(markdown) == text


def heading(level: int, title: str, anchor: str = "") -> Block:
    return Block(kind="heading", text=f"{'#' * level} {title}", level=level, title=title, anchor=anchor)


def text(words: str) -> Block:
    return Block(kind="text", text=words)


def test_sections_follow_the_heading_tree() -> None:
    sections = build_sections(
        [
            text("before any heading"),
            heading(1, "Guide"),
            text("intro"),
            heading(2, "Install"),
            heading(3, "Linux"),
            text("apt"),
            heading(4, "Debian"),  # folds into Linux
            text("deb"),
            heading(3, "Linux"),  # a duplicate title
            heading(2, "Use", anchor="custom-use"),
            heading(1, "Appendix"),
            heading(3, "Skipped level"),
        ]
    )
    assert [(section.path, section.anchor) for section in sections] == [
        ((), ""),
        (("Guide",), "guide"),
        (("Guide", "Install"), "install"),
        (("Guide", "Install", "Linux"), "linux"),
        (("Guide", "Install", "Linux"), "linux-1"),
        (("Guide", "Use"), "custom-use"),
        (("Appendix",), "appendix"),
        (("Appendix", "Skipped level"), "skipped-level"),
    ]
    linux = sections[3]
    assert [block.text for block in linux.blocks] == ["### Linux", "apt", "#### Debian", "deb"]
    assert linux.title == "Linux"
