"""Infrastructure building blocks: inventory -> provider-neutral specs (plain dicts) -> emitters.

`modules.kueue` derives every Kueue object (and the namespaces and RBAC around them) from the inventory.
"""
