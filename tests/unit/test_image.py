"""The container image's recipe: the Dockerfile, .dockerignore and requirements.lock, read as text.

No Docker engine runs here; tests/integration/test_image_env.py builds the image's virtualenv from
the lock and runs the entrypoint (marker `image`).
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for instruction, args in self.instructions if instruction == keyword]

    def env(self) -> dict[str, str]:
        values: dict[str, str] = {}
        for args in self.all("ENV"):
            for item in shlex.split(args):
                key, _, value = item.partition("=")
                values[key] = value
        return values


def parse_dockerfile(text: str) -> tuple[dict[str, str], list[Stage]]:
    """The global ARG defaults and the stages, each with its (INSTRUCTION, arguments) in order."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        if raw.lstrip().startswith("#"):  # comments (also inside a continued instruction)
            continue
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        line = (pending + raw).strip()
        pending = ""
        if line:
            lines.append(line)
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line in lines:
        instruction, _, args = line.partition(" ")
        instruction, args = instruction.upper(), " ".join(args.split())
        if instruction == "FROM":
            parts = args.split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            stages.append(Stage(image=parts[0], name=name))
        elif not stages:
            assert instruction == "ARG", f"only ARG may come before the first FROM, not {instruction}"
            key, _, value = args.partition("=")
            global_args[key] = value
        else:
            stages[-1].instructions.append((instruction, args))
    return global_args, stages


@pytest.fixture(scope="module")
def dockerfile() -> tuple[dict[str, str], list[Stage]]:
    return parse_dockerfile((ROOT / "Dockerfile").read_text())


@pytest.fixture(scope="module")
def final(dockerfile) -> Stage:
    return dockerfile[1][-1]


def resolved_image(image: str, global_args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: global_args.get(m[1] or m[2], ""), image)


def stage_args(stage: Stage) -> dict[str, str]:
    return dict(args.partition("=")[::2] for args in stage.all("ARG"))


def lock_pins() -> dict[str, tuple[str, str]]:
    """Canonical name -> (name as written, version) of every line of requirements.lock."""
    pins: dict[str, tuple[str, str]] = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][A-Za-z0-9.+!-]*)", line)
        assert match, f"requirements.lock: {line!r} is not an exact name==version pin"
        name = canonicalize_name(match[1])
        assert name not in pins, f"requirements.lock pins {match[1]} twice"
        pins[name] = (match[1], match[2])
    return pins


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


# --- Dockerfile ---------------------------------------------------------------------------------


def test_is_multi_stage_and_the_runtime_stage_takes_only_the_built_venv(dockerfile, final):
    _args, stages = dockerfile
    assert len(stages) >= 2
    builders = {stage.name for stage in stages[:-1]}
    copies = final.all("COPY")
    assert copies, "the runtime stage copies the virtualenv from the build stage"
    for copy in copies:
        source_stage = re.match(r"--from=(\S+)", copy)
        assert source_stage and source_stage[1] in builders, f"runtime stage copies from the context: {copy}"
    assert not any("pip install" in run for run in final.all("RUN")), (
        "nothing is installed in the runtime stage"
    )


def test_base_images_are_an_exact_python_3_11_slim_bookworm(dockerfile):
    global_args, stages = dockerfile
    names = {stage.name for stage in stages if stage.name}
    for stage in stages:
        image = resolved_image(stage.image, global_args)
        if image in names:
            continue
        assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", image), (
            f"base image {image!r} is not pinned: python:3.11.<patch>-slim-bookworm[@sha256:<digest>]"
        )


def test_runs_as_a_numeric_non_root_user(final):
    users = final.all("USER")
    assert users, "the runtime stage sets USER"
    user = users[-1]
    assert re.fullmatch(r"\d+(:\d+)?", user), f"USER {user!r}: numeric, so runAsNonRoot can verify it"
    uid, _, gid = user.partition(":")
    assert int(uid) == 10001 and (not gid or int(gid) != 0)
    assert any("--uid 10001" in run for run in final.all("RUN")), "the user exists in /etc/passwd"


def test_environment_is_offline_and_writes_only_to_tmp_and_data(final):
    env = final.env()
    assert env.get("HF_HUB_OFFLINE") == "1"
    assert env.get("TRANSFORMERS_OFFLINE") == "1"
    for key in ("HOME", "TMPDIR", "HF_HOME", "XDG_CACHE_HOME", "TORCHINDUCTOR_CACHE_DIR"):
        assert env.get(key, "").startswith("/tmp"), f"{key} must point under /tmp (read-only root)"
    for service in ("AGENT", "RETRIEVAL", "VALIDATION"):
        assert env[f"GLOSSATOR_{service}_DATA_DIR"] == "/data"
        assert env[f"GLOSSATOR_{service}_HOST"] == "0.0.0.0"
    assert env.get("PYTHONDONTWRITEBYTECODE") == "1"
    assert final.all("WORKDIR")[-1] == "/data"


def test_entrypoint_command_and_ports(final):
    assert json.loads(final.all("ENTRYPOINT")[-1]) == ["glossator"]
    assert json.loads(final.all("CMD")[-1]) == ["serve", "agent"]
    exposed = {int(port.split("/")[0]) for args in final.all("EXPOSE") for port in args.split()}
    assert exposed == {50051, 50052, 50053, 9090}
    metrics = {value for key, value in final.env().items() if key.endswith("_METRICS_PORT")}
    assert metrics <= {"9090"}


def test_labels_are_oci_annotations(final):
    labels = " ".join(final.all("LABEL"))
    for key in ("title", "description", "version", "revision", "licenses", "base.name"):
        assert f"org.opencontainers.image.{key}=" in labels, key
    assert 'org.opencontainers.image.licenses="Apache-2.0"' in labels
    assert 'org.opencontainers.image.version="${VERSION}"' in labels
    assert stage_args(final)["VERSION"] == pyproject()["project"]["version"]


def test_torch_is_the_cpu_build_at_the_makefile_version_installed_before_the_lock(dockerfile):
    _args, stages = dockerfile
    build = stages[0]
    runs = build.all("RUN")
    torch_runs = [i for i, run in enumerate(runs) if "torch==" in run]
    assert len(torch_runs) == 1, "one RUN installs torch"
    torch_run = runs[torch_runs[0]]
    assert f"--index-url {CPU_INDEX}" in torch_run, "torch comes from the PyTorch CPU index"
    assert "--no-deps" in torch_run, "torch's own requirements come pinned from the lock"
    assert "torch==${TORCH_VERSION}" in torch_run
    makefile_torch = re.search(r"pip install -q torch==(\S+)", (ROOT / "Makefile").read_text())[1]
    assert stage_args(build)["TORCH_VERSION"] == makefile_torch, "same torch as `make setup`"
    lock_runs = [i for i, run in enumerate(runs) if "requirements.lock" in run]
    assert lock_runs and torch_runs[0] < lock_runs[0]


def test_the_lock_is_installed_then_the_project_without_dependencies(dockerfile):
    _args, stages = dockerfile
    build = stages[0]
    runs = build.all("RUN")
    lock_runs = [run for run in runs if re.search(r"pip install .*-r \S*requirements\.lock", run)]
    assert len(lock_runs) == 1 and "--only-binary=:all:" in lock_runs[0]
    assert any("requirements.lock" in copy for copy in build.all("COPY"))
    project = [
        run for run in runs if re.search(r"pip install --no-deps --no-build-isolation /src(\s|$)", run)
    ]
    assert len(project) == 1 and "pip check" in project[0]
    assert runs.index(lock_runs[0]) < runs.index(project[0])
    # pip itself pinned, like everything else the build runs
    assert re.fullmatch(r"\d+(\.\d+)+", stage_args(build)["PIP_VERSION"])


def test_the_baked_model_is_loaded_and_used_at_build_time_as_the_runtime_user(final):
    keywords = [instruction for instruction, _ in final.instructions]
    runs = [(i, args) for i, (instruction, args) in enumerate(final.instructions) if instruction == "RUN"]
    warm = [i for i, run in runs if "local_embedding_model" in run and "384" in run]
    assert warm, "a RUN embeds a sentence with the baked model"
    assert keywords.index("USER") < warm[0], "... as the runtime user, after USER"
    env_index = max(i for i, keyword in enumerate(keywords) if keyword == "ENV")
    assert env_index < warm[0], "... with the runtime environment (offline)"


def test_dockerignore_admits_exactly_what_the_dockerfile_copies(dockerfile):
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert patterns[0] == "*", ".dockerignore is an allow-list"
    admitted = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    _args, stages = dockerfile
    copied = set()
    for stage in stages:
        for copy in stage.all("COPY"):
            if copy.startswith("--from="):
                continue
            copied.update(part.rstrip("/") for part in copy.split()[:-1])
    assert copied == admitted
    for path in copied:
        assert (ROOT / path).exists(), path


# --- requirements.lock --------------------------------------------------------------------------


def test_lock_pins_every_runtime_dependency_within_its_pyproject_range():
    pins = lock_pins()
    for line in pyproject()["project"]["dependencies"]:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        if name == "torch":
            assert name not in pins, "torch is installed on its own (CPU index), not from the lock"
            continue
        assert name in pins, f"{requirement.name} is a runtime dependency but not in requirements.lock"
        version = pins[name][1]
        assert requirement.specifier.contains(Version(version), prereleases=True), (
            f"requirements.lock pins {requirement.name}=={version}, outside pyproject.toml's {requirement}"
        )


def test_lock_pins_torchs_own_requirements_and_no_dev_tool():
    pins = lock_pins()
    for name in ("sympy", "networkx", "jinja2", "filelock", "fsspec", "typing-extensions", "setuptools"):
        assert name in pins, f"torch is installed with --no-deps: the lock must pin {name}"
    for line in pyproject()["project"]["optional-dependencies"]["dev"]:
        name = canonicalize_name(Requirement(line).name)
        assert name not in pins, f"{name} is a dev tool: it has no place in the image"
    assert "glossator" not in pins
    assert not any(name.startswith("nvidia-") for name in pins), "a CUDA wheel in the lock"


def test_lock_header_says_how_it_is_made():
    header = (ROOT / "requirements.lock").read_text().split("\n\n")[0]
    assert header.startswith("#")
    assert "make lock" in header and "scripts/lock.py" in header
