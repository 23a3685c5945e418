"""`glossator config`: the reference with the values in effect, secrets masked, client targets in."""

from __future__ import annotations

import pytest

from services.cli import main
from services.commands import exit_codes
from services.commands.config import documented_settings
from services.common.config_doc import MASK, config_reference


def _row(table: str, variable: str) -> list[str]:
    """The cells of `variable`'s row."""
    for line in table.splitlines():
        if line.startswith(f"| `{variable}` |"):
            return [cell.strip() for cell in line.strip("|").split(" | ")]
    raise AssertionError(f"{variable} is not in the table")


@pytest.fixture(autouse=True)
def _no_dotenv(tmp_path, monkeypatch):
    """Settings read ./.env: run where there is none."""
    monkeypatch.chdir(tmp_path)


def test_config_prints_the_values_in_effect_and_masks_secrets(monkeypatch, capsys):
    monkeypatch.setenv("GLOSSATOR_RETRIEVAL_PORT", "6000")
    monkeypatch.setenv("GLOSSATOR_AGENT_LLM_API_KEY", "sk-very-secret")
    monkeypatch.setenv("GLOSSATOR_AUTH_TOKEN", "a-service-token-of-32-characters")
    monkeypatch.setenv("GLOSSATOR_AGENT_REDIS_URL", "redis://:hunter2@redis:6379/0")
    monkeypatch.setenv("GLOSSATOR_AGENT_LLM_MAX_TOKENS", "256")  # "tokens" is a count, not a secret
    assert main(["config"]) == exit_codes.OK
    out = capsys.readouterr().out
    assert "| variable | default | in effect | meaning |" in out
    assert _row(out, "GLOSSATOR_RETRIEVAL_PORT")[1:3] == ["`50052`", "`6000`"]
    assert _row(out, "GLOSSATOR_VALIDATION_PORT")[2] == "(default)"
    assert _row(out, "GLOSSATOR_AGENT_LLM_API_KEY")[2] == MASK
    assert _row(out, "GLOSSATOR_AUTH_TOKEN")[2] == MASK
    assert _row(out, "GLOSSATOR_AGENT_REDIS_URL")[2] == f"`redis://:{MASK}@redis:6379/0`"
    assert _row(out, "GLOSSATOR_AGENT_LLM_MAX_TOKENS")[2] == "`256`"
    assert "sk-very-secret" not in out and "hunter2" not in out and "32-characters" not in out


def test_config_documents_the_client_targets(monkeypatch, capsys):
    monkeypatch.setenv("GLOSSATOR_AGENT_TARGET", "agent.internal:443")
    assert main(["config"]) == exit_codes.OK
    out = capsys.readouterr().out
    assert _row(out, "GLOSSATOR_AGENT_TARGET")[1:3] == ["`127.0.0.1:50051`", "`agent.internal:443`"]
    assert _row(out, "GLOSSATOR_RETRIEVAL_TARGET")[1:3] == ["`127.0.0.1:50052`", "(default)"]
    assert _row(out, "GLOSSATOR_VALIDATION_TARGET")[1] == "`127.0.0.1:50053`"


def test_an_invalid_setting_is_named_without_its_value(monkeypatch, capsys):
    monkeypatch.setenv("GLOSSATOR_AUTH_TOKEN", "short-secret")
    monkeypatch.setenv("GLOSSATOR_AGENT_LLM_TEMPERATURE", "5")
    assert main(["config"]) == exit_codes.INVALID_ARGUMENT
    err = capsys.readouterr().err
    assert "error: GLOSSATOR_AUTH_TOKEN: Value error, must be at least 16 characters" in err
    assert "short-secret" not in err


def test_the_readme_reference_stays_defaults_only(monkeypatch):
    """The README's tables do not depend on the environment they were generated in."""
    reference = config_reference(documented_settings())
    monkeypatch.setenv("GLOSSATOR_RETRIEVAL_PORT", "6000")
    assert config_reference(documented_settings()) == reference
    assert "| variable | default | meaning |" in reference and "in effect" not in reference
    assert _row(reference, "GLOSSATOR_AGENT_TARGET")[1] == "`127.0.0.1:50051`"


def test_config_warns_of_unknown_variables_and_names_the_nearest(monkeypatch, capsys):
    monkeypatch.setenv("GLOSSATOR_AGENT_PROT", "6000")
    monkeypatch.setenv("GLOSSATOR_NOTHING_LIKE_IT", "1")
    monkeypatch.setenv("GLOSSATOR_TEST_LLM_URL", "http://127.0.0.1:1/v1")  # the test suite's own
    assert main(["config"]) == exit_codes.OK
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "warning: GLOSSATOR_AGENT_PROT is not a Glossator setting and is ignored "
        "(did you mean GLOSSATOR_AGENT_PORT?)",
        "warning: GLOSSATOR_NOTHING_LIKE_IT is not a Glossator setting and is ignored",
    ]


def test_a_dotenv_typo_is_warned_too(tmp_path, capsys):
    (tmp_path / ".env").write_text("GLOSSATOR_RETRIEVAL_BACKNED=qdrant\n")
    assert main(["config"]) == exit_codes.OK
    assert "GLOSSATOR_RETRIEVAL_BACKNED is not a Glossator setting" in capsys.readouterr().err


def test_the_suite_data_dir_is_every_services_unless_its_own_is_set(monkeypatch, tmp_path, capsys):
    from services.agent.config import AgentSettings
    from services.retrieval.config import RetrievalSettings
    from services.validation.config import ValidationSettings

    monkeypatch.setenv("GLOSSATOR_DATA_DIR", str(tmp_path / "suite"))
    monkeypatch.setenv("GLOSSATOR_AGENT_DATA_DIR", str(tmp_path / "agent"))
    assert RetrievalSettings().data_dir == ValidationSettings().data_dir == tmp_path / "suite"
    assert AgentSettings().data_dir == tmp_path / "agent"
    assert RetrievalSettings(data_dir=tmp_path / "given").data_dir == tmp_path / "given"
    assert main(["config"]) == exit_codes.OK
    captured = capsys.readouterr()
    assert captured.err == ""  # GLOSSATOR_DATA_DIR is a setting now
    assert _row(captured.out, "GLOSSATOR_DATA_DIR")[1:3] == ["`.glossator`", f"`{tmp_path / 'suite'}`"]
    assert _row(captured.out, "GLOSSATOR_RETRIEVAL_DATA_DIR")[2] == f"`{tmp_path / 'suite'}`"
