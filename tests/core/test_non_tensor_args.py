"""Functions written in Python raise PyTorch's TypeError for a non-tensor where a tensor must be,
not the AttributeError of reading .dim() off a list (the fuzzer's find)."""
import pytest

import minitorch
import minitorch.nn.functional as F

CALLS = [
    ("affine_grid", lambda: F.affine_grid(3, [1, 1, 2, 2], False)),
    ("triplet_margin_with_distance_loss", lambda: F.triplet_margin_with_distance_loss([], [], [])),
    ("ctc_loss", lambda: F.ctc_loss([], [], [1], [1])),
    ("embedding_bag", lambda: F.embedding_bag([], [])),
    ("grid_sample", lambda: F.grid_sample([], [], align_corners=False)),
    ("group_norm", lambda: F.group_norm([], 1)),
    ("interpolate", lambda: F.interpolate([], scale_factor=2)),
    ("local_response_norm", lambda: F.local_response_norm([], 2)),
    ("lp_pool1d", lambda: F.lp_pool1d([], 2, 2)),
    ("lp_pool2d", lambda: F.lp_pool2d(3, 2, 2)),
    ("max_unpool2d", lambda: F.max_unpool2d([], [], 2)),
    ("multi_margin_loss", lambda: F.multi_margin_loss([], [])),
    ("multilabel_margin_loss", lambda: F.multilabel_margin_loss([], [])),
    ("pdist", lambda: F.pdist([])),
    ("hsplit", lambda: minitorch.hsplit([], 2)),
    ("split", lambda: minitorch.split([], 1)),
    ("norm", lambda: minitorch.norm("x")),
    ("tensordot", lambda: minitorch.tensordot([], [])),
    ("where", lambda: minitorch.where([])),
    ("linalg_vecdot", lambda: minitorch.linalg.vecdot([], [])),
    ("linalg_vander", lambda: minitorch.linalg.vander([])),
]


@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
def test_a_non_tensor_raises_type_error(name, call):
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument '\w+' \(position \d\) must be Tensor, not "):
        call()
