"""Renders the configuration reference (README section) from the settings classes themselves, and
`glossator config`'s view of it with the values in effect."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic_settings import BaseSettings

# A field named with one of these words holds a credential, whatever its type.
_SECRET_WORDS = frozenset({"key", "token", "password", "secret"})
MASK = "****"


def _shown(value: Any) -> str:
    return "(unset)" if value is None or value == "" else f"`{value}`"


def _masked(name: str, value: Any) -> str:
    """The value as `glossator config` may print it: credentials as MASK, and a URL's password too."""
    if value is None or value == "":
        return _shown(value)
    if isinstance(value, SecretStr) or not _SECRET_WORDS.isdisjoint(name.split("_")):
        return MASK
    if isinstance(value, str) and urlsplit(value).password:  # redis://:secret@host
        userinfo = urlsplit(value).netloc.rpartition("@")[0]
        return _shown(value.replace(f"{userinfo}@", f"{userinfo.split(':', 1)[0]}:{MASK}@", 1))
    return _shown(value)


def _rows(model: type[BaseModel], prefix: str, current: BaseModel | None) -> Iterator[str]:
    """One row per field; a nested model's fields are set as PREFIX_FIELD__SUBFIELD (nested settings
    classes have their own prefix and table). With `current`, a column gives its values."""
    for name, field in model.model_fields.items():
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseSettings):
            continue
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            inner = getattr(current, name) if current is not None else None
            yield from _rows(nested, f"{prefix}{name.upper()}__", inner)
            continue
        default = field.get_default(call_default_factory=True)
        cells = [f"`{prefix}{name.upper()}`", _shown(default)]
        if current is not None:
            value = getattr(current, name)
            cells.append("(default)" if value == default else _masked(name, value))
        yield f"| {' | '.join(cells)} | {field.description or ''} |"


def config_reference(settings_classes: dict[str, type[BaseSettings]], *, effective: bool = False) -> str:
    """One Markdown table per service: environment variable, default, meaning; `effective` adds the
    value this process's environment and .env give (a ValidationError when one is invalid)."""
    header = ["variable", "default", *(["in effect"] if effective else []), "meaning"]
    parts = []
    for title, settings_class in settings_classes.items():
        prefix = settings_class.model_config.get("env_prefix", "")
        rows = list(_rows(settings_class, prefix, settings_class() if effective else None))
        parts.append(
            "\n".join([f"#### {title}", "", f"| {' | '.join(header)} |", "|---" * len(header) + "|", *rows])
        )
    return "\n\n".join(parts) + "\n"


def validation_problems(error: ValidationError, settings_classes: dict[str, type[BaseSettings]]) -> list[str]:
    """Each problem of an invalid configuration as "VARIABLE: what is wrong", without the value
    given (it may be a secret)."""
    prefixes = {c.__name__: c.model_config.get("env_prefix", "") for c in settings_classes.values()}
    prefix = prefixes.get(error.title, "")
    problems = []
    for problem in error.errors(include_url=False, include_input=False):
        variable = prefix + "__".join(str(part).upper() for part in problem["loc"])
        problems.append(f"{variable}: {problem['msg']}" if problem["loc"] else problem["msg"])
    return problems


if __name__ == "__main__":
    import sys
    from pathlib import Path

    from services.cli import documented_settings

    readme = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    start, end = "<!-- config:start -->\n", "<!-- config:end -->"
    before, rest = readme.read_text().split(start, 1)
    readme.write_text(before + start + config_reference(documented_settings()) + end + rest.split(end, 1)[1])
