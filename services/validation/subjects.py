"""What a claim is about, and whether a passage is about the same thing; and who says it.

A passage supports a claim only when it states the claim of the claim's subject: "URDF is used
for streaming data" is not supported by a passage saying that *topics* are, although every other
word is there, and "the continuous can move with limits" is not supported by the line about the
revolute joint. The subject is read by surface cues, like the rest of the checker: the content
words before the claim's first verb ("Boston Dynamics Atlas" has ...). A claim that opens with a
verb or a pronoun ("It is used for ...") names no subject, and is not checked this way.
"""

from __future__ import annotations

import re

from services.common.text.lists import word_list
from services.common.text.question import own_terms
from services.common.text.words import ATTRIBUTION_RE, Analysis, is_content_word, stem
from services.validation.evidence import PARAPHRASE_WORDS

# Verbs that end a subject: finite verbs and auxiliaries (the clause splitter's list), modals, and
# the common verbs of paraphrase ("Revolute joints allow ...").
_VERBS = word_list("clause_verbs") | {"may", "might", "must", "shall", "should", "need", "needs"}
# A subject is a short noun phrase: a claim with no verb among its first words names none.
MAX_SUBJECT_WORDS = 6


def _is_verb(word: str) -> bool:
    return word in _VERBS or stem(word) in PARAPHRASE_WORDS or (len(word) >= 5 and word.endswith("ed"))


def subject_terms(claim: Analysis) -> frozenset[str]:
    """The stemmed content words before the claim's first verb (empty when it names no subject)."""
    return leading_terms(claim, MAX_SUBJECT_WORDS)


def leading_terms(claim: Analysis, max_words: int | None = None) -> frozenset[str]:
    """The stemmed content words before the claim's first verb among its first max_words + 1
    words (empty when there is none): what the claim is about, however long ("Setting up a
    Python project with uv takes ...")."""
    words = claim.words
    for i, word in enumerate(words if max_words is None else words[: max_words + 1]):
        if _is_verb(word):
            return frozenset(stem(w) for w in words[:i] if is_content_word(w))
    return frozenset()


def speaker_terms(claim: Analysis) -> frozenset[str]:
    """The words of whoever the claim is attributed to, verb of saying included ("Frida Ghitis
    argues ...", "...,  says Stefan Wolff", "Richard Klass: ..."): an opinion piece's author is in
    its byline, not its body, so the chunk need not state who speaks, only what is said.

    A leading label is a speaker only when a statement follows it (a verb): in "Prismatic:
    rotational movement with limits" the label is what the claim is about."""
    match = ATTRIBUTION_RE.search(claim.text)
    if not match:
        return frozenset()
    if match.group("label") and not any(_is_verb(word) for word in Analysis(claim.text[match.end() :]).words):
        return frozenset()
    return Analysis(match.group()).term_set


# "Are A and B both ...?", "Do A and B have the same ...?": the two things a yes/no question pairs.
_PAIRED_QUESTION_RE = re.compile(
    r"^(?:are|is|were|was|do|does|did|have|has|had|can|could)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+"
    r"(?:(?:have|share|come|originate|play|live)\s+)?(?:both|the\s+same|of\s+the\s+same|from\s+the\s+same)\b",
    re.IGNORECASE,
)
# Words that frame a "both" claim rather than say what is true of each side.
_FRAMING = frozenset({"both", "yes", "no"})


# "Which dog is now extinct, the Tahltan Bear Dog or the Stichelhaar?": the two a choice offers.
_CHOICE_QUESTION_RE = re.compile(
    r"^(?:which|who|what)\b[^,?]*,\s+(?:the\s+)?(?P<a>[^,?]+?)\s+or\s+(?:the\s+)?(?P<b>[^,?]+?)\s*\?$",
    re.IGNORECASE,
)


def paired_sides(query: str) -> tuple[frozenset[str], ...]:
    """The two things a question asks about together (a yes/no question about both, or a choice
    between two), as their own content words (stemmed); empty when it pairs none."""
    text = " ".join(query.split())
    found = _PAIRED_QUESTION_RE.search(text) or _CHOICE_QUESTION_RE.search(text)
    return own_terms(found.group("a"), found.group("b")) if found else ()


def said_of_each(claim: Analysis, sentences: list[str], sides: tuple[frozenset[str], ...] = ()) -> list[str]:
    """What a claim says of *both* things a question pairs (paired_sides) that the chunk does not
    say of one of them: "Yes, both are American writers" when the chunk calls one of the two a
    British writer. Each side is read in the sentences that name it, up to the next that names
    the other. Empty when the claim says nothing of both, or the chunk does not name each side.
    (A claim naming both sides itself, "Both A and B are ...", must find them in one passage.)"""
    if len(sides) != 2 or "both" not in claim.words:
        return []
    said = claim.term_set - sides[0] - sides[1] - {stem(word) for word in _FRAMING}
    read = [Analysis(sentence).term_set for sentence in sentences]
    missing: list[str] = []
    for side, other in (sides, sides[::-1]):
        about = _region(read, side, other)
        if not about:
            return []
        missing.extend(sorted(said - about))
    return sorted(set(missing))


def _names(terms: frozenset[str], side: frozenset[str]) -> bool:
    return len(terms & side) * 2 >= len(side)


def _region(read: list[frozenset[str]], side: frozenset[str], other: frozenset[str]) -> frozenset[str]:
    """The words of the sentences about `side`: each that names it, and those after it until one
    names `other` ("He served as Prime Minister ..." is still about Churchill)."""
    words: set[str] = set()
    inside = False
    for terms in read:
        if _names(terms, side):
            inside = True
        elif _names(terms, other):
            inside = False
        if inside:
            words |= terms
    return frozenset(words)
