"""DataLoader's internals, as in torch.utils.data._utils: collation, fetching, the worker loop."""

# How long a blocked queue read waits before the reader checks that its peer still lives: a
# worker checks its parent, the main process checks its workers (PyTorch's value).
MP_STATUS_CHECK_INTERVAL = 5.0

from . import collate, fetch, shared, worker  # noqa: E402

__all__ = ["MP_STATUS_CHECK_INTERVAL", "collate", "fetch", "shared", "worker"]
