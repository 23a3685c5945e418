"""The `glossator` command as a user runs it (in-process, with --embedded servers)."""

from __future__ import annotations

import json

import pytest

from services.cli import build_parser, main

SUBCOMMANDS = ("serve", "up", "demo", "ingest", "search", "ask", "chat", "sessions", "eval", "config")


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: glossator " + command in capsys.readouterr().out


def test_ingest_reports_bad_files_and_goes_on(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nA page about lighthouses and their keepers.")
    (docs / "binary.md").write_bytes(b"\x89PNG\x00\x00\x01" * 100)
    (docs / "huge.md").write_bytes(b"# Huge\n\n" + b"word " * (50 * 1024 * 1024 // 5))  # 50 MB
    code = main(["ingest", str(docs), "--quiet", "--embedded", str(tmp_path / "data")])
    captured = capsys.readouterr()
    assert code == 1  # some documents failed
    assert "3 documents: 1 indexed, 0 unchanged, 2 failed" in captured.out
    assert "binary.md" in captured.err and "huge.md" in captured.err

    code = main(["search", "lighthouse keepers", "--json", "--embedded", str(tmp_path / "data")])
    results = json.loads(capsys.readouterr().out)["results"]
    assert code == 0 and results[0]["chunk"]["sourcePath"] == "good.md"


def test_commands_explain_an_unreachable_service(capsys):
    code = main(["search", "anything", "--retrieval", "127.0.0.1:9"])
    assert code == 2
    assert "cannot reach 127.0.0.1:9" in capsys.readouterr().err
