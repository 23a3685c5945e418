"""Generates the Python stubs of the glossator.v1 contracts into the glossator-client package.

One copy of each: the .proto sources live in protos/glossator/v1 (buf's module: lint, breaking, the
Go and TypeScript generation), the Python stubs protoc makes from them (*_pb2.py, *_pb2.pyi,
*_pb2_grpc.py) in clients/python/src/glossator/v1, and the server depends on that package. The
proto folders mirror the Python package (protos/glossator/v1 is generated as glossator/v1), so
protoc's own imports (`from glossator.v1 import common_pb2`) work as they are: no rewriting.

What it writes, all derived, none edited by hand:
- clients/python/src/glossator/v1/: the stubs (grpcio-tools pinned in the dev extra, so the same
  protos always give the same bytes); the stubs of a .proto that is gone are deleted;
- clients/python/pyproject.toml: `version` = the root project's; the grpcio and protobuf floors =
  the versions the stubs were generated with (a runtime older than its gencode refuses to load it),
  protobuf capped below the next major version;
- pyproject.toml: the server's exact pin of glossator-client, at that same version.

    python scripts/protos.py            regenerate (make protos)
    python scripts/protos.py --check    write nothing; exit 1 when a regeneration would change anything
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import tomllib
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[1]
PROTO_ROOT = ROOT / "protos"
PROTO_PACKAGE_DIR = PROTO_ROOT / "glossator" / "v1"
CLIENT = ROOT / "clients" / "python"
CLIENT_SOURCE_ROOT = CLIENT / "src"
STUB_DIR = CLIENT_SOURCE_ROOT / "glossator" / "v1"
CLIENT_PYPROJECT = CLIENT / "pyproject.toml"
ROOT_PYPROJECT = ROOT / "pyproject.toml"
STUB_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")

_GRPC_VERSION = re.compile(r"^GRPC_GENERATED_VERSION = '([^']+)'$", re.MULTILINE)
_PROTOBUF_VERSION = re.compile(r"^# Protobuf Python Version: (\d+)\.(\d+)\.(\d+)$", re.MULTILINE)


def proto_files() -> list[Path]:
    return sorted(PROTO_PACKAGE_DIR.glob("*.proto"))


def generate(out_dir: Path) -> None:
    """Runs protoc for messages (+ .pyi) and gRPC stubs into out_dir/glossator/v1."""
    well_known = resources.files("grpc_tools") / "_proto"
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{well_known}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *(str(p.relative_to(PROTO_ROOT)) for p in proto_files()),
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed: " + " ".join(args))


def fresh_stubs() -> dict[str, bytes]:
    """File name -> content of the stubs a generation makes now (in a scratch folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        out = Path(tmp) / STUB_DIR.relative_to(CLIENT_SOURCE_ROOT)
        return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name.endswith(STUB_SUFFIXES)}


def committed_stubs() -> dict[str, bytes]:
    """File name -> content of the stubs the client package holds (its __init__.py is not generated)."""
    return {p.name: p.read_bytes() for p in sorted(STUB_DIR.iterdir()) if p.name.endswith(STUB_SUFFIXES)}


def _rewrite(text: str, replacements: list[tuple[str, str]], where: Path) -> str:
    for pattern, replacement in replacements:
        text, count = re.subn(pattern, replacement, text, count=1)
        if count != 1:
            raise RuntimeError(f"{where} has no line matching {pattern!r}")
    return text


def expected_pyprojects(stubs: dict[str, bytes]) -> dict[Path, str]:
    """The client's pyproject.toml (version, the gencode's floors) and the root's (its pin of the client)."""
    version = tomllib.loads(ROOT_PYPROJECT.read_text())["project"]["version"]
    grpc_stub = next(content.decode() for name, content in stubs.items() if name.endswith("_pb2_grpc.py"))
    message_stub = next(content.decode() for name, content in stubs.items() if name.endswith("_pb2.py"))
    grpc_version = _GRPC_VERSION.search(grpc_stub)
    protobuf_version = _PROTOBUF_VERSION.search(message_stub)
    if grpc_version is None or protobuf_version is None:
        raise RuntimeError(
            "the generated stubs no longer state the versions they need: update scripts/protos.py"
        )
    major = int(protobuf_version.group(1))
    client = [
        (r'(?m)^version = "[^"]*"$', f'version = "{version}"'),
        (r'"grpcio>=[^"]*"', f'"grpcio>={grpc_version.group(1)}"'),
        (r'"protobuf>=[^"]*"', f'"protobuf>={".".join(protobuf_version.groups())},<{major + 1}"'),
    ]
    root = [(r'"glossator-client==[^"]*"', f'"glossator-client=={version}"')]
    return {
        CLIENT_PYPROJECT: _rewrite(CLIENT_PYPROJECT.read_text(), client, CLIENT_PYPROJECT),
        ROOT_PYPROJECT: _rewrite(ROOT_PYPROJECT.read_text(), root, ROOT_PYPROJECT),
    }


def differences() -> tuple[list[str], dict[Path, bytes | None]]:
    """Human-readable differences, and the writes (None: delete) that remove them."""
    fresh, current = fresh_stubs(), committed_stubs()
    writes: dict[Path, bytes | None] = {
        STUB_DIR / name: fresh.get(name)
        for name in sorted(fresh.keys() | current.keys())
        if fresh.get(name) != current.get(name)
    }
    for path, wanted in expected_pyprojects(fresh).items():
        if wanted != path.read_text():
            writes[path] = wanted.encode()
    described = [
        f"{'extra' if content is None else 'stale' if path.exists() else 'missing'}: {path.relative_to(ROOT)}"
        for path, content in writes.items()
    ]
    return described, writes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when out of date")
    args = parser.parse_args(argv)
    described, writes = differences()
    if args.check:
        for line in described:
            print(line)
        if described:
            print("out of date: run `make protos`", file=sys.stderr)
        return 1 if described else 0
    for path, content in writes.items():
        if content is None:
            path.unlink()
        else:
            path.write_bytes(content)
    print(f"wrote {len(writes)} file(s)" if writes else "already up to date")
    for line in described:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
