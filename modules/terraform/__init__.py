"""Terraform / OpenTofu stacks from the same cloud specs as the Pulumi program, through CDKTF.

    modules.terraform.resources   pure: ClusterSpec + Kueue manifests -> Terraform resource bodies
    modules.terraform.app         the one corner importing cdktf: raw providers/resources, synth()

HashiCorp deprecated CDKTF on 2025-12-10 and froze the prebuilt `cdktf-cdktf-provider-*` packages on old
provider majors (terraform-cdk README), so nothing here uses them: providers are `TerraformProvider` subclasses and
resources are `TerraformResource`s whose arguments are the plain bodies of `resources`. Moving to the
community fork (`cdktn`) means changing the imports of `app.py`; dropping CDKTF means writing the same
bodies as JSON. Importing `modules.terraform.app` starts Node.js (jsii); `resources` needs neither.

Provider versions pinned in `required_providers` and the schemas the argument names follow (the
`terraform providers schema` command cannot run here; `tests/terraform/test_provider_arguments.py` checks every
emitted name against each provider's source at its floor tag):
- each provider's pins: its `terraform_resources` module (`quartermaster/providers/<name>/`), with their sources.
- hashicorp/kubernetes `~> 2.38`: `kubernetes_manifest` (`manifest`; GA and on by default since 2.6.0,
  terraform-provider-kubernetes CHANGELOG), provider `config_path`.
- Terraform's built-in `terraform_data` (Terraform >= 1.4, OpenTofu): one barrier the Kueue objects wait on.
"""

from quartermaster.modules.terraform.resources import (
    ProviderPin,
    TfResource,
    TfStackSpec,
    provider_pins,
    stack_clusters,
    stack_spec,
)

__all__ = ["ProviderPin", "TfResource", "TfStackSpec", "provider_pins", "stack_clusters", "stack_spec"]
