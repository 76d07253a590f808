"""Starting a suite: the shipped starter (``skillassay init DIR``) and an eval around the user's own app
(``skillassay init --app PATH``)."""

from skillassay.scaffold._app import DetectedRoute, Detection, detect, scaffold_app
from skillassay.scaffold._starter import starter_sources, write_starter

__all__ = ["DetectedRoute", "Detection", "detect", "scaffold_app", "starter_sources", "write_starter"]
