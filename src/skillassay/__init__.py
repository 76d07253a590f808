"""skillassay: measure how well AI coding agents, and the skills given to them, change real codebases.

The pipeline, one package per stage:
definitions -> workspace -> agents -> graders -> scoring -> store -> report.
"""

__version__ = "0.1.0"
