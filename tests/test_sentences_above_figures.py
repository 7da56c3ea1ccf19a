"""Numbers below words (issue 53 item 2): no module below the verdict's room (tests/test_layers.py's ``LAYERS``
before ``verdict``) defines a ``sentence`` or ``sentences`` method or function, nor a result field of that name
filled there (an AttackReading once carried its attack's sentence). The results of the lower layers
keep their figures; the words a reader reads are composed above them (memviz.verdict.words,
memviz.verdict.evidence_words). Read from the source (AST), so a new one fails here before anyone imports it."""
from __future__ import annotations

import ast

from tests.test_layers import LAYERS, layer, modules

NAMES = {"sentence", "sentences"}
#: (module, class) → why its ``sentence`` stays where it is
KEPT = {
    ("memviz.io", "NonFinite"): "an error's one line, worded where the error is known (a file's field that is not a "
                                "finite number); memviz.io raises it and memviz.warmup.store names the file with it",
    ("memviz.tables.redact", "JointK"): "read only by its own to_dict (the same module) and by tests: no page, "
                                        "report or command prints a redacted table's joint k yet",
    ("memviz.attacks.lira", "TargetedResult"): "the targeted attack's result.json (memviz.attacks.store, the same "
                                               "layer) has always carried its sentence; the layers above read it there",
}


def below_the_verdict(mod: str) -> bool:
    return LAYERS.index(layer(mod)) < LAYERS.index("verdict")


def sentence_definitions(tree: ast.AST) -> set[tuple[str | None, str]]:
    """(enclosing class or None, name) of every function, method or (annotated) class field named in
    :data:`NAMES`."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            out |= {(node.name, f.name) for f in node.body
                    if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name in NAMES}
            out |= {(node.name, f.target.id) for f in node.body
                    if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name) and f.target.id in NAMES}
    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in NAMES:
            out.add((None, node.name))
    return out


def test_no_module_below_the_verdicts_room_words_a_sentence():
    found = {(mod, cls, name) for mod, path in modules().items() if below_the_verdict(mod)
             for cls, name in sentence_definitions(ast.parse(path.read_text(encoding="utf-8")))}
    unexpected = sorted((m, c, n) for m, c, n in found if (m, c) not in KEPT)
    assert not unexpected, f"sentences worded below the verdict's room (move them to memviz/verdict): {unexpected}"
    stale = sorted(k for k in KEPT if not any((m, c) == k for m, c, _ in found))
    assert not stale, f"kept sentences that no longer exist (drop them from KEPT): {stale}"


def test_the_check_sees_methods_and_functions():
    tree = ast.parse("class R:\n    def sentence(self):\n        return ''\n\nclass F:\n    sentence: str\n\n"
                     "def sentences(e):\n    return []\n")
    assert sentence_definitions(tree) == {("R", "sentence"), ("F", "sentence"), (None, "sentences")}
    assert below_the_verdict("memviz.evidence.membership") and not below_the_verdict("memviz.verdict.words")
