"""The child of a black-box call (docs/agent-evals.md, "Black-box hidden tests"): run sealed in the app's own
environment, as ``python -I -B -c <this file's text>``, never imported by skillassay. Standard library only.

It reads one request (JSON) on stdin before any of the app's code runs, moves its stdout to a private
descriptor and points descriptor 1 at stderr (what the app prints is log, never a result), performs the
call, and writes one line on the private descriptor: the request's secret followed by the JSON of what
happened (``returned``: the value; ``raised``: the exception's class and message; ``unjsonable``: a value
JSON cannot carry). Then it leaves with ``os._exit(0)``: no ``atexit`` hook of the app's runs after the
result."""

import importlib
import json
import os
import sys
import types


def _target(request):
    if request["kind"] == "run":  # a scenario: a function of the eval's, in a module sent as text
        module = types.ModuleType("skillassay_scenario")
        module.__file__ = request["filename"]
        sys.modules[module.__name__] = module
        exec(compile(request["source"], request["filename"], "exec"), module.__dict__)  # noqa: S102 - the eval's scenario, in the sealed child
        obj, path = module, request["function"]
    else:  # "package.module:attr.path"
        name, _, path = request["target"].partition(":")
        obj = importlib.import_module(name)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _describe(exc):
    try:
        message = str(exc)[:4000]
    except BaseException:  # noqa: BLE001 - an exception whose str() raises is still an exception
        message = "(its message could not be read)"
    kind = type(exc)
    return {
        "type": kind.__name__,
        "module": str(getattr(kind, "__module__", "")),
        "bases": [c.__name__ for c in kind.__mro__],
        "message": message,
    }


def main():
    request = json.loads(sys.stdin.buffer.read())
    secret = request.pop("secret").encode()
    channel = os.dup(1)
    os.dup2(2, 1)
    sys.path[:0] = request["pythonpath"]
    try:
        message = {"returned": _target(request)(*request["args"], **request["kwargs"])}
    except BaseException as exc:  # noqa: BLE001 - SystemExit and the like are what the app did too
        message = {"raised": _describe(exc)}
    try:
        body = json.dumps(message, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        body = json.dumps({"unjsonable": f"{type(exc).__name__}: {str(exc)[:400]}"})
    data = secret + body.encode() + b"\n"
    while data:
        data = data[os.write(channel, data) :]
    os._exit(0)


if __name__ == "__main__":
    main()
