"""minitorch.distributed.elastic: the part of torch.distributed.elastic that training scripts
import (multiprocessing.errors.record); the launcher itself is minitorch.distributed.run."""
