"""Renders the configuration reference (README section) from the settings classes themselves."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel
from pydantic_settings import BaseSettings


def _rows(model: type[BaseModel], prefix: str) -> Iterator[str]:
    """One row per field; a nested model's fields are set as PREFIX_FIELD__SUBFIELD (nested settings
    classes have their own prefix and table)."""
    for name, field in model.model_fields.items():
        nested = field.annotation
        if isinstance(nested, type) and issubclass(nested, BaseSettings):
            continue
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            yield from _rows(nested, f"{prefix}{name.upper()}__")
            continue
        value = field.get_default(call_default_factory=True)
        default = "(unset)" if value is None or value == "" else f"`{value}`"
        yield f"| `{prefix}{name.upper()}` | {default} | {field.description or ''} |"


def config_reference(settings_classes: dict[str, type[BaseSettings]]) -> str:
    """One Markdown table per service: environment variable, default, meaning."""
    parts = []
    for title, settings_class in settings_classes.items():
        prefix = settings_class.model_config.get("env_prefix", "")
        rows = list(_rows(settings_class, prefix))
        parts.append(
            "\n".join([f"#### {title}", "", "| variable | default | meaning |", "|---|---|---|", *rows])
        )
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    import sys
    from pathlib import Path

    from services.cli import documented_settings

    readme = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    start, end = "<!-- config:start -->\n", "<!-- config:end -->"
    before, rest = readme.read_text().split(start, 1)
    readme.write_text(before + start + config_reference(documented_settings()) + end + rest.split(end, 1)[1])
