"""Extractive answering: the sentences of the retrieved passages that best answer a question.

`ExtractiveAnswerer` is its interface (passages in, chosen sentences out). Three callers use it:
the offline model (its answers), the coverage judge (do the passages answer the question at
all?) and, under `enforce`, the grounded stand-in for an LLM answer that failed validation.

No generation, so nothing can be invented: every sentence of an answer is copied verbatim from a
numbered passage and cited with that number. A sentence scores on
- meaning: cosine similarity of its embedding with the question's (the local MiniLM model);
- words: the IDF-weighted share of the question's content words and numbers it contains (IDF
  over the retrieved sentences, so a word every passage repeats counts for little; "Claude Sonnet
  4.5" is not answered by a sentence about Claude 3.5 Sonnet);
- neighbourhood: the best word score of the sentences around it, since an answer often follows the
  sentence that names the subject ("Tesla was born in Smiljan. He studied in Graz.");
- heading: the word score of the heading it stands under in its passage, since the items of a
  list under "Key characteristics of Physical AI" answer a question about them without repeating
  its words; for a comparison, a list item also scores its whole list's words (the items
  "Revolute: ..." and "Continuous: ..." together answer how the two joints differ);
- answer type: a number for how many / when questions, a name the question does not already
  contain for who / where questions;
- answer form: the shape of sentence the question asks for (query_type.question_form): for "what
  is X" a sentence defining X ("X is / refers to ...", "X: ..."), for "how" a step (an imperative,
  "by ...ing"), for "why" a reason ("because", "to ensure", "so that", "allows");
- meta: a penalty for sentences about the text rather than its subject ("This tutorial covers
  ...", "In this lesson you will ...", "Learn how to ...", a template's "[Describe your
  feature]") and for the items of a section of learning objectives, next steps or resources;
- retrieval rank: a small bonus for the passages the retriever put first.
Only the sentences that score best on words (with their neighbourhood) are embedded: on SQuAD the
top 10 of about 25 lose nothing measurable, and a cold answer over five long chunks embeds 20
sentences instead of a hundred.
A table's data rows are sentences too, each read cell by cell under its header ("Documentation
— Points: 15; Evaluation Criteria: ...", services/common/text/tables.py), quoted so, and validated
so. A sentence that only restates the question ("Symptoms: LiDAR returns all zeros, inf, or NaN.")
never answers it: the answer is what follows.
The best sentence answers; up to two more follow when they fit the length budget and score close
to it: half its score suffices within its own passage (neighbours complete it), nine tenths from
another passage; a sentence saying what a chosen one already says (near_duplicate), or one about
the text (meta), is skipped. The sentence right after the best one that goes on about it ("This
requirement stems from ...") follows it first.
Some questions say where their answer must be: "What is X?" is answered only where X is named
(around the sentence: its label, its place, the sentences before it in its section); a how or
why question whose best match is a troubleshooting entry's problem ("Issue: Unity visualization
lags behind ROS 2 simulation") is answered by the rest of the entry, its solutions or cause.
A step quotes the short command it introduces ("Convert to SDF format for Gazebo: gz sdf -p
your_robot.urdf", services/common/text/steps.py), and a lead-in whose blocks go on past its
chunk lists the titles of the later chunks of its section that the retrieval tool found with it
(so does a sentence ending its passage that counts them: "a three-phase strategy"), and a list
question whose words title a heading counting its sections ("The 5-Step Safety Pattern") gets
their titles.
When even the best sentence barely relates to the question (in meaning and in words), the book
does not cover it.
Sentences are ranked as they stand in the chunk (Search's scores are keyed by their offsets) and
quoted as a reader sees them rendered (services/common/text/display.py): no `**`, backticks,
link targets or bullets, and ending like a sentence, so that the validator, which splits answers
at sentence ends, checks each quoted sentence on its own.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise

import numpy as np

from services.agent.passages import Passage
from services.common.embedding import Embed, EmbeddingCache, count_tokens
from services.common.text.display import display_text
from services.common.text.prose import (
    HEADING_NUMBER_RE,
    REFERS_BACK_RE,
    inner_sections,
    normalise,
    prose_sentences,
    sectioned_sentences,
)
from services.common.text.question import (
    FIGURES,
    AnswerForm,
    Question,
    focus_terms,
    last_question,
    understand,
)
from services.common.text.units import sentence_ends
from services.common.text.words import (
    NUMBER_WORDS,
    STOPWORDS,
    TOKEN_RE,
    Analysis,
    announced_count,
    capitalised_words,
    heading_count,
    stem,
)

# Passages whose sentences are kept split and analysed: related questions retrieve the same chunks.
PASSAGE_CACHE_SIZE = 2048
# Choices kept (ExtractiveAnswerer.choose): enough for the runs in flight at once.
RECENT_CHOICES = 64
NOT_COVERED = "The book does not cover this question: none of the retrieved passages answer it."
# A decline names what the book does cover near the question, cited (worded so that the validator
# reads it as a refusal too: services/validation/refusals.py).
NEARBY = "Nearby, the book covers:"
NEARBY_SECTIONS = 3
NOTHING_FOUND = "The book does not cover this question: the search found no matching passages."
CANNOT_SEARCH = "I cannot search the book right now, so I cannot answer this question."
DECLINES = frozenset({NOT_COVERED, NOTHING_FOUND, CANNOT_SEARCH})
_NUMBER_RE = re.compile(r"\d")
_YEAR_OR_MONTH_RE = re.compile(
    r"\b(?:1\d{3}|20\d{2}|January|February|March|April|May|June|July|August|September|October"
    r"|November|December|century|centuries)\b"
)
# A definition: the defined words, then within a few words "is" (not a passive: "were given"),
# "refers to", "means", or a label's ":" / dash ("Topic: a named bus ...", "LLMOps (Large Language
# Model Operations)—the discipline ..."); a "Definition:" label before them is no label of theirs.
_DEFINING_RE = re.compile(
    r"\s(?:(?:is|are|was|were)(?!\s+\w+(?:ed|en)\b)|refers? to|means?|stands? for|represents?|denotes"
    r"|describes?)\s|:\s|\s[–—-]\s|(?<=\))[–—]"
)
# Two subjects ("Physical AI and embodied intelligence represent a shift") define neither.
_AND_RE = re.compile(r"\sand\s")
_BARE_VERBS = frozenset({"is", "are", "was", "were"})
_DEFINITION_LABEL_RE = re.compile(r"definitions?:\s+", re.IGNORECASE)
_DEFINED_MAX_CHARS = 80
_PARENTHESISED_RE = re.compile(r"\(([^()]*)\)")
_ARTICLE_RE = re.compile(r"(?:an?|the)\s", re.IGNORECASE)
_STEP_RE = re.compile(
    r"^(?:(?:first|then|next|finally|also|now)[,\s]+)?(?:use|run|set|add|create|configure|install|call"
    r"|launch|enable|disable|check|verify|ensure|make sure|open|define|specify|build|source|start"
    r"|restart|increase|reduce|decrease|lower|raise|adjust|modify|edit|update|select|click|go to"
    r"|navigate|download|import|write|place|attach|connect|replace|remove|try|apply|implement"
    r"|include|export|convert|type|assign|give|keep|avoid|limit|monitor|test|inspect|simplify)\b"
    r"|\bby (?:using\b|\w+ing\b)",
    re.IGNORECASE,
)
_REASON_RE = re.compile(
    r"\b(?:because|since|due to|so that|in order to|to (?:avoid|ensure|prevent|allow|enable|reduce"
    r"|improve|keep|make|provide|support|help|simplify|manage|organi[sz]e|separate|handle)"
    r"|allows?|enables?|helps?|lets|which means|this means|therefore|thus|otherwise|stems? from"
    r"|results? in|leads? to|arises? from|caused by|the need to)\b",
    re.IGNORECASE,
)
# Content words of a reasons label that names no subject ("Why it fails", "Key benefits").
_BARE_LABEL_WORDS = 2
# A list of reasons: its items give them without "because" ("Why it fails:", "Benefits:").
_REASONS_LABEL_RE = re.compile(r"\b(?:why|reasons?|benefits?|advantages?|because)\b", re.IGNORECASE)
# Sentences about the text rather than its subject, and a reader's prompts to an assistant ("Show
# me code using both asyncio.gather() and asyncio.create_task()", "AI Prompt Used: ...", "Ask your
# AI: ..."; a request states nothing).
_META_RE = re.compile(
    r"^(?:in\s+)?(?:this|the\s+following|these|the\s+next)\s+(?:[\w-]+\s+)?(?:tutorial|chapter|section"
    r"|lesson|module|guide|page|document|article|book|part|unit|exercise|project|course|walkthrough"
    r"|example|overview|introduction|foundation|material|reference|assessment|quiz)s?\b"
    r"|^(?:in\s+this\s+\w+,?\s+)?(?:you|we)(?:'ll|\s+will|\s+are\s+going\s+to|\s+learn)\b"
    r"|^(?:now\s+)?(?:you|we)(?:'re|\s+are)\s+(?:now\s+)?ready\b|^welcome\s+to\b"
    r"|^(?:by\s+the\s+end\s+of|let's|learn\s+(?:how|to|about)|continue\s+(?:to|with)"
    r"|next,?\s+(?:we|you)|explore\s|review\s+the|see\s+(?:the|also)|refer\s+to|check\s+out)\b"
    r"|^[\"“]?(?:show|tell|give|help|teach|walk)\s+me\b"
    r"|^(?:ai\s+|your\s+)?prompt(?:\s+used)?\s*:|^ask\s+(?:your\s+)?(?:ai|claude|chatgpt|gemini)\s*:"
    r"|^(?:lesson|chapter|section|part|module|unit)\s+\d[\w.-]*\s+(?:shows?|covers?|explains?"
    r"|introduces?|teaches|describes?|builds?|adds?|goes|will)\b"
    # ... a course's signposts: "Chapter 14: Master Spec-Kit Plus.", "After mastering LLMOps,
    # you're ready for Part 9", "This tradeoff is explained in Lesson 2", "Test your mastery of
    # ...", "From Lesson 2: ..."
    r"|^(?:from\s+)?(?:lesson|chapter|part|module|unit)\s+\d[\w.-]*\s*:"
    r"|^after\s+(?:mastering|completing|finishing)\b|^test\s+your\b"
    r"|\b(?:is|are)\s+(?:explained|covered|taught|discussed|introduced)\s+in\s+(?:lesson|chapter|part|module)\s+\d",
    re.IGNORECASE,
)
# The options of a multiple-choice question, on one line ("A) Use ... B) Use ... C) ...") or one
# a line ("B) Use stateless_http=False ..."): mostly wrong on purpose, and none is stated as true.
_CHOICES_RE = re.compile(r"(?:^|\s)A\)\s.+\sB\)\s.+\sC\)\s|^[A-E]\)\s")
_QUESTION_END_RE = re.compile(r"\?[\"'”’)]*\s*$")
# An editor's tag closing a sentence ("[when?]", "[citation needed]") asks nothing of the reader.
_TRAILING_TAG_RE = re.compile(r"\s*\[[^\[\]]*\]\s*$")
# A template's blank for the reader to fill ("[Describe your feature]", "[Single / Coordinator /
# Sequential]"): a bracket opened after a space (not "dict[str, int]"), holding words (not a
# citation "[1]"), and not a link.
_PLACEHOLDER_RE = re.compile(r"(?:^|(?<=[\s(\"'“]))\[[^\]\d\s][^\]]*\](?!\()")
# A troubleshooting entry's statement of its problem ("**Issue**: ...", "Symptoms: ...").
_PROBLEM_RE = re.compile(r"^(?:the\s+)?(?:issue|problem|symptoms?|error|bug)\s*:", re.IGNORECASE)
# Sections whose items say what a reader will learn or read next, not what the book teaches: a
# heading naming one ("Learning Objectives", "Hands-on Exercise: ..."), or a short heading that is
# a list of links by its name ("Additional Resources", "References"; "Direct vs Templated
# Resources" in a book about MCP resources teaches them).
_META_SECTION_RE = re.compile(
    r"\b(?:objectives?|what you(?:'ll| will) learn|next steps|further reading|see also|related \w+"
    r"|exercises?|assignments?|your tasks?|try with ai"
    # ... or what a course's teachers should do with it ("Educational Goals for Instructors",
    # "Teaching Suggestions", "Common Student Challenges")
    r"|(?:for|to)\s+(?:instructors?|teachers?|educators?)|instructor(?:'s)?\s+\w+|teaching\s+(?:suggestions?|notes?)"
    r"|student\s+(?:challenges?|difficulties|misconceptions?))\b"
    r"|^(?:(?:additional|further|more|other|useful|helpful|recommended|external|online|related|key"
    r"|learning|reading|chapter|lesson|course|expected|and)\s+){0,2}"
    r"(?:resources|references|goals|outcomes|connections)(?:\s+and\s+\w+)?\s*:?$",
    re.IGNORECASE,
)
# A sentence this long or longer (content words) that adds no word to the question's, past a
# label of at most ECHO_LABEL_WORDS words, only restates it (_echoes).
ECHO_MIN_TERMS = 3
ECHO_LABEL_WORDS = 3
DUPLICATE_JACCARD = 0.8
DUPLICATE_CONTAINMENT = 0.9
_SENTENCE_CLOSE_RE = re.compile(r"[.!?]['\"”’)\]]*$")


@dataclass(frozen=True)
class Weights:
    """How the evidence combines; tuned on SQuAD with bench/offline_answer_quality.py."""

    meaning: float = 1.0
    words: float = 0.6
    neighbourhood: float = 0.15
    answer_type: float = 0.1
    # Retrieval rank is real evidence through the service, but weaker since Search scores every
    # sentence of every hit. Containment over 2,000 SQuAD questions through Search
    # (`.venv/bin/python -m bench.answer_tuning`): rank 0 / 0.05 / 0.1 / 0.3 gave
    # 0.826 / 0.837 / 0.837 / 0.819 with the older length settings.
    rank: float = 0.1
    # A sentence of the shape the question asks for (a definition, a step, a reason); a penalty
    # for sentences about the text (section intros, learning objectives); the word score of the
    # heading a sentence stands under. Tuned on the tune split of bench/questions/physical-ai-book
    # (`.venv/bin/python -m bench.offline_book_answers --split tune --set ...`), answers citing
    # the source page / share of the expected words: all three 0: 0.88 / 0.45; form 0: 0.94 /
    # 0.52; meta 0: 0.88 / 0.54; heading 0: 0.94 / 0.48; these: 0.94 / 0.54 (report split: 0.71
    # / 0.45 -> 0.76 / 0.54). SQuAD has no headings or meta sentences; form 0.2 moves it by one
    # question in either direction (0.929 -> 0.930 in-domain, 0.8560 -> 0.8555 through Search).
    form: float = 0.2
    # For "What is X?" a sentence defining X (_defines) goes this much further up the order
    # (further sentences are still measured against its own score): at `form` alone the heading's
    # words outweighed it ("Installing Pydantic: Like any Python library, Pydantic needs to be
    # installed first" over "Pydantic is a library that validates data at runtime").
    definition: float = 1.0
    # An item of a list, for a question asking for several things (question.wants_list).
    listing: float = 0.1
    # The word score of a list item's whole list (its label and every item, fragments too): "What
    # is the difference between a revolute and a continuous joint?" is answered by the list whose
    # items are "Revolute: ..." and "Continuous: ...", though each names one of them.
    # Comparisons only (question.compares); tune splits at 0 / 0.2 / 0.3 / 0.5: physical-ai
    # 23 / 25 / 24 / 24 correct, agentfactory 21 / 21 / 21 / 21. For every list question too it
    # changed nothing at 0.2, and brought summary lists ("Key Mental Models") in without it.
    list_words: float = 0.2
    meta: float = 0.5
    heading: float = 0.5
    # Sentences beyond the first must reach this share of the best score: a lower share for the
    # best sentence's own passage (its neighbours complete it), a higher one for other passages.
    # Other passages at 0.9 / 0.85 / 0.8: containment 0.851 / 0.856 / 0.860, answers citing only
    # the question's own paragraph 0.81 / 0.77 / 0.73.
    follow_ratio: float = 0.5
    follow_ratio_other: float = 0.85
    # The sentence that goes on from the best one (_continuation) needs less: it scores low because
    # it takes up the best one's words, not the question's. Tune splits at 0.5 / 0.4 / 0: the
    # same on physical-ai, agentfactory 47 / 49 / 49 of 68; below 0.4 it adds sentences saying
    # little ("It's not a demo.").
    continuation_ratio: float = 0.4
    max_sentences: int = 3
    # Only this many sentences that Search did not score, the best by words, are embedded: a cold
    # answer over five long chunks would otherwise embed a hundred sentences.
    max_embedded: int = 20
    # A list item means what it says under its label ("Actions are ideal for tasks that: Require
    # continuous feedback to the client"): the best this many shortlisted items are embedded so
    # too, and score the better of the two. Tune splits at 0 / 4 / 8 / 20: physical-ai 22 / 24 /
    # 25 / 25 of 35 correct, agentfactory 18 of 32 each; 8 add about 20 ms to a cold answer.
    max_labelled: int = 8
    # Characters of answer text (without citations) that further sentences may fill. The issue
    # caps the median answer at 400 characters: at 450 the median is 366 (400: 0.84 containment).
    budget_chars: int = 450
    # Below both (words: the best of the sentence's and its heading's), the passages do not
    # answer the question. min_meaning at 0.3 / 0.4 / 0.45 / 0.5 on the tune splits: physical-ai
    # unanswerable declined 12 / 13 / 14 / 14 of 14 with no answerable question declined more,
    # agentfactory 14 of 14 throughout and two answerable ones declined from 0.4 on (one a list
    # of counted sections, which now answers, the other was partial); SQuAD (1,000 questions,
    # bench.offline_answer_quality) containment 0.917 / 0.906 / 0.900 and other articles'
    # paragraphs declined 0.977 / 0.997 / 0.997.
    min_meaning: float = 0.45
    min_words: float = 0.4
    # Decline when a name of the question is in no retrieved passage (1) or not (0): see
    # names_nowhere.
    decline_unknown_names: int = 1
    # A sentence whose passage does not name the question's names (more than `names_share` of
    # them: _about_names) loses `names_missing`, and a further sentence of the answer must name
    # them (names_needed 1; 0: names are not looked at). The answer must hold a number when the
    # question asks for a quantity (number_needed 1: _can_answer).
    names_needed: int = 1
    names_share: float = 0.5
    names_missing: float = 1.0
    number_needed: int = 1
    # The best sentence (or its label, place, or the sentence before it) must name one of the
    # question's rare names, those fewer than `rare_names_share` of the passages mention (1), or
    # not (0): see _rare_names. Tuned on the tune splits: agentfactory 0.471 -> 0.500 (its
    # unanswerable questions 5/6 -> 6/6), physical-ai unchanged.
    rare_names_near: int = 1
    rare_names_share: float = 0.5
    # For "What is X?", the answer must name X (most of its words: _names_term) in itself, its
    # label, its place or a sentence before it in its section (1), or not (0): "What is k3s?" is
    # not answered by "Cluster: A set of machines running Kubernetes".
    term_near: int = 1
    # A sentence about the text (meta) is never the answer (1), or only a penalised one (0).
    meta_answers_nothing: int = 1
    # A best sentence that is a list item brings its whole list (1), up to this many items and
    # characters: see _whole_list.
    whole_lists: int = 1
    max_list_items: int = 8
    list_budget_chars: int = 600
    # A follow-up is asked with the questions it leans on ("What are the three phases of the
    # Piggyback Protocol Pivot? And how do I know I'm ready for the last one?"): the words of the
    # latest question count this many times those of the earlier ones, which only say what "the
    # last one" is. Tune splits at 1 / 2 / 3 / 4: the same correct, one follow-up wrong -> partial
    # from 2 on, and three follow-up answers keep to what was asked.
    latest_words: float = 2.0
    # The share of the question's words in a heading that makes what stands under it the answer:
    # a list, for a question for a name (the heading word score, see choose_sentences), and the
    # sections a counting heading names, for a list question (_counted_sections). Tune and report
    # splits at 0.3 and 0.5: the same answers.
    titled_list: float = 0.4


@dataclass(frozen=True)
class Pick:
    """A sentence chosen for the answer (as displayed), with the passage it cites, and for a list
    item the label of its list (quoted on a line of its own above it: see compose_answer)."""

    number: int
    sentence: str
    label: str = ""


@dataclass(frozen=True)
class _Candidate:
    number: int
    rank: int
    position: int
    span: tuple[int, int]  # offsets in its passage's text
    text: str  # as in the chunk, whitespace normalised
    analysis: Analysis
    shown: str  # as a reader sees it: Markdown rendered, ending like a sentence
    meta: bool
    heading_terms: frozenset[str]  # of the heading above it in its passage (and a list item's label)
    section: str  # the heading above it in its passage ("" for none)
    label: str  # a list item's label ("" for other sentences)
    place: str  # its passage's place in the book
    items: tuple[tuple[int, int], ...]  # a list item's list, by spans in its passage
    list_only: bool  # too short to answer alone: one of several things (a block's title, a short item)
    runs_on: bool  # a block's title whose blocks go on in the chunks after its passage


class ExtractiveAnswerer:
    """Passages in, chosen sentences out (see the module docstring); no state but its caches.

    `embed` defaults to the local MiniLM model behind an EmbeddingCache: it embeds only the
    sentences Search did not score.
    """

    def __init__(self, embed: Embed | None = None, weights: Weights | None = None) -> None:
        self._embed = embed or EmbeddingCache(_local_embed)
        self.weights = weights or Weights()
        # The latest choices, by question and passages: an LLM run asks once to show the model
        # the chosen sections first, and again when its answer is judged (and for the fallback).
        self._recent: OrderedDict[tuple, list[Pick]] = OrderedDict()
        self._recent_lock = threading.Lock()

    def warm_up(self) -> None:
        """Loads the embedding model now (seconds), so that the first question does not wait for it."""
        self._embed(["warm up"])

    def choose(self, question: str, passages: Iterable[Passage]) -> list[Pick]:
        """The answer's sentences, best first; empty when the passages do not answer the question.
        The same question over the same passages (texts and Search's scores) is chosen once."""
        passages = list(passages)
        key = (question, tuple((p.number, p.text, tuple(p.sentence_scores.items())) for p in passages))
        with self._recent_lock:
            if key in self._recent:
                self._recent.move_to_end(key)
                return list(self._recent[key])
        picks = choose_sentences(question, passages, self._embed, self.weights)
        with self._recent_lock:
            self._recent[key] = picks
            while len(self._recent) > RECENT_CHOICES:
                self._recent.popitem(last=False)
        return list(picks)

    async def answer(self, question: str, passages: Iterable[Passage], *, searched: bool = True) -> str:
        """The answer text: the chosen sentences, each cited, or the decline that says why there
        are none (nothing found, a search that could not run, passages that do not answer)."""
        passages = list(passages)
        if not passages:
            return NOTHING_FOUND if searched else CANNOT_SEARCH
        picks = await asyncio.to_thread(self.choose, question, passages)
        return compose_answer(picks) if picks else not_covered(passages)


def _local_embed(texts: list[str]) -> np.ndarray:
    from services.common.embedding import local_embedding_model

    return local_embedding_model().embed(texts)


def sentences_of(text: str) -> list[tuple[tuple[int, int], str]]:
    """Prose sentences of a passage with their offsets, whitespace normalised (Search scored these)."""
    return [((start, end), normalise(text[start:end])) for start, end in prose_sentences(text)]


def choose_sentences(
    question: str, passages: Sequence[Passage], embed: Embed, weights: Weights | None = None
) -> list[Pick]:
    """The answer's sentences, best first; empty when the passages do not answer the question.

    Search's similarities of sentences to the query (each passage's sentence_scores) stand in
    for the model's where they exist.
    """
    weights = weights or Weights()
    whole = passages
    asked = Analysis(question)
    # A passage fetched to complete a list answers only a question naming its own title ("In MCP,
    # what is a templated resource?" and the "Templated Resources" block "MCP resources support
    # two patterns:" announces): the rest of it was found by its section, not by the question.
    passages = [p for p in passages if not p.continues or _titled_by(p, asked)]
    candidates = _candidates(passages)
    if not candidates or (weights.decline_unknown_names and names_nowhere(question, passages)):
        return []
    latest = last_question(question)
    understood = understand(latest)
    words, heading, whole_list = _word_scores(
        asked, candidates, passages, _matched_terms(Analysis(latest)), weights.latest_words
    )
    neighbourhood = _neighbourhood(candidates, words)
    shortlist = np.argsort(-(words + neighbourhood + heading), kind="stable")[: weights.max_embedded]
    scored = {(p.number, span): score for p in passages for span, score in p.sentence_scores.items()}
    meaning = _meaning(question, candidates, shortlist, embed, scored, weights.max_labelled)
    answer_type = _answer_type(understood, asked, candidates)
    form = _answer_form(understood, candidates)
    # ("What are the three categories of sensors?" asks for a list, which its label names.)
    defining = understood.form.form == AnswerForm.DEFINITION and not understood.wants_list
    if defining:
        # A sentence about the text that defines what is asked ("This lesson introduces GitOps, a
        # radically different approach: ...") states the definition all the same.
        candidates = [replace(c, meta=False) if form[i] else c for i, c in enumerate(candidates)]
    meta = np.array([float(c.meta) for c in candidates])
    rank = np.array([1.0 / (1 + c.rank) for c in candidates])
    names = question_names(question)
    mentioned = _names_by_page(names, passages)
    about = np.array([float(_about_names(names, mentioned[c.number], weights)) for c in candidates])
    scores = (
        weights.meaning * meaning
        + weights.words * words
        + weights.neighbourhood * neighbourhood
        + weights.heading * heading
        + weights.list_words * whole_list * understood.compares
        + weights.answer_type * answer_type
        + weights.form * form
        + weights.listing * _listing(understood, candidates)
        - weights.meta * meta
        + weights.rank * rank
        - weights.names_missing * (1 - about)
    )
    ranking = (
        scores + weights.definition * _definitions(understood, candidates, strictly=True)
        if defining
        else scores
    )
    order = [int(i) for i in np.argsort(-ranking, kind="stable")]
    # Sentences that answer nothing: an echo of the question (a question asking for other words
    # quotes its selection: that is no echo), a block's title announced alone.
    silent = {i for i, c in enumerate(candidates) if _lone_title(c, whole)}
    if not understood.other_words:
        silent |= {i for i, c in enumerate(candidates) if _echoes(asked, c.analysis)}
    defined = (
        understood.form.term if weights.term_near and defining and _plain_term(understood.form.term) else ""
    )
    answering = [
        i
        for i in order
        if _can_answer(understood, candidates[i], weights)
        and i not in silent
        and (understood.wants_list or not candidates[i].list_only)
        and (not defined or _names_term(candidates, i, defined))
    ]
    if not answering:
        return []
    best = judged = answering[0]
    # The problem a troubleshooting entry states is answered by the rest of the entry, and judged
    # by how well the statement matches.
    entry = _entry(candidates, order, understood)
    solving = [i for i in answering if i in entry[1:]]
    if solving:
        best, judged = solving[0], entry[0]
    # The question's words may be in the heading a sentence stands under ("Honda ASIMO" above
    # "Era: 2000-2018") rather than in the sentence, or for a comparison in its list ("Revolute:
    # ..." and "Continuous: ..." answer how the two joints differ).
    related = max(words[judged], heading[judged], whole_list[judged] * understood.compares)
    if (
        meaning[judged] < weights.min_meaning
        and related < weights.min_words
        # A heading titled by a list question that counts its sections answers it whatever its
        # sections' sentences say ("The 5-Step Safety Pattern" and "Step 2: Agent Explains").
        and not (understood.wants_list and _counted_sections(asked, whole, weights))
    ):
        return []
    # A question asking for other words is about the reader's selection, which the query carries
    # whole: its capitalised words ("Unchanged documents are skipped") are not names asked about.
    particular = {} if understood.other_words else _rare_names(names, passages, weights)
    if weights.rare_names_near and not _names_near(candidates, best, particular):
        return []
    # An item that itself names both sides of a comparison ("README vs AGENTS.md: README is for
    # humans ..."), or defines what the question asks about ("GitOps: Push code, Git webhook
    # triggers deployment"), answers alone: the items around it are other things.
    alone = _names_sides(candidates[best], understood) or (defining and bool(form[best]))
    # A number or a name is one item, not its list ("Which Python version made free-threading
    # production-ready?" is not answered by a checklist whose item names Python versions), unless
    # the list is titled with what the question asks for: "Which key arguments support the
    # embodiment hypothesis?" and the items under "Key Arguments for Embodiment".
    titled = heading[best] >= weights.titled_list
    one_thing = understood.wants_number or (understood.wants_name and not titled)
    if candidates[best].items and weights.whole_lists and not one_thing and not alone:
        listed = _whole_list(candidates[best], whole, weights)
        # A sentence of its passage, not of a list, scoring nearly as well as the item goes on
        # after the list ("tripwire_triggered — Boolean flag (True = block, False = allow)." then
        # "When tripwire_triggered=True, the SDK raises an exception.").
        beside = next(
            (
                i
                for i in order
                if candidates[i].number == candidates[best].number
                and not candidates[i].items
                and scores[i] >= weights.follow_ratio_other * scores[best]
                and i not in silent
                and about[i]
                and not candidates[i].list_only
                and _can_answer(understood, candidates[i], weights)
                and not any(near_duplicate(candidates[i].shown, pick.sentence) for pick in listed)
                and len(candidates[i].shown) <= weights.budget_chars
            ),
            None,
        )
        if beside is None:
            return listed
        return [*listed, Pick(candidates[beside].number, candidates[beside].shown, candidates[beside].label)]
    if understood.wants_list:
        best_pick = Pick(candidates[best].number, candidates[best].shown, candidates[best].label)
        announced = _announced_list(candidates, best)
        if announced is not None:
            return [best_pick, *_whole_list(candidates[announced], whole, weights)]
        if sections := _announced_sections(candidates, best, whole):
            return [best_pick, *sections]
        if sections := _counted_sections(asked, whole, weights):
            return [best_pick, *sections]
    picks = [best]
    used = len(candidates[best].shown)
    continuation = [
        i
        for i in _continuation(candidates, best, _term_words(_analysis(defined)), asked.term_set)
        if scores[i] >= weights.continuation_ratio * scores[best]
    ]
    for index in [*continuation, *order]:
        candidate = candidates[index]
        same_passage = candidate.number == candidates[best].number
        ratio = weights.follow_ratio if same_passage else weights.follow_ratio_other
        if len(picks) == weights.max_sentences + len(continuation):  # a continuation completes the best
            break
        if index in picks or candidate.meta or index in silent:
            continue
        if index not in continuation and scores[index] < ratio * scores[best]:
            continue
        if not about[index] or (candidate.list_only and not understood.wants_list):
            continue
        if not _can_answer(understood, candidate, weights) and _PROBLEM_RE.match(candidate.shown):
            continue
        if any(_repeats(candidate, candidates[i]) for i in picks):
            continue
        if used + len(candidate.shown) <= weights.budget_chars:
            picks.append(index)
            used += len(candidate.shown)
    chosen = [Pick(candidates[i].number, candidates[i].shown, candidates[i].label) for i in picks]
    listed = next((i for i in picks if candidates[i].items), None)
    several = (
        listed is not None
        and candidates[listed].number == candidates[best].number
        and sum(candidates[i].items == candidates[listed].items for i in picks) > 1
    )
    if (
        weights.whole_lists
        and listed is not None
        and not alone
        and (understood.wants_list or (several and not one_thing))
    ):
        # A question asking for several things, or answered by several items of one list in the
        # best sentence's passage: the list ("What makes a document a real specification?" and
        # two of its five checks; not for a number, which one item or row gives). Items of
        # another passage only back the answer: an exercise's steps are no part of it.
        at = picks.index(listed)
        return chosen[:at] + _whole_list(candidates[listed], whole, weights)
    return chosen


def _can_answer(question: Question, candidate: _Candidate, weights: Weights) -> bool:
    """Whether a sentence can be the answer at all, whatever it scores: it is not about the text
    ("This guide provides solutions to common issues" answers no question), it does not state the
    problem a how or why question asks about ("Issue: Unity visualization lags behind ROS 2
    simulation": the solutions or the cause that follow answer), and it holds a number when the
    question asks for a quantity (a sentence without one answers something else), a figure of the
    kind asked when the question says which ("How much will it cost?": a price, not "Q1 2026")."""
    if candidate.meta and weights.meta_answers_nothing:
        return False
    if question.form.form in (AnswerForm.HOW, AnswerForm.WHY) and _PROBLEM_RE.match(candidate.shown):
        return False
    if not (weights.number_needed and question.wants_quantity):
        return True
    if question.measure:
        return bool(FIGURES[question.measure].search(candidate.shown))
    return _holds_number(candidate.analysis, _analysis(question.text).word_set)


def _echoes(asked: Analysis, sentence: Analysis) -> bool:
    """Whether a sentence only restates the question: past its label, no content word or number
    the question does not have. "Symptoms: LiDAR returns all zeros, inf, or NaN." states the
    problem of "What should I check when a LiDAR returns all zeros, inf or NaN?"; the answer is
    what follows it. ("He studied engineering in Graz." adds Graz: it answers.)"""
    label, colon, rest = sentence.text.partition(": ")
    stated = Analysis(rest) if colon and len(TOKEN_RE.findall(label)) <= ECHO_LABEL_WORDS else sentence
    novel = (stated.term_set - asked.term_set) | (stated.numbers - asked.numbers)
    return len(stated.term_set) >= ECHO_MIN_TERMS and not novel


def _about_names(names: Mapping[str, str], mentioned: frozenset[str], weights: Weights) -> bool:
    """Whether a sentence's page mentions the names the question asks about (more than
    `names_share` of them): "What is Gazebo used for?" is not answered by "Used for streaming
    data", however similar, in a passage about ROS 2 topics that never names Gazebo."""
    if not weights.names_needed or not names:
        return True
    return len(mentioned) > weights.names_share * len(names)


def _names_by_page(names: Mapping[str, str], passages: Sequence[Passage]) -> dict[int, frozenset[str]]:
    """For each passage (by number), the question's names its page mentions in the passages
    retrieved from it: a section ("Action Message Structure: Goal, Feedback, Result") belongs
    to a page about ROS 2 actions although it never says "ROS 2" itself."""
    own = {
        p.number: frozenset(name for name, written in names.items() if _mentioned(_whole(p), name, written))
        for p in passages
    }
    by_page: dict[str, frozenset[str]] = {}
    for p in passages:
        by_page[_page_of(p)] = by_page.get(_page_of(p), frozenset()) | own[p.number]
    return {p.number: by_page[_page_of(p)] for p in passages}


def _page_of(passage: Passage) -> str:
    """The page a passage comes from: its address without the section anchor, else its title."""
    return passage.url.split("#", 1)[0] if passage.url else passage.heading.split(" > ", 1)[0]


def _rare_names(names: Mapping[str, str], passages: Sequence[Passage], weights: Weights) -> dict[str, str]:
    """The question's names that fewer than `rare_names_share` of the passages mention: what it
    asks about in particular ("Azure" in "How do I deploy my agent to Azure Container Apps?"),
    not what the book is about ("Python" in a Python book)."""
    found = [_whole(p) for p in passages]
    return {
        name: written
        for name, written in names.items()
        if sum(_mentioned(a, name, written) for a in found) < weights.rare_names_share * len(found)
    }


def _names_near(candidates: Sequence[_Candidate], best: int, names: Mapping[str, str]) -> bool:
    """Whether the answer's best sentence names one of `names` (all of them when empty), in
    itself, its label, its passage's place, or a sentence before it in its section: a sentence
    is about what was introduced before it ("Tesla was born in Smiljan. ... He studied in
    Graz."). A list of cloud credits whose next item mentions Azure does not say how to deploy
    to Azure."""
    if not names:
        return True
    around = _around(candidates, best)
    spellings = {_unaccented(word) for word in around.word_set}
    return any(
        _mentioned(around, name, written) or _misspelt(name, written, spellings)
        for name, written in names.items()
    )


# A term named by a phrase ("the daily distance walked by Tesla", "Tesla's idea regarding Earth",
# "a PPP also known as") asks for a fact about something, which the answer need not repeat.
_PHRASED_TERM_RE = re.compile(
    r"'s\b|’s\b|\b(?:of|by|for|in|on|at|to|from|with|about|regarding|known|called|named|also|used)\b",
    re.IGNORECASE,
)
_MAX_PLAIN_TERM_WORDS = 4


def _plain_term(term: str) -> bool:
    """Whether a definition question's term names a thing ("k3s", "ROS 2 package") rather than
    phrasing a fact about one: only such a term must be named near the answer."""
    return len(term.split()) <= _MAX_PLAIN_TERM_WORDS and not _PHRASED_TERM_RE.search(term)


# A long word of a defined term is named by any word it shares this many letters with ("templated",
# "templates"): stems part where words of one family differ in their endings.
_TERM_PREFIX = 6


def _names_term(candidates: Sequence[_Candidate], index: int, term: str) -> bool:
    """Whether a sentence, with what is around it (_around), names the term a definition question
    asks about: all its words when it has one or two, else all but a third ("handoff in the
    OpenAI Agents SDK" under "Agents SDK > Handoffs"); an abbreviation may be spelt out ("SLAM":
    "Simultaneous Localization and Mapping")."""
    wanted = Analysis(term)
    words = wanted.term_set | wanted.numbers
    if not words:
        return True
    around = _around(candidates, index)
    said = around.term_set | around.numbers
    prefixes = {word[:_TERM_PREFIX] for word in said if len(word) >= _TERM_PREFIX}
    found = {word for word in words if word in said or word[:_TERM_PREFIX] in prefixes}
    if _ABBREVIATION_RE.fullmatch(term) and not found:
        return _spelt_out((term[:-1] if term.endswith("s") else term).lower(), around.text)
    return len(found) >= len(words) - len(words) // 3


def _around(candidates: Sequence[_Candidate], index: int) -> Analysis:
    """A sentence with its label, its passage's place in the book and the sentences before it in
    its section: what a reader has read when reaching it."""
    chosen = candidates[index]
    near = [chosen.text, chosen.label, chosen.place]
    near += [
        c.text
        for c in candidates[:index]
        if c.number == chosen.number and c.heading_terms == chosen.heading_terms
    ]
    return Analysis("\n".join(near))


def _names_sides(candidate: _Candidate, question: Question) -> bool:
    """Whether a sentence itself names every side of the question's comparison (its list's label
    names what the items share: "Joints connect links ..." above "Revolute: ...")."""
    return bool(question.sides) and all(candidate.analysis.term_set & side for side in question.sides)


def _holds_number(sentence: Analysis, asked: frozenset[str] = frozenset()) -> bool:
    """A number, date or number word of the sentence's own: those of the question's words are
    part of what it names ("How many nodes can ROS 2 run?" is not answered by "ROS 2 uses DDS")."""
    return any(
        word not in asked and (_NUMBER_RE.search(word) or word in NUMBER_WORDS) for word in sentence.words
    ) or any(match.lower() not in asked for match in _YEAR_OR_MONTH_RE.findall(sentence.text))


def _whole_list(best: _Candidate, passages: Sequence[Passage], weights: Weights) -> list[Pick]:
    """The list the best sentence is an item of, in its order and under its label, as far as
    the list budget allows (from its first item, or from the best one when that would not fit):
    "What are the three categories of sensors?" is answered by the list, not by its best item.
    (Not for a question asking for a number: that is one item.)"""
    text = next(p.text for p in passages if p.number == best.number)
    analysed = {sentence.span: sentence.shown for sentence in _analysed_sentences(text)}
    shown = [analysed.get((a, b)) or shown_sentence(text[a:b]) for a, b in best.items]
    first = 0
    at = best.items.index(best.span)
    while sum(len(item) for item in shown[first : at + 1]) > weights.list_budget_chars and first < at:
        first += 1
    items = [(best.number, item) for item in shown[first:]]
    if best.runs_on:
        items += [(number, title) for number, title in _titles_after(best, passages) if title not in shown]
        # "four permission modes:" then four titles: a fifth section of the chunk ("Decision
        # Framework") is no mode
        items = items[: announced_count(best.label) or len(items)]
    picks, used = [], 0
    for number, item in items[: weights.max_list_items]:
        if picks and used + len(item) > weights.list_budget_chars:
            break
        picks.append(Pick(number, item, best.label))
        used += len(item)
    return picks


# How many sentences after one announcing a count its list may start.
_ANNOUNCED_WITHIN = 3


def _titled_by(passage: Passage, asked: Analysis) -> bool:
    """Whether the question names every content word of the passage's own section title."""
    title = _analysis(_section_of(passage.heading)).term_set
    return bool(title) and title <= asked.term_set


def _lone_title(candidate: _Candidate, passages: Sequence[Passage]) -> bool:
    """A block's title announced alone, with no block after it retrieved ("Setting up a Unity
    project for robotics visualization:" above "### Unity Settings for Robotics" only): a list of
    one title names nothing; its block's sentences answer instead."""
    return candidate.runs_on and len(candidate.items) == 1 and not _titles_after(candidate, passages)


def _titles_after(best: _Candidate, passages: Sequence[Passage]) -> list[tuple[int, str]]:
    """The titles of the blocks that go on after the best one's passage: the sections of the
    passages retrieved from later in its page, one level under its section, in page order
    ("Claude Agent SDK offers four permission modes:" above "### Mode 1: default", whose chunk
    ends there; the tool retrieves the chunks of "Mode 2" to "Mode 4" with it)."""
    own = next(p for p in passages if p.number == best.number)
    later = [p for p in passages if p.position > own.position]
    return [(number, title) for title, number in _sections_under(own.heading, own, later)]


def question_names(question: str) -> dict[str, str]:
    """The names a question asks about (capitalised words but its first, and abbreviations of
    three letters or more), lower-cased, with how each is written."""
    return {
        name: written
        for name, offset in capitalised_words(question)
        if offset > 0 and not _too_short(written := TOKEN_RE.match(question, offset).group())
    }


def not_covered(passages: Sequence[Passage]) -> str:
    """The decline when passages were found but none answers: it says so, then names the places
    in the book they come from (the first NEARBY_SECTIONS, cited), so a reader knows where the
    book comes closest."""
    nearby: dict[str, int] = {}
    for passage in passages:
        if len(nearby) == NEARBY_SECTIONS:
            break
        nearby.setdefault(nearby_place(passage.heading), passage.number)
    if not nearby:
        return NOT_COVERED
    places = ", ".join(f"{place} [{number}]" for place, number in nearby.items())
    return f"{NOT_COVERED} {NEARBY} {places}."


# What would end the decline's sentence, or cut it into clauses, inside a heading.
_PLACE_BREAKS_RE = re.compile(r"[.!?;]+(?=\s|$)|\s+and\s+", re.IGNORECASE)


def nearby_place(heading: str) -> str:
    """A passage's place as a decline names it: its page and its innermost section ("Launch
    Files & Parameters > Why Use Launch Files"), without numbering, and without what would end a
    sentence or start a clause (the validator reads the decline as one refusal)."""
    parts = heading.split(" > ")
    parts = parts if len(parts) <= 2 else [parts[0], parts[-1]]
    cleaned = []
    for part in parts:
        part = HEADING_NUMBER_RE.sub("", part.strip())
        part = _PLACE_BREAKS_RE.sub(lambda m: " & " if m.group().strip().lower() == "and" else "", part)
        cleaned.append(part.strip())
    return " > ".join(part for part in cleaned if part)


def is_decline(answer: str) -> bool:
    """Whether an answer is one of the answerer's declines (with or without nearby sections)."""
    return answer.startswith(NOT_COVERED) or answer in DECLINES


def names_nowhere(question: str, passages: Sequence[Passage], *, rare: bool = False) -> list[str]:
    """Names of the question that no retrieved passage mentions, in its heading or text.

    "How does a Kalman filter fuse IMU and GPS readings?" over a book that never says Kalman asks
    about something the book does not cover, however well it covers IMUs: an answer about them
    would be grounded and still wrong. Readers misspell names ("Ghengis Khan") and abbreviate them
    ("WWII"), so a name spelt within one or two letters of a passage word counts as mentioned, and
    so does an abbreviation a passage spells out ("World War II"); abbreviations of two letters
    ("TV") and the question's first word are not tested. On held-out SQuAD questions 20 of 4,040
    are declined this way.

    With `rare`, lower-case words the embedding model's vocabulary lacks count as names too
    ("deformable", "uvloop"): too many ordinary words are rare to decline on them (on SQuAD, 27
    of 1,000 answerable questions hold one that their passages do not: "colloquial",
    "appellation"), but a model's refusal of a question asking about one stands (answer_check).
    """
    rarely = rare_words(question) if rare else {}
    names = question_names(question) | rarely
    if not names:
        return []
    found = [_whole(p) for p in passages]
    missing = [
        name
        for name, written in names.items()
        if not any(
            _mentioned(a, name, written) or (name in rarely and _holds_word_of(name, a)) for a in found
        )
    ]
    spellings = {_unaccented(word) for a in found for word in a.word_set}
    return [name for name in missing if not _misspelt(name, names[name], spellings)]


def rare_words(question: str) -> dict[str, str]:
    """Lower-case words of the question's focus that the embedding model's vocabulary lacks whole
    (its tokenizer cuts them into pieces): a technique or a tool ("deformable", "kinematics",
    "uvloop"), not the common words a reader rephrases a passage with ("rely", "earn", "differ")."""
    focus = focus_terms(question)
    return {
        word: word
        for word in TOKEN_RE.findall(question)
        if word.isalpha() and word.islower() and stem(word) in focus and count_tokens(word) > 1
    }


def _holds_word_of(word: str, passage: Analysis) -> bool:
    """Whether the word is a passage's word with affixes ("unrealistically": "realistic")."""
    return any(len(known) >= 5 and known in word for known in passage.word_set)


_ABBREVIATION_RE = re.compile(r"[A-Z0-9]+s?")
# A product's name ("MoveIt", "PyTorch") has no derived forms: "movement" does not mention MoveIt.
_CAMEL_CASE_RE = re.compile(r".[A-Z]")


def _too_short(written: str) -> bool:
    """An abbreviation of two letters ("TV", "UK") stands for too many things to be tested."""
    return bool(_ABBREVIATION_RE.fullmatch(written)) and len(written.removesuffix("s")) <= 2


def _misspelt(name: str, written: str, spellings: set[str]) -> bool:
    """Whether the name is nearly a passage's word ("Ghengis"); an abbreviation of four letters
    or fewer is nearly too many words ("SLAM": "slim") to tell."""
    if _ABBREVIATION_RE.fullmatch(written) and len(name) < 5:
        return False
    return _spelt_nearly(_unaccented(name), spellings)


def _mentioned(passage: Analysis, name: str, written: str) -> bool:
    if _ABBREVIATION_RE.fullmatch(written):
        singular = name[:-1] if written.endswith("s") else name
        return passage.mentions(name, derived_forms=False) or _spelt_out(singular, passage.text)
    return passage.mentions(name, derived_forms=_CAMEL_CASE_RE.search(written) is None)


def _spelt_out(abbreviation: str, text: str) -> bool:
    """Whether consecutive words of the text begin with the abbreviation's letters, small words
    skipped when they do not ("SLAM": Simultaneous Localization and Mapping); a word in capitals
    gives all its letters ("WWII": World War II)."""
    words = TOKEN_RE.findall(text)
    for first in range(len(words)):
        spelt = 0
        for word in words[first:]:
            piece = word.lower() if word.isupper() else word[0].lower()
            if abbreviation.startswith(piece, spelt):
                spelt += len(piece)
            elif spelt == 0 or word.lower() not in STOPWORDS:
                break
            if spelt == len(abbreviation):
                return True
    return False


def _whole(passage: Passage) -> Analysis:
    """A whole passage with its place in the book and its address, analysed once."""
    return _passage_analysis(f"{passage.heading} ({passage.url})", passage.text)


@lru_cache(maxsize=PASSAGE_CACHE_SIZE)
def _passage_analysis(heading: str, text: str) -> Analysis:
    """A whole passage with its heading, analysed once: related questions retrieve the same ones."""
    return Analysis(f"{heading}\n{text}")


def _unaccented(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def _spelt_nearly(name: str, words: set[str]) -> bool:
    """Whether a word is within one edit of the name (two for names of 7 letters or more)."""
    if len(name) < 4:
        return False
    allowed = 1 if len(name) < 7 else 2
    return any(abs(len(word) - len(name)) <= allowed and _edits(name, word) <= allowed for word in words)


def _edits(a: str, b: str) -> int:
    """Edit distance, a swap of neighbours counting as one edit ("Ghengis" / "Genghis" is two)."""
    before, previous = None, list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if before is not None and j > 1 and x == b[j - 2] and a[i - 2] == y:
                current[j] = min(current[j], before[j - 2] + 1)
        before, previous = previous, current
    return previous[-1]


def compose_answer(picks: Sequence[Pick]) -> str:
    """Each sentence verbatim, followed by its citation; the items of a list on a line under
    their label, cited too ("Publisher-Subscriber (Topics) [1]:" then "Used for ... [1]"): the
    label and each item are separate sentences, each found in the chunk as it stands. The items of
    one list stand together under one label, wherever the others were picked."""
    text, label = "", ""
    for pick in _lists_together(picks):
        if pick.label != label:
            text = text.rstrip() + ("\n" if text else "")
            if pick.label:
                text += f"{pick.label} [{pick.number}]:\n"
            label = pick.label
        text += f"{pick.sentence} [{pick.number}] "
    return text.rstrip()


_LABEL_LINE_RE = re.compile(r"^.+ \[\d+\]:$")
_ITEM_MARKER_RE = re.compile(r"\s*\[\d+\]\s*")


def listed_items(answer: str) -> list[str]:
    """The items of the longest list in an answer compose_answer wrote (the sentences on the
    line under a label ending "[n]:"), without their markers; none when it quotes no list."""
    lines = answer.split("\n")
    lists = [
        [item.strip() for item in _ITEM_MARKER_RE.split(line) if item.strip()]
        for label, line in pairwise(lines)
        if _LABEL_LINE_RE.match(label)
    ]
    return max(lists, key=len, default=[])


def _lists_together(picks: Sequence[Pick]) -> list[Pick]:
    """The picks in their order, except that a list item picked after another passage's sentence
    joins the earlier items of its list: its label is quoted once ("Sensor data validation is
    crucial because [1]:" twice around a sensor-fusion item read as two answers)."""
    groups: list[list[Pick]] = []
    lists: dict[tuple[str, int], list[Pick]] = {}
    for pick in picks:
        key = (pick.label, pick.number)
        if pick.label and key in lists:
            lists[key].append(pick)
            continue
        groups.append([pick])
        if pick.label:
            lists[key] = groups[-1]
    return [pick for group in groups for pick in group]


def _candidates(passages: Sequence[Passage]) -> list[_Candidate]:
    candidates = []
    for rank, passage in enumerate(passages):
        section = _section_of(passage.heading)
        for position, sentence in enumerate(_analysed_sentences(passage.text)):
            # a list under a lead-in about the text ("You'll implement:") says what a reader will do
            meta = (
                is_meta_sentence(sentence.shown)
                or is_question(sentence.shown)
                or _opens_quoted_question(passage.text, sentence.span)
                or is_meta_section(sentence.heading.text or section)
                or (bool(sentence.label) and is_meta_sentence(sentence.label))
            )
            candidates.append(
                _Candidate(
                    number=passage.number,
                    rank=rank,
                    position=position,
                    span=sentence.span,
                    text=sentence.analysis.text,
                    analysis=sentence.analysis,
                    shown=sentence.shown,
                    meta=meta,
                    heading_terms=sentence.heading.term_set,
                    section=sentence.section,
                    label=sentence.label,
                    place=passage.heading,
                    items=sentence.items,
                    list_only=sentence.list_only,
                    runs_on=sentence.runs_on,
                )
            )
    return candidates


@dataclass(frozen=True)
class _Sentence:
    """A passage's sentence as split and analysed once (see _analysed_sentences)."""

    span: tuple[int, int]
    analysis: Analysis
    shown: str
    heading: Analysis
    section: str
    label: str
    items: tuple[tuple[int, int], ...]
    list_only: bool
    runs_on: bool


@lru_cache(maxsize=PASSAGE_CACHE_SIZE)
def _analysed_sentences(text: str) -> tuple[_Sentence, ...]:
    """A passage's sentences, split and analysed once (an Analysis computes each view once),
    each with its offsets, its display form, the heading it stands under in the passage ("" for
    none; a list item's label belongs to it: "A typical embodied agent consists of:" is what its
    items answer), and for a list item its label and its list. A table's data rows are among
    them, read and quoted each cell under its header ("Documentation — Points: 15; ...")."""
    return tuple(
        _Sentence(
            (s.start, s.end),
            Analysis(normalise(s.reading or text[s.start : s.end])),
            shown_sentence(s.reading or text[s.start : s.end]),
            _analysis(f"{s.heading}\n{s.label}" if s.label else s.heading),
            s.heading,
            s.label,
            s.items,
            s.list_only,
            s.runs_on,
        )
        for s in sectioned_sentences(text, for_answers=True)
    )


@lru_cache(maxsize=PASSAGE_CACHE_SIZE)
def _analysis(text: str) -> Analysis:
    """A heading's or a question's Analysis, read once however many sentences consult it."""
    return Analysis(text)


def shown_sentence(sentence: str) -> str:
    """A sentence as an answer quotes it: Markdown rendered, closed by a period when it has no
    closing punctuation of its own (a list item), so that it reads, and is checked, on its own.
    An abbreviation's period closes nothing ("(Python code in a bash block, etc.)" would run on
    into the next quoted item): the splitter decides."""
    shown = display_text(sentence)
    closed = _SENTENCE_CLOSE_RE.search(shown) and len(shown) in sentence_ends(f"{shown} Next")
    return shown if closed else f"{shown.rstrip(' ,;:')}."


def is_meta_section(heading: str) -> bool:
    """A section whose items say what a reader will learn, do or read next ("Learning
    Objectives", "Exercise Requirements", "Next Steps"), not what the book teaches."""
    return any(
        _META_SECTION_RE.search(HEADING_NUMBER_RE.sub("", line.strip())) for line in heading.splitlines()
    )


def is_meta_sentence(shown: str) -> bool:
    """A sentence about the text rather than its subject ("This tutorial covers ..."), a quiz's
    options, or a template for the reader to fill in."""
    return bool(_META_RE.search(shown) or _CHOICES_RE.search(shown) or _PLACEHOLDER_RE.search(shown))


def is_question(shown: str) -> bool:
    """A sentence that asks rather than states: a quiz's question, a prompt for the reader to try
    ("When would you choose TaskGroup (all-or-nothing) vs gather (best-effort)?"). Not meta as a
    label: the items under "Why use launch files?" answer it.) A statement may end by quoting a
    question ('Has clear intent — "What problem does this solve?"'): only a quote that opens the
    sentence makes it one."""
    text = _TRAILING_TAG_RE.sub("", shown.strip())
    if not _QUESTION_END_RE.search(text):
        return False
    quote_opens = max(text.rfind('"', 0, len(text) - 2), text.rfind("“"))
    return quote_opens <= 0


_QUOTE_OPEN_RE = re.compile(r"[>\s]*[\"“]")
_QUOTE_CLOSE_RE = re.compile(r"[\"”]")


def _opens_quoted_question(text: str, span: tuple[int, int]) -> bool:
    """A sentence opening a quotation that goes on to ask ('> "You said free-threading still has
    overhead ... Why? ..."' under "Ask a clarifying question:"): what a reader is to ask, not what
    the book states."""
    start, end = span
    opening = _QUOTE_OPEN_RE.match(text, start, end)
    closing = _QUOTE_CLOSE_RE.search(text, opening.end()) if opening else None
    return closing is not None and closing.start() >= end - 1 and "?" in text[opening.end() : closing.start()]


def _section_of(heading: str) -> str:
    """The innermost heading of a passage's place in the book ("Title > Section" -> "Section")."""
    return heading.rsplit(" > ", 1)[-1]


def _meaning(
    question: str,
    candidates: Sequence[_Candidate],
    shortlist: np.ndarray,
    embed: Embed,
    scored: Mapping[tuple[int, tuple[int, int]], float],
    max_labelled: int,
) -> np.ndarray:
    """Cosine of each sentence with the question: Search's score where it gave one (by passage
    and offsets), else the model's for the shortlisted sentences, else -1. A list item means what
    it says under its label: the first `max_labelled` shortlisted ones are embedded as "label:
    item" too and score the better of the two (an item too short to answer alone, "ProBuilder
    (for quick prototyping)", only so)."""
    meaning = np.array([scored.get((c.number, c.span), -1.0) for c in candidates])
    alone = [
        int(i)
        for i in shortlist
        if (candidates[i].number, candidates[i].span) not in scored and not candidates[i].list_only
    ]
    items = [int(i) for i in shortlist if candidates[i].items and candidates[i].label]
    labelled = [
        i
        for i in items
        if candidates[i].list_only and (candidates[i].number, candidates[i].span) not in scored
    ]
    labelled += [i for i in items if not candidates[i].list_only][:max_labelled]
    texts = [candidates[i].text for i in alone] + [
        f"{candidates[i].label}: {candidates[i].text}" for i in labelled
    ]
    if texts:
        vectors = embed([question, *texts])
        similarity = vectors[1:] @ vectors[0]
        meaning[alone] = similarity[: len(alone)]
        meaning[labelled] = np.maximum(meaning[labelled], similarity[len(alone) :])
    return meaning


def _word_scores(
    asked: Analysis,
    candidates: Sequence[_Candidate],
    passages: Sequence[Passage],
    latest: frozenset[str],
    latest_weight: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IDF-weighted share of the question's content words in each sentence, in the heading it
    stands under in its passage (0 without one), and for a list item in its whole list."""
    document_frequency = Counter(term for c in candidates for term in _matched_terms(c.analysis))
    total = len(candidates)

    def idf(term: str) -> float:
        return math.log(1 + total / (1 + document_frequency[term]))

    wanted = {term: idf(term) * (latest_weight if term in latest else 1.0) for term in _matched_terms(asked)}
    weight = sum(wanted.values())
    if not weight:
        return np.zeros(total), np.zeros(total), np.zeros(total)

    def share(terms: frozenset[str]) -> float:
        return sum(w for t, w in wanted.items() if t in terms) / weight

    texts = {p.number: p.text for p in passages}
    return (
        np.array([share(_matched_terms(c.analysis)) for c in candidates]),
        np.array([share(c.heading_terms) for c in candidates]),
        np.array(
            [
                share(_list_terms(texts[c.number], c.items) | c.heading_terms) if c.items else 0.0
                for c in candidates
            ]
        ),
    )


@lru_cache(maxsize=PASSAGE_CACHE_SIZE)
def _list_terms(text: str, items: tuple[tuple[int, int], ...]) -> frozenset[str]:
    """The content words and numbers of every item of a list."""
    return _matched_terms(Analysis("\n".join(display_text(text[a:b]) for a, b in items)))


def _matched_terms(text: Analysis) -> frozenset[str]:
    """The content words and numbers a question and a sentence share: "Claude Sonnet 4.5" is not
    answered by a sentence about Claude 3.5 Sonnet."""
    return text.term_set | {number for number in text.numbers if len(number) > 1}


def _continuation(
    candidates: Sequence[_Candidate], best: int, term: frozenset[str], asked: frozenset[str]
) -> list[int]:
    """The sentence right after the best one in its section when it goes on about it ("This
    requirement stems from ...", "It's a collection of tools ..."), names again the term a
    definition question asks about ("Unlike traditional AI ..., Physical AI works within embodied
    systems ..." after "Physical AI represents the convergence of ..."), or, for a definition
    and in the same paragraph, takes up a word of the best one that the question does not ask
    about ("... you declare your desired infrastructure in Git." then "A controller watches Git
    and makes the cluster match it automatically."; for any question, next sentences of prose
    share some word as a rule: SQuAD containment fell 0.917 -> 0.909, the next sentence taking
    the place of another passage's answer): it follows first when it scores close enough, before
    other passages' sentences that may score higher (restatements of the definition), since it
    says what the best one only announces (as a list item, its list answers)."""
    after = best + 1
    if after == len(candidates) or candidates[best].items:
        return []
    candidate, first = candidates[after], candidates[best]
    about = (
        REFERS_BACK_RE.match(candidate.shown)
        or (term and term <= _term_words(candidate.analysis))
        or (
            bool(term)
            and _same_paragraph(first, candidate)
            and bool(first.analysis.term_set & candidate.analysis.term_set - asked)
        )
    )
    goes_on = _same_section(candidate, first) and about
    return [after] if goes_on and not candidate.items else []


def _same_paragraph(first: _Candidate, then: _Candidate) -> bool:
    """Whether `then` follows `first` in its passage with no blank line between them (the chunk
    text's sentences are one space or one line break apart within a paragraph)."""
    return then.number == first.number and 0 <= then.span[0] - first.span[1] <= 1


def _announced_list(candidates: Sequence[_Candidate], best: int) -> int | None:
    """The first item of the list (or table) the best sentence announces by its count, when it
    follows within a few sentences in its passage with that many items ("Every agent ... shares
    the same four components." and, under the next heading, a table of four rows): the sentence
    names how many; the list names them."""
    count = 0 if candidates[best].items else announced_count(candidates[best].shown)
    if not count:
        return None
    for later in range(best + 1, min(best + 1 + _ANNOUNCED_WITHIN, len(candidates))):
        candidate = candidates[later]
        if candidate.number != candidates[best].number:
            return None
        if candidate.items:
            return later if len(candidate.items) == count else None
    return None


def _announced_sections(
    candidates: Sequence[_Candidate], best: int, passages: Sequence[Passage]
) -> list[Pick]:
    """The titles of the sections the best sentence announces by its count when it ends its
    passage ("Enter the Piggyback Protocol Pivot (PPP): a three-phase strategy ..." and, in the
    chunks the retrieval tool fetched after it, "Phase 1: ...", "Phase 2: ...", "Phase 3: ..."):
    the first that many subsections after it, when the retrieved passages hold as many."""
    chosen = candidates[best]
    last = best + 1 == len(candidates) or candidates[best + 1].number != chosen.number
    count = 0 if chosen.items or not last else announced_count(chosen.shown)
    titles = _titles_after(chosen, passages) if count else []
    return [Pick(number, title) for number, title in titles[:count]] if len(titles) >= count else []


def _counted_sections(asked: Analysis, passages: Sequence[Passage], weights: Weights) -> list[Pick]:
    """For a list question titling a heading that counts its sections ("What are the steps of the
    safety-first dialogue pattern?" and "The 5-Step Safety Pattern"): the titles of those
    sections, under the heading as their label, when the retrieved passages hold as many (the
    retrieval tool fetches the first chunk of each with any of them). The first sections may be
    headings inside the heading's own passage, too short for a chunk of their own."""
    wanted = _matched_terms(asked)
    for passage in passages:
        parts = passage.heading.split(" > ")
        for depth in range(len(parts) - 1, 0, -1):
            if not wanted or not (count := heading_count(parts[depth])):
                continue
            terms = _matched_terms(_analysis(parts[depth]))
            if len(wanted & terms) >= weights.titled_list * len(wanted):
                titles = _sections_under(" > ".join(parts[: depth + 1]), passage, passages)
                if len(titles) >= count:
                    label = shown_sentence(parts[depth]).removesuffix(".")
                    return [Pick(number, title, label) for title, number in titles[:count]]
    return []


def _sections_under(parent: str, found: Passage, passages: Sequence[Passage]) -> list[tuple[str, int]]:
    """The titles of the sections one level under `parent` on `found`'s page, in page order, with
    the passage each comes from: the headings inside the parent's own passage, then the passages
    under it."""
    titles: dict[str, int] = {}
    for passage in sorted(passages, key=lambda p: p.position):
        if _page_of(passage) != _page_of(found):
            continue
        if passage.heading == parent:
            for title in inner_sections(passage.text):
                titles.setdefault(shown_sentence(title), passage.number)
        title = passage.heading.removeprefix(f"{parent} > ")
        if passage.heading.startswith(f"{parent} > ") and " > " not in title:
            titles.setdefault(shown_sentence(title), passage.number)
    return list(titles.items())


def _entry(candidates: Sequence[_Candidate], order: Sequence[int], question: Question) -> list[int]:
    """For a how or why question whose best match is a troubleshooting entry's problem statement
    ("Issue: Unity visualization lags behind ROS 2 simulation"), the sentences of its entry: those
    after it in its section, up to the next statement. Its cause and solutions answer, however few
    of the question's words they repeat ("Use interpolation for smooth visualization")."""
    if question.form.form not in (AnswerForm.HOW, AnswerForm.WHY):
        return []
    top = next((i for i in order if not candidates[i].meta), None)
    if top is None or not _PROBLEM_RE.match(candidates[top].shown):
        return []
    entry = []
    for later, candidate in enumerate(candidates[top + 1 :], start=top + 1):
        if not _same_section(candidate, candidates[top]) or _PROBLEM_RE.match(candidate.shown):
            break
        entry.append(later)
    return [top, *entry]


def _same_section(one: _Candidate, other: _Candidate) -> bool:
    """Whether two sentences stand under the same heading of the same passage."""
    return one.number == other.number and one.section == other.section


def _neighbourhood(candidates: Sequence[_Candidate], words: np.ndarray) -> np.ndarray:
    """The best word score of the sentences just before and after, in the same passage."""
    scores = np.zeros(len(candidates))
    for i, candidate in enumerate(candidates):
        for j in (i - 1, i + 1):
            if 0 <= j < len(candidates) and candidates[j].number == candidate.number:
                scores[i] = max(scores[i], words[j])
    return scores


def _answer_type(question: Question, asked: Analysis, candidates: Sequence[_Candidate]) -> np.ndarray:
    """1 when a sentence holds the kind of thing asked for and the question does not already."""
    scores = np.zeros(len(candidates))
    if question.wants_number:
        for i, c in enumerate(candidates):
            if _NUMBER_RE.search(c.text) or _YEAR_OR_MONTH_RE.search(c.text):
                scores[i] = 1.0
    elif question.wants_name:
        known = asked.word_set | STOPWORDS
        for i, c in enumerate(candidates):
            if any(word not in known for word, offset in capitalised_words(c.text) if offset > 0):
                scores[i] = 1.0
    return scores


def _answer_form(question: Question, candidates: Sequence[_Candidate]) -> np.ndarray:
    """1 for a sentence of the shape the question asks for (see the module docstring)."""
    asked = question.form
    if asked.form is AnswerForm.DEFINITION:
        shaped = _definitions(question, candidates)
    elif asked.form is AnswerForm.HOW:
        shaped = np.array([float(bool(_STEP_RE.search(c.shown))) for c in candidates])
    elif asked.form is AnswerForm.WHY:
        reasons = [
            bool(_REASON_RE.search(c.shown) or _reasons_for(c.label, question.focus)) for c in candidates
        ]
        shaped = np.array(
            [float(reasons[i] or _reason_follows(candidates, i, reasons)) for i in range(len(candidates))]
        )
    else:
        shaped = np.zeros(len(candidates))
    return shaped


def _reasons_for(label: str, focus: frozenset[str]) -> bool:
    """Whether a list's label announces reasons for what the question asks about: a bare one
    ("Why it fails:", "Benefits:") does, and so does one naming the question's words; one naming
    a subject of its own gives reasons for that ("Sensor data validation is crucial because:" does
    not answer why a robot's model is trained in simulation)."""
    if not _REASONS_LABEL_RE.search(label):
        return False
    named = _analysis(label).term_set
    return bool(named & focus) or len(named) <= _BARE_LABEL_WORDS


def _reason_follows(candidates: Sequence[_Candidate], index: int, reasons: Sequence[bool]) -> bool:
    """Whether the next sentence of the paragraph gives the reason for this one, referring back to
    it: "Physical AI systems must ... respond within strict time constraints. This requirement
    stems from the need to ..." answers why they must (the continuation brings the reason)."""
    after = index + 1
    return (
        after < len(candidates)
        and reasons[after]
        and not candidates[index].items
        and _same_paragraph(candidates[index], candidates[after])
        and bool(REFERS_BACK_RE.match(candidates[after].shown))
    )


def _definitions(question: Question, candidates: Sequence[_Candidate], strictly: bool = False) -> np.ndarray:
    """1 for a sentence defining the term the question asks about (_defines)."""
    term = _term_words(Analysis(question.form.term))
    context = _term_words(Analysis(question.text))
    return np.array([float(_defines(term, c.shown, context, strictly)) for c in candidates])


def _listing(question: Question, candidates: Sequence[_Candidate]) -> np.ndarray:
    """1 for an item of a list when the question asks for several things."""
    return np.array([float(question.wants_list and bool(c.items)) for c in candidates])


def _term_words(text: Analysis) -> frozenset[str]:
    """Every word of a term but stopwords, stemmed ("Seven Years War": seven, year, war)."""
    return frozenset(stem(word) for word in text.words if word not in STOPWORDS)


def _defines(term: frozenset[str], sentence: str, context: frozenset[str], strictly: bool = False) -> bool:
    """The sentence opens with the whole term and then says what it is ("rclpy is the Python
    ...", "Topic: a named bus ..."). Its subject is the term, with nothing but the question's
    own words around it: "A ROS 2 package is ..." defines a package, not ROS 2, and "Monitor
    topics: ros2 topic list" is no topic. A term spelt out beside it in parentheses ("The Robot
    Operating System (ROS) is ...", "ROS 2 (Robot Operating System 2) is ...") or after a lead-in
    ("In AIDD, a General Agent is ...") is the subject too, and so is a term that a noun phrase
    follows ("This lesson introduces GitOps, a radically different approach: ...", "This lesson
    teaches Question-Driven Development (QDD): a technique ..."). Strictly, "is" / "are" must
    go on with an article: "The M-Shaped Developer is different" says nothing of what it is."""
    label = _DEFINITION_LABEL_RE.match(sentence)
    sentence = sentence[label.end() :] if label else sentence
    defining = _DEFINING_RE.search(sentence[: _DEFINED_MAX_CHARS + 20])
    if not term or not defining or defining.start() > _DEFINED_MAX_CHARS:
        return False
    if (
        strictly
        and defining.group().strip() in _BARE_VERBS
        and not _ARTICLE_RE.match(sentence, defining.end())
    ):
        return False
    subject = sentence[: defining.start()]
    subject_words = _term_words(Analysis(subject))
    if not term <= subject_words:
        return False
    if any(term <= _term_words(Analysis(inner)) for inner in _PARENTHESISED_RE.findall(subject)):
        return True
    named, _, apposition = subject.rpartition(", ")
    if named and _ARTICLE_RE.match(apposition) and _ends_with(named, term):
        return True
    if (
        _ARTICLE_RE.match(sentence, defining.end())
        and _ends_with(subject, term)
        and not _AND_RE.search(subject)
    ):
        return True
    others = (_PARENTHESISED_RE.sub("", subject), subject.rsplit(",", 1)[-1])
    return any(
        term <= words <= term | context
        for words in (subject_words, *(_term_words(Analysis(part)) for part in others))
    )


def _ends_with(text: str, term: frozenset[str]) -> bool:
    """Whether the last words of a text (but stopwords and parentheses) are the term's."""
    words = [stem(word) for word in Analysis(_PARENTHESISED_RE.sub("", text)).words if word not in STOPWORDS]
    return frozenset(words[-len(term) :]) == term


def _repeats(candidate: _Candidate, chosen: _Candidate) -> bool:
    return candidate.text == chosen.text or _near_duplicate(candidate.analysis, chosen.analysis)


def near_duplicate(first: str, second: str) -> bool:
    """Whether two sentences say the same thing: their content words (stemmed) and numbers
    overlap by a Jaccard of 0.8 or more, or nine tenths of the shorter one's are in the other."""
    return _near_duplicate(Analysis(first), Analysis(second))


def _near_duplicate(one: Analysis, other: Analysis) -> bool:
    first, second = one.term_set | one.numbers, other.term_set | other.numbers
    if not first or not second:
        return first == second
    common = len(first & second)
    return common / len(first | second) >= DUPLICATE_JACCARD or common / min(len(first), len(second)) >= (
        DUPLICATE_CONTAINMENT
    )
