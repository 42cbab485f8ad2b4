"""minitorch.distributed.elastic.multiprocessing: the errors module of torchelastic's."""
