"""A run's policy (docs/sealing.md): what each of its phases reaches, and what a user may grant it.

The network policy is per phase: the agent reaches its model endpoint and the package registries of the
fixture's stack (through skillassay's allow-listing proxy); the app's install and build reach the registries;
the app at run time reaches only its own run's Seam endpoint; hidden tests and gates reach nothing. The
registries are a stack default, overridable per eval (``registries`` in the definition) and extended with
``--allow-host``; ``--mount`` and ``--allow-host`` are refused when they would uncover the answers or this
machine.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import skillassay
from skillassay.definitions.models import EvalDefinition, stack_registries
from skillassay.errors import SkillassayError
from skillassay.isolation.base import Mount, Policy
from skillassay.paths import cache_dir


def protected_roots(definition: EvalDefinition, results_root: Path) -> dict[str, str]:
    """Roots a sealed process must never reach (none is mounted; the audit flags an attempt on any of
    them).
    """
    roots: dict[str, str] = {}
    for path in (definition.suite_dir, definition.source.parent, definition.fixture_dir):
        roots.setdefault(str(Path(path).resolve()), "suite")
    roots.setdefault(str(Path(results_root).resolve()), "results")
    roots.setdefault(str(Path(tempfile.gettempdir()) / "skillassay-*"), "other runs")
    roots.setdefault(str(Path.home()), "operator home")
    return roots


# ----------------------------------------------------------------------------- what a user may grant
def _answers(definition: EvalDefinition) -> list[tuple[str, Path]]:
    """The folders of one eval that hold what the agent must never see (its golden, controls, keys, tests)."""
    paths = [definition.suite_dir, definition.source.parent, definition.fixture_dir]
    paths += [p for p in (definition.golden_dir, definition.rubric_file) if p is not None]
    return [(f"the suite ({definition.id})", Path(p)) for p in paths if str(p) != "/dev/null"]


def _harness() -> list[tuple[str, Path]]:
    """skillassay's own files: the installed package and the virtual environment it runs from."""
    own = [("skillassay's installed package", Path(skillassay.__file__).parent)]
    if sys.prefix != sys.base_prefix:
        own.append(("skillassay's virtual environment", Path(sys.prefix)))
    return own


def mount_problem(
    mounts: Iterable[Path], *, suite: Path | None, results: Path, definitions: Sequence[EvalDefinition] = ()
) -> str | None:
    """Why a ``--mount`` would uncover what a run must not see, as one line naming the mount and the overlap;
    None when every mount is clear. A mount inside, or holding, the suite, an eval's answers, the results,
    skillassay's cache or its own files is refused; so is one holding the operator's home or other runs'
    folders. Symlinks are resolved on both sides."""
    both: list[tuple[str, Path]] = [
        ("the results folder", results),
        ("skillassay's cache", cache_dir()),
        *_harness(),
    ]
    if suite is not None:
        both.insert(0, ("the suite", suite))
    for d in definitions:
        both += _answers(d)
    holding = [("the operator's home", Path.home()), ("other runs' folders", Path(tempfile.gettempdir()))]
    for mount in mounts:
        target = Path(mount).resolve()
        for what, root in both + holding:
            root = root.resolve()
            if target == root or root.is_relative_to(target):
                return f"--mount {mount}: it holds {what} ({root})"
            if target.is_relative_to(root) and (what, root) in both:
                return f"--mount {mount}: it is inside {what} ({root})"
        if target.parent == Path(tempfile.gettempdir()).resolve() and target.name.startswith("skillassay-"):
            return f"--mount {mount}: it is a run's folder of skillassay's ({target})"
    return None


_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


def _own_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Loopback, unspecified, link-local (cloud metadata), or an address of this machine (it can bind it)."""
    if ip.is_loopback or ip.is_unspecified or ip.is_link_local:
        return True
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((str(ip), 0))
        except OSError:
            return False
    return True


def allow_host_problem(hosts: Iterable[str]) -> str | None:
    """Why an ``--allow-host`` would open the way to this machine (its loopback, its addresses, so the
    harness's own services: the model proxy, the emulator, the bridges), as one line; None when every entry is
    clear."""
    names = {socket.gethostname().lower(), socket.getfqdn().lower(), *_LOCAL_NAMES}
    for entry in hosts:
        host = _host_of(entry.strip().lower())
        if any(fnmatch.fnmatchcase(n, host) for n in names) or host.endswith(".localhost"):
            return f"--allow-host {entry}: it names this machine (the harness's own services listen here)"
        for ip in _addresses(host):
            if _own_address(ip):
                return (
                    f"--allow-host {entry}: it reaches {ip}: this machine, its loopback or a link-local "
                    f"address (the harness's own services listen there)"
                )
    return None


def _host_of(entry: str) -> str:
    """The host of ``host``, ``host:port``, ``[v6]:port`` or a bare IPv6 address."""
    if entry.startswith("["):
        return entry[1:].partition("]")[0]
    if entry.count(":") == 1:
        entry = entry.partition(":")[0]
    return entry.rstrip(".")


def _addresses(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses ``host`` is or resolves to now (none for a glob or a name that does not resolve)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    if "*" in host or "?" in host or "[" in host:
        return []
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


def grant_problem(
    mounts: Sequence[Path], allow_hosts: Iterable[str], *, suite: Path | None, results: Path
) -> str | None:
    """``run``'s check of ``--mount`` and ``--allow-host`` before a job starts (exit 2 with this line). The
    suite's definitions are read only when there are mounts (a suite that does not load is reported later)."""
    problem = mount_problem(mounts, suite=suite, results=results) or allow_host_problem(allow_hosts)
    if problem or not mounts or suite is None:
        return problem
    from skillassay.definitions import load_suite
    from skillassay.errors import DefinitionError

    try:  # an eval's fixture or golden may live outside the suite's folder
        definitions = load_suite(suite)
    except (DefinitionError, SkillassayError, OSError):
        return None
    return mount_problem(mounts, suite=suite, results=results, definitions=definitions)


def run_policy(
    isolation: str,
    definition: EvalDefinition,
    results_root: Path,
    allow_hosts: Sequence[str] = (),
    mounts: Sequence[Path] = (),
) -> Policy:
    problem = mount_problem(
        mounts, suite=None, results=results_root, definitions=[definition]
    ) or allow_host_problem(allow_hosts)
    if problem:  # a job recorded before the check (its --resume): refused here, a harness error of the run
        raise SkillassayError(problem)
    return Policy(
        isolation=isolation,
        registries=list(dict.fromkeys([*stack_registries(definition), *allow_hosts])),
        mounts=[Mount(src=Path(p).resolve(), dest=Path(p).absolute()) for p in mounts],
        protected=protected_roots(definition, results_root),
    )
