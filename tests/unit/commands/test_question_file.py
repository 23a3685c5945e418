"""The question file loader shared by `glossator eval answers --questions` and bench/llm_answers.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.commands.correctness import expect_items
from services.commands.question_file import (
    FORMS,
    QuestionFileError,
    conversations,
    find_corpus,
    load_questions,
    select,
)

ROOT = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, questions: str, corpus: str = "book") -> Path:
    book = tmp_path / "book"
    (book / "guide").mkdir(parents=True, exist_ok=True)
    (book / "guide" / "bridges.md").write_text("# Bridges\n\nThe bridge opened in 1932.\n")
    path = tmp_path / "questions.yaml"
    path.write_text(f"corpus: {corpus}\ncollection: bridges\nquestions:\n{questions}")
    return path


ANSWERABLE = """\
  - id: q-1
    question: When did the bridge open?
    form: value
    answerable: true
    split: tune
    source: guide/bridges.md
    expect: "1932"
"""


def test_a_good_file_loads_with_its_corpus_found_from_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    unanswerable = '  - {id: q-2, question: "Who won?", form: value, answerable: false, split: report}\n'
    qset = load_questions(write(tmp_path, ANSWERABLE + unanswerable))
    assert qset.corpus == (tmp_path / "book").resolve()
    assert qset.collection == "bridges"
    assert [(q.id, q.answerable, q.split, q.source) for q in qset.questions] == [
        ("q-1", True, "tune", "guide/bridges.md"),
        ("q-2", False, "report", ""),
    ]
    assert qset.questions[0].expect == "1932"  # a YAML number would be kept as text too


def test_a_missing_source_file_names_the_question(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, ANSWERABLE.replace("guide/bridges.md", "guide/tunnels.md"))
    with pytest.raises(QuestionFileError, match=r"q-1: source guide/tunnels.md is not a file of the corpus"):
        load_questions(path)


def test_an_answerable_question_needs_a_source(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, ANSWERABLE.replace("    source: guide/bridges.md\n", ""))
    with pytest.raises(QuestionFileError, match="q-1: an answerable question needs the source file"):
        load_questions(path)


def test_a_bad_split_is_refused_with_the_question_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, ANSWERABLE.replace("split: tune", "split: train"))
    with pytest.raises(QuestionFileError, match="q-1: split must be tune or report, not 'train'"):
        load_questions(path)


def test_every_problem_is_named_at_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    second = ANSWERABLE.replace("split: tune", "split: report").replace("bridges.md", "gone.md")
    with pytest.raises(QuestionFileError) as error:
        load_questions(write(tmp_path, ANSWERABLE + second))
    assert "duplicate id q-1" in str(error.value) and "source guide/gone.md" in str(error.value)


def test_unknown_keys_and_a_session_over_two_splits_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(QuestionFileError, match=r"q-1.*unknown keys \['answer'\]"):
        load_questions(write(tmp_path, ANSWERABLE + "    answer: 1932\n"))
    first = ANSWERABLE + "    session: s\n"
    follow_up = first.replace("q-1", "q-2").replace("split: tune", "split: report")
    with pytest.raises(QuestionFileError, match="session s: all its questions need one split"):
        load_questions(write(tmp_path, first + follow_up))


def test_forms_are_checked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(QuestionFileError, match=r"q-1: form must be one of definition, how, .*not 'when'"):
        load_questions(write(tmp_path, ANSWERABLE.replace("form: value", "form: when")))
    with pytest.raises(QuestionFileError, match=r"q-1.*lacks \['form'\]"):
        load_questions(write(tmp_path, ANSWERABLE.replace("    form: value\n", "")))
    lone = ANSWERABLE.replace("form: value", "form: follow-up") + "    session: s\n"
    with pytest.raises(QuestionFileError, match="q-1: a follow-up needs an earlier question of its session"):
        load_questions(write(tmp_path, lone))
    first = ANSWERABLE.replace("q-1", "q-0") + "    session: s\n"
    assert [q.form for q in load_questions(write(tmp_path, first + lone)).questions] == ["value", "follow-up"]
    with pytest.raises(QuestionFileError, match="q-1: a selected-text question needs selected_text"):
        load_questions(write(tmp_path, ANSWERABLE.replace("form: value", "form: selected-text")))


def test_a_missing_corpus_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(QuestionFileError, match="corpus 'no-such-book' is not a folder"):
        load_questions(write(tmp_path, ANSWERABLE, corpus="no-such-book"))


def test_a_relative_corpus_falls_back_to_the_repository_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find_corpus("docs") == (ROOT / "docs").resolve()


@pytest.mark.parametrize("name", ["sample-docs", "physical-ai-book", "agentfactory"])
def test_the_shipped_question_files_load(name):
    path = ROOT / "bench" / "questions" / f"{name}.yaml"
    if name != "sample-docs" and not (ROOT.parent / "shared" / "eval" / "corpora").is_dir():
        pytest.skip("shared evaluation corpora not found")
    questions = load_questions(path).questions  # ids unique, sources exist, forms known
    answerable = [q for q in questions if q.answerable]
    unanswerable = [q for q in questions if not q.answerable]
    assert len(answerable) >= (10 if name == "sample-docs" else 60)
    assert len(unanswerable) >= (4 if name == "sample-docs" else 12)
    assert all(q.expect.strip() and expect_items(q.expect) for q in answerable)
    for kind in (True, False):  # splits alternate within answerable and within unanswerable questions
        splits = [q.split for q in questions if q.answerable is kind]
        assert splits == [("tune", "report")[i % 2] for i in range(len(splits))]
    if name != "sample-docs":  # every form is asked in both splits
        assert {(q.form, q.split) for q in answerable} == {(f, s) for f in FORMS for s in ("tune", "report")}


def test_select_and_conversations_keep_sessions_together(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    questions = load_questions(ROOT / "bench" / "questions" / "sample-docs.yaml").questions
    tune = select(questions, "tune")
    assert {q.split for q in tune} == {"tune"} and select(questions, "all") == questions
    runs = conversations(tune)
    session = next(run for run in runs if len(run) > 1)
    assert [q.id for q in session] == ["sd-05", "sd-07"]
    assert sum(len(run) for run in runs) == len(tune)
    assert [q.id for q in select(questions, "all", ["sd-07"])] == ["sd-05", "sd-07"]
