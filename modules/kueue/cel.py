"""CEL `x-kubernetes-validations` rules, compiled once with cel-python (`celpy`) and evaluated on create.

Every function the Kueue v0.19.2 CRDs call (`has`, `size` as function and method, `all`, `exists`,
`filter`, `in`, list literals, indexing, `?:`) is part of celpy's standard CEL, so no extension functions are
needed; `tests/kueue/test_cel.py` compiles every rule of every shipped CRD to keep that true.
Transition rules (those that read `oldSelf`) only run on update, so a create-time linter skips them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import celpy
import lark
from celpy import celtypes

_ENV = celpy.Environment()
_RESULTS: dict[tuple[str, str], str | None] = {}
MEMO_LIMIT = 200_000


@dataclass(frozen=True)
class CelRule:
    """One compiled `x-kubernetes-validations` entry."""

    rule: str
    message: str
    field_path: str = ""
    program: Any = field(default=None, compare=False, repr=False)
    # Fields the rule names (`.name` anywhere in its text), and whether dropping the other fields of
    # schema objects cannot change its result (see `_projectable`).
    fields: frozenset[str] = frozenset()
    projectable: bool = False

    @property
    def transition(self) -> bool:
        """Rules reading `oldSelf` compare with the stored object; they only apply on update."""
        return self.program is None

    def check(self, value: Any, schema: dict[str, Any] | None = None) -> str | None:
        """None if the rule holds for `value` (the JSON at the rule's place), else the failure message.

        A rule's result depends only on the part of `value` it can observe, so results are memoised on the
        canonical JSON of that part: the fields of schema objects the rule names (maps and lists are kept
        whole). Generated fleets repeat the same shapes many times (every resource group of 20 flavors
        has the same resource counts), so most evaluations are cache hits.
        """
        if self.program is None:
            return None
        if self.projectable and schema is not None:
            value = _project(value, schema, self.fields)
        key = (self.rule, json.dumps(value, sort_keys=True, separators=(",", ":")))
        if key not in _RESULTS:
            if len(_RESULTS) > MEMO_LIMIT:
                _RESULTS.clear()
            _RESULTS[key] = self._evaluate(value)
        return _RESULTS[key]

    def _evaluate(self, value: Any) -> str | None:
        try:
            result = self.program.evaluate({"self": _to_cel(value)})
        except celpy.evaluation.CELEvalError as exc:
            return f"{self.message} (rule could not be evaluated: {exc.args[0] if exc.args else exc})"
        except TypeError as exc:  # celpy on a value of another type than the rule reads (a number for a list)
            return f"{self.message} (rule could not be evaluated: {exc})"
        if isinstance(result, celpy.evaluation.CELEvalError):
            return f"{self.message} (rule could not be evaluated: {result.args[0] if result.args else result})"
        if isinstance(result, celtypes.BoolType) and bool(result):
            return None
        return self.message


@cache
def _program(rule: str) -> Any:
    return _ENV.program(_ENV.compile(rule))


def compile_rule(entry: dict[str, Any]) -> CelRule:
    """Compile one CRD validation entry (`rule`, `message`, `fieldPath`); parse errors raise (they are ours)."""
    rule = entry["rule"]
    message = entry.get("message") or f"failed rule: {rule}"
    if "oldSelf" in rule:
        return CelRule(rule, message, entry.get("fieldPath", ""))
    fields = frozenset(re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)", rule))
    return CelRule(rule, message, entry.get("fieldPath", ""), _program(rule), fields, _projectable(_ENV.compile(rule)))


_LOOKUPS = ("ident", "member_dot", "member_dot_arg", "member_index")


def _projectable(tree: Any) -> bool:
    """True if every comparison (==, !=, <, in, ...) has a literal or a size() on one side.

    Then no comparison sees a whole schema object, so fields the rule never names cannot affect its
    result (CEL cannot iterate or measure a schema object's fields otherwise).
    """
    for node in tree.iter_subtrees():
        if node.data == "relation" and len(node.children) == 2 and isinstance(node.children[0], lark.Tree):
            left, right = node.children[0].children[0], node.children[1]
            if not (_scalar(left) or _scalar(right)):
                return False
    return True


def _scalar(operand: Any) -> bool:
    """A literal, a list of literals, or a size() call."""
    node = operand
    while isinstance(node, lark.Tree) and len(node.children) == 1 and node.data not in _LOOKUPS:
        node = node.children[0]
    if isinstance(node, lark.Tree) and node.data == "ident_arg":
        return str(node.children[0]) == "size"
    if isinstance(node, lark.Tree) and node.data == "member_dot_arg":
        return str(node.children[1]) == "size"
    if not isinstance(operand, lark.Tree):
        return True
    return not any(sub.data in _LOOKUPS or sub.data == "ident_arg" for sub in operand.iter_subtrees())


def _project(value: Any, schema: dict[str, Any], fields: frozenset[str]) -> Any:
    """`value` without the schema-object fields the rule does not name; maps and lists keep every entry."""
    props = schema.get("properties")
    if isinstance(value, dict) and props:
        return {k: _project(v, props.get(k, {}), fields) for k, v in value.items() if k in fields}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_project(v, schema["items"], fields) for v in value]
    return value


def _to_cel(value: Any) -> Any:
    """JSON -> CEL values, as the API server types them (ints stay ints, lists and maps recurse)."""
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, dict):
        return celtypes.MapType({celtypes.StringType(k): _to_cel(v) for k, v in value.items()})
    if isinstance(value, list):
        return celtypes.ListType([_to_cel(v) for v in value])
    return celtypes.NullType()
