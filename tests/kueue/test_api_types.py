"""The typed Kueue classes (`modules/kueue/api.py`) are generated from the vendored CRDs and kept in step with them."""

from __future__ import annotations

import dataclasses
import typing

import pytest
import yaml

from quartermaster.loader import load
from quartermaster.modules.kueue import api, apigen, kueue_objects
from quartermaster.modules.kueue.crds import CRD_DIR, GROUP, PLURALS
from quartermaster.modules.kueue.manifest import Namespace, Role, RoleBinding, from_manifest, json_name, to_manifest
from tests.builders import DURING_THE_BLOCK
from tests.paths import INVENTORY


def test_the_generated_module_matches_the_vendored_crds() -> None:
    # Fails after crds/ changes until `python -m quartermaster.modules.kueue.apigen` is run and api.py committed.
    assert apigen.TARGET.read_text(encoding="utf-8") == apigen.generate()


def _properties(kind: str) -> dict[str, typing.Any]:
    doc = yaml.safe_load((CRD_DIR / f"{GROUP}_{PLURALS[kind]}.yaml").read_text())
    version = next(v for v in doc["spec"]["versions"] if v["name"] == "v1beta2")
    props: dict[str, typing.Any] = version["schema"]["openAPIV3Schema"]["properties"]
    return props


def test_every_spec_field_of_the_crd_is_a_documented_field_of_its_class() -> None:
    # A person checks one: ClusterQueue's spec in kueue.x-k8s.io_clusterqueues.yaml lists cohortName, which
    # api.ClusterQueueSpec has as cohort_name with the first sentence of its description.
    for kind in apigen.KINDS:
        cls = getattr(api, kind)
        props = _properties(kind)
        if "spec" in props:
            cls = typing.get_type_hints(cls, vars(api))["spec"].__args__[0]
            props = props["spec"]["properties"]
        names = {json_name(f) for f in dataclasses.fields(cls)} - {"metadata"}
        assert names == set(props) - {"apiVersion", "kind", "metadata", "status"}, kind
        source = (apigen.TARGET).read_text(encoding="utf-8")
        for prop, schema in props.items():
            if prop in ("apiVersion", "kind", "metadata", "status"):
                continue
            first = apigen.first_sentence(schema.get("description") or prop)
            assert " ".join(first.split()[:4]) in " ".join(source.split()), (kind, prop)


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_the_builders_return_typed_objects_that_read_back_from_their_manifests(version: str) -> None:
    # Every Kueue object the example renders is an instance of a generated class, and its manifest (converted to
    # v1beta1 where a cluster asks for it: cohortName -> cohort, clusterSource.kubeConfig -> kubeConfig) reads back
    # into the same object; Namespaces and RBAC are manifest.py's classes.
    example = load(INVENTORY).inventory
    for cluster in example.clusters:
        typed = kueue_objects(example, cluster.name, DURING_THE_BLOCK)
        kinds = {type(o) for o in typed}
        assert kinds <= {getattr(api, k) for k in apigen.KINDS} | {Namespace, Role, RoleBinding}, cluster.name
        kueue = [o for o in typed if o.KIND in apigen.KINDS]
        manifests = [to_manifest(o, version) for o in kueue]
        assert all(m["apiVersion"] == f"kueue.x-k8s.io/{version}" for m in manifests)
        assert [from_manifest(m) for m in manifests] == kueue, cluster.name
        if version == "v1beta1":
            specs = [m["spec"] for m in manifests if m["kind"] in ("ClusterQueue", "MultiKueueCluster")]
            assert not any("cohortName" in s or "clusterSource" in s for s in specs)
