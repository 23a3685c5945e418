"""`glossator eval answers --questions`: a question file's book ingested and asked through the real suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.cli import main
from services.commands import exit_codes

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "bench" / "questions" / "sample-docs.yaml"

# Measured on the sample docs with the offline extractive model: 9 of the 10 answerable questions
# cite their page, all 10 are grounded, 3 of the 4 unanswerable ones are declined. The floors leave
# one question of room below that.
RIGHT_PAGE_FLOOR = 0.8
GROUNDED_FLOOR = 0.8
DECLINED_FLOOR = 0.5


def report_of(out: str) -> dict:
    """The one JSON object the command printed (the embedded servers may log around it)."""
    for line in out.splitlines():
        if line.startswith("{") and '"figures"' in line:
            return json.loads(line)
    raise AssertionError(f"no JSON report in {out!r}")


def assert_shares(figures: dict) -> None:
    shares = [
        figures["answerable"]["right_page"],
        figures["answerable"]["grounded"],
        figures["answerable"]["declined"],
        figures["unanswerable"]["declined"],
        figures["answers"]["markdown"],
        figures["answers"]["duplicates"],
    ]
    assert all(isinstance(share, float) and 0.0 <= share <= 1.0 for share in shares), shares


def test_the_sample_docs_are_ingested_asked_and_scored(tmp_path, capsys):
    argv = ["eval", "answers", "--questions", str(SAMPLE), "--embedded", str(tmp_path / "data")]
    code = main([*argv, "--json", "--rows"])
    captured = capsys.readouterr()
    assert code == exit_codes.OK, captured.err
    report = report_of(captured.out)
    assert report["collection"] == "bench-sample-docs" and report["split"] == "all"
    assert report["ingest"]["indexed"] == 5 and report["ingest"]["failed"] == 0

    figures = report["figures"]
    assert figures["questions"] == 14 and figures["status"] == {}
    assert figures["answerable"]["questions"] == 10 and figures["unanswerable"]["questions"] == 4
    assert_shares(figures)
    assert figures["answerable"]["right_page"] >= RIGHT_PAGE_FLOOR
    assert figures["answerable"]["grounded"] >= GROUNDED_FLOOR
    assert figures["unanswerable"]["declined"] >= DECLINED_FLOOR
    assert 0 < figures["answers"]["median_chars"] <= 2000
    assert figures["models"] == {"offline-extractive": 14}

    assert set(report["splits"]) == {"tune", "report"}
    assert sum(s["questions"] for s in report["splits"].values()) == 14
    for split in report["splits"].values():
        assert_shares(split)

    rows = {row["id"]: row for row in report["rows"]}
    assert len(rows) == 14 and all(row["status"] == "OK" for row in rows.values())
    right = [row for row in rows.values() if row["right_page"]]
    assert all(row["source"] in row["cited"] for row in right)  # a folder ingest: the id is the path
    assert rows["sd-07"]["answer"]  # the follow-up of session "search-modes" was answered too
    # correctness leads: a verdict per row, the unanswerable ones correct exactly when declined
    assert all(row["correctness"] in ("correct", "partial", "wrong") for row in rows.values())
    unanswerable = [row for row in rows.values() if not row["answerable"]]
    assert all((row["correctness"] == "correct") == row["declined"] for row in unanswerable)
    verdicts = [figures["answerable"][v] for v in ("correct", "partial", "wrong")]
    assert sum(verdicts) == pytest.approx(1.0, abs=0.001)
    correct = sum(row["correctness"] == "correct" for row in rows.values())
    assert figures["correct"] == pytest.approx(correct / 14, abs=0.001)
    assert set(figures["forms"]) <= {row["form"] for row in rows.values()}

    # A second run skips the unchanged documents and prints the table.
    assert main([*argv, "--split", "report"]) == exit_codes.OK
    out = capsys.readouterr().out
    assert "ingested in" in out and "0 indexed, 5 unchanged" in out
    header = next(line for line in out.splitlines() if line.startswith("split"))
    assert header.split()[:6] == ["split", "correct", "answerable", "correct", "partial", "wrong"]
    assert next(line for line in out.splitlines() if line.startswith("all ")).split()[2] == "5"
    assert "correct by form (answerable): " in out


def test_squad_or_questions_is_required_and_not_both(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "answers"])
    assert exit_info.value.code == exit_codes.USAGE
    assert "one of the arguments --squad --questions is required" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "answers", "--squad", "s.json", "--questions", str(SAMPLE)])
    assert exit_info.value.code == exit_codes.USAGE
    assert "argument --questions: not allowed with argument --squad" in capsys.readouterr().err


def test_options_of_the_other_mode_are_usage_errors(capsys):
    assert main(["eval", "answers", "--squad", "s.json", "--split", "tune"]) == exit_codes.USAGE
    assert "--split and --rows go with --questions" in capsys.readouterr().err
    assert main(["eval", "answers", "--questions", str(SAMPLE), "--limit", "3"]) == exit_codes.USAGE
    assert "--limit goes with --squad" in capsys.readouterr().err
    assert main(["eval", "answers", "--questions", str(SAMPLE), "--concurrency", "0"]) == exit_codes.USAGE
    assert "--concurrency must be at least 1" in capsys.readouterr().err


def test_a_question_without_its_source_file_is_a_usage_error_naming_it(tmp_path, capsys):
    bad = tmp_path / "questions.yaml"
    bad.write_text(
        SAMPLE.read_text(encoding="utf-8")
        .replace("corpus: docs", f"corpus: {ROOT / 'docs'}")
        .replace(
            "source: reference/search.md\n    expect: top_k", "source: reference/gone.md\n    expect: top_k"
        )
    )
    assert main(["eval", "answers", "--questions", str(bad), "--agent", "127.0.0.1:9"]) == exit_codes.USAGE
    assert "sd-08: source reference/gone.md is not a file of the corpus" in capsys.readouterr().err


def test_an_unreachable_suite_is_explained(capsys):
    argv = [
        "eval",
        "answers",
        "--questions",
        str(SAMPLE),
        "--retrieval",
        "127.0.0.1:9",
        "--agent",
        "127.0.0.1:9",
    ]
    assert main(argv) == exit_codes.UNREACHABLE
    assert "cannot reach 127.0.0.1:9" in capsys.readouterr().err
