"""No isolation (``--isolation none``), for machines where bubblewrap cannot run: processes run as the
harness's user with the harness's view of the machine and network. Nothing is sealed: the agent can read
the suite and the results, the app can reach anything. Runs record it (run.json ``isolation: none``, a
warning on the report), and the command line warns before a job starts.

What is kept: nothing outlives its run. Each process runs under ``subreaper.py``, a child subreaper that finds
every descendant (``setsid`` and double-forked daemons included) and kills it when the command ends or is
ended.

The phase's forwarders are not needed (the host's loopback is shared) and no egress proxy runs: there is
nothing to enforce it with.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from skillassay.isolation.base import Isolation, Sandbox, Seal
from skillassay.isolation.bridge import reserve_port

NAME = "none"
SUBREAPER = Path(__file__).with_name("subreaper.py")
WARNING = (
    "isolation is off (--isolation none): agents and apps run with your user's access to this machine and "
    "its network; they can read the suite's answers and other runs. Results are marked unsealed."
)


class OpenSandbox(Sandbox):
    isolation = NAME

    def start(self) -> None:
        # no egress proxy: without a private network nothing would have to use it
        self._open = True

    def environment(self, env):
        return dict(env)

    def wrap(self, argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[list[str], list[int]]:
        return [sys.executable, "-I", "-S", str(SUBREAPER), *argv], []

    def expose(self) -> int:
        sock = reserve_port()
        port = sock.getsockname()[1]
        sock.close()
        return port


class NoIsolation(Isolation):
    name = NAME
    description = "nothing sealed (for machines that cannot run bubblewrap)"
    sealed = False

    def open(self, seal: Seal, scratch: Path | None = None) -> Sandbox:
        return OpenSandbox(seal, scratch)
