"""torch.distributed.distributed_c10d, the module where PyTorch defines the process-group API:
here the same names as minitorch.distributed (which defines them), _get_default_store included."""
from minitorch.distributed import *  # noqa: F401,F403
from minitorch.distributed import _get_default_store  # noqa: F401
from minitorch.distributed import (Backend, DistError, DistStoreError, FileStore, GroupMember, HashStore, P2POp,  # noqa: E402,E501
                                   PrefixStore, ProcessGroup, ReduceOp, Store, TCPStore, Work)

# The classes PyTorch defines here name this module as theirs; its errors name torch.distributed,
# and its C++ stores (torch._C._distributed_c10d, private) are public as torch.distributed's.
for _cls in (Backend, GroupMember, P2POp, PrefixStore, ProcessGroup, ReduceOp, Store, Work):
    _cls.__module__ = __name__
for _cls in (DistError, DistStoreError, FileStore, HashStore, TCPStore):
    _cls.__module__ = "minitorch.distributed"
