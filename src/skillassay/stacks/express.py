"""Express on Node."""

from __future__ import annotations

from skillassay.stacks.node import NodeStack


class ExpressStack(NodeStack):
    name = "express"
    order = 11
    package = "express"
    init_name = "express"
