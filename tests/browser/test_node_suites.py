"""The JavaScript packages' own tests, with node's test runner: the widget's error sentences
(clients/web/test/*.test.mjs) and the Docusaurus plugin (options, global data, theme); and the
widget type-checked (tsc) against the code generated from the current contracts."""

from __future__ import annotations

import re
import subprocess

import pytest

from bench.browser_rig import WIDGET_DIR, build_widget
from bench.harness import ROOT

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("package", ["web", "docusaurus-plugin-glossator"])
def test_the_package_passes_its_node_tests(node_packages, package):
    folder = ROOT / "clients" / package
    files = sorted(str(path.relative_to(folder)) for path in (folder / "test").glob("*.test.mjs"))
    assert files
    ran = subprocess.run(
        [node_packages, "--test", *files],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"^# pass [1-9]", ran.stdout, re.MULTILINE) and "# fail 0" in ran.stdout


def test_the_widget_type_checks_against_the_generated_contracts(node_packages):
    build_widget()  # generates src/gen from the protos, as a build does
    tsc = WIDGET_DIR / "node_modules" / "typescript" / "bin" / "tsc"
    checked = subprocess.run(
        [node_packages, str(tsc), "--noEmit", "-p", str(WIDGET_DIR)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
