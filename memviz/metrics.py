"""What every reported figure means: its name, its goal and its range, declared once.

As in SDMetrics, a metric declares its own ``name``, ``goal`` (maximize, minimize, or a
target value) and range (``min_value``, ``max_value``); tables, figures and verdicts read
these declarations instead of restating them. The formulas live where the figures are
computed (the module named in ``source``); this registry only describes them.

Shares are stored as fractions in [0, 1] and shown as percentages (:func:`memviz.text.percent`).
"""
from __future__ import annotations

from dataclasses import dataclass

from memviz.text import percent

MAXIMIZE, MINIMIZE, TARGET, REFERENCE = "maximize", "minimize", "target", "reference"


@dataclass(frozen=True)
class Metric:
    """One reported figure.

    Attributes
    ----------
    key : column name in results tables (``mem_ratio``, ``shape``, ...).
    name : what a reader sees ("Memorization ratio").
    goal : ``"maximize"``, ``"minimize"`` or ``"target"`` (closest to ``target`` is best).
    min_value, max_value : the range the figure can take (None: unbounded on that side).
    target : the ideal value when ``goal == "target"``.
    percent : shown as a percentage (a share in [0, 1]).
    reference : the results column holding this metric's reference line, if any.
    source : the module that computes it (and documents its formula).
    explain : what it means, in words a privacy officer follows (the glossary's entry; "" for
        the figures the glossary does not list, e.g. an interval's bounds).
    """

    key: str
    name: str
    goal: str
    min_value: float | None = 0.0
    max_value: float | None = 1.0
    target: float | None = None
    percent: bool = True
    reference: str | None = None
    source: str = ""
    explain: str = ""

    def __post_init__(self):
        if self.goal not in (MAXIMIZE, MINIMIZE, TARGET, REFERENCE):
            raise ValueError(f"metric {self.key}: goal {self.goal!r} is none of {MAXIMIZE}, {MINIMIZE}, {TARGET}, {REFERENCE}")
        if self.goal == TARGET and self.target is None:
            raise ValueError(f"metric {self.key}: a target goal needs its target")

    @property
    def better(self) -> str:
        """"lower", "higher", "closer to X" or, for a reference, "a reference" (for captions and legends)."""
        if self.goal == REFERENCE:
            return "a reference (no better or worse)"
        if self.goal == MINIMIZE:
            return "lower"
        if self.goal == MAXIMIZE:
            return "higher"
        return f"closer to {percent(self.target, 0, unit='%')}" if self.percent else f"closer to {self.target:g}"


_M = "memviz.measure.memorization"
_F = "memviz.measure.floor"
_E = "memviz.evaluate.synthetic"
_C = "memviz.compare.results"
_P = "memviz.compare.protocol"
_MI = "memviz.evidence.membership"
_DC = "memviz.evidence.datacopying"
_AI = "memviz.evidence.attribute"
_DR = "memviz.evidence.densityratio"
_R = "memviz.tables.redact"

#: every figure of a comparison's results table, in display order
METRICS: dict[str, Metric] = {m.key: m for m in (
    Metric("mem_ratio", "Memorization ratio", MINIMIZE, source=_M, explain=(
        "The share of generated rows flagged as memorized (see Memorized). Read it beside the floor: only "
        "the part above the floor comes from the model.")),
    Metric("mem_ratio_pruned", "Memorization ratio vs the kept rows", MINIMIZE, source=_M),
    Metric("mem_auc", "Mem-AUC", MINIMIZE, source=_M, explain=(
        "A softer memorization ratio: the average of 1 - r over the generated rows, between 0 (no generated "
        "row stands out as close to one training row) and 1 (every generated row sits on one). For one training "
        "row at a check, its Mem-AUC is the sum of 1 - r over every generated row whose nearest training row it "
        "is, flagged as a copy or not (the papers' definition). So it counts closeness, not copies: a row that "
        "is the nearest row of many generated rows scores high even with few copies (6 copies and a Mem-AUC "
        "of 496.9 have been seen), and it can exceed 1.")),
    Metric("mem_auc_pruned", "Mem-AUC vs the kept rows", MINIMIZE, source=_M),
    Metric("relative_reduction", "Relative reduction of the mem ratio vs baseline", MAXIMIZE, None, 1.0, source=_C,
           explain=("How much lower a method's memorization ratio is than the baseline's, as a share of the "
                    "baseline's: (baseline - method) / baseline. 20 % means a fifth fewer flagged rows; a negative "
                    "value means more.")),
    Metric("relative_reduction_auc", "Relative reduction of Mem-AUC vs baseline", MAXIMIZE, None, 1.0, source=_C),
    Metric("floor", "Floor: fresh real rows flagged", MINIMIZE, source=_F, explain=(
        "How often the same test flags real rows the model never saw (the test file or the hold-out), "
        "measured against the same training rows. Real records resemble each other, so the floor is often "
        "20 to 30 %. Only the part of the memorization ratio above the floor comes from the model.")),
    Metric("floor_low", "Floor, 95 % interval low", MINIMIZE, source=_F),
    Metric("floor_high", "Floor, 95 % interval high", MINIMIZE, source=_F),
    Metric("n_holdout", "Hold-out rows (real rows no model trained on)", MAXIMIZE, 0.0, None, percent=False,
           source=_F),
    Metric("excess", "Excess over the floor", MINIMIZE, -1.0, 1.0, source=_F, explain=(
        "Memorization ratio minus the floor, in percentage points, with a 95 % interval. An interval that "
        "contains 0 means the model's rows are not flagged more often than real rows it never saw.")),
    Metric("excess_low", "Excess over the floor, 95 % interval low", MINIMIZE, -1.0, 1.0, source=_F),
    Metric("excess_high", "Excess over the floor, 95 % interval high", MINIMIZE, -1.0, 1.0, source=_F),
    Metric("mem_ratio_kept", "Memorization ratio vs the kept original rows (pruning)", MINIMIZE, source=_P,
           explain=("For a pruned model: the share of its generated rows flagged against the training rows it "
                    "kept. Compare it with the control (the unpruned model's rows against the same kept rows): "
                    "pruning protects the table only if this is lower.")),
    Metric("floor_kept", "Floor vs the kept rows: fresh real rows flagged (pruning)", MINIMIZE, source=_P),
    Metric("floor_kept_low", "Floor vs the kept rows, 95 % interval low", MINIMIZE, source=_P),
    Metric("floor_kept_high", "Floor vs the kept rows, 95 % interval high", MINIMIZE, source=_P),
    Metric("control_kept", "Control: the baseline's rows vs the same kept rows (pruning)", MINIMIZE, source=_P),
    Metric("n_flagged_removed", "Flagged generated rows whose nearest row was removed", MINIMIZE, 0.0, None,
           percent=False, source=_P),
    Metric("shape", "Shape (column shapes similarity)", MAXIMIZE, source=_E, explain=(
        "How close each column's distribution in the generated table is to the training table's, averaged "
        "over columns (SDMetrics' column shapes: 1 - KS distance for numbers, 1 - total variation for "
        "categories); 100 % = the same distributions.")),
    Metric("trend", "Trend over all column pairs (column pair trends similarity)", MAXIMIZE, source=_E, explain=(
        "How well the generated table keeps the relations between pairs of columns (SDMetrics' column pair "
        "trends: correlations and contingency tables), averaged over every pair, as the papers count it; 100 % = "
        "the same relations. SDMetrics' QualityReport as shipped averages only the strongly related pairs and "
        "reads higher: that figure is Trend as shipped.")),
    Metric("trend_report", "Trend as SDMetrics' QualityReport ships it (strong pairs only)", MAXIMIZE,
           source="memviz.evaluate.fidelity", explain=(
               "The column pair trends of SDMetrics' QualityReport run as users run it: only the pairs whose real "
               "correlation exceeds 0.5 (two numbers) or whose Cramér's V exceeds 0.3 count. The weak pairs it "
               "leaves out score lowest, so it reads higher than Trend over all pairs (fresh real rows of a credit "
               "table: 96.7 % against 88.5 %); empty when no pair is that strong.")),
    Metric("wasserstein_mean", "Wasserstein distance per numerical column, mean (share of the training range)",
           MINIMIZE, 0.0, None, percent=False, source="memviz.evaluate.fidelity", explain=(
               "For each numerical column, how far the generated values would have to move on average to match the "
               "training values, as a share of the training column's range (0.1 = a tenth of it); the mean over the "
               "numerical columns. The DynamicCut write-up draws a reference line at 0.1: a reference, not a "
               "verdict.")),
    Metric("wasserstein_max", "Wasserstein distance per numerical column, largest (share of the training range)",
           MINIMIZE, 0.0, None, percent=False, source="memviz.evaluate.fidelity", explain=(
               "The worst numerical column's Wasserstein distance on its training range (reference line 0.1); "
               "every column's value is in column_fidelity.csv beside the results.")),
    Metric("jsd_mean", "Jensen-Shannon divergence per categorical column, mean (bits)", MINIMIZE, 0.0, 1.0,
           percent=False, source="memviz.evaluate.fidelity", explain=(
               "For each categorical column, the Jensen-Shannon divergence between the generated and the training "
               "category shares, in bits (0 = the same shares, 1 = no category in common); the mean over the "
               "categorical columns. The write-up's reference line is 0.05: a reference, not a verdict.")),
    Metric("jsd_max", "Jensen-Shannon divergence per categorical column, largest (bits)", MINIMIZE, 0.0, 1.0,
           percent=False, source="memviz.evaluate.fidelity", explain=(
               "The worst categorical column's Jensen-Shannon divergence (reference line 0.05); every column's "
               "value is in column_fidelity.csv beside the results.")),
    Metric("mle", "MLE (score on the real test split)", MAXIMIZE, reference="mle_real", source=_E, explain=(
        "Machine-learning efficacy: a model trained on the generated table predicts the target of the real "
        "test rows; its score beside the same model trained on the real training table says how useful the "
        "generated table is for that task.")),
    Metric("dcr_share", "DCR share (closest real row is a training row)", TARGET, target=0.5, source=_E,
           explain=("For each generated row, is its closest real row a training row or a test row? With as many "
                    "of each, a model that learned the population and copied nobody is closest to a training row "
                    "about half of the time; well above 50 % means the generated rows sit near the training rows.")),
    Metric("dcr_median_train", "DCR median: distance to the closest training row", MAXIMIZE, 0.0, None,
           percent=False, source=_E, explain=(
               "The median over the generated rows of the distance to their closest training row, every training "
               "row searched (standardized distance: numbers on their training range, plus category mismatches, "
               "over the columns). Higher means the generated rows sit farther from the people trained on; read it "
               "beside the same median to the test rows (fewer rows: a smaller table's closest row is farther, so "
               "the two medians are comparable only with the DCR share's balanced subsample, "
               "dcr_median_train_balanced).")),
    Metric("dcr_median_train_balanced", "DCR median: distance to the closest row of a training subsample",
           REFERENCE, 0.0, None, percent=False, source=_E, explain=(
               "The same median against a random subsample of the training rows as large as the test split (the "
               "DCR share's balanced reference): comparable with the median to the test rows, but an exact copy of "
               "a row left out of the subsample reads as far.")),
    Metric("dcr_median_test", "DCR median: distance to the closest test row", REFERENCE, 0.0, None, percent=False,
           source=_E, explain=(
               "The same median to the closest real test row, which no model saw: the distance a model that "
               "copied nobody would keep from its training rows too.")),
    # the cost of a method (memviz.compare.cell)
    Metric("epsilon", "Privacy budget asked for (ε)", MINIMIZE, 0.0, None, percent=False,
           source="memviz.models.privacy", explain=(
               "The differential-privacy ε a private cell was trained to, for the whole pipeline (the column "
               "transforms' statistics and the network): smaller is more private. Its rows carry a formal guarantee: "
               "adding or removing any one training row changes the chance of any output by at most a factor e^ε "
               "(plus δ), assuming public the schema, the number of training rows and the bounds and categories "
               "given as public.")),
    Metric("epsilon_spent", "Privacy budget spent (ε)", MINIMIZE, 0.0, None, percent=False,
           source="memviz.models.privacy", explain=(
               "The whole pipeline's ε: what the column transforms' statistics spent (released with OpenDP, or 0 "
               "for public bounds and categories) plus DP-SGD's ε from the privacy accountant for the optimiser "
               "steps actually taken (basic sequential composition; δ likewise, delta_spent). At most the ε asked "
               "for, within 0.01 when training ran to its end. It covers every table sampled from the model.")),
    Metric("delta_spent", "Privacy budget spent (δ)", MINIMIZE, 0.0, None, percent=False,
           source="memviz.models.privacy", explain=(
               "The whole pipeline's δ: the transforms' releases' plus DP-SGD's (basic sequential composition); "
               "below 1/N, so that no mechanism may release a training row whole.")),
    Metric("epsilon_preprocessing", "Privacy budget of the column transforms (ε)", MINIMIZE, 0.0, None,
           percent=False, source="memviz.models.dpstats", explain=(
               "The part of ε spent releasing the column transforms' statistics (bounds, quantiles, categories) "
               "with OpenDP; 0 when they were all given as public.")),
    Metric("epsilon_sgd", "Privacy budget of DP-SGD (ε)", MINIMIZE, 0.0, None, percent=False,
           source="memviz.models.privacy", explain=(
               "The part of ε spent by DP-SGD's optimiser steps, from the accountant (RDP or PRV) at DP-SGD's δ.")),
    Metric("delta", "Privacy δ", MINIMIZE, 0.0, 1.0, percent=False, source="memviz.models.privacy", explain=(
        "The δ of the (ε, δ) guarantee: the chance the ε bound may fail; below 1/N (memviz uses 1/(10 N) unless "
        "told).")),
    Metric("noise_multiplier", "DP-SGD noise multiplier (σ)", MAXIMIZE, 0.0, None, percent=False,
           source="memviz.models.privacy", explain=(
               "The standard deviation of the Gaussian noise added at every step, in units of the clipping norm: "
               "what the accountant turned the asked ε into.")),
    Metric("row_epochs_left_out", "Row-epochs left out of training", MINIMIZE, 0.0, None, percent=False,
           source="memviz.compare.cell", explain=(
               "A pruning method's budget: the training rows it kept out of the batches, summed over the epochs "
               "(DynamicCut and random pruning: rows removed x epochs; the dynamic threshold: its decaying share "
               "at each epoch). Two methods compared at equal cost leave out as many.")),
    Metric("rows_left_out", "Training rows left out at least once", MINIMIZE, 0.0, None, percent=False,
           source="memviz.compare.cell", explain=(
               "How many different training rows a pruning method kept out of the batches at some point.")),
    # an audit's figures (memviz.audit)
    Metric("copy_share", "Copy share: generated rows copied beyond chance", MINIMIZE, None, 1.0,
           source="memviz.verdict.share"),
    Metric("identical_share", "Generated rows identical to a training row", MINIMIZE,
           source="memviz.measure.tooclose", explain=(
               "The share of generated rows equal to some training row in every column the distance reads. Real "
               "rows the model never saw are sometimes identical to a training row too (people who share every "
               "answer); the audit tests the generated share against theirs (Fisher's exact test).")),
    Metric("holdout_identical_share", "Hold-out rows identical to a training row", MINIMIZE,
           source="memviz.measure.tooclose"),
    Metric("too_close_share", "Generated rows too close to a training row", MINIMIZE, source="memviz.measure.tooclose",
           explain=(
               "The share of generated rows nearer their closest training row than all but 5 % of real rows the "
               "model never saw are (the standardized distance). Fresh rows give about 5 %; the audit tests the "
               "generated share against that, allowing for the hold-out's own sampling error (an exact "
               "Beta-Binomial test). No average hides a copy here: each row is read on its own distance.")),
    Metric("n_over_copied", "Training rows named: more close copies than real rows give them", MINIMIZE, 0.0, None,
           percent=False, source="memviz.measure.tooclose", explain=(
               "Training rows whose close copies (identical or too close) among the generated rows outnumber what "
               "real rows the model never saw give them, by an exact test per row (binomial, given the row's close "
               "copies from both); a row needs several close copies to be named, and the report says how many.")),
)}

#: the tests beyond the ratio test (``memviz.evidence.suite``): each read against the hold-out
EVIDENCE_METRICS: dict[str, Metric] = {m.key: m for m in (
    Metric("mia_auc", "Membership attack AUC (0.5 = chance)", TARGET, target=0.5, percent=False, source=_MI),
    Metric("mia_tpr_1pct", "Membership attack: training rows found at 1 % false alarms", MINIMIZE, source=_MI),
    Metric("mia_tpr_01pct", "Membership attack: training rows found at 0.1 % false alarms", MINIMIZE, source=_MI),
    Metric("mia_exposed", "Training rows exposed at 1 % false alarms", MINIMIZE, 0.0, None, percent=False,
           source=_MI),
    Metric("data_copying_ct", "Data-copying statistic C_T (negative = copying)", TARGET, None, None, target=0.0,
           percent=False, source=_DC),
    Metric("data_copying_p", "Data-copying p-value (small = copying)", MAXIMIZE, percent=False, source=_DC),
    Metric("data_copying_share", "Share of the data in regions that copy", MINIMIZE, source=_DC),
    Metric("attribute_rate", "Attribute attack: training rows whose secret is revealed", MINIMIZE, source=_AI),
    Metric("attribute_control", "Attribute attack on fresh rows (the control)", MINIMIZE, source=_AI),
    Metric("attribute_excess", "Attribute attack: excess over the control", MINIMIZE, -1.0, 1.0, source=_AI),
    Metric("dr_auc", "Density-ratio attack AUC (0.5 = chance)", TARGET, target=0.5, percent=False, source=_DR),
    Metric("dr_tpr_1pct", "Density-ratio attack: training rows found at 1 % false alarms", MINIMIZE, source=_DR),
    Metric("dr_tpr_01pct", "Density-ratio attack: training rows found at 0.1 % false alarms", MINIMIZE, source=_DR),
    Metric("dr_exposed", "Training rows the density-ratio attack exposes at 1 % false alarms", MINIMIZE, 0.0, None,
           percent=False, source=_DR),
    Metric("singling_out_rate", "Singling out: predicates that pick out one training row", MINIMIZE,
           source="memviz.evidence.article29"),
    Metric("singling_out_risk", "Singling out: risk beyond the control (real rows never seen)", MINIMIZE, -1.0, 1.0,
           source="memviz.evidence.article29"),
    Metric("linkability_rate", "Linkability: training rows whose two halves are joined", MINIMIZE,
           source="memviz.evidence.article29"),
    Metric("linkability_risk", "Linkability: risk beyond the control (real rows never seen)", MINIMIZE, -1.0, 1.0,
           source="memviz.evidence.article29"),
    Metric("joint_k", "Smallest group of training rows sharing what a report shows", MAXIMIZE, 0.0, None,
           percent=False, source=_R),
)}


#: the words of the dashboard and the report that are not a column of the results, in reading order
#: (the glossary, :mod:`memviz.app.glossary`, lists these, then every metric with an ``explain``)
TERMS: dict[str, str] = {
    "Singling out": (
        "One of the EU Article 29 Working Party's three re-identification criteria. The attacker writes conditions "
        "on a few columns from one synthetic row (age at least 71, occupation = X, ...) that pick out exactly one "
        "synthetic row, and checks whether they pick out exactly one real person. Tried on training rows and on as "
        "many real rows the model never saw: only the excess is what the synthetic table gives away."),
    "Linkability": (
        "Another Article 29 criterion: one source knows half of a person's columns, another the other half; the "
        "attacker joins them when both halves lead to the same nearest synthetic row. Tried on training rows and on "
        "real rows the model never saw: only the excess is what the synthetic table gives away."),
    "Membership attack": (
        "Can an attacker who holds the synthetic table tell the training rows from real rows the model never saw? "
        "Each real row is scored by its distance to the nearest generated row (the standardized distance); the AUC "
        "says how often a training row scores closer than a fresh row (0.5 is chance), the hit rate at 1 % false "
        "alarms how many training rows it picks out. Rows it picks out are called exposed."),
    "Data-copying test": (
        "The test of Meehan, Chaudhuri & Dasgupta (2020): the data is cut into regions (k-means cells), and in each "
        "the distances of generated rows to their nearest training row are compared with those of fresh real rows "
        "(a Mann-Whitney z). The weighted mean C_T is negative when generated rows sit closer to the training rows "
        "than fresh rows do (copying), positive when farther (a loose fit). It does not depend on the ratio test, "
        "so it still sees copying where the ratio test flags nearly every real row."),
    "Attribute attack": (
        "Knowing every other column of a person, the attacker takes the secret column (the target) from the "
        "nearest generated row. Its hit rate on training rows is compared with the same attack on fresh real rows "
        "(the control): only the excess is what the model gives away about the people it trained on."),
    "Density-ratio attack": (
        "DOMIAS's attack (van Breugel et al., 2023): a real row is scored by how much more likely the synthetic "
        "table makes it than the population does (the density of the generated rows at the row over the density "
        "of real rows the model never saw). A model that overfits puts extra density on its training rows, also "
        "where the population is dense and every row has a generated row near it. Read like the membership attack: "
        "AUC (0.5 is chance) and the hit rate at 1 % and 0.1 % false alarms."),
    "Targeted attack": (
        "A shadow-model attack on chosen rows (Stadler et al. 2022; LiRA, Carlini et al. 2022): the attacker trains "
        "many models like this one, each target row in half of them, learns what the generated rows near a target "
        "look like with and without it, and then guesses for each model whether it was trained on the target. The "
        "AUC of those guesses (0.5 is chance) says how exposed the row is; applied to the released table, random "
        "training rows against hold-out rows, it is a membership attack on the release."),
    "Memorized": (
        "A generated row is flagged as memorized when its nearest training row is more than three times "
        "closer than the second nearest (r = d1 / d2 < 1/3), the papers' test. It measures relative "
        "closeness, not identity: a flagged row is closer to one training row than to all the others, which "
        "says nothing about how close it really is. The papers' way of measuring distance rescales the numbers "
        "for each generated row, so a flagged row can differ a lot from its training row (an age of 31 against "
        "90 has been seen)."),
    "Copy": (
        "A flagged (memorized) generated row, credited to its nearest training row: \"12 copies of row 7\" "
        "means 12 flagged generated rows whose nearest training row is row 7. A copy in this sense is not "
        "an identical row; the share of generated rows identical to a training row is shown separately "
        "(\"exact copies\")."),
    "Top group": (
        "The most-copied training rows over the whole warm-up (by default the 10 % with the most copies); "
        "Non-Top is every other training row."),
    "DynamicCut score": (
        "How DynamicCut ranks training rows for pruning: the mean of a row's k largest per-row Mem-AUC values "
        "over the checks up to epoch T. A row's Mem-AUC at a check is the sum of 1 - r over every generated row "
        "whose nearest training row it is, flagged or not, so the score adds up closeness, not copies and not a "
        "share: a score of 116 means that at its busiest checks about 116 generated rows' worth of closeness "
        "went to that row, not 116 %. The rows it ranks first are not always the most-copied ones."),
    "Pruning": (
        "Removing training rows and training again. It protects the removed rows: the retrained model "
        "rarely reproduces them. It does not, by itself, protect the table: in memviz's study of three public "
        "tables, where TabDDPM copied clearly above the floor, the retrained model copied the kept rows "
        "about as often as the first model copied the whole table, and removing the rows with the highest "
        "early scores did no better than removing as many rows at random. Check a pruned model on the "
        "Compare page: its memorization against the kept rows, beside the same figure for the unpruned "
        "model."),
    "Risk factors": (
        "What the training table alone says about a row, before any model: how isolated it is (the distance to "
        "its 5th-nearest other row, against a typical row's), how rare its values and its pairs of values are, how "
        "extreme its numbers are, and its exact and near duplicates. A row among the 10 % riskiest of the table on "
        "a factor has that factor named as a reason it is at risk."),
    "Isolation cut": (
        "Pruning without a warm-up: the same share p of rows as DynamicCut removes, chosen as the most isolated "
        "rows of the training table (the farthest from their 5th-nearest other row). It costs a fraction of a "
        "second against minutes of warm-up, but in memviz's study of three public tables (docs/study-why.md) it "
        "did not copy as little as DynamicCut's pruning: what TabDDPM copies there is rows with an extreme "
        "number more than isolated rows."),
    "SHAP": (
        "Shapley additive explanations (Lundberg & Lee 2017): a model's output for one row split into a share "
        "per feature, the shares adding up to the output. On the Memorization page they say which columns and "
        "risk factors carry a model of the Top group; they explain the model, which is only as good as its "
        "held-out AUC says."),
    "Seeds": (
        "Independent repetitions with different random starts. With fewer than 3 seeds the spread of a result "
        "cannot be estimated, so a difference is only indicative."),
    "Indicative": (
        "A result from fewer than 3 seeds: it shows a direction, not an established effect."),
    "q-value": (
        "For a training row marked over-copied: the chance-level error rate of that call after correcting for "
        "testing every row at once (Benjamini-Hochberg). Below 0.05 means fewer than 1 in 20 such calls is "
        "expected to be chance; \"< 0.001\" is shown for anything smaller."),
    "Holds": (
        "A test of the verdict holds when the model's rows are closer to the training rows than real rows the model "
        "never saw are, by more than chance allows; \"within chance\" means they are not. The tests are read "
        "together, so the chance of any false alarm among them all is kept at 5 % (Holm's correction), not 5 % "
        "for each."),
    "95 % interval": (
        "The range a figure would fall in, 19 times out of 20, if the same number of rows were drawn again: how "
        "sure the figure is, given how many rows were measured. An excess whose interval contains 0 is not above "
        "the floor."),
    "AUC": (
        "How often an attacker ranks a training row as more exposed than a real row the model never saw: 0.5 is "
        "chance (a coin flip), 1 a perfect attacker. Its 95 % interval (DeLong's method) says how far from 0.5 it "
        "could be by chance alone; only an interval above 0.5 is better than chance."),
}


def metric(key: str) -> Metric:
    """The declaration of ``key`` (KeyError names the known keys)."""
    try:
        return METRICS[key] if key in METRICS else EVIDENCE_METRICS[key]
    except KeyError:
        raise KeyError(f"unknown metric {key!r} (known: {', '.join([*METRICS, *EVIDENCE_METRICS])})") from None
