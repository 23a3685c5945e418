"""What the container image installs and runs, checked without a Docker engine (marker `image`).

- every pin of requirements.lock exists on PyPI as a wheel for the image, with a locked sha256 (CPython 3.11 of the base
  image's tag, manylinux x86_64 and aarch64): a pip dry run, metadata only, a few seconds;
- scripts/check-image-env.sh: a clean virtualenv built from the lock with the Dockerfile's steps,
  then the entrypoint run in it with the image's environment (about 75 s on this machine).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.image

ROOT = Path(__file__).resolve().parents[2]
PYPI = "https://pypi.org/simple"


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=3).close()
    except OSError:
        return False
    return True


def _dockerfile_arg(name: str) -> str:
    match = re.search(rf"^ARG {name}=(\S+)$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert match, f"Dockerfile: no ARG {name}=..."
    return match[1]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_every_pin_is_a_wheel_on_pypi_for_the_image(machine):
    if not _pypi_reachable():
        pytest.skip("pypi.org is not reachable")
    python_version = re.match(r"python:(3\.\d+\.\d+)-", _dockerfile_arg("PYTHON_IMAGE"))[1]
    # Debian bookworm has glibc 2.36: every manylinux tag up to it.
    platforms = [f"manylinux_2_{minor}_{machine}" for minor in range(17, 37)] + [f"manylinux2014_{machine}"]
    if machine == "x86_64":
        platforms += [f"manylinux_2_{minor}_{machine}" for minor in range(5, 17)]
        platforms += ["manylinux2010_x86_64", "manylinux1_x86_64"]
    # PyPI alone, as the image build sees it: no configured mirrors, extra indexes or local wheels
    # (a configured certificate bundle stays).
    local_sources = (
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_FIND_LINKS",
        "PIP_NO_INDEX",
        "PIP_CONFIG_FILE",
    )
    env = {key: value for key, value in os.environ.items() if key not in local_sources}
    env["PIP_CONFIG_FILE"] = os.devnull
    command = [
        sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-deps", "--ignore-installed",
        "--disable-pip-version-check", "--only-binary=:all:", "--index-url", PYPI,
        "--implementation", "cp", "--python-version", python_version,
        *(option for platform in platforms for option in ("--platform", platform)),
    ]  # fmt: skip
    # The lock with its hashes (a file whose sha256 is not locked fails), then the image's pip.
    for requirements in (
        ["--require-hashes", "-r", str(ROOT / "requirements.lock")],
        [f"pip=={_dockerfile_arg('PIP_VERSION')}"],
    ):
        try:
            result = subprocess.run(
                [*command, *requirements], env=env, capture_output=True, text=True, timeout=120
            )
        except subprocess.TimeoutExpired:
            pytest.skip("PyPI answered too slowly (over 120 s)")
        assert result.returncode == 0, f"not every pin is on PyPI for {machine}:\n{result.stderr[-3000:]}"


def test_a_clean_venv_from_the_lock_runs_the_entrypoint():
    base_python = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    if not base_python.exists():
        pytest.skip(f"no base interpreter at {base_python}")
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("VIRTUAL_ENV", "PYTHONHOME"))
    }
    env["PYTHON"] = str(base_python)
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "check-image-env.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, f"scripts/check-image-env.sh failed:\n{result.stderr[-6000:]}"
    assert "ok: clean venv from the lock" in result.stderr
