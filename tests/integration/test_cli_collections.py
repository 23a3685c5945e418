"""`glossator collections` and `glossator documents` against the real suite: listed with their
counts, deleted only once confirmed (a prompt on a terminal, --yes elsewhere)."""

from __future__ import annotations

import io
import json
import uuid

import pytest

from services.commands import exit_codes
from tests.integration.test_cli import run_cli

PAGES = {
    "bridges.md": "# Bridges\n\nA suspension bridge hangs its deck from cables between two towers.",
    "tides.md": "# Tides\n\nTides rise and fall twice a day with the pull of the moon.",
}


class _Terminal(io.StringIO):
    """What the user types at a prompt on a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
async def collection(suite, tmp_path):
    """A fresh collection of PAGES in the suite; its name and the --retrieval option."""
    name = f"shelf-{uuid.uuid4().hex[:8]}"
    for file, text in PAGES.items():
        (tmp_path / file).write_text(text)
    target = ["--retrieval", f"127.0.0.1:{suite.servers['retrieval'].port}"]
    assert await run_cli(["ingest", str(tmp_path), "--collection", name, "--quiet", *target]) == exit_codes.OK
    return name, target


async def test_collections_are_listed_with_counts_and_deleted_once_confirmed(collection, monkeypatch, capsys):
    name, target = collection
    capsys.readouterr()
    assert await run_cli(["collections", *target]) == exit_codes.OK
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["COLLECTION", "DOCUMENTS", "CHUNKS", "MODEL"]
    [row] = [line.split() for line in out if line.startswith(name)]
    assert row[1] == "2" and int(row[2]) >= 2

    # No terminal and no --yes: nothing is deleted.
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert await run_cli(["collections", "delete", name, *target]) == exit_codes.USAGE
    assert "pass --yes" in capsys.readouterr().err
    # On a terminal, anything but yes keeps it.
    monkeypatch.setattr("sys.stdin", _Terminal("n\n"))
    assert await run_cli(["collections", "delete", name, *target]) == exit_codes.USAGE
    assert "not deleted" in capsys.readouterr().err
    assert await run_cli(["collections", "list", "--json", *target]) == exit_codes.OK
    listed = json.loads(capsys.readouterr().out)["collections"]
    assert name in [c["name"] for c in listed]

    monkeypatch.setattr("sys.stdin", _Terminal("y\n"))
    assert await run_cli(["collections", "delete", name, *target]) == exit_codes.OK
    captured = capsys.readouterr()
    assert f"Delete collection '{name}' with its 2 documents" in captured.out  # the prompt
    assert f"deleted collection '{name}': 2 documents" in captured.out
    assert await run_cli(["collections", "list", "--json", *target]) == exit_codes.OK
    assert name not in [c["name"] for c in json.loads(capsys.readouterr().out)["collections"]]

    assert await run_cli(["collections", "delete", name, "--yes", *target]) == exit_codes.NOT_FOUND
    assert f"collection '{name}' not found" in capsys.readouterr().err


async def test_documents_are_listed_and_deleted(collection, capsys):
    name, target = collection
    capsys.readouterr()
    assert await run_cli(["documents", "list", "--collection", name, *target]) == exit_codes.OK
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split()[:2] == ["DOCUMENT_ID", "CHUNKS"]
    assert [row.split()[0] for row in rows] == sorted(PAGES)

    delete = ["documents", "delete", "tides.md", "missing.md", "--collection", name, "--yes", *target]
    assert await run_cli(delete) == exit_codes.NOT_FOUND  # one of them was not there
    captured = capsys.readouterr()
    assert captured.out.startswith("deleted 1 documents")
    assert f"no document 'missing.md' in collection '{name}'" in captured.err
    assert await run_cli(["documents", "list", "--collection", name, "--json", *target]) == exit_codes.OK
    assert [d["documentId"] for d in json.loads(capsys.readouterr().out)["documents"]] == ["bridges.md"]
