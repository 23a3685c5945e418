"""Which found chunks send the retrieval tool looking for the blocks that go on outside them."""

from __future__ import annotations

from glossator.v1 import common_pb2
from services.agent.tools import _running_on

STEPS = ("Working With an Agent", "The 5-Step Safety Pattern")


def found(index: int, *path: str, document: str = "steps.md") -> common_pb2.ScoredChunk:
    chunk = common_pb2.Chunk(
        document_id=document,
        section_path=list(path),
        section_title=path[-1],
        chunk_index=index,
        total_chunks=9,
        text=f"### {path[-1]}\n\nWhat this step asks of you, in a sentence or two.",
    )
    return common_pb2.ScoredChunk(chunk=chunk, relevance=0.9)


def test_sibling_sections_a_heading_counts_are_looked_for_once_for_all_found():
    results = [found(3, *STEPS, "Step 3: Understand"), found(2, *STEPS, "Step 2: Explain")]
    blocks = [b for _, b in _running_on(results)]
    assert [(b.section, b.after, b.counted) for b in blocks] == [(STEPS, -1, 5)]


def test_the_same_counted_heading_on_another_page_is_looked_for_there_too():
    results = [
        found(3, *STEPS, "Step 3: Understand"),
        found(3, *STEPS, "Step 3: Understand", document="b.md"),
    ]
    assert len(list(_running_on(results))) == 2


def test_a_number_inside_a_heading_counts_nothing():
    assert not list(_running_on([found(1, "ROS 2 Basics", "Middleware")]))
