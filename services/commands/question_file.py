"""Question files (bench/questions/*.yaml): a book's folder, its collection and questions about it.

Read by `glossator eval answers --questions` and by bench/llm_answers.py. A file names `corpus`
(the book's folder), `collection` (the collection it is ingested into) and `questions`, each with
`id`, `question`, `form` (one of FORMS: what kind of answer it asks for), `answerable`, `split`
(tune or report), and for an answerable question `source` (the file that answers it, relative to
`corpus`) and `expect` (the key words of that page's answer, which the correctness rule looks for
in the answer: correctness.py); optionally `selected_text` (the reader's highlight) and `session`
(questions sharing one are asked in one session, in file order). A relative `corpus` is found from
the working directory, or else from the repository root, where the files in bench/questions are
written from.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import dataclass, fields
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SPLITS = ("tune", "report")
# The kinds of question a reader asks, each covered by the shipped question files: a definition,
# how, why, a value (a number, a name, a year), a list ("which three ..."), a comparison, a
# follow-up (a later question of a session, leaning on the earlier one) and selected-text (a
# highlighted passage to explain).
FORMS = ("definition", "how", "why", "value", "list", "comparison", "follow-up", "selected-text")


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answerable: bool
    split: str
    source: str = ""
    expect: str = ""
    session: str = ""
    selected_text: str = ""
    form: str = ""  # required in a question file; one of FORMS


@dataclass(frozen=True)
class QuestionSet:
    path: Path
    corpus: Path
    collection: str
    questions: list[Question]


class QuestionFileError(ValueError):
    """The file cannot be used as it is; the message names the file and every problem found."""


def load_questions(path: Path) -> QuestionSet:
    """The YAML file, checked: known keys, unique ids, a split each, one split per session, a known
    form each (a follow-up inside its session, a selected-text question with its highlight), and
    every answerable question's source an existing file of the corpus."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise QuestionFileError(f"{path}: cannot read the question file: {error}") from None
    if not isinstance(data, dict) or not {"corpus", "collection", "questions"} <= set(data):
        raise QuestionFileError(f"{path}: a question file needs corpus, collection and questions")
    known = {f.name for f in fields(Question)}
    questions = []
    for item in data["questions"]:
        unknown = set(item) - known
        if unknown:
            raise QuestionFileError(f"{path}: question {item.get('id')!r} has unknown keys {sorted(unknown)}")
        missing = {"id", "question", "form", "answerable", "split"} - set(item)
        if missing:
            raise QuestionFileError(f"{path}: question {item.get('id')!r} lacks {sorted(missing)}")
        values = {key: value if key == "answerable" else str(value) for key, value in item.items()}
        questions.append(Question(**values))
    corpus = find_corpus(str(data["corpus"]))
    problems = [f"duplicate id {i}" for i, n in Counter(q.id for q in questions).items() if n > 1]
    problems += [
        f"{q.id}: split must be tune or report, not {q.split!r}" for q in questions if q.split not in SPLITS
    ]
    problems += [
        f"{q.id}: answerable must be true or false" for q in questions if not isinstance(q.answerable, bool)
    ]
    problems += _source_problems(questions, corpus)
    problems += _form_problems(questions)
    sessions: dict[str, set[str]] = {}
    for q in questions:
        if q.session:
            sessions.setdefault(q.session, set()).add(q.split)
    problems += [
        f"session {s}: all its questions need one split" for s, splits in sessions.items() if len(splits) > 1
    ]
    if problems:
        raise QuestionFileError(f"{path}: " + "; ".join(problems))
    return QuestionSet(path, corpus, str(data["collection"]), questions)


def find_corpus(corpus: str) -> Path:
    """The corpus folder: absolute, or relative to the working directory or the repository root."""
    candidates = [Path(corpus)] if Path(corpus).is_absolute() else [Path.cwd() / corpus, REPO_ROOT / corpus]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    raise QuestionFileError(
        f"corpus {corpus!r} is not a folder (looked at {', '.join(str(c) for c in candidates)})"
    )


def _source_problems(questions: list[Question], corpus: Path) -> list[str]:
    problems = []
    for q in questions:
        if not q.answerable or not isinstance(q.answerable, bool):
            continue
        if not q.source:
            problems.append(f"{q.id}: an answerable question needs the source file that answers it")
        elif not (corpus / q.source).is_file():
            problems.append(f"{q.id}: source {q.source} is not a file of the corpus {corpus}")
    return problems


def _form_problems(questions: list[Question]) -> list[str]:
    """A known form each; a follow-up is a later question of its session, a selected-text
    question carries its highlight."""
    problems = [
        f"{q.id}: form must be one of {', '.join(FORMS)}, not {q.form!r}"
        for q in questions
        if q.form not in FORMS
    ]
    seen_sessions: set[str] = set()
    for q in questions:
        if q.form == "follow-up" and q.session not in seen_sessions:
            problems.append(f"{q.id}: a follow-up needs an earlier question of its session")
        if q.form == "selected-text" and not q.selected_text:
            problems.append(f"{q.id}: a selected-text question needs selected_text")
        if q.session:
            seen_sessions.add(q.session)
    return problems


def normalise_source(path: str) -> str:
    """A source path as ingestion derives a document id from it: POSIX, no "./" or "//"."""
    return posixpath.normpath(path.replace("\\", "/")).lstrip("/")


def select(questions: list[Question], split: str, ids: list[str] | None = None) -> list[Question]:
    """The split's questions (split "all": every one), or the named ones with the earlier
    questions of their sessions."""
    if not ids:
        return questions if split == "all" else [q for q in questions if q.split == split]
    missing = set(ids) - {q.id for q in questions}
    if missing:
        raise QuestionFileError(f"no questions with ids {sorted(missing)}")
    last = {q.session: i for i, q in enumerate(questions) if q.session and q.id in ids}
    return [q for i, q in enumerate(questions) if q.id in ids or i < last.get(q.session or None, -1)]


def conversations(questions: list[Question]) -> list[list[Question]]:
    """The questions as the runs they are asked in: a session's questions together in file order
    (one after the other, in one session), every other question on its own."""
    runs: list[list[Question]] = []
    by_session: dict[str, list[Question]] = {}
    for q in questions:
        if not q.session:
            runs.append([q])
        elif q.session in by_session:
            by_session[q.session].append(q)
        else:
            by_session[q.session] = [q]
            runs.append(by_session[q.session])
    return runs
