"""Word analysis: tokens, the one stemmer, content words, numbers, negations and names.

Plain Python over regular expressions: it runs in microseconds, so the validator can look at every
sentence of every chunk lexically (keeping the embedding model for what needs it), and the sparse
vectors of Search stem their terms with the same `stem`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from services.common.text.display import show_links
from services.common.text.lists import word_list, word_map

# Function words: they state nothing a claim can be checked on.
STOPWORDS = word_list("stopwords")
# Words that carry no checkable fact: reporting verbs and filler that summaries add freely
# ("police say", "it includes"). On the HaluEval summarization dev split: +2 points.
LIGHT_WORDS = word_list("light_words")
NEGATIONS = word_list("negations")
# Words that spell a number; "one" and "first" are left out: mostly pronoun and adverb.
NUMBER_WORDS = word_map("number_words")

# A word keeps a "#" or "++" it ends with: C#, C++ and ROS# are other names than C and ROS.
TOKEN_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*(?:(?:\+\+|#)(?![\w#+]))?")
NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")
ORDINAL_RE = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, possessive 's dropped ("Arthur's" -> "arthur"); of a Markdown link
    only the words a reader sees ("[physics simulation](../physics-simulation/index.md)" states
    nothing about "index" or "md")."""
    return [_strip_possessive(m.group().lower()) for m in TOKEN_RE.finditer(show_links(text))]


def _strip_possessive(token: str) -> str:
    token = token.replace("’", "'")
    return token[:-2] if token.endswith("'s") else token


def is_content_word(word: str) -> bool:
    """Words that state something checkable; numbers and negations have hard checks of their own."""
    return not (
        word in STOPWORDS
        or word in LIGHT_WORDS
        or word in NEGATIONS
        or word in NUMBER_WORDS
        or word.isdigit()
    )


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light suffix stripper: plurals, -ed, -ing and -ly fold together, nothing cleverer.

    Claim and context go through the same function, so it only has to be consistent, not correct:
    "based", "bases" and "base" all become "bas". It only conflates inflections of one word, never
    derivations, so it rarely merges unrelated terms. Search's sparse vectors stem with it too
    (a change here changes stored vectors: bump the ingest RULES_VERSION); on the SQuAD split it
    lifts sparse MRR@10 from 0.839 (no stemming) to 0.857. Cached: an answer and its passages
    repeat their words, and a book's vocabulary is a few tens of thousands of them.
    """
    if len(word) <= 2 or not word.isalpha():
        return word
    if word.endswith("ied"):
        word = word[:-2]  # "died" -> "di", "studied" -> "studi"
    elif word.endswith("ies"):
        word = word[:-3] + "i"
    elif word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed", "ly"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and re.search("[aeiouy]", base):
            if suffix != "ly" and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # "stopped" -> "stop"
            word = base
            break
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    if word.endswith("ie") or (word.endswith("e") and len(word) > 3):
        word = word[:-1]
    return word


def normalise_number(raw: str) -> str:
    """'2,466' -> '2466', '6.50' -> '6.5', '32nd' -> '32', 'third' -> '3'."""
    lowered = raw.lower().replace(",", "")
    if lowered in NUMBER_WORDS:
        return NUMBER_WORDS[lowered]
    ordinal = ORDINAL_RE.match(lowered)
    if ordinal:
        return ordinal.group(1)
    if "." in lowered:
        lowered = lowered.rstrip("0").rstrip(".")
    return lowered


@dataclass(frozen=True)
class Analysis:
    """What support scoring and the hard checks compare about one piece of text (computed lazily)."""

    text: str

    @cached_property
    def words(self) -> list[str]:
        return tokens(self.text)

    @cached_property
    def word_set(self) -> frozenset[str]:
        """Every token, raw and stemmed, for looking up the names a claim mentions."""
        return frozenset(self.words) | frozenset(stem(w) for w in self.words)

    @cached_property
    def terms(self) -> list[str]:
        """Stemmed content words in reading order."""
        return [stem(w) for w in self.words if is_content_word(w)]

    @cached_property
    def term_set(self) -> frozenset[str]:
        return frozenset(self.terms)

    @cached_property
    def written_forms(self) -> dict[str, str]:
        """Term -> the content word as first written here, for readable reasons and for the
        words' own vectors (a stem is no word)."""
        forms: dict[str, str] = {}
        for word in self.words:
            if is_content_word(word):
                forms.setdefault(stem(word), word)
        return forms

    @cached_property
    def bigrams(self) -> frozenset[tuple[str, str]]:
        """Adjacent content words ("grand slam", "head office"): they catch recombined facts."""
        return frozenset(zip(self.terms, self.terms[1:], strict=False))

    def ordered_pairs(self, max_gap: int) -> frozenset[tuple[str, str]]:
        """Content words in reading order with at most max_gap others between them: a passage
        states "the harbour was completed" even when it says "the harbour of Dunmore East was
        completed", but not when the words come in the other order."""
        terms = self.terms
        return frozenset(
            (terms[i], terms[j])
            for i in range(len(terms))
            for j in range(i + 1, min(len(terms), i + max_gap + 2))
        )

    @cached_property
    def numbers(self) -> frozenset[str]:
        found = {normalise_number(m.group()) for m in NUMBER_RE.finditer(self.text)}
        found |= {NUMBER_WORDS[w] for w in self.words if w in NUMBER_WORDS}
        return frozenset(found)

    @cached_property
    def negations(self) -> frozenset[str]:
        """Negation words, except an answer's leading "No," (that answers a question)."""
        words = (
            self.words[1:]
            if self.words[:1] == ["no"] and re.match(r"\W*no\b\W*[,.!]", self.text, re.I)
            else self.words
        )
        found = {w for w in words if w in NEGATIONS}
        if re.search(r"n['’]t\b", self.text, re.IGNORECASE):
            found.add("n't")
        return frozenset(found)

    @cached_property
    def acronyms(self) -> frozenset[str]:
        """Initials of capitalised runs ("International Criminal Court" -> "icc")."""
        runs = re.finditer(r"[A-Z][\w’'-]*(?:\s+(?:of|the|and|for|de)?\s*[A-Z][\w’'-]*)+", self.text)
        return frozenset(
            "".join(
                w[0] for w in run.group().split() if w[0].isupper() and w.lower() not in STOPWORDS
            ).lower()
            for run in runs
        )

    @cached_property
    def word_prefixes(self) -> frozenset[str]:
        """Every prefix of four letters or more of every word."""
        return frozenset(w[:k] for w in self.words for k in range(4, len(w) + 1))

    def mentions(self, name: str, derived_forms: bool = True) -> bool:
        """Whether a lower-cased name from a claim occurs here: as is, stemmed, as an acronym, or
        (with derived_forms) as a form sharing all but its last three letters ("Indonesian" /
        "Indonesia")."""
        return (
            name in self.word_set
            or stem(name) in self.word_set
            or name in self.acronyms
            or (derived_forms and name[: max(4, len(name) - 3)] in self.word_prefixes)
        )


# "I'm", "I've", "I'll", "I'd": capitalised wherever they stand, and no name ("And how do I know
# I'm ready ...?" asked about no "I'm" the book must mention).
_FIRST_PERSON_RE = re.compile(r"i'(?:m|ve|ll|d)$")


def capitalised_words(text: str) -> list[tuple[str, int]]:
    """Capitalised words that name something (people, places, titles, months), with offsets.

    A claim naming something the context never mentions is a classic hallucination that embeddings
    barely notice. The first word is skipped unless a capitalised word follows it ("Researchers
    found" is ordinary English, "Salil Shetty said" is a name).
    """
    found = []
    for match in TOKEN_RE.finditer(text):
        word = match.group()
        lowered = _strip_possessive(word.lower())
        if (
            not word[0].isupper()
            or len(lowered) < 2
            or not is_content_word(lowered)
            or _FIRST_PERSON_RE.match(lowered)
        ):
            continue
        if not text[: match.start()].strip(" \"'“‘([") or text[: match.start()].rstrip().endswith(":"):
            rest = text[match.end() :].lstrip(" '’s")
            if not rest[:1].isupper():
                continue
        found.append((lowered, match.start()))
    return found


_NAME = r"[A-Z][\w'’.-]*"
# Up to five names, run together or joined by "and", "&" or commas ("Meaghan Keeler-Pettigrew,
# Stuart Bradin").
_NAMES = rf"{_NAME}(?:(?:\s+(?:and\s+|&\s+)?|,\s+){_NAME}){{0,4}}"
_NAMES_RE = re.compile(_NAMES)
_SAYS = r"(?:says?|said|writes|wrote|argues|asks|notes)"
# Who is speaking rather than what is said: a leading "Frida Ghitis:" label or "Frida Ghitis says
# ...", a closing ", says Stefan Wolff." or "Zelizer says." An opinion piece's author is in its
# byline, not its body.
ATTRIBUTION_RE = re.compile(
    rf"^\W*(?P<label>{_NAMES})\s*:\s"
    rf"|^\W*(?P<lead>{_NAMES})\s+{_SAYS}\s"
    rf"|(?:,|(?<![\s,]))\s+{_SAYS}\s+(?P<after>{_NAMES})\W*$"  # from a space run's start: linear
    rf"|(?:^|,\s*)(?P<before>{_NAMES})\s+{_SAYS}\W*$"
)


def names_only(text: str) -> bool:
    """Whether the text is nothing but names ("Sam Erman and Nathan Perl-Rosenthal"): who speaks,
    when a colon follows it, not what is said."""
    return _NAMES_RE.fullmatch(text.strip(" *\"'“”")) is not None


def attribution_span(text: str) -> tuple[int, int] | None:
    """(start, end) of the names a statement is attributed to, or None."""
    match = ATTRIBUTION_RE.search(text)
    if not match:
        return None
    group = next(name for name in ("label", "lead", "after", "before") if match.group(name))
    return match.span(group)


# A count before a word: "four permission modes", "a three-phase plan", "3 components" (not
# "Python 3.14", "the second phase", "twice a day"; a dozen is rarely exact).
_NOT_COUNTS = frozenset({"second", "third", "twice", "dozen"})
_CARDINALS = [
    w for w, n in NUMBER_WORDS.items() if n.isdigit() and not w.endswith("th") and w not in _NOT_COUNTS
]
_COUNT_RE = re.compile(
    rf"(?<![\w.])(\d{{1,2}}|{'|'.join(_CARDINALS)})"
    r"(?![\w.])(?:\s+|-)[a-z]"
)


# A heading that counts its sections says so first ("The 5-Step Safety Pattern", "Three Types of
# Probes"); a number after a word is a name's ("ROS 2 Basics", "Module 2 Overview").
_HEADING_COUNT_RE = re.compile(
    rf"^(?:(?:the|top|key|our|your|these|all)\s+)?(\d{{1,2}}|{'|'.join(_CARDINALS)})(?![\w.])(?:\s+|-)[a-z]"
)


def heading_count(heading: str) -> int:
    """How many sections a heading counts ("The 5-Step Safety Pattern": 5), 0 for none."""
    match = _HEADING_COUNT_RE.match(heading.strip().lower())
    count = int(NUMBER_WORDS.get(match.group(1), match.group(1))) if match else 0
    return count if 2 <= count <= 20 else 0


def announced_count(text: str) -> int:
    """How many things a text says there are ("offers four permission modes": 4, "a three-phase
    strategy": 3), 0 when it names no count of two to twenty."""
    for match in _COUNT_RE.finditer(text.lower()):
        count = int(NUMBER_WORDS.get(match.group(1), match.group(1)))
        if 2 <= count <= 20:
            return count
    return 0
