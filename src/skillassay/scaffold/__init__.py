"""Starting a suite: the shipped starter (``skillassay init DIR``) and an eval around the user's own app
(``skillassay init --app PATH``: the eval's files are its kind's, an ``AppScaffold`` registered under
``skillassay.scaffolds``)."""

from skillassay.scaffold._app import (
    GROUP,
    ROUTE_PARAM,
    AppScaffold,
    DetectedRoute,
    Detection,
    app_scaffold,
    detect,
    scaffold_app,
)
from skillassay.scaffold._starter import starter_sources, write_starter

__all__ = [
    "GROUP",
    "ROUTE_PARAM",
    "AppScaffold",
    "DetectedRoute",
    "Detection",
    "app_scaffold",
    "detect",
    "scaffold_app",
    "starter_sources",
    "write_starter",
]
