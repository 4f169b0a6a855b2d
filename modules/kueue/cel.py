"""CEL `x-kubernetes-validations` rules, compiled once with cel-python (`celpy`) and evaluated on create.

Every function the Kueue v0.19.2 CRDs call (`has`, `size` as function and method, `all`, `exists`,
`filter`, `in`, list literals, indexing, `?:`) is part of celpy's standard CEL, so no extension functions are
needed; `tests/kueue/test_cel.py` compiles every rule of every shipped CRD to keep that true.
Transition rules (those that read `oldSelf`) only run on update, so a create-time linter skips them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import celpy
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

    @property
    def transition(self) -> bool:
        """Rules reading `oldSelf` compare with the stored object; they only apply on update."""
        return self.program is None

    def check(self, value: Any) -> str | None:
        """None if the rule holds for `value` (the JSON at the rule's place), else the failure message.

        A rule's result depends only on `value`, so results are memoised on its canonical JSON: generated
        fleets repeat the same blocks (preemption, fungibility, identical resource groups) many times.
        """
        if self.program is None:
            return None
        key = (self.rule, json.dumps(value, sort_keys=True, separators=(",", ":")))
        if key not in _RESULTS:
            if len(_RESULTS) > MEMO_LIMIT:
                _RESULTS.clear()
            _RESULTS[key] = self._evaluate(value)
        return _RESULTS[key]

    def _evaluate(self, value: Any) -> str | None:
        try:
            result = self.program.evaluate({"self": _to_cel(value)})
        except celpy.CELEvalError as exc:
            return f"{self.message} (rule could not be evaluated: {exc.args[0] if exc.args else exc})"
        if isinstance(result, celpy.CELEvalError):
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
    program = None if "oldSelf" in rule else _program(rule)
    return CelRule(rule, message, entry.get("fieldPath", ""), program)


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
