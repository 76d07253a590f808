"""The reference agent: makes the workspace equal to the fixture's golden solution (``test_golden/``).

It is the demo agent and the pipeline's own check: graders should give it full marks.
"""

from __future__ import annotations

import filecmp
import shutil
import time
from pathlib import Path

from skillassay.agents.base import Agent, AgentContext, AgentResult
from skillassay.transcripts import Message, ToolCall, Transcript
from skillassay.workspace.changes import walk

NAME = "reference"


def _files(root: Path) -> set[str]:
    """What can be part of a change (``workspace.changes``' skip-list): only that is copied from the golden
    tree or deleted from the workspace."""
    return set(walk(root))


def apply_golden(golden: Path, workspace: Path) -> list[ToolCall]:
    """Copy ``golden`` over ``workspace`` and delete what golden lacks; one synthetic call per changed
    file.
    """
    calls: list[ToolCall] = []
    wanted, present = _files(golden), _files(workspace)
    for rel in sorted(wanted):
        src, dst = golden / rel, workspace / rel
        if rel in present and filecmp.cmp(src, dst, shallow=False):
            continue
        is_new = rel not in present
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.is_symlink() or dst.exists():
            dst.unlink()
        shutil.copy2(src, dst, follow_symlinks=False)
        calls.append(
            ToolCall(
                id=f"ref{len(calls)}",
                name="Write" if is_new else "Edit",
                kind="write" if is_new else "edit",
                input={"file_path": rel},
                paths=[rel],
                result="ok",
            )
        )
    for rel in sorted(present - wanted):
        (workspace / rel).unlink()
        calls.append(
            ToolCall(
                id=f"ref{len(calls)}",
                name="Delete",
                kind="edit",
                input={"file_path": rel},
                paths=[rel],
                result="ok",
            )
        )
        parent = (workspace / rel).parent
        while parent != workspace and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    return calls


class ReferenceAgent(Agent):
    name = NAME
    description = "applies the fixture's golden solution (test_golden/); the pipeline's own check"

    def run(self, ctx: AgentContext) -> AgentResult:
        empty = Transcript(agent=NAME)
        if ctx.golden_dir is None or not Path(ctx.golden_dir).is_dir():
            return AgentResult(
                status="harness_error",
                transcript=empty,
                error=f"the reference agent needs the fixture's golden folder (got {ctx.golden_dir})",
            )
        started = time.monotonic()
        calls = apply_golden(Path(ctx.golden_dir), Path(ctx.workspace))
        duration = time.monotonic() - started
        summary = f"Applied the golden solution: {len(calls)} file(s) changed."
        transcript = Transcript(
            agent=NAME,
            messages=[Message(role="user", text=ctx.prompt), Message(role="assistant", text=summary)],
            tool_calls=calls,
            final_message=summary,
            turns=1,
            duration_ms=int(duration * 1000),
            exit_status="success",
        )
        return AgentResult(status="completed", exit_code=0, duration_s=duration, transcript=transcript)
