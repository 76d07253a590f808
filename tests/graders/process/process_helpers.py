"""Helpers for the process-grader tests (imported by their conftest and tests): small pristine/modified trees,
definitions and transcripts built in place, so each test shows exactly what changed."""

from __future__ import annotations

from pathlib import Path

from skillassay.definitions.agent_eval import Criterion, ForbiddenBehaviour, QualityGate
from skillassay.definitions.models import EvalDefinition
from skillassay.transcripts import Message, ToolCall, Transcript


def write_tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def make_definition(
    tmp_path: Path, *, criteria=(), forbidden=(), gates=(), eval_id: str = "demo", threshold: float = 0.8
) -> EvalDefinition:
    source = tmp_path / "suite" / "agent-evals" / f"{eval_id}.toml"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.touch()
    fixture = tmp_path / "suite" / "fixtures" / eval_id
    return EvalDefinition(
        id=eval_id,
        title="demo",
        format="native",
        source=source,
        suite_dir=tmp_path / "suite",
        fixture_dir=fixture,
        app_dir=fixture / "app",
        prompt="Do the thing.",
        stack="python",
        language="python",
        pass_threshold=threshold,
        criteria=[c if isinstance(c, Criterion) else Criterion(**c) for c in criteria],
        forbidden_behaviour=[
            f if isinstance(f, ForbiddenBehaviour) else ForbiddenBehaviour(**f) for f in forbidden
        ],
        quality_requirements=[g if isinstance(g, QualityGate) else QualityGate(**g) for g in gates],
    )


def shell(command: str, exit_code: int | None = 0, denied: bool = False, n: int = 0) -> ToolCall:
    return ToolCall(
        id=f"c{n}-{abs(hash(command)) % 10**6}",
        name="Bash",
        kind="shell",
        command=command,
        exit_code=exit_code,
        denied=denied,
        input={"command": command},
    )


def edit(path: str, n: int = 0, content: str = "", kind: str = "edit") -> ToolCall:
    return ToolCall(
        id=f"e{n}-{path}",
        name="Write" if kind == "write" else "Edit",
        kind=kind,
        paths=[path],
        input={"file_path": path, "content": content},
    )


def transcript(
    *calls: ToolCall, final: str | None = None, denials: list[ToolCall] | None = None
) -> Transcript:
    return Transcript(
        agent="test",
        tool_calls=list(calls),
        final_message=final,
        messages=[Message(role="assistant", text=final)] if final else [],
        permission_denials=denials or [],
    )
