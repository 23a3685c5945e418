"""Renders the configuration reference (README section) from the settings classes themselves."""

from __future__ import annotations

from pydantic_settings import BaseSettings


def _default(settings_class: type[BaseSettings], name: str) -> str:
    field = settings_class.model_fields[name]
    value = field.get_default(call_default_factory=True)
    return "(unset)" if value is None or value == "" else f"`{value}`"


def config_reference(settings_classes: dict[str, type[BaseSettings]]) -> str:
    """One Markdown table per service: environment variable, default, meaning."""
    parts = []
    for title, settings_class in settings_classes.items():
        prefix = settings_class.model_config.get("env_prefix", "")
        rows = [
            f"| `{prefix}{name.upper()}` | {_default(settings_class, name)} | {field.description or ''} |"
            for name, field in settings_class.model_fields.items()
        ]
        parts.append(
            "\n".join([f"#### {title}", "", "| variable | default | meaning |", "|---|---|---|", *rows])
        )
    return "\n\n".join(parts) + "\n"
