"""What a run records about where it ran: resources moved one agent benchmark by 6 points, so they are
kept.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def machine_info() -> dict:
    mem_kb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
                break
    except OSError:
        pass
    node = None
    if shutil.which("node"):
        try:
            node = subprocess.run(
                ["node", "--version"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            node = None
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1) if mem_kb else None,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "node": node,
    }


def skill_hash(skill_dir: Path | None) -> str | None:
    """sha256 over the skill folder's files (relative path and content), so two runs name the same skill
    alike.
    """
    if skill_dir is None:
        return None
    h = hashlib.sha256()
    root = Path(skill_dir)
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for f in files:
        rel = f.name if root.is_file() else f.relative_to(root).as_posix()
        h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()
