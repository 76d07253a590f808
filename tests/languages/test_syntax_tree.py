"""``syntax_tree.grammar``: a grammar's compiled binding loaded without running its package's ``__init__``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from skillassay.languages.syntax_tree import grammar

FRESH = """
import json, sys
import tree_sitter as ts
from skillassay.languages.syntax_tree import grammar
lang = grammar("tree_sitter_ruby", "language")
alone = "tree_sitter_ruby" not in sys.modules and "importlib.resources" not in sys.modules
import tree_sitter_ruby  # the package itself, afterwards: it finds the binding already loaded
same = ts.Language(tree_sitter_ruby.language()) == lang
root = ts.Parser(lang).parse(b"def open; end").root_node.type
print(json.dumps([alone, same, root, bool(tree_sitter_ruby.HIGHLIGHTS_QUERY)]))
"""


def test_a_grammar_loads_alone_and_its_package_still_imports_after():
    proc = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [True, True, "program", True]


def test_a_grammar_package_that_is_not_there_is_a_missing_module():
    with pytest.raises(ModuleNotFoundError):
        grammar("tree_sitter_no_such_language", "language")
