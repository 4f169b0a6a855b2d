"""The registry of providers: cluster kind -> `Provider`, and the models whose allowed values follow it.

Registering a provider adds its kind to `Cluster.kind`'s discriminated union (`Inventory.clusters`), its cloud to
the `provider` of sites and machines and its kind to a team's `groups`, and rebuilds those models, so the loader,
the JSON Schema and every check see it at once.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, StringConstraints, TypeAdapter

from quartermaster.model import Inventory, Machine, Site, Team
from quartermaster.providers.base import Provider

_REGISTRY: dict[str, Provider] = {}
_ADAPTER: list[TypeAdapter[Any]] = []


class UnknownProvider(KeyError):
    """A cluster kind or cloud no registered provider has."""


def register(*added: Provider) -> None:
    """Add providers (each replacing one of the same kind) and rebuild the models that list the kinds."""
    for provider in added:
        _REGISTRY[provider.kind] = provider
    _rebuild_models()


def unregister(kind: str) -> None:
    """Remove the provider of `kind` (tests that register a provider of their own undo it this way)."""
    del _REGISTRY[kind]
    _rebuild_models()


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


def cluster_union() -> Any:
    """The type of one inventory cluster: the registered cluster models, told apart by `kind`."""
    models = tuple(p.cluster_model for p in _REGISTRY.values())
    return Annotated[Union[models], Field(discriminator="kind")]  # noqa: UP007  (a tuple of types: no `|` form)


def cluster_adapter() -> TypeAdapter[Any]:
    """A validator of one cluster (`cluster_union`), built once per registration."""
    if not _ADAPTER:
        _ADAPTER.append(TypeAdapter(cluster_union()))
    return _ADAPTER[0]


def _rebuild_models() -> None:
    _ADAPTER.clear()
    # These field types are made at run time from the registered providers, which mypy cannot follow: the ignores.
    kinds = Literal[tuple(_REGISTRY)]  # type: ignore[valid-type]
    clouds = Literal[tuple(dict.fromkeys(p.cloud for p in _REGISTRY.values()))]  # type: ignore[valid-type]
    group = Annotated[str, StringConstraints(min_length=1, max_length=256)]
    annotations: dict[type[BaseModel], dict[str, Any]] = {
        Site: {"provider": clouds},
        Machine: {"provider": clouds},
        Team: {"groups": dict[kinds, group]},  # type: ignore[valid-type]
        Inventory: {"clusters": tuple[cluster_union(), ...]},  # type: ignore[misc]
    }
    for model, fields in annotations.items():
        for name, annotation in fields.items():
            model.__pydantic_fields__[name].annotation = annotation
        model.model_rebuild(force=True)
