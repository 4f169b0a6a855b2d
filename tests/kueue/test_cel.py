"""Every CEL rule of the shipped CRDs compiles with cel-python and is evaluated (transition rules skipped)."""

from __future__ import annotations

from typing import Any

import yaml

from quartermaster.modules.kueue.cel import compile_rule
from quartermaster.modules.kueue.crds import CRD_DIR, PLURALS, crd, served_versions


def rules_in(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return list(node.get("x-kubernetes-validations", [])) + [r for v in node.values() for r in rules_in(v)]
    if isinstance(node, list):
        return [r for v in node for r in rules_in(v)]
    return []


def test_every_crd_file_is_shipped_and_every_kind_is_served_in_both_versions() -> None:
    assert sorted(p.name for p in CRD_DIR.glob("*.yaml")) == sorted(
        f"kueue.x-k8s.io_{p}.yaml" for p in PLURALS.values()
    )
    for kind in PLURALS:
        assert served_versions(kind) == ["v1beta1", "v1beta2"]
        assert crd(kind, "v1beta2") is not None


def test_every_cel_rule_compiles_and_only_oldself_rules_are_skipped() -> None:
    count = 0
    for path in sorted(CRD_DIR.glob("*.yaml")):
        for entry in rules_in(yaml.load(path.read_text(), Loader=yaml.CSafeLoader)):
            rule = compile_rule(entry)
            assert rule.transition == ("oldSelf" in entry["rule"])
            count += 1
    assert count > 50


def test_rules_hold_and_fail_as_in_kubernetes() -> None:
    unique = compile_rule(
        {"rule": "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0", "message": "must be unique"}
    )
    assert unique.check(["a", "b"]) is None
    assert unique.check(["a", "a"]) == "must be unique"
    one_of = compile_rule(
        {
            "rule": "[has(self.kubeConfig),has(self.clusterProfileRef)].filter(x,x==true).size() == 1",
            "message": "exactly one",
        }
    )
    assert one_of.check({"kubeConfig": {"location": "s"}}) is None
    assert one_of.check({}) == "exactly one"
    labels = compile_rule({"rule": "!has(self.topologyName) || self.nodeLabels.size() >= 1", "message": "labels"})
    assert labels.check({"topologyName": "t", "nodeLabels": {"a": "b"}}) is None
    assert labels.check({"topologyName": "t", "nodeLabels": {}}) == "labels"
    assert labels.check({"topologyName": "t"}).startswith("labels (rule could not be evaluated")
