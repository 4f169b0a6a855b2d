"""Providers: one package per provider (GKE, EKS, AKS, on-prem) behind one interface (`base.Provider`), and the
registry every layer finds them through. See `quartermaster.providers.base` for where each part lives.

Every package here is a built-in provider: importing this package registers each one's `PROVIDER` (`discover`), so
a new provider is its folder and no line elsewhere."""

from __future__ import annotations

from quartermaster.providers.base import Provider
from quartermaster.providers.registry import (
    InventoryTypes,
    UnknownProvider,
    discover,
    inventory_types,
    provider_of,
    provider_of_cloud,
    providers,
    register,
    unregister,
    validate_inventory,
)

BUILT_IN = discover(__name__)
"""The providers shipped with Quartermaster, in the registry's order (their `order`)."""
register(*BUILT_IN)

__all__ = [
    "BUILT_IN",
    "InventoryTypes",
    "Provider",
    "UnknownProvider",
    "discover",
    "inventory_types",
    "provider_of",
    "provider_of_cloud",
    "providers",
    "register",
    "unregister",
    "validate_inventory",
]
