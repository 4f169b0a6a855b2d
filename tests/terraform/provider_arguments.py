"""The argument names each pinned provider declares, at the lowest version its pin allows (the floor), for every
resource type, data source and provider block the stacks emit.

A stack that names an argument the floor version lacks fails with "Unsupported argument" for anyone whose lock
file resolves to that version (issue 16: `gpudirect_strategy` exists in google-beta from v7.34 only, under a pin
that allowed 7.30). The names come from the providers' own source at their floor tag: every map key `"name":`
and every `Name: "name"` in the files that declare a type's schema, nested blocks included (a superset of its
arguments, enough to catch a name the version does not know). Regenerate after changing a pin or a type:

    python -m tests.terraform.provider_arguments /work/.mirror > tests/data/terraform/provider_arguments.json

where the folder holds git mirrors `<owner>+<repo>/repo` of the providers (the search tool's `fetch`).
hashicorp/aws is not here: its repository (930 MB) is more than can be fetched on these machines, so its names
are checked against the installed Pulumi AWS SDK, which is built from it (`test_provider_arguments.py`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

KEY = re.compile(r'"([a-z][a-z0-9_]*)"\s*:|Name:\s*"([a-z][a-z0-9_]*)"')
GOOGLE = "google-beta/services"
AZURE = "internal/services/containers"
SOURCES: dict[str, tuple[str, str, dict[str, tuple[str, ...]]]] = {
    "google-beta": (
        "hashicorp+terraform-provider-google-beta",
        "v7.34.0",
        {
            "provider": ("google-beta/provider/provider.go",),
            "google_container_node_pool": (
                f"{GOOGLE}/container/resource_container_node_pool.go",
                f"{GOOGLE}/container/node_config.go",
            ),
            "google_compute_reservation": (f"{GOOGLE}/compute/resource_compute_reservation.go",),
            "data.google_compute_reservation": (
                f"{GOOGLE}/compute/resource_compute_reservation.go",
                f"{GOOGLE}/compute/data_source_google_compute_reservation.go",
            ),
            "google_cloud_quotas_quota_preference": (
                f"{GOOGLE}/cloudquotas/resource_cloud_quotas_quota_preference.go",
            ),
            "data.google_cloud_quotas_quota_info": (
                f"{GOOGLE}/cloudquotas/data_source_google_cloud_quotas_quota_info.go",
            ),
        },
    ),
    "azurerm": (
        "hashicorp+terraform-provider-azurerm",
        "v4.40.0",
        {
            "provider": ("internal/provider/provider.go",),
            "azurerm_kubernetes_cluster_node_pool": (
                f"{AZURE}/kubernetes_cluster_node_pool_resource.go",
                f"{AZURE}/kubernetes_nodepool.go",
            ),
        },
    ),
    "kubernetes": (
        "hashicorp+terraform-provider-kubernetes",
        "v2.38.0",
        {
            "provider": ("kubernetes/provider.go",),
            "kubernetes_manifest": ("manifest/provider/provider.go",),
        },
    ),
}


def names(mirrors: Path) -> dict[str, object]:
    """provider -> {tag, commit, types: {type: sorted names}}."""
    out: dict[str, object] = {}
    for provider, (mirror, tag, types) in SOURCES.items():
        repo = mirrors / mirror / "repo"

        def git(*args: str, repo: Path = repo) -> str:
            return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout

        found = {}
        for kind, files in types.items():
            text = "".join(git("show", f"{tag}:{f}") for f in files)
            found[kind] = sorted({a or b for a, b in KEY.findall(text)})
        out[provider] = {"tag": tag, "commit": git("rev-list", "-n", "1", tag).strip(), "types": found}
    return out


if __name__ == "__main__":
    json.dump(names(Path(sys.argv[1])), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
