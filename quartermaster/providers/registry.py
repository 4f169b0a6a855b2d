"""The registry of providers (cluster kind -> `Provider`) and the inventory types built from it.

The model (`quartermaster.model`) knows no provider: there a site's and a machine's `provider` and the keys of a
team's `groups` are plain names, and `Inventory.clusters` holds the shared `Cluster` base. `inventory_types()`
builds, from the registered providers, the types that validate an inventory: subclasses of `Site`, `Machine`,
`Team` and `Inventory` whose fields are narrowed to the registered clouds and kinds, and a cluster told apart by
`kind` into its provider's model. The loader, `validate_inventory` and the JSON Schema read them; what they return
are the model's own classes (and each provider's cluster model), never the narrowed subclasses.
"""

from __future__ import annotations

import copy
import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, Field, StringConstraints, TypeAdapter, create_model

from quartermaster.model import Cluster, Inventory, Machine, Site, Team
from quartermaster.providers.base import Provider

_REGISTRY: dict[str, Provider] = {}
_TYPES: list[InventoryTypes] = []

M = TypeVar("M", bound=BaseModel)


class UnknownProvider(KeyError):
    """A cluster kind or cloud no registered provider has."""


def register(*added: Provider) -> None:
    """Add providers (each replacing one of the same kind); the inventory types follow."""
    for provider in added:
        _REGISTRY[provider.kind] = provider
    _TYPES.clear()


def discover(package: str) -> tuple[Provider, ...]:
    """The providers in the packages under `package` (each package's `PROVIDER`), lowest `order` first (a tie: by
    folder name): how `quartermaster.providers` finds the built-in ones."""
    found: list[Provider] = []
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__, f"{package}."):
        if not module.ispkg:
            continue
        provider = getattr(importlib.import_module(module.name), "PROVIDER", None)
        if not isinstance(provider, Provider):
            raise TypeError(f"{module.name}: a provider's package names its `Provider` object `PROVIDER`")
        found.append(provider)
    return tuple(sorted(found, key=lambda provider: provider.order))


def unregister(kind: str) -> None:
    """Remove the provider of `kind` (tests that register a provider of their own undo it this way)."""
    del _REGISTRY[kind]
    _TYPES.clear()


def providers() -> tuple[Provider, ...]:
    """Every registered provider, in the order registered."""
    return tuple(_REGISTRY.values())


def provider_of(kind: str) -> Provider:
    """The provider of a cluster kind."""
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise UnknownProvider(f"no provider of cluster kind `{kind}` (known: {', '.join(_REGISTRY)})") from None


def provider_of_cloud(cloud: str) -> Provider:
    """The provider whose sites and machines say `provider: <cloud>` (the first registered, if several)."""
    for provider in _REGISTRY.values():
        if provider.cloud == cloud:
            return provider
    raise UnknownProvider(f"no provider of cloud `{cloud}`")


@dataclass(frozen=True)
class InventoryTypes:
    """The types that validate an inventory with the providers registered when they were built."""

    cluster: Any
    """One cluster: the registered cluster models, told apart by `kind`."""
    cluster_adapter: TypeAdapter[Any]
    """A validator of one cluster."""
    narrowed: Mapping[type[BaseModel], type[BaseModel]]
    """`Site`, `Machine`, `Team` and `Inventory` -> their subclass with the fields that name clouds, kinds and
    clusters narrowed to the registered ones."""

    def item_type(self, model: type[BaseModel]) -> Any:
        """The type that validates one item of `model` (a section's model): what the JSON Schema shows."""
        return self.cluster if model is Cluster else self.narrowed.get(model, model)

    def validate(self, model: type[M], data: Any) -> M:
        """One object of `model` (a cluster: of its provider's model) from plain data; pydantic's ValidationError
        when it is not one."""
        if model is Cluster:
            cluster: M = self.cluster_adapter.validate_python(data)
            return cluster
        narrowed = self.narrowed.get(model)
        if narrowed is None:
            return model.model_validate(data)
        return _as_base(model, narrowed.model_validate(data))


def inventory_types() -> InventoryTypes:
    """The inventory types of the registered providers, built once per registration."""
    if not _TYPES:
        _TYPES.append(_build_types())
    return _TYPES[0]


def validate_inventory(data: Mapping[str, Any]) -> Inventory:
    """An inventory from plain data, as its YAML sections hold it (no cross-object checks: `quartermaster.loader`
    runs those); pydantic's ValidationError when it is not one."""
    narrowed = inventory_types().narrowed[Inventory].model_validate(data)
    sites, machines, teams = (
        tuple(_as_base(model, item) for item in getattr(narrowed, name))
        for model, name in ((Site, "sites"), (Machine, "machines"), (Team, "teams"))
    )
    return _as_base(Inventory, narrowed, sites=sites, machines=machines, teams=teams)


def _as_base(model: type[M], narrowed: BaseModel, **update: Any) -> M:
    """`narrowed` (validated by a subclass of `model`) as a `model`, its validated values kept as they are."""
    values = {name: getattr(narrowed, name) for name in model.model_fields}
    return model.model_construct(_fields_set=narrowed.model_fields_set, **{**values, **update})


def _build_types() -> InventoryTypes:
    # Literal types of the registered names, made at run time, which mypy cannot follow: the ignores.
    kinds = Literal[tuple(_REGISTRY)]  # type: ignore[valid-type]
    clouds = Literal[tuple(dict.fromkeys(p.cloud for p in _REGISTRY.values()))]  # type: ignore[valid-type]
    models = tuple(p.cluster_model for p in _REGISTRY.values())
    cluster = Annotated[Union[models], Field(discriminator="kind")]  # type: ignore[valid-type]  # noqa: UP007
    group = Annotated[str, StringConstraints(min_length=1, max_length=256)]
    site = _narrowed(Site, provider=clouds)
    machine = _narrowed(Machine, provider=clouds)
    team = _narrowed(Team, groups=dict[kinds, group])  # type: ignore[valid-type]
    inventory = _narrowed(
        Inventory,
        sites=tuple[site, ...],  # type: ignore[valid-type]
        machines=tuple[machine, ...],  # type: ignore[valid-type]
        teams=tuple[team, ...],  # type: ignore[valid-type]
        clusters=tuple[cluster, ...],
    )
    narrowed: dict[type[BaseModel], type[BaseModel]] = {Site: site, Machine: machine, Team: team, Inventory: inventory}
    return InventoryTypes(cluster, TypeAdapter(cluster), narrowed)


def _narrowed(model: type[BaseModel], **annotations: Any) -> type[BaseModel]:
    """A subclass of `model`, of the same name and docs, with the fields in `annotations` of those types."""
    fields: Any = {name: (annotation, copy.copy(model.model_fields[name])) for name, annotation in annotations.items()}
    return create_model(model.__name__, __base__=model, __module__=model.__module__, __doc__=model.__doc__, **fields)
