"""Syncs the glossator-client package (clients/python) with the contracts and the root project.

What it writes, all derived, none edited by hand:
- src/glossator/v1/: the .proto files of protos/glossator/v1 and the Python stubs protoc makes from
  them (*_pb2.py, *_pb2.pyi, *_pb2_grpc.py), by the same generator as the server's committed stubs
  (services.common.protos, grpcio-tools pinned), so both are byte for byte the same. Stubs of a
  .proto that is gone are deleted.
- pyproject.toml: `version` = the root project's; the grpcio and protobuf floors = the versions the
  stubs were generated with (a runtime older than its gencode refuses to load it), protobuf capped
  below the next major version.

Run from anywhere with the repository's virtualenv: `.venv/bin/python clients/python/sync.py`.
`--check` writes nothing and exits 1 when the package is out of date (tests/unit/test_client_package.py
runs the same comparison).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PACKAGE_DIR = HERE / "src" / "glossator" / "v1"
PYPROJECT = HERE / "pyproject.toml"
ROOT_PYPROJECT = REPO / "pyproject.toml"
SYNCED_PATTERNS = ("*.proto", "*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py")

_GRPC_VERSION = re.compile(r"^GRPC_GENERATED_VERSION = '([^']+)'$", re.MULTILINE)
_PROTOBUF_VERSION = re.compile(r"^# Protobuf Python Version: (\d+)\.(\d+)\.(\d+)$", re.MULTILINE)


def generated_files() -> dict[str, bytes]:
    """File name -> content of everything src/glossator/v1 must hold besides __init__.py."""
    sys.path.insert(0, str(REPO))
    try:
        from services.common.protos import PROTO_PACKAGE_DIR, generate, proto_files
    finally:
        sys.path.remove(str(REPO))
    files = {p.name: p.read_bytes() for p in proto_files()}
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        out = Path(tmp) / PROTO_PACKAGE_DIR.relative_to(PROTO_PACKAGE_DIR.parents[1])
        files |= {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.suffix in (".py", ".pyi")}
    return files


def synced_files() -> dict[str, bytes]:
    """What src/glossator/v1 holds now, of the files sync.py owns."""
    names = sorted({p.name for pattern in SYNCED_PATTERNS for p in PACKAGE_DIR.glob(pattern)})
    return {name: (PACKAGE_DIR / name).read_bytes() for name in names}


def expected_pyproject(current: str, files: dict[str, bytes]) -> str:
    """The client's pyproject.toml with the root version and the gencode's dependency floors."""
    version = tomllib.loads(ROOT_PYPROJECT.read_text())["project"]["version"]
    grpc_stub = next(content.decode() for name, content in files.items() if name.endswith("_pb2_grpc.py"))
    message_stub = next(content.decode() for name, content in files.items() if name.endswith("_pb2.py"))
    grpc_version = _GRPC_VERSION.search(grpc_stub)
    protobuf_version = _PROTOBUF_VERSION.search(message_stub)
    if grpc_version is None or protobuf_version is None:
        raise RuntimeError("the generated stubs no longer state the versions they need: update sync.py")
    major = int(protobuf_version.group(1))
    replacements = [
        (r'(?m)^version = "[^"]*"$', f'version = "{version}"'),
        (r'"grpcio>=[^"]*"', f'"grpcio>={grpc_version.group(1)}"'),
        (r'"protobuf>=[^"]*"', f'"protobuf>={".".join(protobuf_version.groups())},<{major + 1}"'),
    ]
    text = current
    for pattern, replacement in replacements:
        text, count = re.subn(pattern, replacement, text, count=1)
        if count != 1:
            raise RuntimeError(f"{PYPROJECT} has no line matching {pattern!r}")
    return text


def differences() -> tuple[list[str], dict[Path, bytes | None]]:
    """Human-readable differences, and the writes (None: delete) that remove them."""
    fresh, current = generated_files(), synced_files()
    writes: dict[Path, bytes | None] = {}
    for name in sorted(fresh.keys() | current.keys()):
        if fresh.get(name) != current.get(name):
            writes[PACKAGE_DIR / name] = fresh.get(name)
    pyproject = PYPROJECT.read_text()
    wanted = expected_pyproject(pyproject, fresh)
    if wanted != pyproject:
        writes[PYPROJECT] = wanted.encode()
    described = [
        f"{'extra' if content is None else 'stale' if path.exists() else 'missing'}: {path.relative_to(REPO)}"
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
            print("out of date: run clients/python/sync.py", file=sys.stderr)
        return 1 if described else 0
    for path, content in writes.items():
        if content is None:
            path.unlink()
        else:
            path.write_bytes(content)
    print(f"synced {len(writes)} file(s)" if writes else "already in sync")
    for line in described:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
