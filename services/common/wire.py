"""Small translations every servicer shares between protobuf and domain values."""

from __future__ import annotations

import re
from datetime import datetime

from google.protobuf.timestamp_pb2 import Timestamp

from services.common.errors import Violations

DEFAULT_COLLECTION = "default"
# Collection names double as directory names (embedded Qdrant) and Qdrant collection names.
COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
COLLECTION_RULE = "1-63 letters, digits, '_' or '-', starting with a letter or digit"


def collection_name(name: str, violations: Violations) -> str:
    """The requested collection ("default" when empty); a bad name is a violation of `collection`."""
    name = name or DEFAULT_COLLECTION
    violations.check(bool(COLLECTION_NAME.fullmatch(name)), "collection", COLLECTION_RULE)
    return name


def timestamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp
