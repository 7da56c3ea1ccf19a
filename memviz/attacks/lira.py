"""The targeted attack's test and figures: LiRA's likelihood ratio per target (Carlini et al., S&P 2022,
online form), on the features of :mod:`memviz.attacks.features`.

Notation: F[s, t] (P,) the features of target t in shadow s's generated table, I[s, t] = 1 when t was in
shadow s's training data (:class:`~memviz.attacks.design.Plan`).

The test
--------
Per target, the attacker fits a Gaussian to its features with t in (μ_in(t)) and out (μ_out(t)), each
with a covariance pooled over all targets (Σ_in, Σ_out; LiRA's "global variance", because S / 2 shadows
a side are too few for a covariance per target; a ridge of 10⁻⁶ · trace / P keeps a constant feature
invertible), and reads a generated table's features f by

    Λ_t(f) = log N(f; μ_in(t), Σ_in) − log N(f; μ_out(t), Σ_out)        (large = t was in).

Per target (out of sample)
--------------------------
Each shadow is scored by the fit on the other S − 1 (leave one shadow out), so every target has S / 2
scores with it in and S / 2 without:

* ``auc``: P(Λ_in > Λ_out) + ½ P(=), with DeLong's 95 % interval (0.5: the attacker cannot tell);
* ``tpr_1pct``, ``tpr_01pct``: the true-positive rate at 1 % and 0.1 % false positives from Gaussians
  fitted to its in and out scores (LiRA's per-example reading): Φ((m_in − m_out − z_{1−α} s_out) / s_in);
* ``exposed``: the AUC interval lies above 0.5.

Per group (top, named, random, holdout): the mean AUC with its t interval over the group's targets
(clipped to [0, 1]), the share exposed, and the empirical TPR at 1 % and 0.1 % FPR pooled over the
group's (target, shadow) pairs (the threshold from its out scores,
:func:`memviz.evidence.membership.tpr_at_fpr`).

Comparisons (``top`` − ``random``, ``named`` − ``random``, ``top`` − ``named``): the difference of the
mean AUCs with Welch's 95 % interval and a permutation p-value (20,000 random reassignments of the two
groups' targets; one-sided "greater" and two-sided). The targets of one attack share its shadows, so the
comparison is paired in the models; its randomness is that of the targets.

The release
-----------
Given the released table (the model actually trained on all training rows), each target's Λ_t on it,
with the fit on all S shadows. Random training rows (members) against hold-out rows (non-members) is a
membership attack on the release whose null is exact: with nothing learnt about its training rows the
two groups' Λ are exchangeable, so the one-sided Mann–Whitney p-value is calibrated (``reading()``;
flags at 5 %). The top and named groups were chosen from a run of the same data and are not read
against the controls (their selection would bias it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu, norm
from scipy.stats import t as student_t

from memviz.attacks.design import GROUPS
from memviz.evidence.attack_readings import AttackReading
from memviz.evidence.membership import FPRS, tpr_at_fpr
from memviz.evidence.ranktests import auc_delong, json_safe
from memviz.measure.intervals import t_interval

FORMAT = "memviz.attacks.targeted/1"
COMPARISONS = (("top", "random"), ("named", "random"), ("top", "named"))
N_PERMUTATIONS = 20_000
#: the release reading's level (one-sided)
LEVEL = 0.05
RIDGE = 1e-6


# ------------------------------------------------------------------ the Gaussian fits
def _fit(F: np.ndarray, inside: np.ndarray, use: np.ndarray):
    """(μ_in, μ_out, Σ_in, Σ_out) from the shadows in ``use`` (module docstring)."""
    Fu, Iu = F[use], inside[use]
    out = []
    for side in (Iu, ~Iu):
        w = side[:, :, None].astype(np.float64)                                   # (S', T, 1)
        n = w.sum(axis=0)                                                          # (T, 1)
        mu = (Fu * w).sum(axis=0) / np.maximum(n, 1)                               # (T, P)
        r = (Fu - mu[None]) * w                                                    # residuals of this side
        dof = max(float(n.sum() - (n[:, 0] > 0).sum()), 1.0)
        cov = np.einsum("stp,stq->pq", r, r) / dof
        cov += np.eye(cov.shape[0]) * (RIDGE * max(np.trace(cov), 1e-12) / cov.shape[0] + 1e-12)
        out.append((mu, cov))
    (mu_in, cov_in), (mu_out, cov_out) = out
    return mu_in, mu_out, cov_in, cov_out


def _logpdf(f: np.ndarray, mu: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """(T,) log N(f_t; μ_t, Σ) for f, μ (T, P)."""
    c = np.linalg.cholesky(cov)
    z = np.linalg.solve(c, (f - mu).T)                                             # (P, T)
    return -0.5 * (z * z).sum(axis=0) - np.log(np.diag(c)).sum() - 0.5 * len(cov) * math.log(2 * math.pi)


def llr(f: np.ndarray, fit) -> np.ndarray:
    """(T,) Λ_t of features f (T, P) under a fit of :func:`_fit`."""
    mu_in, mu_out, cov_in, cov_out = fit
    return _logpdf(f, mu_in, cov_in) - _logpdf(f, mu_out, cov_out)


def loo_scores(F: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """(S, T) Λ of each shadow's features under the fit on the other shadows."""
    S = F.shape[0]
    out = np.empty(F.shape[:2])
    for s in range(S):
        use = np.ones(S, bool)
        use[s] = False
        out[s] = llr(F[s], _fit(F, inside, use))
    return out


# ------------------------------------------------------------------ figures
def _gauss_tpr(a_in: np.ndarray, a_out: np.ndarray, alpha: float) -> float:
    s_in, s_out = a_in.std(ddof=1), a_out.std(ddof=1)
    if not (s_in > 0 and s_out > 0):
        return float(a_in.mean() > a_out.max()) if len(a_out) else math.nan
    return float(norm.cdf((a_in.mean() - a_out.mean() - norm.isf(alpha) * s_out) / s_in))


def per_target(scores: np.ndarray, inside: np.ndarray) -> pd.DataFrame:
    """Per target: auc, auc_low, auc_high, tpr_1pct, tpr_01pct, exposed, llr_in, llr_out (module docstring)."""
    rows = []
    for t in range(scores.shape[1]):
        a_in, a_out = scores[inside[:, t], t], scores[~inside[:, t], t]
        auc, lo, hi, _ = auc_delong(-a_in, -a_out)
        rows.append({"auc": auc, "auc_low": lo, "auc_high": hi, "tpr_1pct": _gauss_tpr(a_in, a_out, FPRS[0]),
                     "tpr_01pct": _gauss_tpr(a_in, a_out, FPRS[1]), "exposed": bool(lo > 0.5),
                     "llr_in": float(a_in.mean()), "llr_out": float(a_out.mean())})
    return pd.DataFrame(rows)


def group_table(targets: pd.DataFrame, scores: np.ndarray, inside: np.ndarray) -> pd.DataFrame:
    """One row per group present: n, auc (mean), auc_low, auc_high (t interval), exposed_share, tpr_1pct and
    tpr_01pct pooled over the group's pairs (with their false alarms allowed and whether resolved)."""
    out = []
    for g in GROUPS:
        idx = np.flatnonzero(targets["group"].to_numpy() == g)
        if not len(idx):
            continue
        auc = targets["auc"].to_numpy()[idx]
        # a group with an undefined AUC has no mean (memviz.measure.intervals.t_interval would leave it out)
        m, lo, hi = t_interval(auc) if np.isfinite(auc).all() else (math.nan,) * 3
        lo, hi = max(0.0, lo), min(1.0, hi)                                          # an AUC's range
        x = scores[:, idx][inside[:, idx]]
        y = scores[:, idx][~inside[:, idx]]
        row = {"group": g, "n": len(idx), "auc": m, "auc_low": lo, "auc_high": hi,
               "exposed_share": float(targets["exposed"].to_numpy()[idx].mean())}
        for a, key in zip(FPRS, ("tpr_1pct", "tpr_01pct")):
            t = tpr_at_fpr(-x, -y, a)
            row[key], row[key + "_resolved"] = t["tpr"], t["resolved"]
        out.append(row)
    return pd.DataFrame(out)


def compare_groups(targets: pd.DataFrame, a: str, b: str, seed: int = 0) -> dict | None:
    """Mean AUC of group a − group b: Welch's interval and permutation p-values (module docstring)."""
    g = targets["group"].to_numpy()
    x, y = targets["auc"].to_numpy()[g == a], targets["auc"].to_numpy()[g == b]
    if len(x) < 2 or len(y) < 2:
        return None
    d = float(x.mean() - y.mean())
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se = math.sqrt(vx + vy)
    dof = (vx + vy) ** 2 / (vx ** 2 / (len(x) - 1) + vy ** 2 / (len(y) - 1)) if se > 0 else 1.0
    h = float(student_t.ppf(0.975, dof) * se)
    both = np.concatenate([x, y])
    rng = np.random.default_rng([seed, 7])
    perm = np.argsort(rng.random((N_PERMUTATIONS, len(both))), axis=1)
    diffs = both[perm[:, : len(x)]].mean(axis=1) - both[perm[:, len(x):]].mean(axis=1)
    p_greater = float((1 + np.sum(diffs >= d - 1e-12)) / (N_PERMUTATIONS + 1))
    p_two = float((1 + np.sum(np.abs(diffs) >= abs(d) - 1e-12)) / (N_PERMUTATIONS + 1))
    return {"a": a, "b": b, "n_a": int(len(x)), "n_b": int(len(y)), "difference": d, "low": max(-1.0, d - h),
            "high": min(1.0, d + h),
            "p_greater": p_greater, "p_two_sided": p_two}


def release_reading(targets: pd.DataFrame, release_llr: np.ndarray) -> dict | None:
    """Random members against hold-out controls on the release (module docstring); None without both."""
    g = targets["group"].to_numpy()
    x, y = release_llr[g == "random"], release_llr[g == "holdout"]
    if len(x) < 2 or len(y) < 2:
        return None
    auc, lo, hi, se = auc_delong(-x, -y)
    p = float(mannwhitneyu(x, y, alternative="greater").pvalue)
    return {"n_members": int(len(x)), "n_nonmembers": int(len(y)), "auc": auc, "auc_low": lo, "auc_high": hi,
            "auc_se": se, "p_value": p, "level": LEVEL, "flags": bool(p < LEVEL)}


# ------------------------------------------------------------------ the result
@dataclass(frozen=True, eq=False)
class TargetedResult:
    """A finished targeted attack (module docstring).

    config : the :class:`~memviz.attacks.design.ShadowConfig` as a dict. n_shadows : S.
    targets : per target: target, row_id, group, source, and :func:`per_target`'s columns (plus
        ``release_llr`` when a release was read).
    groups : :func:`group_table`. comparisons : :func:`compare_groups` for each of :data:`COMPARISONS` present.
    release : :func:`release_reading` or None. run : where the targets came from (run folder, check, p/k/T) or None.
    seconds : the shadows' training, sampling and feature time, summed.
    """

    config: dict
    n_shadows: int
    targets: pd.DataFrame
    groups: pd.DataFrame
    comparisons: tuple
    release: dict | None = None
    run: dict | None = None
    seconds: float = 0.0

    @property
    def flags_copying(self) -> bool | None:
        """The release reading flags membership (None without one: the shadows alone say how exposed the
        targets are to this kind of model, not whether this release exposes them)."""
        return None if self.release is None else bool(self.release["flags"])

    def reading(self):
        """The release reading as an :class:`~memviz.evidence.attack_readings.AttackReading` (None without one)."""
        r = self.release
        if r is None:
            return None
        return AttackReading(test="targeted", attack="the targeted shadow-model attack", statistic="AUC",
                             value=r["auc"], low=r["auc_low"], high=r["auc_high"], chance=0.5, p_value=r["p_value"],
                             level=r["level"], flags=r["flags"],
                             calibration=f"exact rank test of {r['n_members']} random training rows against "
                                         f"{r['n_nonmembers']} hold-out rows on the release")

    def group(self, name: str) -> dict | None:
        g = self.groups[self.groups["group"] == name]
        return None if g.empty else g.iloc[0].to_dict()

    def comparison(self, a: str, b: str) -> dict | None:
        return next((c for c in self.comparisons if c["a"] == a and c["b"] == b), None)

    def sentence(self) -> str:
        """One plain sentence: how exposed each group is, the top-vs-random comparison, the release."""
        words = {"top": "DynamicCut's top rows", "named": "the rows the audit names", "random": "random training rows",
                 "holdout": "hold-out rows"}
        parts = []
        for r in self.groups.itertuples():
            if r.group == "holdout":
                continue
            parts.append(f"{words[r.group]} AUC {r.auc:.2f} ({r.auc_low:.2f} to {r.auc_high:.2f})")
        head = (f"An attacker who trains {self.n_shadows} models like this one, half with each target row, tells "
                f"whether a target was trained on with " + "; ".join(parts) + " (0.50 is chance)")
        c = self.comparison("top", "random")
        if c is not None:
            verdict = "more" if c["low"] > 0 else ("less" if c["high"] < 0 else "no more and no less")
            head += (f"; DynamicCut's top rows are {verdict} exposed than random rows "
                     f"({100 * c['difference']:+.1f} AUC points, {100 * c['low']:+.1f} to {100 * c['high']:+.1f})")
        r = self.release
        if r is not None:
            head += ("; on the released table the same attack tells random training rows from hold-out rows "
                     + ("better than chance" if r["flags"] else "no better than chance")
                     + f" (AUC {r['auc']:.2f}, p {r['p_value']:.2g})")
        return head + "."

    def report_figures(self) -> list[tuple[str, str]]:
        """(label, value) pairs for the report's "Other tests" section."""
        out = [(f"Group {r.group} ({r.n} targets)",
                f"AUC {r.auc:.2f} ({r.auc_low:.2f} to {r.auc_high:.2f}); exposed {100 * r.exposed_share:.0f} %; "
                f"TPR at 1 % FPR {100 * r.tpr_1pct:.1f} %") for r in self.groups.itertuples()]
        for c in self.comparisons:
            out.append((f"{c['a']} − {c['b']}", f"{100 * c['difference']:+.1f} AUC points ({100 * c['low']:+.1f} to "
                                                 f"{100 * c['high']:+.1f}; permutation p {c['p_greater']:.2g})"))
        if self.release is not None:
            r = self.release
            out.append(("Release", f"AUC {r['auc']:.2f} ({r['auc_low']:.2f} to {r['auc_high']:.2f}), p {r['p_value']:.2g}"))
        out.append(("Shadow models", f"{self.n_shadows} ({self.config.get('preset')}, {self.seconds / 60:.1f} min)"))
        return out

    def to_dict(self) -> dict:
        return json_safe({"format": FORMAT, "test": "targeted", "config": self.config, "n_shadows": self.n_shadows,
                          "groups": self.groups.to_dict(orient="records"), "comparisons": list(self.comparisons),
                          "release": self.release, "flags_copying": self.flags_copying, "run": self.run,
                          "targets": self.targets.to_dict(orient="records"), "sentence": self.sentence(),
                          "seconds": self.seconds})

    @classmethod
    def from_dict(cls, d: dict) -> "TargetedResult":
        """The result again from :meth:`to_dict` (result.json)."""
        return cls(dict(d["config"]), int(d["n_shadows"]), pd.DataFrame(d["targets"]), pd.DataFrame(d["groups"]),
                   tuple(d["comparisons"]), d.get("release"), d.get("run"), float(d.get("seconds") or 0.0))


def analyse(F: np.ndarray, inside: np.ndarray, targets: pd.DataFrame, *, release_features: np.ndarray | None = None,
            config: dict | None = None, run: dict | None = None, seconds: float = 0.0, seed: int = 0) -> TargetedResult:
    """The :class:`TargetedResult` of features F (S, T, P) of shadows with plan ``inside`` (S, T)."""
    scores = loo_scores(F, inside)
    tt = pd.concat([targets.reset_index(drop=True), per_target(scores, inside)], axis=1)
    release = None
    if release_features is not None:
        lam = llr(release_features, _fit(F, inside, np.ones(F.shape[0], bool)))
        tt["release_llr"] = lam
        release = release_reading(tt, lam)
    comps = tuple(c for a, b in COMPARISONS if (c := compare_groups(tt, a, b, seed)) is not None)
    return TargetedResult(dict(config or {}), int(F.shape[0]), tt, group_table(tt, scores, inside), comps, release,
                          run, float(seconds))
