"""The client artefacts for other teams: the glossator-client Python package (the one home of the
generated stubs, which the server depends on too; in step with the protos and the root project,
built into a wheel of the contracts alone, importable with grpcio and protobuf only) and the
Go/TypeScript generation of buf.gen.yaml from local plugins."""

from __future__ import annotations

import email.parser
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from collections.abc import Iterable
from pathlib import Path

import pytest
import yaml

from scripts import protos

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"
TYPESCRIPT = ROOT / "clients" / "typescript"
BASE_DEPENDENCIES = {"grpcio", "protobuf"}
EXTRA_DEPENDENCIES = {"errors": {"googleapis-common-protos"}}
PIP = (sys.executable, "-m", "pip")


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", requirement).group(0).lower().replace("_", "-")


def linked_distributions(target: Path, names: Iterable[str]) -> Path:
    """`target` holding symlinks to the installed files of these distributions and of what they
    require (extras left out), nothing else: a sys.path entry for "only these are installed"."""
    target.mkdir(parents=True, exist_ok=True)
    pending, seen = [_name(n) for n in names], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        dist = importlib.metadata.distribution(name)
        pending += [_name(r) for r in dist.requires or () if "extra ==" not in r]
        tops = set()
        for file in dist.files or ():
            parts = file.parts
            if parts[0] in ("..", "__pycache__") or parts[0].endswith(".pth"):
                continue
            source = Path(dist.locate_file(parts[0]))
            # A namespace folder (google/ of protobuf and googleapis-common-protos) is linked per child.
            namespace = source.is_dir() and not (source / "__init__.py").exists() and len(parts) > 2
            tops.add(parts[:2] if namespace and not parts[0].endswith(".dist-info") else parts[:1])
        for top in tops:
            link = target.joinpath(*top)
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.exists():
                link.symlink_to(Path(dist.locate_file(Path(*top))))
    return target


# ---- the Python package ---------------------------------------------------------------------


def test_a_regeneration_would_change_nothing():
    """Stubs, the client's version and floors, the server's pin: all as `make protos` writes them."""
    described, _ = protos.differences()
    assert not described, "run `make protos`: " + "; ".join(described)


def test_client_version_and_dependency_floors_follow_the_root_project_and_the_stubs():
    client = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert client["version"] == root["version"]
    # The server takes its stubs from this package, at the same version.
    assert f"glossator-client=={root['version']}" in root["dependencies"]
    assert {_name(r) for r in client["dependencies"]} == BASE_DEPENDENCIES
    stubs = (CLIENT / "src" / "glossator" / "v1" / "agent_pb2_grpc.py").read_text()
    generated_with = re.search(r"GRPC_GENERATED_VERSION = '([^']+)'", stubs).group(1)
    assert f"grpcio>={generated_with}" in client["dependencies"]
    # The protos import no google.rpc type: googleapis-common-protos is only the `errors` extra.
    imports = {
        line.split('"')[1]
        for proto in protos.proto_files()
        for line in proto.read_text().splitlines()
        if line.startswith("import ")
    }
    assert all(i.startswith(("glossator/", "google/protobuf/")) for i in imports), imports


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The client's wheel, built from a copy (the build leaves build/ and *.egg-info behind)."""
    work = tmp_path_factory.mktemp("client-wheel")
    source = work / "source"
    shutil.copytree(
        CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "dist")
    )
    subprocess.run(
        [*PIP, "wheel", "-q", "--no-deps", "--no-build-isolation", str(source), "-w", str(work / "dist")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (built,) = (work / "dist").glob("glossator_client-*.whl")
    return built


def test_wheel_holds_the_contracts_alone_and_requires_only_grpcio_and_protobuf(wheel):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert wheel.name == f"glossator_client-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = email.parser.Parser().parsestr(
            archive.read(f"glossator_client-{version}.dist-info/METADATA").decode()
        )
    package = {n for n in names if not n.startswith(f"glossator_client-{version}.dist-info/")}
    stubs = {f"glossator/v1/{name}" for name in protos.committed_stubs()}
    assert len(stubs) == 3 * len(protos.proto_files())
    assert package == {"glossator/__init__.py", "glossator/py.typed", "glossator/v1/__init__.py"} | stubs
    assert not any("services" in n or "torch" in n for n in names)

    requires = metadata.get_all("Requires-Dist")
    base = {_name(r) for r in requires if "extra ==" not in r}
    extras = {
        extra: {_name(r) for r in requires if f'extra == "{extra}"' in r}
        for extra in metadata.get_all("Provides-Extra")
    }
    assert base == BASE_DEPENDENCIES and extras == EXTRA_DEPENDENCIES, requires
    assert metadata["Name"] == "glossator-client" and metadata["Version"] == version


def test_wheel_installs_into_a_clean_venv_and_imports_with_grpcio_and_protobuf_alone(wheel, tmp_path):
    fresh = tmp_path / "venv"
    venv.create(fresh, with_pip=False)
    python = fresh / "bin" / "python"
    subprocess.run(
        [*PIP, "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    env = {**os.environ, "PYTHONPATH": str(linked_distributions(tmp_path / "deps", BASE_DEPENDENCIES))}
    check = subprocess.run(
        [*PIP, "--python", str(python), "check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    probe = """
import importlib.metadata, importlib.util, json
import glossator, glossator.v1.agent_pb2_grpc as grpc_stubs
from glossator.v1 import agent_pb2
print(json.dumps({
    "package": glossator.__file__,
    "stub": hasattr(grpc_stubs, "AgentServiceStub"),
    "event": agent_pb2.AskStreamResponse(answer_delta=agent_pb2.AnswerDelta(text="x")).WhichOneof("event"),
    "version": importlib.metadata.version("glossator-client"),
    "absent": [m for m in ("services", "torch", "google.rpc") if importlib.util.find_spec(m) is None],
}))
"""
    # cwd: `python -c` puts the working directory first on sys.path, and the repository's holds services/.
    shown = subprocess.run(
        [python, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    result = json.loads(shown.stdout)
    assert Path(result["package"]).is_relative_to(fresh)
    assert (Path(result["package"]).parent / "py.typed").exists()
    assert result["stub"] and result["event"] == "answer_delta"
    assert result["version"] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert result["absent"] == ["services", "torch", "google.rpc"]


# ---- buf.gen.yaml: Go and TypeScript --------------------------------------------------------


def _template() -> dict:
    return yaml.safe_load((ROOT / "buf.gen.yaml").read_text())


def test_buf_gen_yaml_generates_go_and_typescript_with_local_plugins_only():
    template = _template()
    assert template["version"] == "v2"
    plugins = {Path(p["local"]).name: p for p in template["plugins"]}
    assert all("local" in p for p in template["plugins"]), "remote plugins need the network"
    assert {"protoc-gen-go", "protoc-gen-go-grpc", "protoc-gen-es"} <= plugins.keys()
    assert plugins["protoc-gen-es"]["local"] == "clients/typescript/node_modules/.bin/protoc-gen-es"
    # The plugin is pinned exactly, and locked (`npm ci` installs that version, reproducibly).
    wanted = json.loads((TYPESCRIPT / "package.json").read_text())["devDependencies"][
        "@bufbuild/protoc-gen-es"
    ]
    lock = json.loads((TYPESCRIPT / "package-lock.json").read_text())
    assert re.fullmatch(r"\d+\.\d+\.\d+", wanted)
    assert lock["packages"]["node_modules/@bufbuild/protoc-gen-es"]["version"] == wanted


def _buf() -> str:
    found = shutil.which("buf", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        pytest.skip("buf not found: pip install buf-bin (the dev extra)")
    return found


def test_buf_generate_makes_typescript_clients_that_type_check(tmp_path):
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not installed: the TypeScript client cannot be generated here")
    if not (TYPESCRIPT / "node_modules" / ".bin" / "protoc-gen-es").exists():
        installed = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=TYPESCRIPT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if installed.returncode != 0:
            pytest.skip(f"`npm ci` in clients/typescript failed (no registry?): {installed.stderr[-500:]}")
    template = _template()
    go_plugins = [p for p in template["plugins"] if "go" in Path(p["local"]).name.split("-")]
    have_go = all(shutil.which(p["local"]) for p in go_plugins)
    if not have_go:  # `go install` them (buf.gen.yaml's comment) to generate Go too
        template["plugins"] = [p for p in template["plugins"] if p not in go_plugins]
    (tmp_path / "buf.gen.yaml").write_text(yaml.safe_dump(template))
    # The project's TypeScript folder (tsconfig, the example) without its node_modules, which is linked.
    project = tmp_path / "clients" / "typescript"
    shutil.copytree(TYPESCRIPT, project, ignore=shutil.ignore_patterns("node_modules", "gen", "dist"))
    (project / "node_modules").symlink_to(TYPESCRIPT / "node_modules")

    subprocess.run(
        [_buf(), "generate", "--template", str(tmp_path / "buf.gen.yaml"), "-o", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    generated = project / "src" / "gen" / "glossator" / "v1"
    stems = [p.stem for p in protos.proto_files()]
    assert sorted(p.name for p in generated.iterdir()) == [f"{stem}_pb.ts" for stem in stems]
    agent = (generated / "agent_pb.ts").read_text()
    assert "export const AgentService: GenService<" in agent and "askStream" in agent
    if have_go:
        go = tmp_path / "clients" / "go" / "glossator" / "v1"
        assert {f"{stem}.pb.go" for stem in stems} <= {p.name for p in go.iterdir()}
        assert (go / "agent_grpc.pb.go").exists()

    tsc = TYPESCRIPT / "node_modules" / "typescript" / "bin" / "tsc"
    checked = subprocess.run(
        ["node", str(tsc), "--noEmit", "-p", str(project)], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
