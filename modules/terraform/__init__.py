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
- hashicorp/google-beta `~> 7.34` (the first version with node_config `gpudirect_strategy`):
  `google_container_node_pool` / node_config (terraform-provider-google-beta
  `website/docs/r/container_node_pool.html.markdown`, `container_cluster.html.markdown`),
  `google_compute_reservation` (resource and data source), `google_cloud_quotas_quota_preference`
  (`quota_config { preferred_value }`, `contact_email`) and the `google_cloud_quotas_quota_info` data source.
  pulumi_gcp 10.x bridges google-beta 7.x (pulumi/pulumi-gcp PR #3870, google-beta 7.39), so the Pulumi
  and Terraform programs read the same schema; TF names `guest_accelerator` / `taint` (pulumi_gcp NodePool docs).
- hashicorp/aws `~> 6.0`: `aws_launch_template`, `aws_eks_node_group` (`taint` blocks, `CAPACITY_BLOCK`
  capacity type: terraform-provider-aws #40876), `aws_placement_group`, `aws_ec2_capacity_reservation`,
  `aws_servicequotas_service_quota` (resource and data source), `aws_autoscaling_schedule`; per-resource `region`
  is the 6.x argument pulumi_aws 7.x exposes.
- hashicorp/azurerm `~> 4.40`: `azurerm_kubernetes_cluster_node_pool` (`auto_scaling_enabled`, `priority`,
  `eviction_policy`, `zones`; terraform-provider-azurerm `website/docs/r/kubernetes_cluster_node_pool.html.markdown`);
  `gpu_driver` arrived in 4.40.0 (Azure/terraform-azurerm-avm-res-containerservice-managedcluster PR #115,
  terraform-provider-azurerm PR #29954).
- hashicorp/kubernetes `~> 2.38`: `kubernetes_manifest` (`manifest`; GA and on by default since 2.6.0,
  terraform-provider-kubernetes CHANGELOG), provider `config_path`.
- Terraform's built-in `terraform_data` (Terraform >= 1.4, OpenTofu): one barrier the Kueue objects wait on.
"""

from quartermaster.modules.terraform.resources import (
    TfResource,
    TfStackSpec,
    provider_pins,
    stack_clusters,
    stack_spec,
)

__all__ = ["TfResource", "TfStackSpec", "provider_pins", "stack_clusters", "stack_spec"]
