"""Kueue component: the cluster's Kueue objects, namespaces and RBAC through a Kubernetes provider.

The manifests come from `modules.observability.emit.kubernetes_objects` (Kueue's objects, and a PrometheusRule and
a dashboard ConfigMap when the cluster enables observability) as plain dicts. Namespaces, ConfigMaps and RBAC become
typed `pulumi_kubernetes` resources; Kueue kinds become `apiextensions.CustomResource`s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import version
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

Manifest = dict[str, Any]


def _metadata(m: Manifest) -> k8s.meta.v1.ObjectMetaArgs:
    meta = m["metadata"]
    return k8s.meta.v1.ObjectMetaArgs(
        name=meta["name"],
        namespace=meta.get("namespace"),
        labels=meta.get("labels"),
        annotations=meta.get("annotations"),
    )


def _rules(m: Manifest) -> list[k8s.rbac.v1.PolicyRuleArgs]:
    return [
        k8s.rbac.v1.PolicyRuleArgs(
            api_groups=r.get("apiGroups"),
            resources=r.get("resources"),
            resource_names=r.get("resourceNames"),
            verbs=r["verbs"],
            non_resource_urls=r.get("nonResourceURLs"),
        )
        for r in m.get("rules", [])
    ]


def _binding(m: Manifest) -> dict[str, Any]:
    ref = m["roleRef"]
    return {
        "role_ref": k8s.rbac.v1.RoleRefArgs(api_group=ref["apiGroup"], kind=ref["kind"], name=ref["name"]),
        "subjects": [
            k8s.rbac.v1.SubjectArgs(
                kind=s["kind"], name=s["name"], api_group=s.get("apiGroup"), namespace=s.get("namespace")
            )
            for s in m.get("subjects", [])
        ],
    }


Typed = Callable[[str, Manifest, pulumi.ResourceOptions], pulumi.CustomResource]
TYPED: dict[tuple[str, str], Typed] = {
    ("v1", "Namespace"): lambda n, m, o: k8s.core.v1.Namespace(n, metadata=_metadata(m), opts=o),
    ("v1", "ConfigMap"): lambda n, m, o: k8s.core.v1.ConfigMap(n, metadata=_metadata(m), data=m["data"], opts=o),
    ("rbac.authorization.k8s.io/v1", "Role"): lambda n, m, o: k8s.rbac.v1.Role(
        n, metadata=_metadata(m), rules=_rules(m), opts=o
    ),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): lambda n, m, o: k8s.rbac.v1.ClusterRole(
        n, metadata=_metadata(m), rules=_rules(m), opts=o
    ),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): lambda n, m, o: k8s.rbac.v1.RoleBinding(
        n, metadata=_metadata(m), **_binding(m), opts=o
    ),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): lambda n, m, o: k8s.rbac.v1.ClusterRoleBinding(
        n, metadata=_metadata(m), **_binding(m), opts=o
    ),
}


class KubernetesObject(pulumi.CustomResource):
    """An object with top-level fields besides `spec` (a WorkloadPriorityClass has `value`), which
    `apiextensions.CustomResource` cannot carry; same type token and provider plugin as CustomResource."""

    def __init__(self, name: str, manifest: Manifest, opts: pulumi.ResourceOptions) -> None:
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=version("pulumi_kubernetes")))
        super().__init__(f"kubernetes:{manifest['apiVersion']}:{manifest['kind']}", name, dict(manifest), opts)


def resource_name(m: Manifest) -> str:
    """A stable, unique Pulumi name: `<kind>/<namespace>/<name>` (cluster-scoped: `<kind>/<name>`)."""
    meta = m["metadata"]
    parts = [m["kind"].lower(), meta.get("namespace"), meta["name"]]
    return "/".join(p for p in parts if p)


class KueueObjects(pulumi.ComponentResource):
    """A Kubernetes provider for the cluster and one resource per manifest. A ResourceFlavor is created
    after the node pool it selects (`pools`: flavor name -> pool component), a namespaced object after
    its Namespace; other objects refer to these by name, which Kueue resolves whenever they appear."""

    def __init__(
        self,
        name: str,
        manifests: Sequence[Manifest],
        kubeconfig: pulumi.Input[str],
        pools: Mapping[str, pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("quartermaster:kueue:Objects", name, None, opts)
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=kubeconfig, opts=pulumi.ResourceOptions(parent=self))
        namespaces: dict[str, pulumi.Resource] = {}
        self.resources: list[pulumi.CustomResource] = []
        for m in manifests:
            meta = m["metadata"]
            after = [namespaces[meta["namespace"]]] if meta.get("namespace") in namespaces else []
            if m["kind"] == "ResourceFlavor" and meta["name"] in pools:
                after.append(pools[meta["name"]])
            # A Namespace outlives the inventory's entry: removing a team must not delete the workloads and data
            # in it, nor a namespace that existed before Quartermaster (server-side apply adopts it).
            opts_ = pulumi.ResourceOptions(
                parent=self, provider=self.provider, depends_on=after, retain_on_delete=m["kind"] == "Namespace"
            )
            typed = TYPED.get((m["apiVersion"], m["kind"]))
            if typed is not None:
                resource = typed(resource_name(m), m, opts_)
            elif set(m) <= {"apiVersion", "kind", "metadata", "spec"}:
                resource = k8s.apiextensions.CustomResource(
                    resource_name(m),
                    api_version=m["apiVersion"],
                    kind=m["kind"],
                    metadata=_metadata(m),
                    spec=m.get("spec"),
                    opts=opts_,
                )
            else:
                resource = KubernetesObject(resource_name(m), m, opts_)
            if m["kind"] == "Namespace":
                namespaces[meta["name"]] = resource
            self.resources.append(resource)
        self.register_outputs({"objects": len(self.resources)})
