"""Another package installed for a test, as pip leaves one: its files and a ``<name>-<version>.dist-info``
folder whose ``entry_points.txt`` names its plug-ins, on sys.path; skillassay finds them as it finds a
user's."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from skillassay import plugins


def write_distribution(
    site: Path, name: str, files: dict[str, str], entry_points: str, version: str = "1.0"
) -> Path:
    """``files`` (paths relative to ``site``) and the distribution's metadata under ``site``."""
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(entry_points)
    (info / "RECORD").write_text("")
    return site


@contextmanager
def installed(site: Path, monkeypatch: pytest.MonkeyPatch, *registries: Callable[[], None]) -> Iterator[Path]:
    """``site`` on sys.path for the block, the plug-in registries (and ``registries``: ``kinds.refresh``,
    ``stacks.refresh``) forgetting what they found before and after, and the modules imported from ``site``
    forgotten after (the next test's package of the same name is its own)."""
    monkeypatch.syspath_prepend(str(site))
    for forget in (plugins.refresh, *registries):
        forget()
    try:
        yield site
    finally:
        monkeypatch.undo()
        for name, module in list(sys.modules.items()):
            if Path(getattr(module, "__file__", None) or "/").is_relative_to(site):
                del sys.modules[name]
        for forget in (plugins.refresh, *registries):
            forget()
