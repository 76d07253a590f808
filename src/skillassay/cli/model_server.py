"""CLI command: ``model-server``, the scripted model for offline agent runs."""

from __future__ import annotations

from pathlib import Path

import typer

commands = typer.Typer(rich_markup_mode="rich", add_completion=False)  # registered in cli/main.py


@commands.command("model-server")
def model_server(
    scripts: list[Path] = typer.Argument(..., help="YAML or JSON script files (format: docs/agents.md)."),
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: a free one)."),
    log: Path | None = typer.Option(
        None, "--log", help="Write every request received to this JSONL file on exit."
    ),
) -> None:
    """Play the model for Claude Code and Codex from a script (Anthropic Messages and OpenAI Responses,
    streaming), so agents and graders can be tested without spending tokens. Prints each script's base URL;
    pass it to a run with
    --model-upstream URL (the run's model proxy then sends the agent's calls there). Stop with Ctrl-C."""
    import yaml
    from pydantic import ValidationError

    from skillassay.definitions.jsonfile import pointer
    from skillassay.errors import SkillassayError
    from skillassay.testing.model_server import serve_scripts
    from skillassay.testing.script import load_scripts

    for p in scripts:
        if not p.is_file():
            raise SkillassayError(f"{p}: no such script file")
        try:
            load_scripts(p)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise SkillassayError(f"{p} at {pointer(first['loc'])}: {first['msg']}") from None
        except ValueError as exc:
            raise SkillassayError(f"{p}: {exc}") from None
        except yaml.YAMLError as exc:  # one line: what and where, not the parser's multi-line report
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            raise SkillassayError(
                f"{p}: invalid YAML{where}: {getattr(exc, 'problem', None) or exc}"
            ) from None
    try:
        serve_scripts(scripts, port, log)
    except ValueError as exc:  # a script that does not parse
        raise SkillassayError(str(exc)) from None
    except OSError as exc:  # a port in use
        raise SkillassayError(f"cannot listen on 127.0.0.1:{port}: {exc}") from None
