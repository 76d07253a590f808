"""Next.js on Node. Checked before Express: a Next.js app may depend on express too (a custom server). Its
build (Turbopack) refuses a ``node_modules`` linked from outside the project."""

from __future__ import annotations

from skillassay.stacks.node import NodeStack


class NextjsStack(NodeStack):
    name = "nextjs"
    order = 10
    package = "next"
    init_name = "next"
    refuses_linked_dependencies = True
