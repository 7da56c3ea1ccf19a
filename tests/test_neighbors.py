import numpy as np
import pytest
import torch

from memviz.neighbors import smallest


@pytest.mark.parametrize("n", [5, 63, 64, 1000, 4097])
@pytest.mark.parametrize("kc", [1, 3, 8])
def test_block_selection_equals_topk(n, kc):
    if kc > n:
        pytest.skip("k larger than the row")
    gen = torch.Generator().manual_seed(n * 10 + kc)
    # integer-valued keys: many ties, values in every block and in the tail
    key = torch.randint(0, 50, (7, n), generator=gen).to(torch.float64)
    v, pos = smallest(key, kc)
    ref, _ = torch.topk(key, kc, dim=1, largest=False)
    torch.testing.assert_close(v, ref)
    torch.testing.assert_close(torch.gather(key, 1, pos), v)   # positions point at those values
    assert all(len(set(row)) == kc for row in pos.tolist())   # no position twice


def test_block_selection_finds_minima_in_the_tail():
    key = torch.full((2, 1000), 5.0, dtype=torch.float64)
    key[0, 999], key[1, 960] = -1.0, -2.0          # beyond the last full 64-block (960)
    v, pos = smallest(key, 3)
    assert pos[0, 0] == 999 and pos[1, 0] == 960
    assert np.allclose(v[:, 1:].numpy(), 5.0)
