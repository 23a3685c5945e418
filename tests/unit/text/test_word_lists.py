"""The word lists are data files: each loads, and is clean enough to review by reading it."""

from __future__ import annotations

from importlib import resources

import pytest

from services.common.text.lists import read_list, word_list, word_map
from services.common.text.units import ABBREVIATIONS, sentence_spans
from services.common.text.words import NUMBER_WORDS, STOPWORDS, Analysis

LIST_FOLDERS = {
    "services.common.text": "wordlists",  # English: lower case
    "services.agent.models": "wordlists",  # model output literals: as the templates write them
    "services.validation": "wordlists",  # the validator's English words
}


def _list_files() -> list[tuple[str, str]]:
    return [
        (package, f"{folder}/{entry.name}")
        for package, folder in LIST_FOLDERS.items()
        for entry in resources.files(package).joinpath(folder).iterdir()
        if entry.name.endswith(".txt")
    ]


def test_both_folders_hold_lists() -> None:
    packages = {package for package, _ in _list_files()}
    assert packages == set(LIST_FOLDERS)
    assert len(_list_files()) >= 11


@pytest.mark.parametrize(("package", "filename"), _list_files(), ids=lambda value: str(value))
def test_every_list_loads_non_empty_without_repeats_or_stray_spaces(package: str, filename: str) -> None:
    entries = read_list(package, filename)
    assert entries, f"{filename} is empty"
    assert len(entries) == len(set(entries)), (
        f"{filename} repeats {[e for e in entries if entries.count(e) > 1]}"
    )
    raw = resources.files(package).joinpath(*filename.split("/")).read_text(encoding="utf-8")
    assert raw.endswith("\n") and "\t" not in raw and "  " not in raw


@pytest.mark.parametrize(
    "filename", [f for p, f in _list_files() if p == "services.common.text"], ids=lambda value: value
)
def test_english_lists_are_lower_case(filename: str) -> None:
    entries = read_list("services.common.text", filename)
    assert [e for e in entries if e != e.lower()] == []


def test_lists_are_what_the_text_layer_uses() -> None:
    assert "the" in STOPWORDS and "harbour" not in STOPWORDS
    assert NUMBER_WORDS["twelve"] == "12" and word_map("number_words") == NUMBER_WORDS
    assert all(value.isdigit() for value in NUMBER_WORDS.values())
    assert "e.g" in ABBREVIATIONS and word_list("negations") >= {"not", "never", "no"}
    # The lists at work: "Dr." does not end a sentence, "dozen" is a number, "not" a negation.
    assert len(sentence_spans("Dr. Watson came. He left.")) == 2
    assert Analysis("a dozen eggs, not eleven").numbers == {"12", "11"}
    assert Analysis("a dozen eggs, not eleven").negations == {"not"}
