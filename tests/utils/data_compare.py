"""Compares what minitorch.utils.data and torch.utils.data return: the same nesting of
containers (types, namedtuple names, keys), and tensors of the same shape, dtype and values."""
import numpy as np

import minitorch


def same_structure(ours, theirs, torch):
    """Asserts that ours (minitorch) and theirs (PyTorch) hold the same batch."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, minitorch.Tensor), type(ours)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    elif isinstance(theirs, dict):
        assert type(ours).__name__ == type(theirs).__name__ and list(ours) == list(theirs)
        for key in theirs:
            same_structure(ours[key], theirs[key], torch)
    elif isinstance(theirs, (list, tuple)):
        assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            same_structure(a, b, torch)
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_array_equal(ours, theirs)
    else:
        assert type(ours) is type(theirs) and ours == theirs, (ours, theirs)


def to_lib(sample, lib):
    """sample with each NumPy array (not scalar) made a tensor of lib (minitorch or torch)."""
    if isinstance(sample, np.ndarray):
        return lib.from_numpy(sample.copy())
    if isinstance(sample, dict):
        return {k: to_lib(v, lib) for k, v in sample.items()}
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(to_lib(v, lib) for v in sample))
    if isinstance(sample, (list, tuple)):
        return type(sample)(to_lib(v, lib) for v in sample)
    return sample
