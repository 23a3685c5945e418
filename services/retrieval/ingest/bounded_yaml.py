"""YAML that comes with documents (front matter, _category_.yml files), loaded within bounds.

A few hundred bytes of YAML can cost far more than their size. Aliases make a value of billions
of strings that anything walking it expands ("billion laughs": a 485-byte page once held the
service for 44 s and 5.4 GB while an error message quoted it), and deep nesting overflows the
stack of libyaml's recursive composer (a segfault at 30,000 levels).
Documentation needs neither. So the event stream is read first (the parser builds nothing), and
the text is refused at its first anchor or alias, past MAX_NODES nodes or past MAX_DEPTH levels.
Only then is it loaded. Flow collections ([...], {...}) are counted before the parser sees the
text at all: libyaml's scanner reads a flow collection ahead to its end, so a deep one meets the
library's own limit (or, in older releases, its stack) before the first event reaches our count.
"""

from __future__ import annotations

import yaml

MAX_NODES = 10_000
"""Most scalars, sequences and mappings in one text (a page's front matter has a few dozen)."""
MAX_DEPTH = 32
"""Deepest nesting of sequences and mappings."""

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~10x faster
_NODE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)
_OPENING_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSING_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
_TOO_DEEP = f"nests lists and mappings more than {MAX_DEPTH} levels deep"


class YamlRefused(Exception):
    """YAML that is broken or out of bounds. The message reads on from the thing's name
    ("front matter " + "uses YAML aliases..."), and never quotes a value."""


def load_bounded_yaml(text: str, *, first_line: int = 1) -> object:
    """The value of the one YAML document in `text`; YamlRefused says why there is none.

    first_line is the line of the file that `text` starts on, so that errors name the file's lines.
    """
    try:
        _check_flow_depth(text)
        _check_events(text)
        return _construct(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + first_line}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise YamlRefused(f"is broken{where}: {problem}") from error


def _construct(text: str) -> object:
    """yaml.load, whose constructors fail on some values with plain Python errors, not YAMLError:
    2024-13-45 (ValueError), an int of 5,000 digits, `!!int abc` (ValueError, quoting the value),
    `!!bool maybe` (KeyError), `!!timestamp x` (AttributeError), `!!float ''` (IndexError)."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError:
        raise
    except Exception as error:  # whatever the constructor tripped on, it was this text's value
        raise YamlRefused(
            "holds a value YAML cannot build (an impossible date or number, or a value its !!tag does not fit)"
        ) from error


def _check_flow_depth(text: str) -> None:
    """Refuses flow collections nested past MAX_DEPTH, counting brackets outside quotes and comments.

    A plain scalar holding brackets (`title: a [b]`) counts too, so this can only over-count a
    text with more than MAX_DEPTH unclosed brackets in its plain values, which no page has."""
    depth = 0
    quote = ""
    previous = "\n"
    position = 0
    while position < len(text):
        char = text[position]
        if quote:
            if char == "\\" and quote == '"':
                position += 1
            elif char == quote:
                if quote == "'" and text.startswith("''", position):
                    position += 1
                else:
                    quote = ""
        elif char in "'\"" and previous in " \t\n[{,:-":
            quote = char
        elif char == "#" and previous in " \t\n":
            newline = text.find("\n", position)
            position = len(text) if newline < 0 else newline
            continue
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlRefused(_TOO_DEEP)
        elif char in "]}":
            depth = max(depth - 1, 0)
        previous = char
        position += 1


def _check_events(text: str) -> None:
    nodes = depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise YamlRefused("uses YAML aliases or anchors (*name, &name), which are not accepted")
        nodes += isinstance(event, _NODE_EVENTS)
        if nodes > MAX_NODES:
            raise YamlRefused(f"has more than {MAX_NODES:,} YAML values")
        if isinstance(event, _OPENING_EVENTS):
            depth += 1
            if depth > MAX_DEPTH:
                raise YamlRefused(_TOO_DEEP)
        elif isinstance(event, _CLOSING_EVENTS):
            depth -= 1
