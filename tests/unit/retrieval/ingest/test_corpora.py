"""Parsing and chunking real books, read in place from ../shared/eval: the invariants every chunk
keeps, and known places in both books."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from services.retrieval.ingest import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MIN_TOKENS,
    ChunkDraft,
    SourceDocument,
    chunk_document,
    parse_document,
    read_folder,
)
from services.retrieval.ingest.markdown import parse_markdown
from tests.unit.retrieval.ingest.helpers import AGENTFACTORY_DOCS, PHYSICAL_AI_DOCS, corpus, fences_balanced

BASE = "https://example.org/docs/"
AGENTFACTORY_SAMPLE = 8  # every 8th file of the 724: the whole book is the benchmark's job


def chunk_folder(
    root: Path, count_tokens: Callable[[str], int], every: int = 1
) -> dict[str, list[ChunkDraft]]:
    documents = [item for item in read_folder(root) if isinstance(item, SourceDocument)]
    return {
        doc.source_path: chunk_document(parse_document(doc, BASE), count_tokens) for doc in documents[::every]
    }


@pytest.fixture(scope="module")
def physical_ai(count_tokens) -> dict[str, list[ChunkDraft]]:
    return chunk_folder(corpus(PHYSICAL_AI_DOCS), count_tokens)


@pytest.fixture(scope="module")
def agentfactory(count_tokens) -> dict[str, list[ChunkDraft]]:
    return chunk_folder(corpus(AGENTFACTORY_DOCS), count_tokens, every=AGENTFACTORY_SAMPLE)


@pytest.fixture(params=["physical_ai", "agentfactory"])
def book(request) -> dict[str, list[ChunkDraft]]:
    return request.getfixturevalue(request.param)


def test_every_chunk_is_within_budget_unless_it_is_one_code_block_or_table(book, count_tokens) -> None:
    over = 0
    for chunks in book.values():
        for chunk in chunks:
            assert chunk.token_count == count_tokens(chunk.text)
            if chunk.token_count <= DEFAULT_MAX_TOKENS:
                continue
            over += 1
            _, blocks = parse_markdown(chunk.text)
            whole = [block for block in blocks if block.kind in ("code", "table")]
            rest = sum(count_tokens(block.text) for block in blocks if block.kind not in ("code", "table"))
            assert len(whole) == 1, chunk.text[:300]
            assert rest < DEFAULT_MIN_TOKENS, chunk.text[:300]
    assert over  # both books have code blocks over the budget: the rule was exercised


def test_code_fences_are_balanced_in_every_chunk(book) -> None:
    for chunks in book.values():
        for chunk in chunks:
            assert fences_balanced(chunk.text), chunk.text


def test_chunks_are_numbered_identified_and_located(book) -> None:
    ids = set()
    for source_path, chunks in book.items():
        assert chunks, source_path
        assert [chunk.chunk_index for chunk in chunks] == list(range(len(chunks)))
        for chunk in chunks:
            assert chunk.total_chunks == len(chunks)
            assert chunk.document_id == chunk.source_path == source_path
            assert chunk.source_url.startswith(BASE)
            assert "/0" not in chunk.source_url.removeprefix(BASE)  # number prefixes are gone
            if chunk.anchor:
                assert chunk.source_url.endswith("#" + chunk.anchor)
                assert chunk.section_title == chunk.section_path[-1]
            ids.add(chunk.chunk_id)
    assert len(ids) == sum(len(chunks) for chunks in book.values())


def test_no_mdx_is_left_outside_code(book) -> None:
    for chunks in book.values():
        for chunk in chunks:
            _, blocks = parse_markdown(chunk.text)
            prose = "\n".join(block.text for block in blocks if block.kind == "text")
            assert "<Quiz" not in prose and "import React" not in prose and "{/*" not in prose


def test_known_sections_of_the_physical_ai_book(physical_ai) -> None:
    chunks = physical_ai["module-1/ros2-architecture/index.md"]
    by_start = {chunk.text.split("\n", 1)[0]: chunk for chunk in chunks}
    improvements = by_start["### Key Improvements Over ROS 1"]
    assert improvements.section_path == (
        "ROS 2 Architecture and Core Concepts",
        "Introduction to ROS 2",
        "Key Improvements Over ROS 1",
    )
    assert improvements.source_url == f"{BASE}module-1/ros2-architecture/#key-improvements-over-ros-1"
    patterns = next(chunk for chunk in chunks if "#### Publisher-Subscriber (Topics)" in chunk.text)
    assert patterns.section_path[-1] == "3. Communication Patterns"  # H4 folds into its H3
    assert patterns.anchor == "3-communication-patterns"
    dds = by_start["### 2. DDS (Data Distribution Service)"]
    assert "# Understanding DDS QoS (Quality of Service) settings" in dds.text  # a comment in code
    assert all("Understanding DDS QoS" not in "".join(chunk.section_path) for chunk in chunks)
    # intro/index.md has `id: overview`, but an index doc keeps its folder's URL.
    assert physical_ai["intro/index.md"][0].source_url == f"{BASE}intro/#introduction"


def test_known_sections_of_agentfactory(count_tokens) -> None:
    root = corpus(AGENTFACTORY_DOCS)
    readme = "05-Python-Fundamentals/32-cpython-gil/README.md"
    chunks = chunk_document(
        parse_document(SourceDocument(source_path=readme, content=(root / readme).read_text()), BASE),
        count_tokens,
    )
    assert chunks[0].title == "Chapter 32: CPython and GIL"
    assert chunks[0].source_url == f"{BASE}Python-Fundamentals/cpython-gil/#chapter-32-cpython-and-gil"
    handed_over = next(chunk for chunk in chunks if chunk.text.startswith("## 🎯 Before You Begin"))
    assert handed_over.section_path == ("Chapter 32: CPython and GIL", "What You'll Learn")  # a bare heading
    quiz = "05-Python-Fundamentals/32-cpython-gil/07_chapter_30_quiz.md"
    quiz_chunks = chunk_document(
        parse_document(SourceDocument(source_path=quiz, content=(root / quiz).read_text()), BASE),
        count_tokens,
    )
    assert quiz_chunks[0].source_url.startswith(f"{BASE}Python-Fundamentals/cpython-gil/chapter_30_quiz#")
    text = "\n".join(chunk.text for chunk in quiz_chunks)
    assert "<Quiz" not in text and "correctOption" not in text
    assert "NumPy's C extensions already release the GIL" in text  # the quiz's prose is kept
    assert "Traditional threading with Python threads for parallelism" not in text  # a wrong option


def test_ids_are_stable_across_runs_and_change_with_content(count_tokens) -> None:
    root = corpus(PHYSICAL_AI_DOCS)
    path = "module-1/ros2-architecture/index.md"
    content = (root / path).read_text()
    first = chunk_document(
        parse_document(SourceDocument(source_path=path, content=content), BASE), count_tokens
    )
    again = chunk_document(
        parse_document(SourceDocument(source_path=path, content=content), BASE), count_tokens
    )
    assert [chunk.chunk_id for chunk in first] == [chunk.chunk_id for chunk in again]
    edited = content.replace("introduces lifecycle nodes", "introduces managed nodes")
    assert edited != content
    changed = chunk_document(
        parse_document(SourceDocument(source_path=path, content=edited), BASE), count_tokens
    )
    before = {chunk.chunk_id for chunk in first}
    after = {chunk.chunk_id for chunk in changed}
    assert before & after  # the untouched chunks keep their ids
    assert after - before  # the edited one gets a new id
