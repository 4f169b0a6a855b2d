"""Check a stack offline, with no cloud account and no Pulumi CLI: what `pulumi preview` would declare.

    .venv/bin/python -m tests.pulumi.preview STACK [--now DAY]

runs `stacks/__main__.py` under Pulumi's own mocks (`harness.run_stack`: the stack's `stacks/Pulumi.<STACK>.yaml`
config, a stand-in kubeconfig, every cloud read answered with what it asks for) and prints each resource the
program registers, as `type name` (sorted), then how many. `--now` builds the stack for another day than today (config
`quartermaster:now`), as a scheduled `pulumi up` would. The program's own errors (a broken inventory, an unknown
cluster) stop it with their message and exit 1. What it cannot check: credentials, quotas and whether the cloud
accepts the values, which only `pulumi preview` against the cloud does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys

import pulumi

from tests.pulumi.harness import STACKS, run_stack


def main(argv: list[str] | None = None) -> int:
    stacks = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in STACKS.glob("Pulumi.*.yaml"))
    parser = argparse.ArgumentParser(prog="python -m tests.pulumi.preview", description=__doc__.splitlines()[0])
    parser.add_argument("stack", choices=stacks, help="a stack of stacks/ (one per cloud cluster)")
    parser.add_argument("--now", type=dt.date.fromisoformat, help="the day to build the stack for (default: today)")
    args = parser.parse_args(argv)
    day = args.now or dt.datetime.now(dt.UTC).date()
    try:
        registered = run_stack(args.stack, dt.datetime.combine(day, dt.time(), dt.UTC))
    except pulumi.RunError as err:
        print(f"stack {args.stack}: {err}", file=sys.stderr)
        return 1
    for line in sorted(f"{r.type} {r.name}" for r in registered.resources):  # the engine registers them in any order
        print(line)
    print(f"stack {args.stack} as of {day}: {len(registered.resources)} resources, declared under Pulumi's mocks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
