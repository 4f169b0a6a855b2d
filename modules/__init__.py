"""Infrastructure building blocks: inventory -> provider-neutral specs (plain dicts) -> emitters.

`modules.kueue` derives every Kueue object (and the namespaces and RBAC around them) from the inventory.
"""

# Installed as `quartermaster.modules`; the bare folder name is importable only by accident (the repo root on sys.path).
if __name__ != "quartermaster.modules":
    raise ImportError(f"`{__name__}` is not a package of its own: import `quartermaster.modules` instead")
