"""The audit's self-contained HTML report, drawn with :func:`memviz.auditing.report.build_report`.

No external request (inline plotly, a Content-Security-Policy forbidding the network), every
user string escaped by the report's writer, row-level content redacted by default
(:mod:`memviz.tables.redact`: ranges of at least 10 training rows, category hashes keyed per
column and per report). It opens with the verdict (code and sentence), then the figures in
words, the run or tables it draws on (fingerprints, sizes, distance, p/k/T), the per-row test's
calibration and power, the over-copied rows, the column summary and the supporting evidence.
"""
from __future__ import annotations

import importlib.util
import secrets

import numpy as np
import pandas as pd

from memviz.auditing.evidence_html import other_tests_section, shown
from memviz.auditing.report import build_report, when_to_stop
from memviz.errors import install_hint
from memviz.leaks.rows import LeakView, cell_matches, nn1_closeness, row_key
from memviz.tables.redact import redaction_bins
from memviz.text import cut, pct, percent, points, share_digits
from memviz.verdict.evidence_words import evidence_sentences
from memviz.verdict.family import MEMBER_NAMES
from memviz.verdict.verdict import BELOW_FLOOR, findings
from memviz.viz.card import Card, Line, tone
from memviz.warmup import checkpoints

#: most-copied training rows shown beside their copies (with the tables given)
N_LEAKS = 5
#: copies shown per training row
N_COPIES = 10


def _ci(ci) -> str:
    if ci is None or not all(np.isfinite(ci)):
        return "n/a"
    return f"{percent(ci[0], unit='')} to {percent(ci[1], unit='')}"


def facts(a) -> list[tuple[str, str]]:
    """The audit's figures in words, as (label, value) pairs: the tests the verdict reads first, each against real
    rows the model never saw, then the ratio test's averages under its own name."""
    p = a.provenance
    out = []
    c = a.close
    if c is not None:
        out += [("Too close: generated rows nearer a training row than 95 % of real rows",
                 f"{pct(c.too_close_share)} (95 %: {_ci(c.too_close_ci)} %) against {pct(c.expected_share)} expected "
                 f"({_p(c.levels[0].p) if c.levels else _p(c.p_too_close)})")]
        for lv in c.levels[1:]:
            d = share_digits(lv.expected_share)
            out.append((f"Too close at the tail: nearer a training row than {lv.than}",
                        f"{pct(lv.share, d)} against {pct(lv.expected_share, d)} expected ({_p(lv.p)})"))
        out.append(("Too close, all levels together (Bonferroni)", _p(c.p_too_close)))
        ref = c.identical
        own = (f" and {pct(ref.training_share)} of the training rows against each other"
               if ref is not None and ref.pooled else "")
        out.append(("Identical: generated rows equal to a training row",
                    f"{pct(c.identical_share)} ({c.n_identical:,}) against {pct(c.holdout_identical_share)} of the "
                    f"hold-out's rows{own} ({_p(c.p_identical)})"))
        for lv in c.partial:
            but = "one column" if lv.altered == 1 else f"at most {lv.altered} columns"
            cols = ", ".join(f"{col} ({k:,})" for col, k in lv.by_column[:5])
            d = share_digits(lv.reference_share)
            out.append((f"Near-verbatim: generated rows equal to a training row in every column but {but}",
                        f"{pct(lv.share, d)} ({lv.n:,}) against {pct(lv.reference_share, d)} of real rows "
                        f"({_p(lv.p)})" + (f"; the column that differs: {cols}" if cols else "")))
        out.append(("Training rows named (more close copies than real rows give them)", f"{a.n_over_copied:,}"))
    else:
        out.append(("Generated rows identical to a training row", pct(a.identical_share)))
    region = next((f for f in findings(a) if f.member == "local" and f.holds), None)
    if region is not None:
        out.append(("The data-copying test's region", region.text))
    if a.family.members:
        held = [MEMBER_NAMES[m.name] for m in a.family.members if m.holds]
        out.append(("Evidence that holds (Holm, 5 % for all tests together)", ", ".join(held) or "none"))
    out.append(("The ratio test (r < 1/3): generated rows flagged", f"{pct(a.mem_ratio)} of {p.n_synthetic:,}"))
    if a.floor is not None:
        out += [("The ratio test's floor: real rows the model never saw, flagged",
                 f"{pct(a.floor)} (95 %: {_ci(a.floor_ci)} %) of {p.n_holdout:,} hold-out rows"),
                ("The ratio test's excess over its floor", f"{points(a.excess)} (95 %: {_ci(a.excess_ci)})"),
                ("The ratio test's copy share: generated rows flagged beyond chance",
                 f"{pct(a.copy_share)} (95 %: {_ci(a.copy_share_ci)} %)" if a.copy_share >= 0 else
                 f"none: {BELOW_FLOOR}")]
    out.append(("Flagged generated rows that are exact copies", pct(a.flagged_exact_share)))
    if a.dcr_share is not None:
        out.append(("DCR share: closest real row is a training row (ideal 50 %)", pct(a.dcr_share)))
    out.append(("Quality: Shape of the generated rows", "not measured" if a.shape is None else f"{a.shape:.3f}"))
    if a.shape_reference is not None:
        out.append(("Quality: Shape of the hold-out (reference)", f"{a.shape_reference:.3f}"))
    out.append(("Per-row test", a.row_test.sentence()))
    if a.provenance.rows_read:
        out.append(("Generated rows read", a.provenance.rows_read))
    unjudged = getattr(a.provenance, "unjudged", ())
    if unjudged:
        out.append(("Columns not judged (the generated table holds values of its own there: left out of the "
                    "distance)", ", ".join(unjudged)))
    for note in a.provenance.notices:
        out.append(("Notice", note))
    return out


def _p(p) -> str:
    if p is None or not np.isfinite(p):
        return "not tested"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def provenance_facts(a) -> list[tuple[str, str]]:
    p = a.provenance
    out = [("memviz version", p.memviz_version), ("Created (UTC)", p.created), ("Distance", p.distance),
           ("Training rows", f"{p.n_train:,}"), ("Target", p.target or "none")]
    for role in ("train", "synthetic", "holdout"):
        if p.sources.get(role):
            out.append((f"{role} table", p.sources[role]))
            out.append((f"{role} fingerprint (sha256)", p.fingerprints.get(role, "")))
    if p.run is not None:
        r = p.run
        out += [("Run", r.run_id), ("Run status", r.status), ("Audited check", f"{r.check} (epoch {r.epoch})"),
                ("Finished checks", str(r.n_checks)), ("Checks read", str(r.pooled_checks))]
        if r.epochs:
            out.append(("Planned epochs", str(r.epochs)))
        for name in ("p", "k", "T"):
            v = getattr(r, name)
            out.append((f"DynamicCut {name}", "not set" if v is None else str(v)))
    return out


def leak_views(a, train, synthetic, salt: str | None = None):
    """:class:`memviz.leaks.rows.LeakView` of the named rows beside their close copies, nearest first (else
    of the rows the ratio test credits most copies, beside those), with the tables."""
    if a.generated is None or train is None or synthetic is None:
        return []
    rows = a.frame("over_copied", row_id=True)
    named = not rows.empty and "close" in a.generated                   # named rows beside their close copies
    if rows.empty:
        rows = a.per_row[a.per_row["copies"] > 0].sort_values("copies", ascending=False)
    gen = a.generated
    syn = (synthetic.data if hasattr(synthetic, "data") else synthetic).reset_index(drop=True)
    cols = list(train.schema.columns)
    bins = redaction_bins(train.data, train.schema)
    out = []
    for rid in rows["row_id"].head(N_LEAKS):
        mine = (gen[(gen["close_nn1"] == rid) & gen["close"]].sort_values("distance", kind="stable") if named
                else gen[(gen["nn1"] == rid) & gen["memorized"]].sort_values("ratio"))
        shown = mine.head(N_COPIES)
        copies = syn.iloc[shown["synthetic_id"].to_numpy()][cols].reset_index(drop=True)
        meta = pd.DataFrame({"synthetic_id": shown["synthetic_id"].to_numpy(),
                             "check": shown.get("check", pd.Series(0, index=shown.index)).to_numpy(),
                             "epoch": shown.get("epoch", pd.Series(0, index=shown.index)).to_numpy(),
                             "ratio": shown["ratio"].to_numpy()})
        src = train.data.loc[[int(rid)], cols].reset_index()
        # a named row may have no copy at the audited check (the per-row test pools earlier checks)
        ref = train.data.loc[[int(rid)] * len(copies), cols].reset_index(drop=True)
        match = cell_matches(copies, ref, train.schema) if len(copies) else pd.DataFrame(columns=cols, dtype=bool)
        close = nn1_closeness(train, copies, np.full(len(copies), int(rid)), ratio=meta["ratio"].to_numpy(),
                              distance=a.provenance.distance) if len(copies) else None
        out.append(LeakView(int(rid), src, pd.concat([meta, copies], axis=1), match, train.schema, len(mine),
                            close, bins, **row_key(train, int(rid))))
    return out


def row_names(train, row_ids, *, redacted: bool, salt: str | None, audit=None) -> list[str]:
    """The rows as the user knows them: by the training table's row key (``audit``'s, else ``train``'s; hashed in
    a redacted report), else by memviz's row_id ("row 17")."""
    ids = [int(i) for i in row_ids]
    if audit is not None and audit.key is not None:
        return audit.row_names(ids, redacted=redacted, salt=salt)
    if train is not None and getattr(train, "key", None) is not None:
        return [cut(n) for n in train.row_names(ids, redacted=redacted, salt=salt)]   # a long key cut, marked
    return [f"row {i}" for i in ids]


def _closest(r) -> str:
    """How close a named row's closest copy is, in words (from the rows table's closest_* columns)."""
    level = getattr(r, "closest_level", None)
    if level == "exact":
        return "identical"
    gap, col = getattr(r, "closest_gap", np.nan), getattr(r, "closest_column", "")
    what = f"{col} differs" if level == "differs" or not np.isfinite(gap) else f"within {gap:.2g} spreads"
    return f"{level or 'differs'}, {what}"


def source_name(a) -> str:
    """What audit ``a`` draws on, for its headings: "warm-up run X, check 3 (epoch 8), DynamicCut p=0.21,
    k=3, T=not set" for a run's check, else the synthetic table's source."""
    r = a.provenance.run
    if r is None:
        return f"synthetic table {a.provenance.sources.get('synthetic') or 'given'}"
    pkt = ", ".join(f"{n}={'not set' if getattr(r, n) is None else getattr(r, n)}" for n in ("p", "k", "T"))
    status = "" if r.status == "finished" else f", {r.status}"
    return f"warm-up run {r.run_id}, check {r.check} (epoch {r.epoch}{status}), DynamicCut {pkt}"


def _kept_checks(run_dir) -> list[int] | None:
    """The checks of a run with a kept checkpoint (None when that cannot be read: every check)."""
    try:
        return list(checkpoints.kept(run_dir)) or None
    except (OSError, ValueError):
        return None


def has_plotly() -> bool:
    """Whether plotly is installed (the report's figures need it; the audit itself does not)."""
    try:
        return importlib.util.find_spec("plotly") is not None
    except (ImportError, ValueError):
        return False


def audit_card(a, redacted: bool = True, stop: str = "") -> Card:
    """The audit's verdict card: headed by the verdict's sentence (the code is for machines: audit.json), a
    line per supporting test, the next step and, for a run, when to stop."""
    v = a.verdict
    # the other tests named as the pages name them ("Data copying", not "Evidence: data_copying"); the box in the
    # verdict's colour, as the pages colour its line
    return Card(v.sentence, (*(Line(name[:1].upper() + name[1:], sentence)
                               for name, sentence in evidence_sentences(shown(a.evidence, redacted))),
                             Line("Next step", v.next_step),
                             *((Line("When to stop", stop),) if stop else ())), tone=tone(v.tone))


def audit_html(a, *, redacted: bool = True, train=None, synthetic=None, sections=()) -> str:
    """The HTML document of audit ``a`` (module docstring); ``sections``: further parts, each naming
    its source (:class:`memviz.auditing.report.Section`: e.g. the comparisons ranked on the audited run,
    ``memviz report``), after the audit's own.

    For a warm-up run's check the verdict card ends with the recommended check and its reason, and
    the figures include the when-to-stop frontier (excess against quality over the checks).
    """
    salt = secrets.token_hex(16)
    figures = []
    plots = has_plotly()
    if plots and a.close is not None and a.generated is not None and "distance" in a.generated:
        from memviz.viz.memorization import closeness_plot  # lazy: plotly, an optional extra

        figures.append(closeness_plot(a.generated["distance"], a.close.holdout_distances, a.close.threshold))
        region = a.region_distances()
        if region is not None:                # the region the verdict names, its rows' distances (column names only)
            g, h, t, words = region
            figures.append(closeness_plot(g, h, t, region=words))
    stop = ""
    if plots and a.per_check is not None and len(a.per_check):
        from memviz.viz.memorization import check_curves  # lazy: plotly, an optional extra

        figures.append(check_curves(a.per_check))
        if a.provenance.run is not None:  # the frontier and the recommended check (issue 23)
            fig, stop = when_to_stop(a.per_check, _kept_checks(a.provenance.run.run_dir))
            figures.append(fig)
    card = audit_card(a, redacted, stop)
    over = a.frame("over_copied", row_id=True).head(50)
    settings = dict(provenance_facts(a))
    if not plots:
        settings["Figures"] = f"not drawn: plotly is not installed ({install_hint('plots')})"
    if not over.empty:
        names = row_names(train, over["row_id"], redacted=redacted, salt=salt, audit=a)
        settings["Named training rows (most close copies first; first 50)"] = "; ".join(
            f"{name}: {int(r.close_copies)} close copies vs {r.expected_close:.1f} expected (q = {r.q_value:.2g}; "
            f"{int(r.identical_copies)} identical; closest: {_closest(r)})" for name, r in zip(names, over.itertuples()))
    if len(a.columns):
        settings["Columns equal to the nearest training row (flagged / other generated rows)"] = "; ".join(
            f"{r.column}: {pct(r.memorized_rate)} / {pct(r.non_memorized_rate)}" for r in a.columns.itertuples())
    title = "memviz audit" + (f": run {a.provenance.run.run_id}, check {a.provenance.run.check}"
                              if a.provenance.run is not None else "")
    source = source_name(a)

    other = other_tests_section(a, redacted)   # the supporting evidence, after the audit's own parts
    return build_report(facts(a), figures, None, settings, redacted=redacted, title=title,
                        leaks=leak_views(a, train, synthetic, salt), verdict=card, sentence="", salt=salt,
                        sections=[*([other] if other is not None else []), *sections],
                        settings_name="The audit: " + (source or "its tables"), name=source)
