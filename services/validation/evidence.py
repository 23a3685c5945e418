"""The context as evidence: chunks cut into passages, and the passage that best covers a claim.

A passage is a window of one to a few consecutive sentences of one chunk: small enough that a
claim whose words are spread over a whole chunk (a recombination of facts) does not look
supported, large enough for a claim that merges two adjacent sentences.

A list item is read with the heading it stands under, as a reader reads it: under "Publisher-
Subscriber (Topics)", "- Used for streaming data like sensor readings" says that *topics* are
used for streaming data. Alone it has no subject, and would support "URDF is used for streaming
data" as well as the truth.

A table row is read cell by cell under its header (services/common/text/tables.py), as the
answerer quotes it, and always alone: its numbers are its own, not its neighbours' ("Documentation
— Points: 25" is not supported by the rubric row "Documentation | 15" beside "Communication | 25").

A claim may add a common verb its source leaves implicit ("Revolute joints allow rotational
movement with limits" for "**Revolute**: Rotational movement with limits"): such a word
(wordlists/paraphrase_words.txt) counts only when the chunk states it, so it is neither a word
the chunk lacks nor a break in the claim's phrases. A hedge or a word about how the book puts
it ("typically", "using the ... command", wordlists/filler_words.txt) never counts.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from services.common.text.display import display_text
from services.common.text.lists import read_list
from services.common.text.prose import list_runs
from services.common.text.question import focus_terms
from services.common.text.steps import step_readings
from services.common.text.tables import table_rows
from services.common.text.units import Unit, UnitKind, sentence_units
from services.common.text.words import Analysis, capitalised_words, is_content_word, stem, tokens
from services.validation.word_vectors import distances, unit_vectors

# A quote shorter than this may be a phrase said of something else ("is used for streaming data").
MIN_QUOTE_WORDS = 8
# The language tag opening a code block ("```python"): not a word of the code a quote copies.
_FENCE_TAG_RE = re.compile(r"```[\w+#.-]*")

PARAPHRASE_WORDS = frozenset(stem(word) for word in read_list(__package__, "wordlists/paraphrase_words.txt"))
FILLER_WORDS = frozenset(stem(word) for word in read_list(__package__, "wordlists/filler_words.txt"))


@dataclass(frozen=True)
class Passage:
    """Sentences [first, last) of one chunk, with the union of their words."""

    chunk_index: int
    first: int
    last: int
    terms: frozenset[str]
    bigrams: frozenset[tuple[str, str]]
    negations: frozenset[str]
    # Terms the passage states the opposite of: "Unlimited rotational movement" negates "limit",
    # "(no constraints)" negates "constraint".
    negated: frozenset[str] = frozenset()
    # The numbers its sentences state, and whether it is a table row (always alone: a row's
    # number belongs to its row, "Documentation — Points: 15", not to its neighbours).
    numbers: frozenset[str] = frozenset()
    tabular: bool = False
    # A whole list, or its labels, read as one statement (ChunkEvidence._list_passages): it
    # stands for a claim only when it states every word and phrase of it (a claim model weighing
    # a few words out of order let "validation is needed to reduce the computational load so it
    # runs in real time" pass on a list that says neither).
    gathered: bool = False

    def is_about(self, subject: frozenset[str]) -> bool:
        """Whether the passage (a list item with its heading) names the subject (any subject
        when the claim names none)."""
        return not subject or bool(subject & self.terms)


def prefix_negations(analysis: Analysis) -> dict[str, str]:
    """The stems a text negates by a prefix (un-, non-), each with the word that does it
    ("predictabl": "unpredictable")."""
    negations = {}
    for word in analysis.words:
        for prefix in ("non", "un"):
            base = word[len(prefix) :]
            if word.startswith(prefix) and len(base) >= 4 and is_content_word(base):
                negations[stem(base.lstrip("-"))] = word
    return negations


def negated_terms(analysis: Analysis) -> frozenset[str]:
    """The stems a text negates by a prefix (un-, non-) or a preceding "no"/"without"/"not"."""
    words = analysis.words
    negated = set(prefix_negations(analysis))
    for i, word in enumerate(words):
        if word in ("no", "without", "not") and i + 1 < len(words) and is_content_word(words[i + 1]):
            negated.add(stem(words[i + 1]))
    return frozenset(negated)


class ChunkEvidence:
    """One context chunk, analysed once per check and shared by every claim."""

    def __init__(self, index: int, text: str, window_sentences: int, phrase_gap: int, page: str = "") -> None:
        self.index = index
        self.analysis = Analysis(text)
        # The names its page and its place in the book mention (its own text's when not given).
        self.page = Analysis(page) if page else self.analysis
        self._text = text
        self._units = sentence_units(text)
        self._read = read_sentences(text, self._units)
        self.sentences = [sentence.shown for sentence in self._read]
        self._window_sentences = window_sentences
        self._phrase_gap = phrase_gap

    def quotes(self, claim: Analysis) -> bool:
        """Whether the claim is the chunk's own words, in order, MIN_QUOTE_WORDS or more of them
        (markup, line breaks and a code block's language tag aside): a copied sentence, a list
        item's line, a block of code. A quote says what its source says, however the sentence
        splitter cut either of them (a code block copied whole spans a dozen of its "sentences")."""
        return len(claim.words) >= MIN_QUOTE_WORDS and f" {' '.join(claim.words)} " in self._quotable

    @cached_property
    def _quotable(self) -> str:
        return f" {' '.join(tokens(_FENCE_TAG_RE.sub(' ', self._text)))} "

    def distance_of(self, words: list[str]) -> float:
        """How far the words are from the chunk's own: for each, 1 less its cosine with the
        chunk's nearest content word (services.validation.word_vectors), summed."""
        return sum(distances(words, self._word_vectors))

    @cached_property
    def _word_vectors(self) -> np.ndarray:
        return unit_vectors(sorted({word for word in self.analysis.words if is_content_word(word)}))

    @cached_property
    def labelled_items(self) -> list[LabelledItem]:
        """The list items that open with a label ("**Memory System**: Stores environmental
        information"), each with the words of its label and of what it says of it."""
        items = []
        for unit, sentence in zip(self._units, self._read, strict=False):
            label = label_of(sentence.text) if unit.kind == UnitKind.LIST_ITEM else None
            if label is not None and (named := Analysis(label[0]).term_set):
                items.append(LabelledItem(named, Analysis(label[1]).term_set))
        return items

    @cached_property
    def passages(self) -> list[Passage]:
        analysed = [[Analysis(reading) for reading in sentence.readings] for sentence in self._read]
        passages = []
        for size in range(1, min(self._window_sentences, len(analysed)) + 1):
            for first in range(len(analysed) - size + 1):
                if size > 1 and any(sentence.written for sentence in self._read[first : first + size]):
                    continue  # a table's rows are records: a claim merging two recombines them
                window = analysed[first : first + size]
                shown = [readings[0] for readings in window]
                passages.append(
                    Passage(
                        self.index,
                        first,
                        first + size,
                        frozenset().union(*(a.term_set for a in shown)),
                        frozenset().union(
                            *(a.ordered_pairs(self._phrase_gap) for readings in window for a in readings)
                        ),
                        frozenset().union(*(a.negations for a in shown)),
                        frozenset().union(*(negated_terms(a) for a in shown)),
                        frozenset().union(*(a.numbers for a in shown)),
                        bool(self._read[first].written),
                    )
                )
        passages.extend(self._list_passages())
        return passages

    def _list_passages(self) -> list[Passage]:
        """Each list, with its lead-in, as one passage. Of plain items, the whole list: "Use an
        action when a task takes a significant amount of time, requires continuous feedback and
        must be cancellable" gathers three items of "Actions are ideal for tasks that:", in their
        order, and says no more than the list does. Of labelled items ("Revolute: ...",
        "Continuous: ..."), the labels only ("The three categories are proprioceptive,
        exteroceptive and interoceptive sensors"): their descriptions say things of different
        subjects, and a claim merging those recombines them, so each stays a passage of its own."""
        passages = []
        for first, end, lead_in in list_runs(self._text, self._units):
            items = self._read[first:end]
            if not 2 <= len(items) <= MAX_LIST_ITEMS or any(item.written for item in items):
                continue
            labels = [label_of(item.text) for item in items]
            labelled = [label is not None for label in labels]
            if any(labelled) and not all(labelled):
                continue
            texts = [label[0] if label else item.text for label, item in zip(labels, items, strict=True)]
            leads = [text for text in (items[0].heading, lead_in) if text]
            if lead_in and first and display_text(self._read[first - 1].text).rstrip(" :") == lead_in:
                first -= 1
            parts = [Analysis(text) for text in leads + texts]
            reach = self._phrase_gap + 1
            # "A, B and C" states each item's words in turn: the end of one item runs into the
            # start of any later one, and so does its start ("ODE, Bullet and DART" names the
            # items "ODE (Open Dynamics Engine)", "Bullet", ...). Labels are names, listed in any order.
            junctions = {
                (tail, head)
                for i, earlier in enumerate(parts)
                for later in parts[i + 1 :]
                for tail in earlier.terms[:reach] + earlier.terms[-reach:]
                for head in later.terms[:reach]
            }
            # A lead-in's every word is said of each item: "Gazebo supports ODE, Bullet and DART"
            # under "Gazebo supports multiple physics engines:".
            junctions |= {
                (word, head)
                for lead in parts[: len(leads)]
                for word in lead.terms
                for later in parts[len(leads) :]
                for head in later.terms[:reach]
            }
            if all(labelled):
                names = parts[len(leads) :]
                junctions |= {
                    (a, b)
                    for one in names
                    for other in names
                    if one is not other
                    for a in one.terms
                    for b in other.terms
                }
            passages.append(
                Passage(
                    self.index,
                    first,
                    end,
                    frozenset().union(*(a.term_set for a in parts)),
                    frozenset(junctions).union(*(a.ordered_pairs(self._phrase_gap) for a in parts)),
                    frozenset().union(*(a.negations for a in parts)),
                    frozenset().union(*(negated_terms(a) for a in parts)),
                    frozenset().union(*(a.numbers for a in parts)),
                    gathered=True,
                )
            )
        return passages


# "**Continuous**: Unlimited rotational movement": a label is a few words before a colon.
_MAX_LABEL_CHARS = 40
# A longer list is a catalogue rather than one statement: its items stay passages of their own.
MAX_LIST_ITEMS = 12


# What separates an item's label from what is said of it: "**Revolute**: ...", "No SSE
# connections → Server can't initiate requests", "Goal — what the action should do".
_LABEL_END_RE = re.compile(r":|\s*[→—]\s*")


def label_of(text: str) -> tuple[str, str] | None:
    """(label, the rest) of a list item that opens with a label, else None."""
    end = _LABEL_END_RE.search(text)
    if end is None or end.start() > _MAX_LABEL_CHARS:
        return None
    return text[: end.start()], text[end.end() :]


@dataclass(frozen=True)
class LabelledItem:
    """A list item that opens with a label: the label's words, and the words said of it."""

    label: frozenset[str]
    said: frozenset[str]


@dataclass(frozen=True)
class ReadSentence:
    """A sentence of a chunk as a reader takes it: a list item with the heading it stands under."""

    text: str
    heading: str = ""
    # A table row as written ("| **Revolute** | Rotational | ..."), when `text` is its reading.
    written: str = ""

    @property
    def shown(self) -> str:
        """ "Publisher-Subscriber (Topics): Used for streaming data ..." """
        return f"{self.heading}: {self.text}" if self.heading else self.text

    @property
    def readings(self) -> tuple[str, ...]:
        """The texts whose words and phrases the sentence states: a list item's words pair with
        its heading's either way round, and a labelled item's label comes first ("Revolute
        joints: rotational movement ..." is what "**Revolute**: ..." says under "Joints")."""
        if self.written:
            return (self.text, self.written)
        if not self.heading:
            return (self.text,)
        label, colon, rest = self.text.partition(":")
        if colon and len(label) <= _MAX_LABEL_CHARS:
            return (self.shown, f"{label} {self.heading}: {rest}")
        return (self.shown, f"{self.text} {self.heading}")


def read_sentences(text: str, units: list[Unit]) -> list[ReadSentence]:
    """The text's sentences (its `units`, services.common.text.units.sentence_units), each list
    item with the heading it stands under, each table row read cell by cell under its header, and
    a step with the short command it introduces (as the answerer quotes them:
    services.common.text.tables, services.common.text.steps)."""
    read = []
    heading = ""
    rows = table_rows(text, units)
    steps = step_readings(text, units)
    for index, unit in enumerate(units):
        sentence = steps.get(index) or text[unit.start : unit.end]
        if unit.kind == UnitKind.HEADING:
            heading = display_text(sentence)
        if index in rows:
            read.append(ReadSentence(rows[index].reading, written=sentence))
            continue
        read.append(ReadSentence(sentence, heading if unit.kind == UnitKind.LIST_ITEM else ""))
    return read or [ReadSentence(text)]


# Endings that make one word of another, as the stemmer leaves them: "interaction" from
# "interact", "rotational" from "rotat(e)", "efficienci" (efficiency) from "efficien(t)",
# "requirement" from "requir(e)", "dependenci" from "depend".
_DERIVATION_ENDINGS = frozenset(
    {
        "ion",
        "ional",
        "ation",
        "ational",
        "ive",
        "al",
        "ally",
        "ic",
        "ical",
        "ment",
        "ement",
        "iti",
        "ence",
        "enci",
        "ance",
        "anci",
        "ci",
        "ent",
        "ant",
    }
)
# Shorter words share too little to be one word's forms ("stat" of "state" and "station").
MIN_DERIVED_LENGTH = 5


def derived_partner(term: str, chunk_terms: frozenset[str]) -> str:
    """The chunk's form of a claim word the chunk states in another part of speech ("an agent
    interacts with its environment" for "the interaction between an agent and its environment"),
    else the word itself. The stemmer folds inflections only (Search's sparse vectors use it);
    a paraphrase changes a word's class as often as its tense."""
    if len(term) < MIN_DERIVED_LENGTH or not term.isalpha():
        return term
    for other in sorted(chunk_terms):
        shorter, longer = sorted((term, other), key=len)
        if len(shorter) < MIN_DERIVED_LENGTH or not other.isalpha():
            continue
        if longer[len(shorter) :] in _DERIVATION_ENDINGS and longer.startswith(shorter):
            return other
        if longer[len(shorter) - 1 :] in _DERIVATION_ENDINGS and longer.startswith(shorter[:-1]):
            return other
    return term


@dataclass(frozen=True)
class ClaimTerms:
    """The claim's content words as one chunk is asked to state them: a common verb the chunk
    never uses (PARAPHRASE_WORDS) and the filler of a paraphrase (FILLER_WORDS) are left out, and
    the words around them become adjacent."""

    terms: tuple[str, ...]

    @classmethod
    def against(cls, claim: Analysis, chunk: Analysis, named: frozenset[str] = frozenset()) -> ClaimTerms:
        """The claim's terms that the chunk must hold: not the common words a paraphrase adds,
        nor `named`, names the chunk need not state (page_names: those its page gives it;
        speaker_terms: whoever the claim is attributed to); a word the chunk states in another
        part of speech stands as the chunk's form of it (derived_partner)."""
        implicit = (((PARAPHRASE_WORDS & claim.term_set) | named) - chunk.term_set) | FILLER_WORDS
        return cls(
            tuple(
                term if term in chunk.term_set else derived_partner(term, chunk.term_set)
                for term in claim.terms
                if term not in implicit
            )
        )

    @property
    def term_set(self) -> frozenset[str]:
        return frozenset(self.terms)

    def without(self, left_out: frozenset[str]) -> ClaimTerms:
        """These terms less `left_out`, the words around them becoming adjacent."""
        return ClaimTerms(tuple(term for term in self.terms if term not in left_out))

    @property
    def bigrams(self) -> frozenset[tuple[str, str]]:
        return frozenset(zip(self.terms, self.terms[1:], strict=False))


@dataclass(frozen=True)
class PassageMatch:
    """How well one passage covers a claim's content words and adjacent word pairs."""

    passage: Passage
    novel_terms: frozenset[str]  # nowhere in the chunk
    outside_terms: frozenset[str]  # in the chunk, but not in this passage
    missing_bigrams: frozenset[tuple[str, str]]  # adjacent claim words not in order in this passage

    @property
    def misses(self) -> int:
        return len(self.novel_terms) + len(self.outside_terms) + len(self.missing_bigrams)

    @property
    def phrase_supported(self) -> bool:
        """Every content word and every adjacent pair of them is in this one passage."""
        return self.misses == 0


@dataclass(frozen=True)
class QuestionFrame:
    """The question an answer may restate: "How long does setting up a Python project take
    with uv compared with pip?" -> "Setting up a Python project with uv takes 30 seconds where pip
    takes 5 minutes." over the book's "UV takes 30 seconds where pip takes 5 minutes." The
    restated words are the reader's, not a fact the answer adds; the words that answer must still
    be stated together in one passage.

    `terms`: the question's content words; `focus`: those naming what it is about (not "use",
    "difference")."""

    terms: frozenset[str] = frozenset()
    focus: frozenset[str] = frozenset()

    @classmethod
    def of(cls, query: str) -> QuestionFrame:
        return cls(Analysis(query).term_set, focus_terms(query))

    def within(self, lead: frozenset[str]) -> QuestionFrame:
        """The frame a claim restates in `lead`, the words before its verb: only what the claim is
        about may be the reader's words. After the verb the claim says what is true of it, and
        there the question's words are the claim: "William Jewell College was founded in 1874"
        for "Which college ... was founded in 1874?" when the book says another one was."""
        return QuestionFrame(self.terms & lead, self.focus)

    def restated(self, stated: ClaimTerms, chunk: ChunkEvidence) -> frozenset[str]:
        """The claim's words that restate the question and may stand outside its passage: none
        unless the claim also says something of its own, and every restated word but at most one
        is in the chunk, its place or its page (a restated premise the book never states is not
        the reader's wording: "Inverse kinematics is hard to solve because ...")."""
        restated = stated.term_set & self.terms
        answering = stated.term_set - restated
        if not restated or not answering:
            return frozenset()
        unknown = restated - chunk.analysis.term_set - chunk.page.term_set
        if len(unknown) > MAX_UNSTATED_FRAME_WORDS:
            return frozenset()
        return restated - _contested(restated, answering, chunk)

    def anchors(self, passage: Passage) -> bool:
        """Whether the passage names something the question is about that the claim restates:
        "Topics: Used for streaming data" does not answer "What is URDF used for?"."""
        return bool(self.terms & self.focus & passage.terms)


def _contested(restated: frozenset[str], answering: frozenset[str], chunk: ChunkEvidence) -> frozenset[str]:
    """Restated words the chunk says something of in the claim's own terms: those must stand in
    the claim's passage. "Revolute joints allow linear sliding movement" for "What is the difference
    between revolute and continuous joints?" restates "revolute", and the chunk's "Revolute:
    Rotational movement with limits" says what revolute joints do."""
    return frozenset(
        word for passage in chunk.passages if passage.terms & answering for word in restated & passage.terms
    )


# A claim answering no question restates none.
NO_FRAME = QuestionFrame()
# A restated question may use one word the book does not ("setting up" a project it says "build").
MAX_UNSTATED_FRAME_WORDS = 1


def rank_passages(
    claim: Analysis,
    chunk: ChunkEvidence,
    keep: int | None = None,
    subject: frozenset[str] = frozenset(),
    speaker: frozenset[str] = frozenset(),
    frame: QuestionFrame = NO_FRAME,
) -> list[PassageMatch]:
    """The chunk's passages (the `keep` best of them), best coverage first; among equals the
    shorter passage wins. Keeping only the few that are used bounds the memory of a check: every
    passage of a 20,000-character chunk, for each of hundreds of claims, took gigabytes.

    Passages naming the claim's subject (see services.validation.subjects) come first: the claim
    is judged against what the chunk says of its subject, not against words said of another.
    The words of its `speaker` (services.validation.subjects.speaker_terms) the chunk need not state."""
    stated = ClaimTerms.against(claim, chunk.analysis, page_names(claim, chunk) | speaker)
    restated = frame.restated(stated, chunk)
    matches = (
        match
        for match in (
            _match(passage, stated.without(restated - passage.terms), chunk)
            if restated and frame.anchors(passage)
            else _match(passage, stated, chunk)
            for passage in chunk.passages
        )
        if not (match.passage.gathered and match.misses)
    )

    def best_first(match: PassageMatch) -> tuple[bool, int, int, int]:
        passage = match.passage
        return (not passage.is_about(subject), match.misses, passage.last - passage.first, passage.first)

    if keep is None:
        return sorted(matches, key=best_first)
    return heapq.nsmallest(keep, matches, key=best_first)


def _match(passage: Passage, stated: ClaimTerms, chunk: ChunkEvidence) -> PassageMatch:
    novel = stated.term_set - chunk.analysis.term_set
    return PassageMatch(
        passage, novel, stated.term_set - passage.terms - novel, stated.bigrams - passage.bigrams
    )


def page_names(claim: Analysis, chunk: ChunkEvidence) -> frozenset[str]:
    """Terms of the claim's names that the chunk's page mentions though the chunk does not:
    the page's subject ("ROS 2") is said of every section of it."""
    if chunk.page is chunk.analysis:
        return frozenset()
    return frozenset(
        stem(name)
        for name, _ in capitalised_words(claim.text)
        if not chunk.analysis.mentions(name) and chunk.page.mentions(name)
    )


def mentions_anything(claim: Analysis, chunk: ChunkEvidence) -> bool:
    """Cheap pre-filter: a chunk sharing no word and no number with a claim cannot support it."""
    return bool(claim.term_set & chunk.analysis.term_set or claim.numbers & chunk.analysis.numbers)
