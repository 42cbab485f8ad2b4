"""torch.distributed.rpc.functions: async_execution, which marks a function that returns a Future
so that the callee replies with the Future's value once it completes, not with the Future."""
import functools

__all__ = ["async_execution"]


def async_execution(fn):
    """Marks fn (called through RPC) as returning a Future of its result."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    wrapper._wrapped_async_rpc_function = fn
    return wrapper
