"""The browser tests need node, Debian's Chromium and clients/web's packages (`make setup-web`):
without them they skip on a developer's machine; CI sets GLOSSATOR_TEST_BROWSER_REQUIRED=1, so
there a missing tool fails instead."""

from __future__ import annotations

import os
import shutil

import pytest

from bench.browser_rig import WIDGET_DIR, missing_browser_tools


def _required(missing: str | None) -> None:
    if missing:
        message = f"cannot run here: {missing} (make setup-web installs it)"
        if os.environ.get("GLOSSATOR_TEST_BROWSER_REQUIRED") == "1":
            pytest.fail(f"{message}, and GLOSSATOR_TEST_BROWSER_REQUIRED=1")
        pytest.skip(message)


@pytest.fixture(scope="session")
def browser_tools() -> None:
    _required(missing_browser_tools())


@pytest.fixture(scope="session")
def node_packages() -> str:
    """node, with clients/web's packages installed (the widget's unit tests bundle with esbuild)."""
    if shutil.which("node") is None:
        _required("node is not installed")
    _required(
        None if (WIDGET_DIR / "node_modules" / "esbuild").is_dir() else "clients/web has no node_modules"
    )
    return shutil.which("node")
