"""The PHP source syntax: how PHP files are written, for the mutants and the Seam wing's rubric. (The PHP
family's stack and Laravel's, which carry it in their ``syntaxes``, are their own modules.)"""

from __future__ import annotations

from skillassay.stacks.base import SourceSyntax

PHP = SourceSyntax(
    language="php",
    extensions=(".php",),
    comment="// ",
    # a JSON string is a double-quoted PHP string: `$` interpolates there, so a mutant moving a call into a
    # string must escape it (as Ruby's `#`)
    literal="json",
    statement_end=";",
    # first segments of the import sources languages/php.py writes (`use GuzzleHttp\Client;` ->
    # guzzlehttp/client), and Laravel's Http facade
    http_clients=frozenset({"guzzlehttp", "illuminate/support/facades/http"}),
    # seamapi/seam shares the Python SDK's method names and (named) parameters
    sdk_family="python",
    label="PHP",
    env_test='getenv("{name}") === "{value}"',
    choice="(({cond}) ? ({new}) : ({old}))",
)
