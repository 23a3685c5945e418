"""The Docusaurus plugin package's own tests (node's test runner): options validated and handed to
the theme as global data, the theme's Root and GlossatorWidget components in place."""

from __future__ import annotations

import re
import subprocess

import pytest

from bench.harness import ROOT

pytestmark = pytest.mark.browser

PLUGIN = ROOT / "clients" / "docusaurus-plugin-glossator"


def test_the_plugin_passes_its_node_tests(node):
    ran = subprocess.run(
        [node, "--test", "test/"], cwd=PLUGIN, capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"^# pass [1-9]", ran.stdout, re.MULTILINE) and "# fail 0" in ran.stdout
