"""Kubernetes value rules that Kueue's webhooks apply: quantities, names, label keys and values, selectors.

Ported from k8s.io/apimachinery (`resource.ParseQuantity`, `validation.IsDNS1123Subdomain`,
`IsQualifiedName`, `IsValidLabelValue`, `metav1validation.ValidateLabelSelector`).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUALIFIED_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
SUFFIX = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def parse_quantity(value: Any) -> Decimal | None:
    """A Kubernetes quantity (`12`, `36Gi`, `500m`, `1e3`) as a Decimal; None if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return Decimal(str(value))
    if not isinstance(value, str):
        return None
    match = QUANTITY.match(value.strip())
    if not match:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    try:
        if suffix[:1] in ("e", "E"):
            return Decimal(number) * (Decimal(10) ** int(suffix[1:]))
        return Decimal(number) * SUFFIX[suffix]
    except (InvalidOperation, KeyError):
        return None


_DECIMAL_STEPS = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"))
_FRACTION_STEPS = ((3, "m"), (6, "u"), (9, "n"))
_BINARY_STEPS = ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki"))


def canonical_quantity(value: int | float | Decimal, *, gib: bool = False) -> int | str:
    """A quantity in the form the API server writes back (apimachinery `resource.Quantity`'s canonical string:
    the largest suffix that keeps the number whole: `1000` -> `1k`, `0.75` -> `750m`, `1024Gi` -> `1Ti`), so
    that Terraform and Pulumi read back what they wrote. `value` counts GiB when `gib`; a number already
    canonical stays a number (`64`)."""
    if gib:
        count = int(value) * 2**30
        return next(
            (f"{count >> bits}{suffix}" for bits, suffix in _BINARY_STEPS if count and not count % 2**bits), count
        )
    amount = Decimal(str(value))
    if amount != amount.to_integral_value():
        for digits, suffix in _FRACTION_STEPS:
            scaled = amount * 10**digits
            if scaled == scaled.to_integral_value():
                return f"{int(scaled)}{suffix}"
        raise ValueError(f"{value} has more than nine decimal places; a quantity cannot hold it")
    whole = int(amount)
    return next(
        (f"{whole // 10**digits}{suffix}" for digits, suffix in _DECIMAL_STEPS if whole and not whole % 10**digits),
        whole,
    )


def is_dns_subdomain(name: str) -> bool:
    return isinstance(name, str) and len(name) <= 253 and bool(DNS1123_SUBDOMAIN.match(name))


def is_dns_label(name: str) -> bool:
    return isinstance(name, str) and len(name) <= 63 and bool(DNS1123_LABEL.match(name))


def is_qualified_name(key: str) -> bool:
    """Label-key syntax: optional DNS-subdomain prefix and '/', then a name of at most 63 characters."""
    if not isinstance(key, str):
        return False
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or not is_dns_subdomain(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(QUALIFIED_NAME_PART.match(name))


def is_label_value(value: str) -> bool:
    return isinstance(value, str) and len(value) <= 63 and bool(LABEL_VALUE.match(value))


def label_selector_problems(selector: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """Why a label selector is invalid, as (relative path, reason); empty when valid."""
    if not isinstance(selector, dict):
        return []
    out: list[tuple[tuple[str | int, ...], str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        if not is_qualified_name(key):
            out.append((("matchLabels", key), f"`{key}` is not a valid label key"))
        if not is_label_value(value):
            out.append((("matchLabels", key), f"`{value}` is not a valid label value"))
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        key, operator, values = expr.get("key", ""), expr.get("operator"), expr.get("values") or []
        if not is_qualified_name(key):
            out.append((("matchExpressions", i, "key"), f"`{key}` is not a valid label key"))
        if operator not in SELECTOR_OPERATORS:
            out.append(
                (("matchExpressions", i, "operator"), f"operator must be one of {', '.join(SELECTOR_OPERATORS)}")
            )
        elif operator in ("In", "NotIn") and not values:
            out.append((("matchExpressions", i, "values"), f"operator {operator} needs at least one value"))
        elif operator in ("Exists", "DoesNotExist") and values:
            out.append((("matchExpressions", i, "values"), f"operator {operator} takes no values"))
        for j, v in enumerate(values):
            if not is_label_value(v):
                out.append((("matchExpressions", i, "values", j), f"`{v}` is not a valid label value"))
    return out


def selector_matches(selector: Any, labels: dict[str, str]) -> bool | None:
    """Whether a label selector selects an object with `labels`; None when the selector is absent (selects nothing)."""
    if selector is None:
        return None
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if operator == "In" and (not present or labels[key] not in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def selector_keys(selector: Any) -> set[str]:
    """The label keys a selector looks at."""
    if not isinstance(selector, dict):
        return set()
    return set(selector.get("matchLabels") or {}) | {e.get("key") for e in selector.get("matchExpressions") or []}
