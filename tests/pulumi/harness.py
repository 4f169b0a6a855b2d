"""Run the Pulumi program under Pulumi's own mocks and record every resource it registers.

`run_stack(stack)` runs `stacks/__main__.py` with the config of `stacks/Pulumi.<stack>.yaml`;
`run_cluster(inventory, cluster)` declares a cluster of any (e.g. mutated) inventory, `run_program`
runs any program. All return a
`Registered`: every resource with its type, name, inputs (engine names, camelCase), parent, provider,
dependencies and options, as the engine would have received them.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import datetime as dt
import runpy
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pulumi
import yaml
from pulumi.runtime import mocks

from quartermaster.model import Inventory
from tests.builders import BEFORE_THE_BLOCK
from tests.paths import REPO as ROOT

STACKS = ROOT / "stacks"
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n"


@dataclass(frozen=True)
class Resource:
    """One registration as the engine receives it."""

    urn: str
    type: str
    name: str
    inputs: dict[str, Any]
    parent: str
    provider: str
    dependencies: tuple[str, ...]
    protect: bool
    ignore_changes: tuple[str, ...]
    retain_on_delete: bool


@dataclass
class Registered:
    """All registrations of one program run, with lookups."""

    resources: list[Resource] = field(default_factory=list)
    invokes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Data-source reads (token, arguments), such as `gcp.compute.get_reservation`."""

    def of_type(self, type_: str) -> list[Resource]:
        return [r for r in self.resources if r.type == type_]

    def named(self, type_: str, name: str) -> Resource:
        matches = [r for r in self.of_type(type_) if r.name == name]
        assert len(matches) == 1, f"{len(matches)} {type_} named {name}"
        return matches[0]

    def by_urn(self, urn: str) -> Resource:
        return next(r for r in self.resources if r.urn == urn)

    def parent_of(self, resource: Resource) -> Resource:
        return self.by_urn(resource.parent)


class EchoMocks(pulumi.runtime.Mocks):
    """Every resource gets an id and outputs equal to its inputs (a launch template also a version); every read
    finds what it asks for (its arguments come back) and is recorded."""

    def __init__(self, registered: Registered, reads: dict[str, dict[str, Any]] | None = None) -> None:
        self.registered = registered
        self.reads = reads or {}
        """token -> what a read returns (default: its arguments, as if it found what it asked for)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ == "aws:ec2/launchTemplate:LaunchTemplate":
            outputs["latestVersion"] = 1
        if args.typ == "aws:eks/nodeGroup:NodeGroup":  # what EKS reports: the group's Auto Scaling group
            outputs["resources"] = [{"autoscalingGroups": [{"name": f"eks-{args.name}-asg"}]}]
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        self.registered.invokes.append((args.token, dict(args.args)))
        return self.reads.get(args.token, dict(args.args)), []


_LOOPS: set[asyncio.AbstractEventLoop] = set()
"""The event loops Pulumi's mocks run on: the main thread's and one per worker thread (the mock monitor makes those
and never closes them)."""


@atexit.register
def _close_loops() -> None:
    """Close them before the interpreter finalises them: it may close a loop's self-pipe first and then print a
    traceback from the loop's `__del__` (seen in `python -m tests.pulumi.preview`)."""
    for loop in _LOOPS:
        if not loop.is_running() and not loop.is_closed():
            loop.close()


def _keep_loop() -> None:
    """Add the calling thread's event loop to _LOOPS (a thread the mocks have not used yet has none)."""
    with contextlib.suppress(RuntimeError):
        _LOOPS.add(asyncio.get_event_loop())


class RecordingMonitor(mocks.MockMonitor):
    """The mock engine, also keeping what the real engine uses for parenting, providers and options."""

    def __init__(self, reads: dict[str, dict[str, Any]] | None = None) -> None:
        self.registered = Registered()
        super().__init__(EchoMocks(self.registered, reads))

    def Invoke(self, request: Any) -> Any:
        response = super().Invoke(request)
        _keep_loop()
        return response

    def Call(self, request: Any) -> Any:
        response = super().Call(request)
        _keep_loop()
        return response

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        _keep_loop()
        if request.type != "pulumi:pulumi:Stack":
            inputs = pulumi.runtime.rpc.deserialize_properties(request.object)
            self.registered.resources.append(
                Resource(
                    urn=response.urn,
                    type=request.type,
                    name=request.name,
                    inputs=inputs,
                    parent=request.parent,
                    provider=request.provider,
                    dependencies=tuple(request.dependencies),
                    protect=request.protect,
                    ignore_changes=tuple(request.ignoreChanges),
                    retain_on_delete=request.retainOnDelete,
                )
            )
        return response


def run_program(
    stack: str, config: dict[str, str], program: Callable[[], object], reads: dict[str, dict[str, Any]] | None = None
) -> Registered:
    """Run `program` under the mocks as stack `stack` with `config` (plus a kubeconfig secret); `reads`: what
    data-source reads return, by token."""
    monitor = RecordingMonitor(reads)
    pulumi.runtime.settings.ROOT.set(None)  # a fresh root stack per run
    pulumi.runtime.set_mocks(monitor.mocks, project="quartermaster", stack=stack, preview=False, monitor=monitor)
    pulumi.runtime.set_all_config({**config, "quartermaster:kubeconfig": KUBECONFIG}, ["quartermaster:kubeconfig"])

    def main() -> None:
        program()

    pulumi.runtime.test(main)()
    _keep_loop()
    return monitor.registered


def stack_config(stack: str) -> dict[str, str]:
    """The `config:` block of `stacks/Pulumi.<stack>.yaml`."""
    return yaml.safe_load((STACKS / f"Pulumi.{stack}.yaml").read_text())["config"]


def run_stack(stack: str, now: dt.datetime = BEFORE_THE_BLOCK) -> Registered:
    """Run `stacks/__main__.py` as `pulumi up` would for the stack at `now` (config `quartermaster:now`)."""
    return run_program(
        stack,
        {**stack_config(stack), "quartermaster:now": now.isoformat()},
        lambda: runpy.run_path(str(STACKS / "__main__.py"), run_name="__main__"),
    )


@cache
def registered(stack: str) -> Registered:
    """`run_stack(stack)`, once per test session."""
    return run_stack(stack)


def run_cluster(
    inventory: Inventory,
    cluster: str,
    reads: dict[str, dict[str, Any]] | None = None,
    now: dt.datetime = BEFORE_THE_BLOCK,
) -> Registered:
    """Declare one cluster of `inventory` (which may be a model_copy of the example) as it should be at `now`."""
    from quartermaster.modules.pulumi import declare_cluster

    return run_program(cluster, {}, lambda: declare_cluster(inventory, cluster, KUBECONFIG, now), reads)
