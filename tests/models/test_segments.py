"""The per-column reductions of the multinomial diffusion: the one-kernel column maximum
gives the loop's values, so training and sampling give the same rows for a fixed seed."""
from __future__ import annotations

import pytest
import torch

from memviz.models.diffusion import Segments
from memviz.models.tabddpm import TabDDPM

TINY = {"layers": (32, 32), "dim_t": 16, "n_timesteps": 10, "batch_size": 64, "epochs": 2}


pytestmark = pytest.mark.usefixtures("one_thread")


def test_column_max_equals_the_loop_over_blocks_with_ties_and_extremes():
    seg = Segments([9, 16, 7, 1, 42, 2], "cpu")
    g = torch.Generator().manual_seed(0)
    x = torch.randn((500, seg.width), generator=g) * 1e3
    x[:100] = torch.round(x[:100] / 500)                          # many ties inside a block
    x[100:110] = -3.4e38                                          # the smallest float32s
    x[110:120, :9] = float("-inf")                                # a whole block at -inf
    x[120:130] = 3.4e38
    got, want = seg.column_max(x), seg.column_max_loop(x)
    assert torch.equal(got, want)
    x = torch.cat([x[:110], x[120:]])                             # argmax spreads by a product: finite only
    assert torch.equal(seg.argmax(x), torch.stack([b.argmax(1) for b in x.split(seg.sizes, 1)], 1))


@pytest.mark.parametrize("fast_path, reference", [("column_max", "column_max_loop"), ("spread", "spread_product")])
def test_training_and_sampling_unchanged_by_the_fast_segment_ops(sample, monkeypatch, fast_path, reference):
    """The column max (scatter_reduce) and the gathered spread give the same losses and rows as the
    plain forms they replace (a per-segment loop, a product with the membership matrix)."""
    train = sample[0].subset(sample[0].row_ids[:400])
    fast = TabDDPM(**TINY, seed=3, n_threads=1).fit(train)
    rows = fast.sample(300, seed=5)
    monkeypatch.setattr(Segments, fast_path, getattr(Segments, reference))
    slow = TabDDPM(**TINY, seed=3, n_threads=1).fit(train)
    assert fast.loss_history_ == slow.loss_history_
    assert rows.equals(slow.sample(300, seed=5))


def test_spread_gather_equals_the_product_and_keeps_the_gradient_path():
    seg = Segments([9, 16, 7, 1, 42, 2], "cpu")
    g = torch.Generator().manual_seed(1)
    y = torch.randn((300, seg.n_cols), generator=g) * torch.logspace(-30, 30, 300)[:, None]
    y[:20] = 0.0
    y[20:30] = -3.4e38
    assert torch.equal(seg.spread(y), seg.spread_product(y))
    with torch.inference_mode():
        assert torch.equal(seg.spread(y), seg.spread_product(y))
    w = y.clone().requires_grad_()
    out = seg.spread(w)
    assert out.grad_fn is not None and "Mm" in type(out.grad_fn).__name__   # product backward, no scatter-add
    with torch.no_grad():
        assert seg.spread(w).grad_fn is None


def test_in_place_gumbel_draw_equals_the_formula():
    seg = Segments([9, 16, 7, 1, 42, 2], "cpu")
    logits = torch.randn((400, seg.width), generator=torch.Generator().manual_seed(2)) * 5
    with torch.inference_mode():
        got = seg.gumbel_codes(logits, torch.Generator().manual_seed(3))
    u = torch.rand(logits.shape, generator=torch.Generator().manual_seed(3))
    want = seg.argmax(logits + -torch.log(-torch.log(u + 1e-30) + 1e-30))
    assert torch.equal(got, want)
