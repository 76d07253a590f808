"""Flask on Python."""

from __future__ import annotations

from skillassay.stacks.python import PythonStack


class FlaskStack(PythonStack):
    name = "flask"
    order = 21
    package = "flask"
    init_name = "flask"
    default_port = 5000
