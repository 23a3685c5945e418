"""Generates the Python stubs of protos/glossator/v1 next to the .proto files.

The proto folders mirror the Python package (protos/glossator/v1 is installed as glossator.v1), so
protoc's generated imports (`from glossator.v1 import common_pb2`) work as they are: no rewriting.
Run with `python -m services.common.protos` (or `make protos`).
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

PROTO_ROOT = Path(__file__).resolve().parents[2] / "protos"
PROTO_PACKAGE_DIR = PROTO_ROOT / "glossator" / "v1"


def proto_files() -> list[Path]:
    return sorted(PROTO_PACKAGE_DIR.glob("*.proto"))


def generate(out_dir: Path = PROTO_ROOT) -> None:
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


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else PROTO_ROOT)
