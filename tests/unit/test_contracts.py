"""The committed contracts: stubs in step with the .proto files, README in step with the settings."""

from __future__ import annotations

from pathlib import Path

import glossator.v1
from scripts.protos import STUB_DIR, committed_stubs, fresh_stubs, proto_files
from services.commands.config import documented_settings
from services.common.config_doc import config_reference

ROOT = Path(__file__).resolve().parents[2]


def test_committed_stubs_match_a_fresh_generation():
    fresh, committed = fresh_stubs(), committed_stubs()
    assert len(fresh) == 3 * len(proto_files())
    assert fresh.keys() == committed.keys()
    stale = sorted(name for name in fresh if fresh[name] != committed[name])
    assert not stale, f"regenerate with `make protos`: {stale} differ"


def test_the_stubs_have_one_home_which_is_the_one_imported():
    """protos/ holds the .proto sources alone; glossator.v1 is the glossator-client package's folder."""
    assert sorted(p.name for p in (ROOT / "protos").rglob("*") if p.is_file()) == [
        p.name for p in proto_files()
    ]
    assert Path(glossator.v1.__file__).resolve().parent == STUB_DIR


def test_readme_configuration_reference_matches_the_settings_classes():
    readme = (ROOT / "README.md").read_text()
    start, end = "<!-- config:start -->\n", "<!-- config:end -->"
    assert start in readme and end in readme
    documented = readme.split(start, 1)[1].split(end, 1)[0]
    assert documented == config_reference(documented_settings()), "run `make readme-config`"
