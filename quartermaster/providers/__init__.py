"""Providers: one module per provider (GKE, EKS, AKS, on-prem) behind one interface (`base.Provider`), and the
registry every layer finds them through. See `quartermaster.providers.base` for where each part lives."""

from __future__ import annotations

from quartermaster.providers import aks, eks, gke, onprem
from quartermaster.providers.base import Provider
from quartermaster.providers.registry import (
    InventoryTypes,
    UnknownProvider,
    inventory_types,
    provider_of,
    provider_of_cloud,
    providers,
    register,
    unregister,
    validate_inventory,
)

BUILT_IN: tuple[Provider, ...] = (gke.GKE, eks.EKS, aks.AKS, onprem.ONPREM)
register(*BUILT_IN)

__all__ = [
    "BUILT_IN",
    "InventoryTypes",
    "Provider",
    "UnknownProvider",
    "inventory_types",
    "provider_of",
    "provider_of_cloud",
    "providers",
    "register",
    "unregister",
    "validate_inventory",
]
