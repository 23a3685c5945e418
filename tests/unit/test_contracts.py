"""The committed contracts: stubs in step with the .proto files, README in step with the settings."""

from __future__ import annotations

from pathlib import Path

from services.commands.config import documented_settings
from services.common.config_doc import config_reference
from services.common.protos import PROTO_PACKAGE_DIR, generate, proto_files

ROOT = Path(__file__).resolve().parents[2]


def test_committed_stubs_match_a_fresh_generation(tmp_path):
    generate(tmp_path)
    fresh_dir = tmp_path / "glossator" / "v1"
    fresh = {p.name: p.read_bytes() for p in fresh_dir.iterdir() if p.suffix in (".py", ".pyi")}
    committed = {
        p.name: p.read_bytes()
        for p in PROTO_PACKAGE_DIR.iterdir()
        if p.name.endswith(("_pb2.py", "_pb2.pyi", "_grpc.py"))
    }
    assert len(fresh) == 3 * len(proto_files())
    assert fresh.keys() == committed.keys()
    stale = sorted(name for name in fresh if fresh[name] != committed[name])
    assert not stale, f"regenerate with `make protos`: {stale} differ"


def test_readme_configuration_reference_matches_the_settings_classes():
    readme = (ROOT / "README.md").read_text()
    start, end = "<!-- config:start -->\n", "<!-- config:end -->"
    assert start in readme and end in readme
    documented = readme.split(start, 1)[1].split(end, 1)[0]
    assert documented == config_reference(documented_settings()), "run `make readme-config`"
