"""Mutants of a Seam eval's golden, derived from its syntax tree (the outline ``languages/`` makes of every
file).

The golden is read as the rubric reads it (``graders.rubric.project.Project``): its Seam calls, the call
graph, and which calls each test endpoint's handler reaches. From that, one mutant per class of
``classes.SEAM_CLASSES``:

- the create call (the expected path's signature call reached from the create endpoint) commented out, moved
  into a string, into a nested function nothing calls, behind ``if False`` / ``if (false)``; one of its
  required parameters dropped; its method swapped for another integration path's;
- the cancel (update) endpoint's path to Seam cut at the deepest call only that endpoint reaches;
- every SDK call rewritten as a raw HTTP request to its route, through a small helper taking the route and the
  body.

Nothing here knows a fixture: a golden in another shape gets the same classes (or a note saying why one could
not be derived).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from skillassay import stacks
from skillassay.definitions.models import EvalDefinition
from skillassay.kinds.mutants import Edit, Mutant, Switch
from skillassay.languages.callgraph import FnRef, Reach
from skillassay.languages.routes import endpoint_routes, mounted_routes
from skillassay.orchestrator.mutants.edits import OLD, ternary
from skillassay.seam.eval import SeamEval, seam_eval
from skillassay.seam.rubric.checks import PATH_SIGNATURES, canonical_path, handler_refs
from skillassay.seam.rubric.grade import endpoints_of
from skillassay.seam.rubric.project import Project, SdkCall, camel
from skillassay.stacks import SourceSyntax
from skillassay.workspace.changes import compare_trees

# The call each path's wrong-path mutant makes instead of its signature call.
WRONG_METHOD = {
    "reservation_automations": "access_grants.create",
    "access_grants": "customers.push_data",
    "access_codes": "access_grants.create",
}
PY_HELPER = "_skillassay_seam"
TS_HELPER = "skillassaySeam"
RB_HELPER = "_skillassay_seam"


def python_helper(key_var: str) -> str:
    return f'''

def {PY_HELPER}(path, body):
    """Seam's HTTP API without its SDK: POST the parameters as JSON, answer like the SDK (attributes)."""
    import json
    import os
    import types
    import urllib.request

    base = os.environ.get("SEAM_ENDPOINT") or "https://connect.getseam.com"
    request = urllib.request.Request(
        base.rstrip("/") + path,
        data=json.dumps(body, default=str).encode(),
        method="POST",
        headers={{"Authorization": "Bearer " + os.environ.get("{key_var}", ""), "Content-Type": "application/json"}},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read() or b"{{}}")

    def wrap(value):
        if isinstance(value, dict):
            return types.SimpleNamespace(**{{k: wrap(v) for k, v in value.items()}})
        if isinstance(value, list):
            return [wrap(v) for v in value]
        return value

    for name, value in answer.items():
        if name != "ok":
            return wrap(value)
    return None
'''  # noqa: E501 - code inside a string, kept as written


def ruby_helper(key_var: str) -> str:
    return f'''
# Seam's HTTP API without its gem: POST the parameters as JSON, answer like the gem (attributes)
def {RB_HELPER}(path, body)
  require "json"
  require "net/http"
  require "ostruct"
  base = (ENV["SEAM_ENDPOINT"] || "https://connect.getseam.com").chomp("/")
  headers = {{ "Authorization" => "Bearer #{{ENV.fetch("{key_var}", "")}}", "Content-Type" => "application/json" }}
  response = Net::HTTP.post(URI(base + path), JSON.generate(body), headers)
  answer = JSON.parse(response.body.to_s.empty? ? "{{}}" : response.body, object_class: OpenStruct)
  answer.each_pair {{ |name, value| return value unless name.to_s == "ok" }}
  nil
end
'''  # noqa: E501 - code inside a string, kept as written


def ts_helper(key_var: str, typed: bool) -> str:
    t = (lambda s: s) if typed else (lambda s: "")
    return f"""

async function {TS_HELPER}(path{t(": string")}, body{t(": unknown")}){t(": Promise<any>")} {{
  const base = (process.env.SEAM_ENDPOINT || 'https://connect.getseam.com').replace(/\\/+$/, '');
  const response = await fetch(base + path, {{
    method: 'POST',
    headers: {{ authorization: `Bearer ${{process.env.{key_var} ?? ''}}`, 'content-type': 'application/json' }},
    body: JSON.stringify(body ?? {{}}),
  }});
  const answer{t(": any")} = await response.json().catch(() => ({{}}));
  if (!response.ok) throw new Error(`Seam ${{path}}: HTTP ${{response.status}}`);
  const key = Object.keys(answer).find((k) => k !== 'ok');
  return key === undefined ? undefined : answer[key];
}}
"""  # noqa: E501 - code inside a string, kept as written


@dataclass
class Golden:
    """The golden, read once: the project, the source of each file, what each phase's endpoint reaches."""

    definition: SeamEval
    project: Project
    root: Path
    phase_reach: dict[str, Reach] = field(default_factory=dict)
    phase_calls: dict[str, list[SdkCall]] = field(default_factory=dict)
    _sources: dict[str, bytes] = field(default_factory=dict)

    def source(self, rel: str) -> bytes:
        if rel not in self._sources:
            self._sources[rel] = (self.root / rel).read_bytes()
        return self._sources[rel]

    def text(self, rel: str, span: tuple[int, int]) -> str:
        return self.source(rel)[span[0] : span[1]].decode("utf-8")

    def syntax(self, rel: str) -> SourceSyntax:
        """How ``rel`` is written (its stack's comments and literals: ``stacks.syntax_for``)."""
        return stacks.syntax_for(rel)

    def language(self, rel: str) -> str:
        return self.syntax(rel).language

    def typed(self, rel: str) -> bool:
        return rel.endswith((".ts", ".tsx", ".mts", ".cts"))

    def indent_at(self, rel: str, offset: int) -> str:
        source = self.source(rel)
        line_start = source.rfind(b"\n", 0, offset) + 1
        prefix = source[line_start:offset].decode("utf-8")
        return prefix if not prefix.strip() else " " * len(prefix)

    def line_start(self, rel: str, offset: int) -> int:
        return self.source(rel).rfind(b"\n", 0, offset) + 1


def read_golden(any_definition: EvalDefinition) -> Golden:
    definition = seam_eval(any_definition)
    assert definition.golden_dir is not None
    change = compare_trees(definition.app_dir, definition.golden_dir)
    key = definition.answer_key
    project = Project.load(
        definition.golden_dir,
        change.written,
        unchanged=change.unchanged,
        names=[n for fns in (key.expected_placements.values() if key else []) for n in fns],
    )
    golden = Golden(definition, project, Path(definition.golden_dir))
    routes = mounted_routes(project.modules.values())
    for phase, (method, path) in endpoints_of(definition.config).items():
        starts: list[FnRef] = []
        for mounted in endpoint_routes(routes, method, path):
            starts.extend(handler_refs(project, mounted.module, mounted.route.handlers))
        reach = project.reach(starts)
        golden.phase_reach[phase] = reach
        wanted = set(key.expected_calls.get(phase, [])) if key else set()
        golden.phase_calls[phase] = [c for c in project.reached_calls(reach) if c.name in wanted]
    return golden


# ----------------------------------------------------------------------------- edits of one call
def _comment_lines(text: str, indent: str, syntax: SourceSyntax) -> str:
    mark = syntax.comment
    lines = text.split("\n")
    out = [mark + lines[0]] + [
        indent + mark + line[len(indent) :] if line.startswith(indent) else indent + mark + line.lstrip()
        for line in lines[1:]
    ]
    return "\n".join(out)


def _reindent(text: str, extra: str) -> str:
    return text.replace("\n", "\n" + extra)


def _none(g: Golden, rel: str) -> str:
    if g.language(rel) == "python":
        return "None"
    if g.language(rel) == "ruby":
        return "nil"
    if g.language(rel) == "php":
        return "(null)"  # parenthesised: the call's value may be read on (`(null)['access_grant']` parses)
    return "(undefined as any)" if g.typed(rel) else "undefined"


def _untyped_call(g: Golden, sdk: SdkCall) -> str:
    """The call with its receiver cast to `any`: `(seam as any).accessCodes.create({...})`."""
    call = sdk.call
    rel = sdk.module.path
    assert call.span is not None
    text = g.text(rel, call.span)
    if call.callee_span is None:
        return text
    callee = g.text(rel, call.callee_span)
    compact = "".join(callee.split())
    tail = sdk.written if sdk.kind == "sdk" else ""
    if not tail or not compact.endswith("." + tail):
        return text
    receiver = compact[: -len(tail) - 1]
    return f"({receiver} as any).{tail}" + g.text(rel, (call.callee_span[1], call.span[1]))


def _false(g: Golden, rel: str) -> str:
    """A constant-false condition. TypeScript checks a branch behind a literal `false` as unreachable code,
    where narrowing is lost (`unit` is possibly undefined): `false as boolean` is the same constant and
    still builds."""
    return "(false as boolean)" if g.typed(rel) else "false"


def _needs_pass(source: bytes) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return True
    return False


def _statement_or_call(g: Golden, sdk: SdkCall) -> tuple[str, tuple[int, int], bool]:
    """(file, span, is_statement): the whole statement for a bare call statement, else the call itself."""
    call = sdk.call
    if call.stmt_kind == "expression" and call.stmt is not None:
        return sdk.module.path, call.stmt, True
    assert call.span is not None
    return sdk.module.path, call.span, False


def neutralise(g: Golden, sdk: SdkCall, how: str, mutant_id: str) -> tuple[list[Edit], list[Switch]] | None:
    """Edits that stop one call from happening, written the way ``how`` says ("commented_out", "in_string",
    "uncalled_function", "false_condition"); and its run-time switch (the call becomes None/undefined)."""
    call = sdk.call
    if call.span is None:
        return None
    rel, span, statement = _statement_or_call(g, sdk)
    language = g.language(rel)
    indent = g.indent_at(rel, span[0])
    text = g.text(rel, span)
    call_text = g.text(rel, call.span)
    edits: list[Edit] = []
    if how == "commented_out":
        if statement:
            new = _comment_lines(text, indent, g.syntax(rel))
            edits.append(Edit(rel, span[0], span[1], new))
        else:
            at = g.line_start(rel, call.stmt[0] if call.stmt else span[0])
            stmt_indent = g.indent_at(rel, call.stmt[0]) if call.stmt else indent
            edits.append(
                Edit(rel, at, at, stmt_indent + _comment_lines(call_text, stmt_indent, g.syntax(rel)) + "\n")
            )
            edits.append(Edit(rel, span[0], span[1], _none(g, rel)))
    elif how == "in_string":
        literal = g.syntax(rel).quote(text)
        if language == "ruby":  # "#{...}", "#@x" would interpolate: run the call from inside the string
            literal = literal.replace("#", "\\#")
        elif language == "php":  # "$x->y", "{$x->f()}" would interpolate (and run) in a double-quoted string
            literal = literal.replace("$", "\\$")
        if statement:
            edits.append(Edit(rel, span[0], span[1], literal + g.syntax(rel).statement_end))
        else:
            typed = " as any" if g.typed(rel) else ""
            edits.append(Edit(rel, span[0], span[1], f"({literal}{typed})" if typed else literal))
    elif how == "uncalled_function":
        if g.typed(rel):
            # TypeScript does not carry narrowing into a closure (`resource.lockDeviceId` is possibly
            # undefined there): the moved call's receiver is cast, so the mutant still builds
            loose = _untyped_call(g, sdk)
            text = text.replace(call_text, loose, 1) if statement else text
            call_text = loose
        if statement:
            if language == "python":
                keyword = "async def" if "await " in text else "def"
                new = f"{keyword} _skillassay_unused():\n{indent}    {_reindent(text, '    ')}"
            elif language == "ruby":  # a method defined where the call was, never called
                new = f"def _skillassay_unused\n{indent}  {_reindent(text, '  ')}\n{indent}end"
            elif language == "php":  # a closure bound to a local, never called (a named function nested in a
                # method would be declared again, fatally, by the method's second run)
                new = (
                    f"$skillassayUnused = function () {{\n{indent}    {_reindent(text, '    ')}\n{indent}}};"
                )
            else:
                new = (
                    f"const skillassayUnused = async () => {{\n{indent}  {_reindent(text, '  ')}\n{indent}}};"
                )
            edits.append(Edit(rel, span[0], span[1], new))
        else:
            stmt_start = call.stmt[0] if call.stmt else span[0]
            stmt_indent = g.indent_at(rel, stmt_start)
            if language == "python":
                nested = (
                    f"def _skillassay_unused():\n{stmt_indent}    {_reindent(call_text, '    ')}\n"
                    f"{stmt_indent}"
                )
            elif language == "ruby":
                nested = (
                    f"def _skillassay_unused\n{stmt_indent}  {_reindent(call_text, '  ')}\n"
                    f"{stmt_indent}end\n{stmt_indent}"
                )
            elif language == "php":
                nested = (
                    f"$skillassayUnused = function () {{\n{stmt_indent}    {_reindent(call_text, '    ')};\n"
                    f"{stmt_indent}}};\n{stmt_indent}"
                )
            else:
                nested = (
                    f"const skillassayUnused = async () => {{\n{stmt_indent}  await "
                    f"{_reindent(call_text, '  ')};"
                    f"\n{stmt_indent}}};\n{stmt_indent}"
                )
            edits.append(Edit(rel, stmt_start, stmt_start, nested))
            edits.append(Edit(rel, span[0], span[1], _none(g, rel)))
    elif how == "false_condition":
        if statement:
            if language == "python":
                new = f"if False:\n{indent}    {_reindent(text, '    ')}"
            elif language == "ruby":
                new = f"if false\n{indent}  {_reindent(text, '  ')}\n{indent}end"
            else:
                new = f"if ({_false(g, rel)}) {{\n{indent}  {_reindent(text, '  ')}\n{indent}}}"
            edits.append(Edit(rel, span[0], span[1], new))
        else:
            if language == "python":
                edits.append(Edit(rel, span[0], span[1], f"({call_text} if False else None)"))
            elif language == "ruby":
                edits.append(Edit(rel, span[0], span[1], f"(false ? ({call_text}) : nil)"))
            else:
                edits.append(
                    Edit(rel, span[0], span[1], f"({_false(g, rel)} ? {call_text} : {_none(g, rel)})")
                )
    else:
        raise ValueError(how)
    if language == "python" and how == "commented_out" and statement:
        from skillassay.orchestrator.mutants.edits import apply

        if _needs_pass(apply(g.source(rel), edits)):
            edits = [
                Edit(rel, span[0], span[1], _comment_lines(text, indent, g.syntax(rel)) + f"\n{indent}pass")
            ]
    nothing = {"python": "None", "ruby": "nil", "php": "null"}.get(language, "undefined")
    switch = Switch(rel, call.span[0], call.span[1], ternary(language, nothing))
    return edits, [switch]


# ----------------------------------------------------------------------------- the classes
def _create_call(g: Golden) -> SdkCall | None:
    api = canonical_path(g.definition.api_path or "")
    signature = PATH_SIGNATURES.get(api or "", "")
    calls = g.phase_calls.get("create", [])
    chosen = [c for c in calls if c.name == signature] or calls
    chosen = chosen or [c for c in g.project.sdk_calls if c.name == signature]
    return chosen[0] if chosen else None


def _cut_phase(g: Golden, phase: str, mutant_id: str) -> tuple[list[Edit], list[Switch], list[str]] | None:
    """Cut every path from the phase's endpoint handler to its Seam calls, at the deepest call that only this
    phase's endpoint reaches (so the other phases keep working)."""
    reach = g.phase_reach.get(phase)
    calls = g.phase_calls.get(phase, [])
    if reach is None or not calls:
        return None
    others = [r for p, r in g.phase_reach.items() if p != phase]
    edits: list[Edit] = []
    switches: list[Switch] = []
    where: list[str] = []
    done: set[int] = set()
    for sdk in calls:
        path = reach.path(sdk.scope)
        target = None
        if not any(sdk.scope in r for r in others):
            target = (sdk.module, sdk.call)
        else:
            for i in range(len(path) - 1, 0, -1):
                edge = reach.edge.get(path[i])
                caller = path[i - 1]
                if edge is not None and edge.call is not None and not any(caller in r for r in others):
                    target = (g.project.modules[caller.module], edge.call)
                    break
        if target is None:
            return None
        module, call = target
        if id(call) in done:
            continue
        done.add(id(call))
        stand_in = SdkCall(name=sdk.name, written=".".join(call.chain), module=module, call=call)
        got = neutralise(g, stand_in, "commented_out", mutant_id)
        if got is None:
            return None
        edits += got[0]
        switches += got[1]
        where.append(f"{module.path}:{call.line}")
    return edits, switches, where


def _holders(g: Golden, ctx, key: str, depth: int = 0) -> list:
    """The object literals (value, module) that hold ``key`` among the values ``ctx`` may hold."""
    out: list = []
    if depth > 6:
        return out
    for value, module, scope in g.project.resolve(ctx):
        if value.kind != "object":
            continue
        if key in value.keys and key in value.key_spans:
            out.append((value, module))
        for spread in value.spreads:
            out.extend(_holders(g, (spread, module, scope), key, depth + 1))
    return out


def _delete_entry(source: bytes, span: tuple[int, int]) -> tuple[int, int]:
    """An entry's span widened to take one comma with it (the following one, else the preceding one)."""
    start, end = span
    after = end
    while after < len(source) and source[after : after + 1] in b" \t\r\n":
        after += 1
    if source[after : after + 1] == b",":
        after += 1
        while after < len(source) and source[after : after + 1] in b" \t":
            after += 1
        return start, after
    before = start
    while before > 0 and source[before - 1 : before] in b" \t\r\n":
        before -= 1
    if source[before - 1 : before] == b",":
        return before - 1, end
    return start, end


def _param_dropped(g: Golden, sdk: SdkCall, mutant_id: str) -> tuple[list[Edit], list[Switch], str] | None:
    method = sdk.method
    required = g.definition.answer_key.required_parameters.get(method, []) if g.definition.answer_key else []
    names = [p.split(".")[0].split("[")[0] for p in required]
    accepted = g.project.surface_params(sdk)
    names = [n + "s" if accepted and n not in accepted and n + "s" in accepted else n for n in names]
    try:
        from skillassay.seam.emulator.spec import load_spec

        spec_required = set(load_spec().required_parameters("/" + sdk.name.replace(".", "/")))
    except Exception:  # noqa: BLE001 - without the spec, any answer-key parameter will do
        spec_required = set()
    ordered = [n for n in names if n in spec_required] + [n for n in names if n not in spec_required]
    for name in dict.fromkeys(ordered):
        rel = sdk.module.path
        language = g.language(rel)
        if language in ("python", "ruby") and sdk.kind == "sdk" and name in sdk.call.kw_spans:
            span = sdk.call.kw_spans[name]
            cut = _delete_entry(g.source(rel), span)
            form = (
                f"**({{}} if \x00COND\x00 else dict({OLD}))"
                if language == "python"
                else f"**(\x00COND\x00 ? {{}} : {{ {OLD} }})"
            )
            return [Edit(rel, cut[0], cut[1], "")], [Switch(rel, span[0], span[1], form)], name
        holders = _holders(g, g.project.argument(sdk), name)
        if not holders:
            continue
        value, module = holders[0]
        rel = module.path
        span = value.key_spans[name]
        cut = _delete_entry(g.source(rel), span)
        if g.language(rel) == "python":
            switch_form = f"**({{}} if \x00COND\x00 else {{{OLD}}})"
        elif g.language(rel) == "ruby":
            switch_form = f"**(\x00COND\x00 ? {{}} : {{ {OLD} }})"
        elif g.language(rel) == "php":  # an array's string keys unpacked (PHP 8.1)
            switch_form = f"...(\x00COND\x00 ? [] : [ {OLD} ])"
        else:
            switch_form = f"...(\x00COND\x00 ? {{}} : {{ {OLD} }})"
        switches = [Switch(rel, span[0], span[1], switch_form)]
        edits = [Edit(rel, cut[0], cut[1], "")]
        if g.typed(rel) and value.span is not None:
            # a parameter the SDK's types require is missing: the mutant is about what reaches Seam at run
            # time, so its object is cast (the agent's `as any`), as in the schema
            switches.append(Switch(rel, value.span[0], value.span[1], f"({OLD} as any)"))
            edits += [
                Edit(rel, value.span[0], value.span[0], "("),
                Edit(rel, value.span[1], value.span[1], " as any)"),
            ]
        return edits, switches, name
    return None


def _wrong_route(g: Golden, sdk: SdkCall, wrong: str) -> tuple[list[Edit], list[Switch], str] | None:
    """A raw HTTP request whose route is a string literal at the call it is counted at (``post(
    "/access_codes/create", body)``): the route swapped for the wrong method's, the body as it was."""
    rel = sdk.module.path
    route = sdk.route or ""
    new_route = "/" + wrong.replace(".", "/")
    for value in [*sdk.call.args, *sdk.call.kwargs.values()]:
        if value.kind == "str" and value.span is not None and value.text.endswith(route.lstrip("/")):
            literal = g.text(rel, value.span)
            if route.lstrip("/") not in literal:
                continue
            at = value.span[0] + literal.rindex(route.lstrip("/"))
            span = (at, at + len(route.lstrip("/")))
            text = new_route.lstrip("/")
            switch = Switch(
                rel,
                value.span[0],
                value.span[1],
                ternary(g.language(rel), literal.replace(route.lstrip("/"), text)),
            )
            return [Edit(rel, span[0], span[1], text)], [switch], wrong
    return None


def _wrong_path(g: Golden, sdk: SdkCall) -> tuple[list[Edit], list[Switch], str] | None:
    call = sdk.call
    api = canonical_path(g.definition.api_path or "") or ""
    if sdk.kind == "http" and WRONG_METHOD.get(api):
        return _wrong_route(g, sdk, WRONG_METHOD[api])
    if sdk.kind != "sdk" or call.callee_span is None or call.span is None:
        return None
    rel = sdk.module.path
    api = canonical_path(g.definition.api_path or "") or ""
    wrong = WRONG_METHOD.get(api)
    if wrong is None:
        return None
    callee = g.text(rel, call.callee_span)
    compact = "".join(callee.split())
    if not compact.endswith("." + sdk.written):
        return None
    receiver = compact[: -len(sdk.written) - 1]
    if g.language(rel) == "python":
        new_callee = f"{receiver}.{wrong}"
    else:
        namespace, method = wrong.rsplit(".", 1)
        spelled = ".".join(camel(p) for p in namespace.split(".")) + "." + camel(method)
        new_callee = f"({receiver} as any).{spelled}" if g.typed(rel) else f"{receiver}.{spelled}"
    args = g.text(rel, (call.callee_span[1], call.span[1]))
    switch = Switch(rel, call.span[0], call.span[1], ternary(g.language(rel), new_callee + args))
    return [Edit(rel, call.callee_span[0], call.callee_span[1], new_callee)], [switch], wrong


def _imports_end(g: Golden, rel: str) -> int:
    """Where a helper goes: after the file's top-level imports (and a module docstring)."""
    module = g.project.modules[rel]
    source = g.source(rel)
    if module.language == "python":
        tree = ast.parse(source)
        end_line = 0
        for i, stmt in enumerate(tree.body):
            is_doc = (
                i == 0
                and isinstance(stmt, ast.Expr)
                and isinstance(getattr(stmt, "value", None), ast.Constant)
            )
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) or is_doc:
                end_line = stmt.end_lineno or end_line
            else:
                break
        offset = 0
        for _ in range(end_line):
            offset = source.index(b"\n", offset) + 1 if b"\n" in source[offset:] else len(source)
        return offset
    # TypeScript/JavaScript: after the last leading import (or 'use server' directives)
    import re

    offset = 0
    for match in re.finditer(rb"(?m)^(import\b[^;]*;|['\"]use (?:client|server)['\"];?)[^\n]*\n", source):
        if source[offset : match.start()].strip() and not source[offset : match.start()].strip().startswith(
            b"//"
        ):
            break
        offset = match.end()
    return offset


def _raw_http(g: Golden, mutant_id: str) -> tuple[list[Edit], list[Switch], int] | None:
    key_var = g.definition.config.seam_env_var if g.definition.config else "SEAM_API_KEY"
    edits: list[Edit] = []
    switches: list[Switch] = []
    files: set[str] = set()
    count = 0
    for sdk in g.project.sdk_calls:
        call = sdk.call
        if sdk.kind != "sdk" or call.span is None or not sdk.valid:
            continue
        rel = sdk.module.path
        route = "/" + sdk.name.replace(".", "/")
        if g.language(rel) == "python":
            if call.args:
                return None  # the SDKs take keyword arguments only
            entries = [
                f'"{k}": {g.text(rel, (span[0] + len(k) + 1, span[1])).strip()}'
                for k, span in sorted(call.kw_spans.items(), key=lambda kv: kv[1][0])
            ]
            entries += [f"**{g.text(rel, s.span)}" for s in call.kw_spreads if s.span]
            new = f'{PY_HELPER}("{route}", {{{", ".join(entries)}}})'
        elif g.language(rel) == "ruby":
            if call.args:
                return None  # the gem takes keyword arguments only
            entries = [
                g.text(rel, span) for _k, span in sorted(call.kw_spans.items(), key=lambda kv: kv[1][0])
            ]
            entries += [f"**{g.text(rel, s.span)}" for s in call.kw_spreads if s.span]
            new = f'{RB_HELPER}("{route}", {{ {", ".join(entries)} }})'
        else:
            args = ", ".join(g.text(rel, a.span) for a in call.args[:1] if a.span) or "{}"
            new = f"{TS_HELPER}('{route}', {args})"
        edits.append(Edit(rel, call.span[0], call.span[1], new))
        switches.append(Switch(rel, call.span[0], call.span[1], ternary(g.language(rel), new)))
        files.add(rel)
        count += 1
    if not count:
        return None
    for rel in sorted(files):
        at = _imports_end(g, rel)
        language = g.language(rel)
        helper = (
            python_helper(key_var)
            if language == "python"
            else ruby_helper(key_var)
            if language == "ruby"
            else ts_helper(key_var, g.typed(rel))
        )
        edits.append(Edit(rel, at, at, helper + "\n"))
        switches.append(Switch(rel, at, at, helper + "\n"))
    return edits, switches, count


def derive(definition: EvalDefinition) -> tuple[list[Mutant], list[str], Golden]:
    """The eval's mutants, and a note for each class that could not be derived from this golden."""
    g = read_golden(definition)
    mutants: list[Mutant] = []
    notes: list[str] = []
    create = _create_call(g)
    where = create.location if create else None
    for how, title in (
        ("commented_out", "commented out"),
        ("in_string", "moved into a string"),
        ("uncalled_function", "moved into a nested function nothing calls"),
        ("false_condition", "put behind a constant-false condition"),
    ):
        got = neutralise(g, create, how, how) if create else None
        if got is None:
            notes.append(f"{how}: no create call reached from the create endpoint")
            continue
        assert create is not None  # got is None without it
        mutants.append(Mutant(how, how, f"`{create.written}` ({create.name}) {title}", where, got[0], got[1]))
    for phase, cls, title in (
        ("cancel", "cancel_not_revoking", "cancel"),
        ("update", "update_noop", "update"),
    ):
        cut = _cut_phase(g, phase, cls)
        if cut is None:
            notes.append(f"{cls}: no {phase} call only the {phase} endpoint reaches")
            continue
        edits, switches, at = cut
        mutants.append(
            Mutant(
                cls,
                cls,
                f"the {title} endpoint's path to Seam cut at {', '.join(at)}",
                at[0],
                edits,
                switches,
            )
        )
    dropped = _param_dropped(g, create, "param_dropped") if create else None
    if dropped is None:
        notes.append("param_dropped: no required parameter of the create call is written as a literal entry")
    else:
        assert create is not None  # dropped is None without it
        mutants.append(
            Mutant(
                "param_dropped",
                "param_dropped",
                f"`{dropped[2]}` dropped from `{create.written}`",
                where,
                dropped[0],
                dropped[1],
            )
        )
    wrong = _wrong_path(g, create) if create else None
    if wrong is None:
        notes.append("wrong_path: the create call is not a plain SDK method call")
    else:
        assert create is not None  # wrong is None without it
        mutants.append(
            Mutant(
                "wrong_path",
                "wrong_path",
                f"`{create.written}` replaced by `{wrong[2]}`",
                where,
                wrong[0],
                wrong[1],
            )
        )
    raw = _raw_http(g, "raw_http")
    if raw is None:
        notes.append("raw_http: no SDK call to rewrite")
    else:
        mutants.append(
            Mutant(
                "raw_http",
                "raw_http",
                f"{raw[2]} SDK call(s) rewritten as raw HTTP requests",
                None,
                raw[0],
                raw[1],
            )
        )
    return mutants, notes, g
