"""One base for agents that are command-line programs (Claude Code, Codex, and the next one).

A CLI agent module declares what differs: the binary and its npm package, where its private config lives, the
environment switches it needs, how it is given the model endpoint, the command line, which end record means
"done", and which error texts mean what. The base does the rest the same way for every CLI:

- **Finding the pinned CLI.** ``$SKILLASSAY_<X>_BIN`` (or a binary given to the constructor) when the user
  configured one; else the CLI installed from ``node/package.json`` in this checkout
  (``node/node_modules/.bin``); else the one in skillassay's cache (``$SKILLASSAY_CACHE_DIR`` or
  ``~/.cache/skillassay``, ``node/node_modules/.bin``). Never whatever happens to be on ``PATH``: a run must
  say which CLI it measured. The version comes from the installed package (and is compared with the pin of the
  package.json beside it); a configured binary is asked ``--version``.
- **An explicit environment.** Nothing of the host's environment is copied but ``PATH`` and the locale: a
  private ``HOME`` and ``XDG_*`` folders, the CLI's switches, ``ctx.env`` without any provider key, and the
  model endpoint (the job's proxy and this run's token). A provider key never reaches an agent.
- **Running it** in its own process group under the time limit, output to files, secrets scrubbed before
  parsing.
- **Typed endings.** No end record -> ``agent_error`` (crashed). A failed end whose error text matches the
  CLI's patterns -> the typed kind; a provider kind (429, 5xx, overloaded, no answer) makes it
  ``provider_error``, an operator's kind (key refused, quota) ``harness_error``, anything else on a non-zero
  exit ``agent_error``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from skillassay.agents._common import Skill, install_skill, load_skill, package_mount, run_jsonl_cli
from skillassay.agents.base import Agent, AgentContext, AgentResult, ErrorKind
from skillassay.agents.stream import StreamWatch, trigger_stop
from skillassay.isolation import Mount
from skillassay.paths import cache_dir
from skillassay.services.model_proxy import ModelEndpoint
from skillassay.transcripts import Transcript
from skillassay.triggers import SkillTarget
from skillassay.usage import RETRYABLE, ProviderError, classify

# the repository's node tools, when skillassay runs from a checkout
CHECKOUT_NODE = Path(__file__).resolve().parents[3] / "node"

# Names an agent never inherits, whoever sets them: the provider keys (the proxy holds them) and the variables
# that would send a CLI somewhere other than its endpoint, or into the operator's own configuration.
PROVIDER_KEY_NAMES = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "CODEX_API_KEY",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    }
)
ROUTING_NAMES = frozenset(
    {
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
        "SKILLASSAY_MODEL_BASE_URL",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "CLAUDECODE",
        "CLAUDE_CODE_ENTRYPOINT",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
    }
)
# What an agent takes from the host's environment: where programs are, and the locale. Nothing else.
INHERITED = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ")
# ctx.env key: the CLI's own model-request retries (tests keep them low to stay fast)
MAX_RETRIES = "SKILLASSAY_MAX_RETRIES"


def agent_env(
    home: Path, extra: Mapping[str, str] | None = None, host: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment every agent starts from: PATH and the locale of the host, a private home, and ``extra``
    without provider keys or routing variables."""
    host = os.environ if host is None else host
    env = {k: host[k] for k in INHERITED if host.get(k)}
    env.setdefault("PATH", os.defpath)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
    )
    env.update(
        {k: v for k, v in dict(extra or {}).items() if k not in PROVIDER_KEY_NAMES and k not in ROUTING_NAMES}
    )
    return env


# -- finding the CLI -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Located:
    path: str
    source: str  # "configured" | "checkout" | "cache"
    # the node folder it was installed into (holding package.json and node_modules)
    node_dir: Path | None = None


def _installed_version(node_dir: Path, package: str) -> str | None:
    try:
        data = json.loads((node_dir / "node_modules" / package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(data.get("version") or "") or None


def _pinned_version(node_dir: Path, package: str) -> str | None:
    try:
        data = json.loads((node_dir / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pin = (data.get("dependencies") or {}).get(package)
    return str(pin) if pin else None


_PROBED: dict[tuple[str, float], str | None] = {}


@contextmanager
def probe_home() -> Iterator[dict[str, str]]:
    """The environment of the harness's own questions to an agent CLI (``--version``, ``--help``): a private,
    empty home, removed afterwards. A CLI writes there even to answer them (Codex makes
    ``~/.codex/tmp/arg0-linux/``): a made-up path such as ``/nonexistent`` would be created, as root, and
    shared by every probe on the machine."""
    with tempfile.TemporaryDirectory(prefix="skillassay-probe-home-") as home:
        yield agent_env(Path(home))


def probe_version(binary: str, timeout: float = 30) -> str | None:
    """``binary --version`` (the first x.y.z in it), asked once per binary file."""
    resolved = shutil.which(binary) or binary
    try:
        key = (resolved, Path(resolved).resolve().stat().st_mtime)
    except OSError:
        return None
    if key not in _PROBED:
        try:
            with probe_home() as env:
                out = subprocess.run(
                    [resolved, "--version"],
                    check=False,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    stdin=subprocess.DEVNULL,
                    env=env,
                )
            found = re.search(r"\d+\.\d+\.\d+\S*", out.stdout)
            _PROBED[key] = found.group(0) if found else (out.stdout.strip() or None)
        except (OSError, subprocess.SubprocessError):
            _PROBED[key] = None
    return _PROBED[key]


# -- typed endings -------------------------------------------------------------------------------------------

# kinds that are the operator's set-up, not the agent's and not passing trouble: never retried, never scored
OPERATOR_KINDS = frozenset({"auth_failed", "quota_exceeded"})
_STATUS = re.compile(
    r"(?:\bstatus:?\s*|API Error:?\s*(?:[A-Za-z ]*\()?|\bHTTP\s*)([45]\d\d)\b", re.IGNORECASE
)


def status_in(text: str) -> int | None:
    found = _STATUS.search(text)
    return int(found.group(1)) if found else None


class CliAgent(Agent):
    """Subclass, fill in the class attributes, implement ``command``, ``parse`` and ``ended``; override the
    other hooks only where the CLI differs."""

    binary_name: ClassVar[str]  # "claude"
    package: ClassVar[str]  # the npm package that ships it, as pinned in node/package.json
    bin_env: ClassVar[str]  # the variable by which a user names another binary explicitly
    # env var -> folder under the private home (e.g. CODEX_HOME: .codex)
    config_dirs: ClassVar[dict[str, str]] = {}
    # fixed environment the CLI needs (telemetry off, no updates, ...)
    switches: ClassVar[dict[str, str]] = {}
    skills_dir: ClassVar[str | None] = None  # under the private home: where the CLI discovers personal skills
    # (regex over the CLI's error text, kind), tried in order before the HTTP status in the text and the
    # generic provider wording; patterns are only ever read from the CLI's own error reports, never from the
    # model's words
    error_patterns: ClassVar[tuple[tuple[str, ErrorKind], ...]] = ()
    raw_name: ClassVar[str] = "transcript.raw.jsonl"

    def __init__(self, binary: str | None = None):
        self._binary = binary

    # -- the binary ------------------------------------------------------------------------------------------
    def locate(self) -> Located | None:
        explicit = self._binary or os.environ.get(self.bin_env)
        if explicit:
            # named on purpose by the user: a path, or a name looked up on PATH
            found = explicit if Path(explicit).is_file() else shutil.which(explicit)
            return Located(found, "configured") if found else None
        for source, node_dir in (("checkout", CHECKOUT_NODE), ("cache", cache_dir() / "node")):
            candidate = node_dir / "node_modules" / ".bin" / self.binary_name
            if candidate.exists():
                return Located(str(candidate), source, node_dir)
        return None

    @property
    def binary(self) -> str | None:
        found = self.locate()
        return found.path if found else None

    def not_found(self) -> str:
        return (
            f"{self.binary_name} CLI not found: install the pinned one (`npm ci --prefix node` in a "
            "checkout, or "
            f"`npm install --prefix {cache_dir() / 'node'} {self.package}`), or name a binary with "
            f"${self.bin_env}; "
            f"a {self.binary_name} on PATH is not used unless named"
        )

    def version(self) -> str | None:
        found = self.locate()
        if found is None:
            return None
        if found.node_dir is not None:
            return _installed_version(found.node_dir, self.package) or probe_version(found.path)
        return probe_version(found.path)

    def version_note(self, found: Located) -> str | None:
        """A note when the installed CLI is not the pinned one (the run still says which it measured)."""
        if found.node_dir is None:
            return f"{self.binary_name}: a configured binary ({found.path}), not the pinned CLI"
        pin, have = (
            _pinned_version(found.node_dir, self.package),
            _installed_version(found.node_dir, self.package),
        )
        if pin and have and pin.lstrip("=") != have:
            return f"{self.package} {have} is installed, {pin} is pinned in {found.node_dir / 'package.json'}"
        return None

    def preflight(self, env, command=None):
        if self.locate() is None:
            return self.not_found()
        return None

    def mounts(self, ctx: AgentContext | None = None) -> list[Mount]:
        """The node_modules folder the pinned CLI was installed into (or a configured binary's package)."""
        found = self.locate()
        if found is None:
            return []
        if found.node_dir is not None:
            return [
                Mount(src=(found.node_dir / "node_modules").resolve(), dest=found.node_dir / "node_modules")
            ]
        return package_mount(found.path)

    # -- hooks -----------------------------------------------------------------------------------------------
    @abstractmethod
    def command(self, ctx: AgentContext, prompt: str, skill: Skill | None, notes: list[str]) -> list[str]:
        """The arguments after the binary. ``skill`` is given in system-prompt mode (native skills are
        installed); how the run deviated from the plan goes into ``notes``."""

    def model_env(self, ctx: AgentContext, endpoint: ModelEndpoint) -> dict[str, str]:
        """How the CLI is pointed at its endpoint (base URL, token as its key)."""
        return {}

    def prepare(self, ctx: AgentContext, env: dict[str, str]) -> None:
        """Write the CLI's config files into the private home before it starts."""

    @abstractmethod
    def parse(
        self, records: list[dict], ctx: AgentContext, times: list[float | None] | None = None
    ) -> Transcript:
        """The CLI's records -> the common transcript; ``times[i]``: when record i appeared (seconds after the
        start), which becomes each tool call's ``at_s``."""

    def live_parser(self, ctx: AgentContext) -> Callable[[list[dict], list[float | None]], Transcript]:
        """The transcript so far while the CLI runs (for a trigger run's stop rule); by default ``parse``."""
        return lambda records, times: self.parse(records, ctx, times)

    def skill_target(self, ctx: AgentContext, skill: Skill, installed: Path) -> SkillTarget:
        """Where this run's CLI discovers the installed skill, in every spelling a command may use."""
        env = {var: str(ctx.home / folder) for var, folder in self.config_dirs.items()}
        location = f"~/{self.skills_dir}/{skill.name}"
        for var, folder in self.config_dirs.items():
            if self.skills_dir and (self.skills_dir + "/").startswith(folder.rstrip("/") + "/"):
                location = f"${var}{self.skills_dir[len(folder.rstrip('/')) :]}/{skill.name}"
        return SkillTarget(
            name=skill.name, dirs=[str(installed)], home=str(ctx.home), env=env, location=location
        )

    @abstractmethod
    def ended(self, records: list[dict]) -> bool:
        """The CLI wrote its end record (it finished, successfully or not)."""

    def error_text(self, records: list[dict], transcript: Transcript) -> str | None:
        """The CLI's own report of a failed end (None when it did not report one)."""
        return transcript.final_message if transcript.is_error else None

    def failed_status(self, records: list[dict]) -> int | None:
        """The HTTP status the CLI says its model call failed with, when it reports one as a field."""
        return None

    def finish(self, ctx: AgentContext, result: AgentResult, env: dict[str, str]) -> None:
        """Anything to collect after the run (a session file, ...)."""

    # -- the run ---------------------------------------------------------------------------------------------
    def environment(self, ctx: AgentContext) -> dict[str, str]:
        env = agent_env(ctx.home, ctx.env)
        env.update(self.switches)
        for var, folder in self.config_dirs.items():
            env[var] = str(ctx.home / folder)
        if ctx.model_endpoint is not None:
            env.update(self.model_env(ctx, ctx.model_endpoint))
        return env

    def run(self, ctx: AgentContext) -> AgentResult:
        ctx.output_dir.mkdir(parents=True, exist_ok=True)
        ctx.home.mkdir(parents=True, exist_ok=True)
        empty = Transcript(agent=self.name, model=ctx.model)
        found = self.locate()
        if found is None:
            return AgentResult(
                status="harness_error", error_kind="cli_not_found", transcript=empty, error=self.not_found()
            )
        if ctx.model_endpoint is None and self.model_api is not None:
            return AgentResult(
                status="harness_error",
                error_kind="no_model_endpoint",
                transcript=empty,
                error=f"{self.name} was given no model endpoint (the job's model proxy)",
            )
        for folder in self.config_dirs.values():
            (ctx.home / folder).mkdir(parents=True, exist_ok=True)

        notes = [n for n in [self.version_note(found)] if n]
        prompt, skill, target = ctx.prompt, None, None
        if ctx.skill_dir is not None:
            loaded = load_skill(ctx.skill_dir)
            if ctx.skill_mode == "native" and self.skills_dir:
                installed = install_skill(loaded, ctx.home / self.skills_dir)
                target = self.skill_target(ctx, loaded, installed)
            else:
                skill = loaded
        env = self.environment(ctx)
        self.prepare(ctx, env)
        version = self.version()
        raw = ctx.output_dir / self.raw_name
        stderr = ctx.output_dir / "agent.stderr.log"
        argv = [found.path, *self.command(ctx, prompt, skill, notes)]
        # the output is watched as it is written: lines get their time; a trigger run ends once its decision
        # is made
        stop = None
        if ctx.budget is not None and target is not None:
            stop = trigger_stop(self.live_parser(ctx), target, ctx.budget)
        watch = StreamWatch(raw, stop)
        outcome, records, scrub = run_jsonl_cli(argv, ctx, env, raw, stderr, watch)
        if outcome.error:
            kind: ErrorKind = "sandbox_failed" if outcome.sandbox_failed else "cli_not_found"
            return AgentResult(
                status="harness_error",
                error_kind=kind,
                transcript=empty,
                error=outcome.error,
                cli_source=found.source,
                notes=notes,
            )
        transcript = self.parse(records, ctx, watch.times)
        transcript.cli_version = transcript.cli_version or version
        if transcript.model is None:
            transcript.model = ctx.model

        result = AgentResult(
            status="completed",
            exit_code=outcome.exit_code,
            duration_s=outcome.duration_s,
            cli_version=transcript.cli_version,
            cli_source=found.source,
            transcript=transcript,
            raw_transcript=raw,
            stdout=raw,
            stderr=stderr,
            notes=notes,
            skill_target=target,
            stopped=outcome.stopped,
        )
        if outcome.exit_code is not None and outcome.exit_code < 0:
            result.signal, result.exit_code = -outcome.exit_code, None
        self._classify(result, outcome.timed_out, ctx, records, stderr)
        self.finish(ctx, result, env)
        # nothing stored or returned may hold a secret the agent's environment held
        if result.error:
            result.error = scrub(result.error)
        return result

    def _classify(
        self, result: AgentResult, timed_out: bool, ctx: AgentContext, records: list[dict], stderr: Path
    ) -> None:
        t = result.transcript
        if timed_out:
            result.status, result.error = "timed_out", f"killed after {ctx.timeout:g} s"
            return
        if result.stopped:
            # the harness ended it on purpose: the trigger decision was made (no end record, no exit code)
            result.notes.append(
                f"stopped by the harness once the trigger decision was made ({result.stopped})"
            )
            return
        if not self.ended(records):
            result.status, result.error_kind = "agent_error", "crashed"
            how = f"killed by signal {result.signal}" if result.signal else f"exited {result.exit_code}"
            result.error = tail(stderr) or f"{how} without an end record"
            return
        text = self.error_text(records, t)
        kind = self.error_kind(text, self.failed_status(records)) if text is not None else None
        if kind is not None:
            result.error_kind = kind
            result.error = text
            if kind in RETRYABLE or kind in OPERATOR_KINDS:
                result.provider_errors.append(
                    ProviderError(
                        kind=kind,
                        http_status=self.failed_status(records) or status_in(text or ""),
                        message=(text or "")[:500],
                    )
                )
            if kind in RETRYABLE:
                result.status = "provider_error"
                return
            if kind in OPERATOR_KINDS:
                # the model never worked for this run: the operator's key or account, not the agent (rerun it)
                result.status = "harness_error"
                return
        if result.exit_code not in (0, None) or result.signal:
            result.status = "agent_error"
            result.error_kind = result.error_kind or "exit_nonzero"
            result.error = result.error or (text or f"exited {result.exit_code}")

    def error_kind(self, text: str, status: int | None = None) -> ErrorKind | None:
        """The type of a failed end, from the CLI's error text (and the status it reported, if any)."""
        for pattern, kind in self.error_patterns:
            if re.search(pattern, text, re.IGNORECASE):
                return kind
        status = status or status_in(text)
        if status is not None:
            return classify(status, text)
        return None


def tail(path: Path, chars: int = 2000) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-chars:].strip()
    except OSError:
        return ""
