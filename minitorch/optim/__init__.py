"""minitorch.optim: optimizers and learning-rate schedulers, as torch.optim.

Each optimizer's step() updates all the parameters of a parameter group in one call into the C
core (csrc/cpu/optim.c), with PyTorch's update formulas; Python only keeps the groups and the
state and passes them in.
"""
from . import lr_scheduler
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler"]
