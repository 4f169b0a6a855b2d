"""Apply edges of the Pulumi program (issue 28, point 7): a GCP quota grant read with no details, an unlimited grant,
and the pulumi-gcp floor at the first release that declares every argument the program passes."""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

import pytest

from quartermaster.loader import load
from tests.paths import INVENTORY, REPO
from tests.pulumi.gcp_floor import FLOOR, used
from tests.pulumi.harness import run_cluster

PREFERENCE = "gcp:cloudquota/sQuotaPreference:SQuotaPreference"
READ = "gcp:cloudquota/getSQuotaInfo:getSQuotaInfo"


def asked(infos: list[dict[str, Any]]) -> set[str]:
    registered = run_cluster(load(INVENTORY).inventory, "gke-gpu-us-east4", reads={READ: {"dimensionsInfos": infos}})
    return {r.inputs["quotaConfig"]["preferredValue"] for r in registered.of_type(PREFERENCE)}


@pytest.mark.parametrize(
    ("infos", "want"),
    [
        # the provider returns an empty details list when no value is set: no IndexError, the need is asked for
        ([{"dimensions": {}, "details": []}], {"64"}),
        # an unlimited default grant (-1) stays unlimited instead of becoming a limit of 64
        ([{"dimensions": {}, "details": [{"value": "-1"}]}], {"-1"}),
    ],
)
def test_the_quota_request_reads_grants_without_details_and_keeps_unlimited(
    infos: list[dict[str, Any]], want: set[str]
) -> None:
    """The example's gke-gpu-us-east4 needs 64 preemptible H100s (h100-mega-spot: 8 nodes x 8)."""
    assert asked(infos) == want


def test_pulumi_gcp_floor_is_the_first_release_with_every_argument_the_program_passes() -> None:
    """pulumi-gcp 9.26.0 bridges google-beta 7.35 (pulumi/pulumi-gcp#3825), the first with `gpudirect_strategy`;
    9.25.0 lacks it. The classes' parameters at both tags are in tests/data/pulumi/pulumi_gcp_floor.json (written by
    tests/pulumi/gcp_floor.py from the pulumi-gcp repository)."""
    releases = json.loads(FLOOR.read_text())
    pin = next(
        d
        for d in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["pulumi"]
        if d.startswith("pulumi-gcp")
    )
    floor = re.search(r">=([0-9.]+)", pin)
    assert floor and f"v{floor.group(1)}" in (releases["floor"]["tag"], releases["floor"]["tag"].removesuffix(".0"))
    for role, want_missing in (("floor", False), ("before", True)):
        declared = releases[role]["classes"]
        missing = {
            (name, argument)
            for name, arguments in used().items()
            if name not in releases[role]["unread"]
            for argument in arguments
            if argument not in declared.get(name, ())
        }
        assert bool(missing) == want_missing, (role, sorted(missing))
    assert ("container.NodePoolNodeConfigArgs", "gpudirect_strategy") in {
        (n, a) for n, args in used().items() for a in args if a not in releases["before"]["classes"].get(n, ())
    }
