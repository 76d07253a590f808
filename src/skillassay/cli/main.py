"""The ``skillassay`` command line.

Every command of the harness is listed here, with the module that defines it; a wing's commands (the Seam
wing: ``rubric``, ``sandbox``, ``seam-emulator``) come from the ``skillassay.commands`` entry points and are
listed after ``check``, by name. A command's module is imported only when its command runs (or when ``--help``
lists the commands), so one command never pays for another's imports. A command module exports ``commands``, a
``typer.Typer`` holding its commands; it never imports this module.

A command that runs in CI loops and shell pipelines (``skillassay rubric``, once per graded app) may register
a typer-free path for plain arguments (``skillassay.commands.fast``, read without ``importlib.metadata``);
anything else (``--help``, a mistake) goes through typer as every command does.
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False  # typing itself is not imported: a fast command's whole process is a few ms
if TYPE_CHECKING:
    from typing import NoReturn

# command -> the module exporting it, in the order ``--help`` lists them (the wings' commands after
# WINGS_AFTER)
OWN_COMMANDS: dict[str, str] = {
    "run": "skillassay.cli.run",
    "regrade": "skillassay.cli.run",
    "runs": "skillassay.cli.results",
    "compare": "skillassay.cli.results",
    "report": "skillassay.cli.results",
    "serve": "skillassay.cli.results",
    "export": "skillassay.cli.results",
    "init": "skillassay.cli.init",
    "list": "skillassay.cli.definitions",
    "check": "skillassay.cli.definitions",
    "model-server": "skillassay.cli.model_server",
    "doctor": "skillassay.cli.doctor",
    "install-agents": "skillassay.cli.doctor",
}

WINGS_AFTER = "check"
COMMANDS_GROUP = "skillassay.commands"
FAST_GROUP = "skillassay.commands.fast"

HELP = "Measure how well AI coding agents, and the skills given to them, change real codebases."


def commands() -> dict[str, str]:
    """Every command -> its module: the harness's own and the wings' (entry points), in ``--help`` order."""
    from skillassay import plugins

    wings = {
        name: value.partition(":")[0]
        for name, value in sorted(plugins.quick(COMMANDS_GROUP).items())
        if name not in OWN_COMMANDS
    }
    out: dict[str, str] = {}
    for name, module in OWN_COMMANDS.items():
        out[name] = module
        if name == WINGS_AFTER:
            out.update(wings)
    return out


def _build_app():
    import importlib

    import typer
    from typer.core import TyperGroup

    class LazyGroup(TyperGroup):
        """Commands come from ``commands()``; a command's module is imported when the command is looked up."""

        def list_commands(self, ctx):
            return list(every)

        def get_command(self, ctx, cmd_name):
            found = self.commands.get(cmd_name)
            if found is not None or cmd_name not in every:
                return found
            module = importlib.import_module(every[cmd_name])
            group = typer.main.get_group(module.commands)
            for name, command in group.commands.items():
                if name in every:
                    self.commands.setdefault(name, _tidy_help(command))
            return self.commands.get(cmd_name)

    every = commands()
    _flags_without_type()

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
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        """Measure how well AI coding agents, and the skills given to them, change real codebases."""

    return app


def _tidy_help(command):
    """Whole sentences in help: a docstring's line breaks are joined (rich markup keeps them, so descriptions
    broke mid-sentence at the terminal's edge), and the command list shows the first sentence."""
    if command.help:
        paragraphs = [" ".join(p.split()) for p in command.help.split("\n\n")]
        command.help = "\n\n".join(p for p in paragraphs if p)
        if command.short_help is None:
            command.short_help = _first_sentence(paragraphs[0])
    return command


def _first_sentence(text: str) -> str:
    import re

    match = re.search(r"(?<=[.:])\s+(?=[A-Z`(])", text)
    return text[: match.start()] if match else text


def _flags_without_type() -> None:
    """A flag takes no value: its help row shows none (typer writes ``<bool>`` beside every flag)."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "flags_without_type", False):
        return

    def display_type_rich(self, ctx):
        return None if self.is_flag else shown(self, ctx)

    display_type_rich.flags_without_type = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_app: list = []  # the typer app, once built (functools.cache would load functools on a fast path)


def get_app():
    if not _app:
        _app.append(_build_app())
    return _app[0]


# PEP 562: ``app`` is built (importing typer) on first use; ``COMMANDS`` read then
def __getattr__(name: str):
    if name == "app":
        return get_app()
    if name == "COMMANDS":
        return commands()
    raise AttributeError(name)


def _fast(args: list[str]) -> int | None:
    """A wing's typer-free path for ``args`` (None: none, or the arguments are not plain)."""
    if not args or args[0] in OWN_COMMANDS or args[0].startswith("-"):
        return None
    from skillassay import entry_point_text  # not plugins: its errors import dataclasses, pathlib, typing

    value = entry_point_text.quick(FAST_GROUP).get(args[0])
    if value is None:
        return None
    code: int | None = entry_point_text.load_quick(value)(args[1:])
    return code


def _exit_now(code: int) -> NoReturn:
    """End a process that ran a fast command: its output flushed, without the interpreter's teardown (freeing
    every module and object: about 8 ms of a 60 ms ``skillassay rubric``, and the cycle collector's passes
    while it ran about 5 ms more; ``benchmarks/cli_startup.py``). Nothing on a fast path registers an
    ``atexit`` handler or leaves a file open for writing."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: the interpreter's own exit reports it
        sys.exit(code)
    os._exit(code)


def _run_app(args: list[str]) -> int:
    """The typer app without its own error display: a usage error is one ``error:`` line (cli/usage.py),
    exit 2.
    """
    import typer

    try:  # typer >= 0.25 carries its own click and does not re-export its errors (only BadParameter)
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover - older typer, on click itself
        from click import exceptions as click_errors  # type: ignore[no-redef]

    try:
        code = get_app()(args=args, prog_name="skillassay", standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:  # the help, printed already by rich (or here, as text)
        if exc.format_message().strip():
            print(exc.format_message())
        return 0
    except click_errors.UsageError as exc:
        from skillassay.cli.usage import one_line  # imported only on a mistake

        print(one_line(exc), file=sys.stderr)
        return 2
    except typer.Abort:
        print("Aborted.", file=sys.stderr)
        return 1
    return code if isinstance(code, int) else 0


def main(argv: list[str] | None = None) -> None:
    """The command line; ``argv`` None: this process's own arguments, the process ending with the command."""
    args = sys.argv[1:] if argv is None else argv
    if argv is None:
        gc.disable()  # see _exit_now: a fast command's process is too short-lived to gather cycles
    try:
        fast = _fast(args)
        if fast is not None:
            if argv is None:
                _exit_now(fast)
            sys.exit(fast)
        gc.enable()
        code = _run_app(args)
        if code:
            sys.exit(code)
    except Exception as exc:  # noqa: BLE001 - only skillassay's own errors are shown; the rest re-raised
        _report(exc)


def _report(exc: Exception) -> NoReturn:
    """A command that did not handle its own error: file + field (a definition's), one line, exit 2."""
    from skillassay.errors import DefinitionError, SkillassayError  # imported on an error only

    if isinstance(exc, DefinitionError):
        for p in exc.problems:
            print(f"error: {p}", file=sys.stderr)
        sys.exit(exc.exit_code)
    if isinstance(exc, SkillassayError):
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    raise exc
