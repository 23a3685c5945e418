"""The example ingest Job retries what may pass and stops on what will not, by glossator's exit codes."""

from __future__ import annotations

import yaml

from services.commands import exit_codes
from tests.k8s.test_manifests import EXAMPLE_JOB

# Failures a later run can get past: the Job must retry them.
TRANSIENT = {exit_codes.UNREACHABLE, exit_codes.RPC_FAILED, exit_codes.INTERRUPTED}
# Failures a later run would meet again: the Job must end at once.
PERMANENT = {
    exit_codes.DOCUMENTS_FAILED,
    exit_codes.USAGE,
    exit_codes.NOT_FOUND,
    exit_codes.INVALID_ARGUMENT,
    exit_codes.DENIED,
}


def _job() -> dict:
    (job,) = list(yaml.safe_load_all(EXAMPLE_JOB.read_text()))
    return job


def test_the_ingest_job_retries_an_unreachable_site_and_stops_on_permanent_failures():
    spec = _job()["spec"]
    assert spec["backoffLimit"] >= 3
    assert spec["template"]["spec"]["restartPolicy"] == "Never"  # podFailurePolicy requires it
    (container,) = spec["template"]["spec"]["containers"]
    fail_job = [rule for rule in spec["podFailurePolicy"]["rules"] if rule["action"] == "FailJob"]
    (rule,) = fail_job
    assert rule["onExitCodes"]["containerName"] == container["name"]
    assert rule["onExitCodes"]["operator"] == "In"
    assert set(rule["onExitCodes"]["values"]) == PERMANENT
    assert not TRANSIENT & set(rule["onExitCodes"]["values"])
    # One run per pod, so that its exit code is the pod's (no shell loop swallowing it).
    assert container["command"][:2] == ["glossator", "ingest"]
