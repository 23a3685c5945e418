"""The browser tests need node, Debian's Chromium and clients/web's packages (`make setup-web`):
without them they skip on a developer's machine; CI sets GLOSSATOR_TEST_BROWSER_REQUIRED=1, so
there a missing tool fails instead."""

from __future__ import annotations

import os

import pytest

from bench.browser_rig import missing_browser_tools


@pytest.fixture(scope="session")
def browser_tools() -> None:
    if missing := missing_browser_tools():
        message = f"the browser test cannot run: {missing} (make setup-web installs it)"
        if os.environ.get("GLOSSATOR_TEST_BROWSER_REQUIRED") == "1":
            pytest.fail(f"{message}, and GLOSSATOR_TEST_BROWSER_REQUIRED=1")
        pytest.skip(message)
