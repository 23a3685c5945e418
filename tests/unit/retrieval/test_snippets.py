"""What a search result list shows of a chunk: its best sentences, rendered, the chunk untouched."""

from __future__ import annotations

from services.retrieval.search import snippet

CHUNK = (
    "## Sensor Fusion\n\nSensor fusion **combines** data from `many` sensors. It is robust to noise.\n\n"
    "```python\nfuse(a, b)\n```\n- [Fusion docs](https://example.org/fusion)\n"
)


def test_without_scores_the_first_prose_sentences_show_rendered():
    assert snippet(CHUNK) == "Sensor fusion combines data from many sensors. It is robust to noise."


def test_with_scores_the_most_similar_sentences_show_in_reading_order_within_the_limit():
    first = CHUNK.index("Sensor fusion")
    second = CHUNK.index("It is robust")
    scores = [(first, CHUNK.index(" It is"), 0.3), (second, CHUNK.index("\n\n```"), 0.9)]
    assert snippet(CHUNK, scores) == "Sensor fusion combines data from many sensors. It is robust to noise."
    assert snippet(CHUNK, scores, max_chars=30) == "It is robust to noise."


def test_a_chunk_without_prose_shows_its_text_rendered_and_cut_at_a_word():
    assert snippet("```python\nfuse(a, b)\n```") == "fuse(a, b)"
    assert snippet("word " * 100, max_chars=20) == "word word word word…"
