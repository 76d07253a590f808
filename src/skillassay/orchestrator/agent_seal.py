"""The agent phase's seal (docs/sealing.md): what the agent sees and reaches, and its run inside that
sandbox.
"""

from __future__ import annotations

from pathlib import Path

from skillassay.agents import arm
from skillassay.agents.arm import ArmRecord
from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.isolation import Endpoint, Policy, Seal, get_isolation
from skillassay.isolation.audit import transcript_touches
from skillassay.isolation.record import Sealing
from skillassay.isolation.runtimes import runtimes


def model_endpoints(ctx: AgentContext) -> list[Endpoint]:
    """The agent's model endpoint (the job's model proxy), bridged into the sandbox: at the same port on
    127.0.0.1 inside, wherever the proxy listens (a Ray worker reaches the head's proxy through the
    bridge)."""
    endpoint = getattr(ctx, "model_endpoint", None)
    if endpoint is None:
        return []
    return [Endpoint.from_url("model", endpoint.base_url)]


def agent_seal(policy: Policy, agent: Agent, ctx: AgentContext) -> Seal:
    """The agent phase: its workspace and private home writable; its CLI, the language runtimes and what the
    user granted readable; its model endpoint and the registries reachable; the syscall audit on."""
    endpoints = model_endpoints(ctx)
    mounts, path = runtimes(venv=True)
    workspace, home = Path(ctx.workspace), Path(ctx.home)
    # the folder holding both, when that is all it holds (a trial's attempt folder): the workspace is then not
    # a mount point inside, so an agent may remove it as it could outside (rm -rf {workspace} is scored, not
    # refused)
    parent = workspace.parent
    shared = parent == home.parent and {p.name for p in parent.iterdir()} <= {workspace.name, home.name}
    return Seal(
        phase="agent",
        writable=[parent] if shared else [workspace, home],
        home=Path(ctx.home),
        own=[Path(ctx.workspace).parent],  # the run's scratch folder (the workspace's and home's parent)
        readable=[*agent.mounts(ctx), *mounts, *policy.mounts],
        path=path,
        endpoints=endpoints,
        registries=list(policy.registries),
        quiet=[*getattr(agent, "probes", []), *_harness_sources()],
        audit=True,
    )


def _harness_sources() -> list[str]:
    """skillassay's own sources, when installed from a checkout (the venv's .pth file names them): the runtime
    looks them up and finds nothing inside the sandbox."""
    src = Path(__file__).resolve().parents[2]
    return [str(src), f"{src}/*"] if (src / "skillassay").is_dir() else []


def run_agent(
    agent: Agent,
    ctx: AgentContext,
    policy: Policy,
    scratch: Path,
    sealing: Sealing,
    *,
    skill_name: str | None,
    skill_dir: Path | None,
    variant: str,
    mode: str,
) -> tuple[AgentResult, ArmRecord | None]:
    """Run the agent in its sandbox; return its result and the arm's record (None for an agent that started no
    process). What it could see is taken just before its first process starts."""
    seal = agent_seal(policy, agent, ctx)
    seen: dict[str, arm.ArmSnapshot] = {}
    with policy.open(seal, scratch) as box:
        sealed = get_isolation(policy.isolation).sealed

        def look() -> None:
            seen["arm"] = arm.snapshot(Path(ctx.workspace), Path(ctx.home), sealed=sealed)

        box.on_first_start = look
        ctx.sandbox = box
        # the proxy as the sandbox reaches it (the same URL for a loopback one)
        if ctx.model_endpoint is not None:
            ctx.model_endpoint = ctx.model_endpoint.model_copy(
                update={"base_url": box.url_inside(ctx.model_endpoint.base_url)}
            )
        try:
            result = agent.run(ctx)
        finally:
            ctx.sandbox = None
    sealing.add(box)
    sealing.transcript = transcript_touches(result.transcript.tool_calls, ctx.workspace, box.bounds())
    t = result.transcript
    record = arm.check(
        seen.get("arm"),
        skill_name=skill_name,
        skill_dir=skill_dir,
        variant=variant,
        mode=mode,
        reported=list(t.skills_available) if t.skills_source else None,
        reported_source=t.skills_source,
    )
    return result, (record if "arm" in seen else None)
