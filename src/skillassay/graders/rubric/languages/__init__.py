"""One module per language; importing this package registers each module's file extensions."""

from skillassay.graders.rubric.languages import python, typescript  # noqa: F401
