"""Valid protobuf messages with hostile field values, generated from the contracts' descriptors.

Every field of a message gets one of the values a careless or hostile client sends: empty,
100,000-character and control-character strings, 0/-1/2^31 integers, NaN and infinities, unknown
enum numbers, 250 repeated entries, nested messages filled the same way. A seeded random.Random
picks, so a failure names a seed that reproduces it.
"""

from __future__ import annotations

import math
import random
import uuid

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

STRINGS = (
    "",
    " ",
    "default",
    "x" * 100_000,
    "\x00\x01\x07\x1b[31m\x7f",
    "é\u202e\ufeff\U0001f600",
    "../../etc/passwd",
    "[" * 5_000,
    "# Heading\n\nA sentence about lighthouses. [1]",
    "00000000-0000-0000-0000-000000000000",
)
SIGNED = (0, -1, 1, 2**31 - 1, -(2**31), 7)
UNSIGNED = (0, 1, 2**32 - 1, 7)
FLOATS = (0.0, -0.0, -1.0, 0.5, 1.0, 2.0, math.nan, math.inf, -math.inf, 1e308)
REPEATS = (0, 1, 3, 250)
MAX_DEPTH = 3
UNSET = 0.45
"""A field is left at its default this often: with every field hostile, almost every call would
stop at the first field check, and the code behind it would never run."""

_T = FieldDescriptor
_SIGNED_TYPES = {
    _T.TYPE_INT32,
    _T.TYPE_INT64,
    _T.TYPE_SINT32,
    _T.TYPE_SINT64,
    _T.TYPE_SFIXED32,
    _T.TYPE_SFIXED64,
}
_UNSIGNED_TYPES = {_T.TYPE_UINT32, _T.TYPE_UINT64, _T.TYPE_FIXED32, _T.TYPE_FIXED64}


def message_class(descriptor: Descriptor) -> type[Message]:
    return message_factory.GetMessageClass(descriptor)


def hostile_message(
    descriptor: Descriptor, rng: random.Random, depth: int = 0, *, oneof_field: int | None = None
) -> Message:
    """A message of this type, each field set (or left unset) to a hostile value; oneof_field picks
    the field of each top-level oneof by position (a stream's opening message, then its items)."""
    message = message_class(descriptor)()
    oneof_choice = {
        oneof.name: oneof.fields[min(oneof_field, len(oneof.fields) - 1)]
        if oneof_field is not None
        else rng.choice(oneof.fields)
        for oneof in descriptor.oneofs
    }
    for field in descriptor.fields:
        oneof = field.containing_oneof
        if oneof is not None and oneof_choice[oneof.name] is not field:
            continue
        if rng.random() < UNSET and oneof is None:
            continue  # unset, as a client that forgets it
        if field.type == _T.TYPE_MESSAGE and depth >= MAX_DEPTH:
            continue
        if _is_map(field):
            _fill_map(message, field, rng, depth)
        elif field.is_repeated:
            count = rng.choice(REPEATS) if depth == 0 else rng.choice(REPEATS[:3])
            container = getattr(message, field.name)
            for _ in range(count):
                if field.type == _T.TYPE_MESSAGE:
                    container.add().CopyFrom(hostile_message(field.message_type, rng, depth + 1))
                else:
                    container.append(_scalar(field, rng))
        elif field.type == _T.TYPE_MESSAGE:
            getattr(message, field.name).CopyFrom(hostile_message(field.message_type, rng, depth + 1))
        else:
            setattr(message, field.name, _scalar(field, rng))
    return message


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == _T.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


def _fill_map(message: Message, field: FieldDescriptor, rng: random.Random, depth: int) -> None:
    entry = field.message_type
    key_field, value_field = entry.fields_by_name["key"], entry.fields_by_name["value"]
    target = getattr(message, field.name)
    for _ in range(rng.choice(REPEATS[:3])):
        key = _scalar(key_field, rng)
        if value_field.type == _T.TYPE_MESSAGE:
            target[key].CopyFrom(hostile_message(value_field.message_type, rng, depth + 1))
        else:
            target[key] = _scalar(value_field, rng)


def _scalar(field: FieldDescriptor, rng: random.Random):
    kind = field.type
    if kind == _T.TYPE_STRING:
        return rng.choice((*STRINGS, str(uuid.UUID(int=rng.getrandbits(128)))))
    if kind == _T.TYPE_BYTES:
        return rng.choice((b"", b"\x00" * 10, bytes(rng.getrandbits(8) for _ in range(64))))
    if kind == _T.TYPE_BOOL:
        return rng.random() < 0.5
    if kind in (_T.TYPE_FLOAT, _T.TYPE_DOUBLE):
        return rng.choice(FLOATS)
    if kind == _T.TYPE_ENUM:
        return rng.choice([*(value.number for value in field.enum_type.values), 99, -1])
    if kind in _SIGNED_TYPES:
        return rng.choice(SIGNED)
    if kind in _UNSIGNED_TYPES:
        return rng.choice(UNSIGNED)
    raise TypeError(f"no hostile values for field {field.full_name} of type {kind}")


def describe(message: Message, limit: int = 300) -> str:
    """A short rendering of a generated message, for a failure's report."""
    text = str(message).replace("\n", " ")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
