"""Functions handed over to run later: a method passed as a value to a thread, an executor, a partial, a task
queue or a timer is called there, by the runner (``asyncio.to_thread(self.seam.access_grants.create, **kw)``,
``loop.run_in_executor(None, fn, x)``, ``functools.partial(fn, k=v)``, ``executor.submit(fn, *a)``,
``BackgroundTasks.add_task(fn, **kw)``, ``threading.Thread(target=fn, kwargs={...})``, ``setTimeout(fn, ms,
...args)``, ``queue.push(fn)``, ``fn.bind(obj, ...args)``).

Each such hand-over adds a ``Call`` to the module's outline, as if the function were called where it is
handed over, with the arguments the runner passes it (``handed_over`` names the runner). The graders then
see ``self.seam.access_grants.create(...)`` like a direct call: an SDK call, its parameters, an edge of the
call graph. Only name chains of two or more names are handed over this way: a function passed by its bare
name is already an edge of the call graph (``callgraph``: a function handed over runs later).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from skillassay.languages.base import Call, Module, Value


@dataclass(frozen=True)
class Runner:
    """A function that runs the function handed to it later: which argument holds that function."""

    position: int | None  # which positional argument is the function (None: only a keyword)
    skip: int = 0  # positional arguments after it that the runner keeps (setTimeout's delay)
    keyword: str | None = None  # the keyword that may name the function instead (``target=``)


# Runners by the last name of their callee, per language family.
PYTHON_RUNNERS = {
    "to_thread": Runner(0),
    "run_in_executor": Runner(1),
    "run_in_threadpool": Runner(0),
    "run_sync": Runner(0),
    "sync_to_async": Runner(0),
    "partial": Runner(0),
    "submit": Runner(0),
    "add_task": Runner(0),
    "enqueue": Runner(0, keyword="f"),
    "spawn": Runner(0),
    "start_soon": Runner(0),
    "apply_async": Runner(0, keyword="func"),
    "call_soon": Runner(0),
    "call_soon_threadsafe": Runner(0),
    "call_later": Runner(1),
    "call_at": Runner(1),
    "add_done_callback": Runner(0),
    "Thread": Runner(None, keyword="target"),
    "Process": Runner(None, keyword="target"),
    "Timer": Runner(1, keyword="function"),
}
JAVASCRIPT_RUNNERS = {
    "setTimeout": Runner(0, skip=1),
    "setInterval": Runner(0, skip=1),
    "setImmediate": Runner(0),
    "queueMicrotask": Runner(0),
    "nextTick": Runner(0),
    "requestIdleCallback": Runner(0),
    "push": Runner(0),
    "unshift": Runner(0),
    "add": Runner(0),
    "enqueue": Runner(0),
    "schedule": Runner(0),
    "then": Runner(0),
    "all": Runner(None),
}
# Runners that only make something to run later (a partial, a bound function, a thread to start): made and
# thrown away in the same statement, it never runs.
_MAKERS = frozenset({"partial", "bind", "Thread", "Process", "Timer", "sync_to_async"})
# Keywords that configure the runner, not arguments of the function it runs.
_RUNNER_KEYWORDS = frozenset(
    {"target", "args", "kwargs", "kwds", "name", "daemon", "group", "context", "f", "func", "function"}
    | {"job_timeout", "result_ttl", "countdown", "eta", "interval"}
)


def _function_value(value: Value) -> tuple[tuple[str, ...], list[Value]] | None:
    """The name chain a value hands over, with the arguments already bound to it: a chain of two names or
    more, or ``chain.bind(this, ...args)``."""
    if value.kind == "ref" and len(value.chain) >= 2 and not value.chain[-1].endswith("()"):
        return value.chain, []
    if value.kind == "call" and len(value.chain) >= 3 and value.chain[-1] == "bind":
        return value.chain[:-1], list(value.args[1:])
    return None


def _handed(
    call: Call, chain: tuple[str, ...], args: list[Value], kwargs: dict[str, Value], runner: str
) -> Call:
    return replace(
        call,
        chain=chain,
        args=args,
        kwargs=kwargs,
        kw_spreads=list(call.kw_spreads),
        callee_span=None,
        stmt_kind="other",
        kw_spans={},
        handed_over=runner,
        dropped=False,  # the runner calls it
    )


def _python_kwargs(call: Call) -> tuple[list[Value], dict[str, Value]]:
    """What a Python runner passes on: ``args=(...)``/``kwargs={...}`` (threads, timers, apply_async), and
    its own keyword arguments (to_thread, submit, add_task, partial)."""
    args: list[Value] = []
    kwargs = {k: v for k, v in call.kwargs.items() if k not in _RUNNER_KEYWORDS}
    given = call.kwargs.get("args")
    if given is not None and given.kind == "array":
        args = list(given.items)
    for name in ("kwargs", "kwds"):
        table = call.kwargs.get(name)
        if table is not None and table.kind == "object":
            kwargs.update(table.keys)
    return args, kwargs


def _thrown_away(call: Call) -> bool:
    """The call is a whole expression statement: what it returns is not kept."""
    if call.stmt_kind != "expression" or call.stmt is None or call.span is None:
        return False
    return call.stmt[0] == call.span[0] and call.stmt[1] - call.span[1] <= 1  # `;` at most


def add_handed_over(module: Module, runners: dict[str, Runner], python: bool) -> None:
    """Append a call for every function handed over to a runner (and, in JavaScript, every ``.bind``). A
    partial, a bound function or a thread made and thrown away in one statement runs nothing."""
    found: list[Call] = []
    # `.bind(...)` calls by span: handed over on their own unless a runner takes them
    binds: dict[object, Call] = {}
    for call in module.calls:
        name = call.chain[-1].removesuffix("()")
        if name in _MAKERS and _thrown_away(call):
            continue
        if not python and name == "bind" and len(call.chain) >= 3:
            binds[call.span] = _handed(call, call.chain[:-1], list(call.args[1:]), {}, "bind")
            continue
        runner = runners.get(name)
        if runner is None:
            continue
        candidates: list[tuple[int, Value]] = []
        if runner.keyword is not None and runner.keyword in call.kwargs:
            candidates.append((-1, call.kwargs[runner.keyword]))
        if runner.position is not None and runner.position < len(call.args):
            candidates.append((runner.position, call.args[runner.position]))
        elif runner.position is None and not python:  # Promise.all([...]): every element
            candidates += [(-1, v) for a in call.args for v in (a.items if a.kind == "array" else [])]
        for position, value in candidates:
            handed = _function_value(value)
            if handed is None:
                continue
            chain, bound = handed
            if value.kind == "call":
                binds.pop(value.span, None)
            rest = call.args[position + 1 + runner.skip :] if position >= 0 else []
            if python:
                extra_args, kwargs = _python_kwargs(call)
                found.append(_handed(call, chain, [*bound, *rest, *extra_args], kwargs, name))
            else:
                found.append(_handed(call, chain, [*bound, *rest], {}, name))
    module.calls.extend([*found, *binds.values()])
