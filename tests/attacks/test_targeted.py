"""The targeted shadow-model attack (memviz.attacks): its plan, its features against a naive loop, LiRA's
test against a from-definition refit and sklearn on simulated features (null and planted), the attack
folder's refusals, and the whole attack on a tiny warm-up run."""
import json
import shutil
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from helpers import TINY_MODEL
from scipy.stats import multivariate_normal
from sklearn.metrics import roc_auc_score

from memviz.attacks.design import ShadowConfig, choose_targets, make_plan
from memviz.attacks.features import DELTA, FEATURES, FeatureSpace
from memviz.attacks.lira import TargetedResult, _fit, analyse, loo_scores
from memviz.attacks.shadow import targeted_attack
from memviz.attacks.store import AttackStore
from memviz.errors import MemvizError
from memviz.evidence.suite import Evidence


@pytest.fixture(scope="module")
def parts(sample):
    train, test = sample
    return train.subset(train.row_ids[:200]), test.subset(test.row_ids[:300])


def test_plan_puts_each_target_in_half_the_shadows_and_keeps_the_size(parts):
    tr, ho = parts
    targets = choose_targets(tr, ho, top=tr.row_ids[[5, 9]], named=tr.row_ids[[9, 11]], n_random=4, n_holdout=3,
                             seed=2)
    assert list(targets.frame["group"]) == ["top"] * 2 + ["named"] + ["random"] * 4 + ["holdout"] * 3
    assert len(set(targets.ids("random")) & set(tr.row_ids[[5, 9, 11]])) == 0
    plan = make_plan(tr, ho, targets, ShadowConfig(n_shadows=8, seed=3))
    assert (plan.inside.sum(axis=0) == 4).all()
    member = targets.members
    assert not np.isin(plan.background, targets.frame["row_id"][member]).any()
    assert not np.isin(plan.replacements[member], targets.ids("holdout")).any()
    for s in range(8):
        frame = plan.shadow_frame(s, tr, ho, targets)
        assert len(frame) == len(tr) + int(plan.inside[s, ~member].sum())     # members swapped, controls added
    again = make_plan(tr, ho, targets, ShadowConfig(n_shadows=8, seed=3))
    assert again.digest() == plan.digest()
    with pytest.raises(MemvizError, match="n_shadows"):
        ShadowConfig(n_shadows=5).checked()
    with pytest.raises(MemvizError, match="not a training row_id"):
        choose_targets(tr, ho, top=[10 ** 9])


def test_features_equal_a_naive_loop(parts):
    tr, ho = parts
    targets = tr.data.iloc[:6]
    fs = FeatureSpace.fit(tr.data.iloc[6:], targets, tr.schema, k=3, others=[ho.data])
    gen = pd.concat([ho.data.iloc[:40], tr.data.iloc[[0, 0, 2]]], ignore_index=True)   # two copies of target 0
    got = fs.features(gen)
    u_t = fs.targets
    cols = list(fs.space.num_cols + fs.space.cat_cols)
    u_g = fs.space.encode(gen[cols]).astype(np.float64)
    for t in range(len(targets)):
        d = np.sqrt(((u_g - u_t[t]) ** 2).sum(axis=1))
        want = [np.log(DELTA + d.min()), np.log(DELTA + np.sort(d)[:3].mean()),
                np.log(np.mean(np.exp(-0.5 * d * d))), np.log1p((d == 0).sum())]
        np.testing.assert_allclose(got[t], want, rtol=1e-9, atol=1e-9)
    assert got[0, FEATURES.index("exact")] == pytest.approx(np.log(3)) and got[0, 0] == pytest.approx(np.log(DELTA))


def _simulated(S=32, T=40, shift=None, seed=0):
    rng = np.random.default_rng(seed)
    inside = np.zeros((S, T), bool)
    for t in range(T):
        inside[rng.permutation(S)[: S // 2], t] = True
    base = rng.normal(0, 1, (1, T, len(FEATURES)))
    F = base + rng.normal(0, 0.5, (S, T, len(FEATURES)))
    if shift is not None:
        F -= inside[:, :, None] * shift[None, :, None]                      # in: nearer (smaller features)
    return F, inside


def test_lira_scores_equal_a_refit_without_the_shadow_and_sklearns_auc():
    F, inside = _simulated(S=10, T=6, shift=np.full(6, 0.8), seed=1)
    scores = loo_scores(F, inside)
    for s in (0, 7):
        keep = np.arange(10) != s
        # from the definition: per-target means and pooled covariances of the other shadows
        mu_in = np.stack([F[keep][inside[keep][:, t], t].mean(axis=0) for t in range(6)])
        mu_out = np.stack([F[keep][~inside[keep][:, t], t].mean(axis=0) for t in range(6)])
        fit = _fit(F, inside, keep)
        want = [multivariate_normal(mu_in[t], fit[2]).logpdf(F[s, t]) - multivariate_normal(mu_out[t], fit[3]).logpdf(F[s, t])
                for t in range(6)]
        np.testing.assert_allclose(scores[s], want, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(fit[0], mu_in) and np.testing.assert_allclose(fit[1], mu_out)
    targets = pd.DataFrame({"target": range(6), "row_id": range(6), "group": ["top"] * 3 + ["random"] * 3,
                            "source": "train"})
    res = analyse(F, inside, targets)
    for t in range(6):
        assert res.targets.loc[t, "auc"] == pytest.approx(roc_auc_score(inside[:, t], scores[:, t]), abs=1e-12)


def test_null_features_read_as_chance_and_planted_exposure_is_found():
    """Features that do not depend on membership: group AUCs about 0.5, few targets exposed, no difference;
    a larger shift in the top group: the top group exposed, the comparison finds it, and a release in which
    the members look in and the controls out: flagged."""
    groups = ["top"] * 20 + ["random"] * 20 + ["holdout"] * 20
    targets = pd.DataFrame({"target": range(60), "row_id": range(60), "group": groups,
                            "source": ["train"] * 40 + ["holdout"] * 20})
    F, inside = _simulated(S=32, T=60, seed=2)
    null = analyse(F, inside, targets)
    g = null.groups.set_index("group")
    assert (g["auc_low"] <= 0.5).all() and (g["auc_high"] >= 0.5).all()
    assert null.targets["exposed"].sum() <= 6                                # 60 at 2.5 %: P(> 6) < 0.01
    c = null.comparison("top", "random")
    assert c["low"] <= 0 <= c["high"] and c["p_two_sided"] > 0.01
    shift = np.r_[np.full(20, 1.0), np.full(40, 0.4)]                     # top rows the most exposed
    F, inside = _simulated(S=32, T=60, shift=shift, seed=3)
    out = np.stack([F[~inside[:, t], t].mean(axis=0) for t in range(60)])
    rel = out - np.r_[shift[:40], np.zeros(20)][:, None]                     # members look in, controls out
    res = analyse(F, inside, targets, release_features=rel)
    g = res.groups.set_index("group")
    assert g.loc["top", "auc_low"] > 0.8 and g.loc["top", "auc"] > g.loc["random", "auc"] + 0.1
    assert res.comparison("top", "random")["low"] > 0 and res.comparison("top", "random")["p_greater"] < 0.001
    assert res.release["flags"] and res.flags_copying and res.reading().flags
    back = TargetedResult.from_dict(json.loads(json.dumps(res.to_dict(), allow_nan=False)))
    assert back.sentence() == res.sentence() and back.release == res.release
    assert "more exposed than random rows" in res.sentence()


def test_the_folder_refuses_another_attack_and_a_second_writer(tmp_path):
    store = AttackStore(tmp_path / "a").acquire()
    store.begin({"config": {"n_shadows": 4}, "targets": [1, 2]})
    store.commit(0, np.zeros((2, len(FEATURES))), np.arange(2), {"seconds": 1.0})
    assert store.done() == [0] and store.status()["done"] == 1
    other = AttackStore(tmp_path / "a")
    with pytest.raises(MemvizError, match="another process"):
        other.acquire()
    store.release()
    other.acquire()
    with pytest.raises(MemvizError, match="targets differs"):
        other.begin({"config": {"n_shadows": 4}, "targets": [1, 3]})
    other.begin({"config": {"n_shadows": 4}, "targets": [1, 2]})          # the same attack: resumed
    (tmp_path / "a" / "shadows" / ".s0001.999999999.tmp").mkdir()           # a killed writer's half shadow
    assert other.remove_stale() == 1 and other.done() == [0]
    other.release()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.csv").write_text("1")
    with pytest.raises(MemvizError, match="other files"):
        AttackStore(tmp_path / "b").acquire().begin({"config": {}})


@pytest.mark.slow
def test_a_tiny_attack_trains_reuses_and_reads_the_release(parts, tmp_path):
    tr, ho = parts
    targets = choose_targets(tr, ho, top=tr.row_ids[:3], n_random=3, n_holdout=3, seed=1)
    cfg = ShadowConfig(n_shadows=4, model_params={**TINY_MODEL, "steps": 20}, device="cpu")
    seen = []
    res = targeted_attack(tr, targets, cfg, tmp_path / "att", holdout=ho, release=tr.data.iloc[:80],
                          progress=seen.append)
    assert [e["done"] for e in seen if e["event"] == "shadow"] == [1, 2, 3, 4]
    assert len(res.targets) == 9 and res.n_shadows == 4 and res.release is not None
    assert json.loads((tmp_path / "att" / "result.json").read_text())["n_shadows"] == 4
    samples = pd.read_parquet(tmp_path / "att" / "shadows" / "s0002" / "samples.parquet")
    assert len(samples) == 80 and list(samples.columns) == list(tr.schema.columns)
    seen.clear()
    again = targeted_attack(tr, targets, cfg, tmp_path / "att", holdout=ho, release=tr.data.iloc[:80],
                            progress=seen.append)
    assert not [e for e in seen if e["event"] == "shadow"]                  # every shadow reused
    pd.testing.assert_frame_equal(again.targets, res.targets)
    with pytest.raises(MemvizError, match="differs"):
        targeted_attack(tr, targets, ShadowConfig(n_shadows=6, model_params=cfg.model_params, device="cpu"),
                        tmp_path / "att", holdout=ho, release=tr.data.iloc[:80])
    shutil.rmtree(tmp_path / "att")

    ev = Evidence().with_extra("targeted", res)
    assert ev.attack_readings()[0].test == "targeted"


def test_the_attacks_targets_are_named_by_the_users_key(parts, tmp_path):
    """Issue 48: result.json named every target by memviz's row_id only. With a key, each target carries the user's
    key of its own table (the training table's for a training row, the hold-out's for a hold-out row)."""
    tr, ho = parts
    schema = replace(tr.schema, key="customer")
    tr = replace(tr, schema=schema, keys=pd.Series([f"C-{7 * i + 3:05d}" for i in tr.row_ids], index=tr.data.index))
    ho = replace(ho, schema=schema, keys=pd.Series([f"H-{11 * i:05d}" for i in ho.row_ids], index=ho.data.index))
    targets = choose_targets(tr, ho, top=tr.row_ids[5:7], n_random=2, n_holdout=2, seed=2)
    cfg = ShadowConfig(n_shadows=4, model_params={**TINY_MODEL, "steps": 5}, device="cpu")
    res = targeted_attack(tr, targets, cfg, tmp_path / "att", holdout=ho)
    saved = json.loads((tmp_path / "att" / "result.json").read_text())["targets"]
    assert len(saved) == 6
    for t in saved:
        table = tr if t["source"] == "train" else ho
        assert t["customer"] == table.keys.loc[t["row_id"]], t
    assert list(res.targets.columns[:3]) == ["target", "row_id", "customer"]
    assert TargetedResult.from_dict(json.loads((tmp_path / "att" / "result.json").read_text())).targets[
        "customer"].tolist() == [t["customer"] for t in saved]


def test_a_composite_keys_columns_name_the_attacks_targets(parts, tmp_path):
    """A composite key names each target by its own columns in result.json, as every other file names rows."""
    tr, ho = parts
    schema = replace(tr.schema, key=("branch", "account_no"))
    keys = pd.DataFrame({"branch": ["North", "South"] * (len(tr) // 2), "account_no": tr.row_ids // 2 * 7 + 1},
                        index=tr.data.index)
    tr = replace(tr, schema=schema, keys=keys)
    targets = choose_targets(tr, ho, top=tr.row_ids[4:6], n_random=2, n_holdout=2, seed=3)
    cfg = ShadowConfig(n_shadows=4, model_params={**TINY_MODEL, "steps": 5}, device="cpu")
    targeted_attack(tr, targets, cfg, tmp_path / "att", holdout=ho)
    saved = json.loads((tmp_path / "att" / "result.json").read_text())["targets"]
    for t in saved:
        if t["source"] == "train":
            assert (t["branch"], t["account_no"]) == tuple(keys.loc[t["row_id"]]), t
        else:                                                   # the hold-out has no key: nothing to name it by
            assert t.get("branch") is None and t.get("account_no") is None, t
