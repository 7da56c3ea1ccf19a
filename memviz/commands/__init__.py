"""The CLI's commands, one module each (as diffusers' ``commands/``): ``register(sub, command)``
adds the command's arguments, ``run(args)`` runs it and prints its JSON line last.

:data:`COMMANDS` names them with their one-line help; :func:`load` imports one. ``memviz --help`` reads the
names alone, so it imports no command (none of numpy, pandas or torch): only the command being run is loaded.
"""
from __future__ import annotations

import importlib
from types import ModuleType

#: name -> one-line help, in the order ``memviz --help`` lists them: the pipeline's
COMMANDS = {
    'memorize': 'which synthetic rows copy a training row (r = d1/d2 < 1/3)',
    'warmup': 'train TabDDPM and track memorization per training row',
    'inspect': 'summaries of a warm-up run',
    'sample': 'draw a synthetic table from the weights a warm-up had at one check',
    'prune': "DynamicCut: drop the top-p rows of a warm-up's ranking",
    'compare': 'mitigation methods x generators x seeds, side by side',
    'study': "the paper's findings on adult, default and shoppers, against the floor and a null",
    'audit': 'audit a synthetic table from any generator: copying beyond chance, the copied rows, one verdict '
             '(writes audit.json, report.html, rows.csv)',
    'report': 'the audit of a warm-up run and of the comparisons ranked on it: one verdict each, its report and '
              'its JSON (writes audit.json, report.html, rows.csv)',
    'explain': "why the run's copied rows: risk factors from the table alone (isolation, rarity, extremes, "
               "duplicates), a model of the Top group with SHAP attributions and its held-out AUC (writes "
               "factors.csv, shap.csv, explanation.json)",
    'attack': "targeted shadow-model attack on a warm-up run: how exposed are DynamicCut's top rows, the rows the "
              "audit names and random rows (writes RUN/attacks/targeted; a rerun resumes)",
}


def load(name: str) -> ModuleType:
    """The module of command ``name`` (``memviz/commands/NAME.py``)."""
    return importlib.import_module(f"memviz.commands.{name}")
