"""The ``skillassay`` command line.

Every command is listed here, with the module that defines it; that module is imported only when its command runs
(or when ``--help`` lists the commands), so one command never pays for another's imports. A command module exports
``commands``, a ``typer.Typer`` holding its commands; it never imports this module.

``skillassay rubric`` runs in CI loops and shell pipelines once per graded app, so it skips typer altogether when its
arguments are plain (``cli/fast.py``); anything else (``--help``, a mistake) goes through typer as every command does.
"""

from __future__ import annotations

import sys

# command -> the module exporting it, in the order ``--help`` lists them
COMMANDS: dict[str, str] = {
    "run": "skillassay.cli.run",
    "regrade": "skillassay.cli.run",
    "runs": "skillassay.cli.results",
    "compare": "skillassay.cli.results",
    "report": "skillassay.cli.results",
    "serve": "skillassay.cli.results",
    "init": "skillassay.cli.init",
    "list": "skillassay.cli.definitions",
    "check": "skillassay.cli.definitions",
    "rubric": "skillassay.cli.rubric",
    "sandbox": "skillassay.cli.sandbox",
    "seam-emulator": "skillassay.cli.seam_emulator",
    "model-server": "skillassay.cli.model_server",
    "doctor": "skillassay.cli.doctor",
    "install-agents": "skillassay.cli.doctor",
}

HELP = "Measure how well AI coding agents, and the skills given to them, change real codebases."


def _build_app():
    import importlib

    import typer
    from typer.core import TyperGroup

    class LazyGroup(TyperGroup):
        """Commands come from ``COMMANDS``; a command's module is imported when the command is looked up."""

        def list_commands(self, ctx):
            return list(COMMANDS)

        def get_command(self, ctx, cmd_name):
            found = self.commands.get(cmd_name)
            if found is not None or cmd_name not in COMMANDS:
                return found
            module = importlib.import_module(COMMANDS[cmd_name])
            group = typer.main.get_group(module.commands)
            for name, command in group.commands.items():
                if name in COMMANDS:
                    self.commands.setdefault(name, command)
            return self.commands.get(cmd_name)

    app = typer.Typer(
        name="skillassay",
        cls=LazyGroup,
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode="rich",
        pretty_exceptions_enable=False,
    )

    def _version(value: bool) -> None:
        if value:
            from skillassay import __version__

            typer.echo(f"skillassay {__version__}")
            raise typer.Exit()

    @app.callback()
    def _root(
        version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                     help="Print the version and exit."),
    ) -> None:
        """Measure how well AI coding agents, and the skills given to them, change real codebases."""

    return app


_app = None


def get_app():
    global _app
    if _app is None:
        _app = _build_app()
    return _app


def __getattr__(name: str):  # PEP 562: ``app`` is built (importing typer) on first use
    if name == "app":
        return get_app()
    raise AttributeError(name)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    from skillassay.errors import DefinitionError, SkillassayError

    try:
        if args[:1] == ["rubric"]:
            from skillassay.cli.fast import rubric

            code = rubric(args[1:])
            if code is not None:
                sys.exit(code)
        get_app()(args=args, prog_name="skillassay")
    except DefinitionError as exc:  # a command that did not handle it itself: still file + field, exit 2
        for p in exc.problems:
            print(f"error: {p}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except SkillassayError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
