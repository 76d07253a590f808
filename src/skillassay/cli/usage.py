"""Usage errors as one line: ``error: run: no option --jbos; did you mean --jobs?``, exit 2.

typer/click print a boxed panel with a usage line and the validation library's wording (``Input should be
greater than or equal to 1``); ``cli/main.py`` runs the app without its own error handling and prints this
instead."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

try:  # typer >= 0.25 carries its own click and does not re-export its errors (only BadParameter)
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - older typer, on click itself
    from click import exceptions as click_errors  # type: ignore[no-redef]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the closest choice, or nothing."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _where(exc: click_errors.UsageError) -> str:
    """``run: `` for a subcommand's error, nothing for the top level."""
    ctx = exc.ctx
    if ctx is None or ctx.parent is None:
        return ""
    return f"{ctx.info_name}: "


def _param_name(exc: click_errors.BadParameter) -> str:
    if exc.param_hint is not None:
        hint = exc.param_hint
        return " / ".join(hint) if isinstance(hint, (list, tuple)) else str(hint)
    param = exc.param
    if param is None:
        return "a value"
    opts = [o for o in getattr(param, "opts", []) if o.startswith("--")] or list(getattr(param, "opts", []))
    if opts and getattr(param, "param_type_name", "") == "option":
        return opts[0]
    return (param.name or "a value").upper()


# pydantic's error types (what typer validates with) -> plain words
_PLAIN = {
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be more than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "bool_parsing": "must be true or false",
    "literal_error": "must be one of {expected}",
    "enum": "must be one of {expected}",
    "missing": "is required",
}


def _plain(exc: click_errors.BadParameter) -> str | None:
    """The validation error in plain words, when it came from pydantic (typer validates with it); else
    None.
    """
    errors = getattr(exc.__cause__, "errors", None)
    if not callable(errors):
        return None
    try:
        first = errors()[0]
        return _PLAIN[first["type"]].format(**(first.get("ctx") or {}))
    except (IndexError, KeyError, TypeError, ValueError):
        return None


def one_line(exc: click_errors.UsageError) -> str:
    """The usage error as one ``error:`` line, with a "did you mean" where one is close."""
    where = _where(exc)
    if isinstance(exc, click_errors.NoSuchOption):
        known = [o for o in getattr(exc.ctx.command, "params", []) for o in o.opts] if exc.ctx else []
        hint = (
            did_you_mean(exc.option_name, known)
            if known
            else (f" (did you mean {min(exc.possibilities)}?)" if exc.possibilities else "")
        )
        return f"error: {where}no option {exc.option_name}{hint}"
    if isinstance(exc, click_errors.MissingParameter):
        return f"error: {where}{_param_name(exc)} is required"
    if isinstance(exc, click_errors.BadParameter):
        plain = _plain(exc)
        name = _param_name(exc)
        return f"error: {where}{name} {plain}" if plain else f"error: {where}{name}: {exc.message}"
    message = exc.format_message().strip().splitlines()[0] if exc.format_message().strip() else "bad usage"
    if message.startswith("No such command"):
        name = message.split("'")[1] if message.count("'") >= 2 else ""
        group = exc.ctx.command if exc.ctx else None
        names = group.list_commands(exc.ctx) if group is not None and hasattr(group, "list_commands") else []
        return f"error: no command {name!r}{did_you_mean(name, names)}; skillassay --help lists them"
    return f"error: {where}{message[0].lower()}{message[1:]}"
