"""The CDKTF emitter: one `TerraformStack` per cluster, raw providers and raw resources.

The only module that imports cdktf (which starts Node.js through jsii on import). Bodies come ready-made
from `modules.terraform.resources`; this module only hands them to cdktf, which writes
`<outdir>/stacks/<cluster>/cdk.tf.json`. All stacks go into one `App`, so Node.js starts once.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# jsii prints a banner when Node.js 20 is past its end of life; silence exactly that one (Node 20 works).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

import jsii
from cdktf import (
    App,
    GcsBackend,
    LocalBackend,
    S3Backend,
    TerraformDataSource,
    TerraformProvider,
    TerraformProviderGeneratorMetadata,
    TerraformResource,
    TerraformResourceLifecycle,
    TerraformStack,
    TerraformVariable,
)
from constructs import Construct

from quartermaster.loader import SourceMap
from quartermaster.model import Inventory
from quartermaster.modules.cloud import cluster_spec
from quartermaster.modules.observability.emit import kubernetes_objects
from quartermaster.modules.terraform.resources import TfResource, TfStackSpec, provider_pins, stack_spec

BACKENDS = ("local", "gcs", "s3")


@dataclass(frozen=True)
class Backend:
    """Where Terraform keeps each stack's state.

    local: `terraform.<cluster>.tfstate` next to the output directory (so re-synthesising, which rewrites
    the output directory, never touches state); gcs: `gs://<bucket>/quartermaster/<cluster>/`;
    s3: `s3://<bucket>/quartermaster/<cluster>/terraform.tfstate` in `region`.
    """

    kind: str = "local"
    bucket: str | None = None
    region: str | None = None

    def problem(self) -> str | None:
        """What is missing for this backend, or None."""
        if self.kind not in BACKENDS:
            return f"unknown backend `{self.kind}`; use one of {', '.join(BACKENDS)}"
        if self.kind != "local" and not self.bucket:
            return f"the {self.kind} backend needs a state bucket; pass --state-bucket NAME"
        if self.kind == "s3" and not self.region:
            return "the s3 backend needs the bucket's region; pass --state-region REGION"
        return None


class RawProvider(TerraformProvider):
    """A provider block and its `required_providers` pin, without a prebuilt provider package."""

    def __init__(self, scope: Construct, name: str, config: Mapping[str, Any]) -> None:
        pin = provider_pins()[name]
        super().__init__(
            scope,
            name,
            terraform_resource_type=name,
            terraform_provider_source=pin.source,
            terraform_generator_metadata=TerraformProviderGeneratorMetadata(
                provider_name=name, provider_version_constraint=pin.version
            ),
        )
        self._config = dict(config)

    @jsii.member(jsii_name="synthesizeAttributes")
    def _synthesize_attributes(self) -> Mapping[str, Any]:
        return self._config


class RawResource(TerraformResource):
    """A resource whose arguments are a ready-made body (Terraform argument names)."""

    def __init__(
        self,
        scope: Construct,
        resource: TfResource,
        provider: TerraformProvider | None,
        depends_on: Sequence[TerraformResource | TerraformDataSource],
    ) -> None:
        lifecycle = None
        if resource.prevent_destroy or resource.ignore_changes:
            lifecycle = TerraformResourceLifecycle(
                prevent_destroy=resource.prevent_destroy or None, ignore_changes=list(resource.ignore_changes) or None
            )
        # construct ids are unique per stack, Terraform names per type: id by address, name by override
        super().__init__(
            scope,
            resource.address,
            terraform_resource_type=resource.type,
            provider=provider,
            depends_on=list(depends_on) or None,
            lifecycle=lifecycle,
        )
        self.override_logical_id(resource.name)
        if resource.count is not None:
            self.add_override("count", resource.count)
        self._body = resource.body

    @jsii.member(jsii_name="synthesizeAttributes")
    def _synthesize_attributes(self) -> Mapping[str, Any]:
        return self._body


class RawDataSource(TerraformDataSource):
    """A data source whose arguments are a ready-made body."""

    def __init__(self, scope: Construct, resource: TfResource, provider: TerraformProvider | None) -> None:
        super().__init__(scope, resource.address, terraform_resource_type=resource.type, provider=provider)
        self.override_logical_id(resource.name)
        self._body = resource.body

    @jsii.member(jsii_name="synthesizeAttributes")
    def _synthesize_attributes(self) -> Mapping[str, Any]:
        return self._body


REQUIRED_TERRAFORM = ">= 1.5"
"""`plantimestamp()` (Terraform 1.5) keeps capacity-block actions from being declared once their start has passed."""


class ClusterStack(TerraformStack):
    """One cluster's Terraform stack (`stacks/<cluster>/cdk.tf.json`)."""

    def __init__(self, scope: Construct, spec: TfStackSpec, backend: Backend) -> None:
        super().__init__(scope, spec.cluster)
        self.add_override("terraform.required_version", REQUIRED_TERRAFORM)
        if backend.kind == "gcs":
            GcsBackend(self, bucket=backend.bucket or "", prefix=f"quartermaster/{spec.cluster}")
        elif backend.kind == "s3":
            S3Backend(
                self,
                bucket=backend.bucket or "",
                key=f"quartermaster/{spec.cluster}/terraform.tfstate",
                region=backend.region,
            )
        else:  # relative to the stack's working directory <outdir>/stacks/<cluster>
            LocalBackend(self, path=f"../../../terraform.{spec.cluster}.tfstate")
        for name, body in spec.variables.items():
            TerraformVariable(self, name, type=body["type"], description=body["description"])
        providers = {name: RawProvider(self, name, config) for name, config in spec.providers.items()}
        declared: dict[str, TerraformResource | TerraformDataSource] = {}
        for r in spec.resources:
            if r.data:
                declared[r.address] = RawDataSource(self, r, providers.get(r.provider))
            else:
                declared[r.address] = RawResource(
                    self, r, providers.get(r.provider), [declared[a] for a in r.depends_on]
                )


def synth(
    inventory: Inventory,
    clusters: Sequence[str],
    outdir: Path,
    now: dt.datetime,
    backend: Backend = Backend(),
    sources: SourceMap | None = None,
) -> list[Path]:
    """Write one Terraform JSON stack per cluster under `outdir`, as the stacks should be at `now`; return the stack
    files in cluster order.

    Raises `modules.cloud.SpecError` when a cluster's pools cannot be expressed (the message says how to fix it).
    """
    specs = [
        stack_spec(cluster_spec(inventory, c, now), kubernetes_objects(inventory, c, now, sources)) for c in clusters
    ]
    app = App(outdir=str(outdir))
    for spec in specs:
        ClusterStack(app, spec, backend)
    app.synth()
    return [outdir / "stacks" / c / "cdk.tf.json" for c in clusters]
