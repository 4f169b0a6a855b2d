"""The error a component raises for contradicting arguments.

The Python SDK has no `ResourceError` (Node's `pulumi.ResourceError(message, resource)`); this is its
equivalent: a `RunError` (the language host prints it without a traceback) bound to the component,
whose type and name lead the message.
"""

from __future__ import annotations

import pulumi


class ResourceError(pulumi.RunError):
    """Contradicting arguments of `resource`; the message names both arguments and the way out."""

    def __init__(self, message: str, resource: pulumi.Resource) -> None:
        self.resource = resource
        super().__init__(f"{resource.pulumi_resource_type} {resource.pulumi_resource_name}: {message}")
