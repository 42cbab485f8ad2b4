"""The parts of minitorch.library: schemas (schema.py), custom_op's CustomOpDef and the Autograd
kernels of Python-defined ops (custom_ops.py), and opcheck (opcheck.py)."""
