"""Renders the configuration reference (README section) from the settings classes themselves, and
`glossator config`'s view of it with the values in effect. Which classes: services/commands/config.py."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator, Mapping
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


def variable_names(settings_classes: dict[str, type[BaseSettings]]) -> set[str]:
    """Every environment variable the settings classes read (nested fields as PREFIX_FIELD__SUB)."""
    return {
        name
        for settings_class in settings_classes.values()
        for name, _field, _path in _fields(settings_class, settings_class.model_config.get("env_prefix", ""))
    }


def _fields(
    model: type[BaseModel], prefix: str, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, Any, tuple[str, ...]]]:
    """(environment variable, field, attribute path) of each field a variable sets; nested settings
    classes have their own prefix and table, so they are left to it."""
    for name, field in model.model_fields.items():
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseSettings):
            continue
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            yield from _fields(nested, f"{prefix}{name.upper()}__", (*path, name))
            continue
        yield f"{prefix}{name.upper()}", field, (*path, name)


# GLOSSATOR_* variables read by other programs than the services and commands: the test suite's
# switches, and the token of the example client (examples/python_client.py).
_OTHER_READERS = ("GLOSSATOR_TEST_",)
_OTHER_VARIABLES = frozenset({"GLOSSATOR_TOKEN"})


def unknown_variables(environment: Mapping[str, str], known: set[str]) -> list[tuple[str, str | None]]:
    """The GLOSSATOR_* variables of `environment` that no setting reads (pydantic-settings ignores
    them in silence: a typo would otherwise go unnoticed), each with the nearest known name."""
    unknown = []
    for variable in sorted(environment):
        name = variable.upper()
        if not name.startswith("GLOSSATOR_") or name in known or name in _OTHER_VARIABLES:
            continue
        if name.startswith(_OTHER_READERS):
            continue
        nearest = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        unknown.append((variable, nearest[0] if nearest else None))
    return unknown


def unknown_variable_warnings(environment: Mapping[str, str], known: set[str]) -> list[str]:
    """unknown_variables as sentences."""
    return [
        f"{variable} is not a Glossator setting and is ignored"
        + (f" (did you mean {nearest}?)" if nearest else "")
        for variable, nearest in unknown_variables(environment, known)
    ]


def _rows(model: type[BaseModel], prefix: str, current: BaseModel | None) -> Iterator[str]:
    """One row per field (a nested model's fields are set as PREFIX_FIELD__SUBFIELD). With
    `current`, a column gives its values."""
    for variable, field, path in _fields(model, prefix):
        default = field.get_default(call_default_factory=True)
        cells = [f"`{variable}`", _shown(default)]
        if current is not None:
            value = functools.reduce(getattr, path, current)
            cells.append("(default)" if value == default else _masked(path[-1], value))
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


def readme_with_reference(readme: str, settings_classes: dict[str, type[BaseSettings]]) -> str:
    """The README's text with the reference of `settings_classes` between its config markers."""
    start, end = "<!-- config:start -->\n", "<!-- config:end -->"
    before, rest = readme.split(start, 1)
    return before + start + config_reference(settings_classes) + end + rest.split(end, 1)[1]
