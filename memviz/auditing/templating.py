"""The one jinja2 environment of memviz's HTML: every report page and its blocks (:mod:`memviz.auditing.report`), and the
notebook's view of an audit (:mod:`memviz.auditing.notebook`), drawn from the templates shipped in
``memviz/templates`` (package data).

Escaping is jinja2's autoescape (on for every template, :func:`jinja2.select_autoescape`): whatever a template
prints is escaped unless it is :class:`markupsafe.Markup` (the blocks memviz drew itself: a table, plotly's
figure ``<div>``, the inline stylesheet and scripts), so user text (column names, cells, titles, file names)
cannot become markup even where a template forgets a filter. The escape itself is :func:`html.escape` with
quotes, after :func:`memviz.text.isolate` (a bidirectional control cannot reverse the figures beside it),
applied through the environment's ``finalize``: the report's bytes stay those of the stdlib's escape
(``&#x27;``, ``&quot;``). An undefined name is an error (:class:`jinja2.StrictUndefined`), never an empty string.

Layout: a template is written one tag a line; its line ends and indentation are dropped when it is loaded
(:class:`OneLine`), so a page is the one line the report always was and the templates stay readable.
"""
from __future__ import annotations

import html
from functools import lru_cache

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from jinja2.ext import Extension
from markupsafe import Markup

from memviz.text import isolate
from memviz.viz.card import tone
from memviz.viz.glossary import anchor


def escape(value) -> Markup:
    """``value`` as HTML text: Markup as it is, anything else :func:`html.escape`\\ d (quotes included) after
    :func:`memviz.text.isolate`."""
    if hasattr(value, "__html__"):
        return Markup(value.__html__())
    return Markup(html.escape(isolate(str(value)), quote=True))


def _one_line_extension():
    class OneLine(Extension):
        """Each line of a template stripped of its indentation and joined to the next without its line end."""

        def preprocess(self, source, name, filename=None):
            return "".join(line.strip() for line in source.splitlines())

    return OneLine


@lru_cache(maxsize=1)
def environment():
    """The environment (built once): templates from the package's ``templates`` folder, autoescape, strict
    undefined names, the one-line layout, and the helpers templates call (``tone``, ``anchor``)."""
    env = Environment(loader=PackageLoader("memviz", "templates"),
                      autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=True,
                                                   default=True),
                      undefined=StrictUndefined, finalize=escape, extensions=[_one_line_extension()],
                      keep_trailing_newline=False)
    env.globals.update(tone=tone, anchor=anchor)
    return env


def blocks():
    """The report's blocks (``blocks.html.j2``) as callables returning Markup: ``blocks().kv_table(pairs)``."""
    return environment().get_template("blocks.html.j2").module


def render(template: str, /, **values) -> str:
    """The template named ``template`` rendered with ``values``."""
    return environment().get_template(template).render(**values)
