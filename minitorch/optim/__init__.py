"""minitorch.optim: optimizers and learning-rate schedulers, as torch.optim.

SGD, Adam, AdamW and RMSprop update all the parameters of a parameter group in one call into the
C core (csrc/cpu/optim.c), with PyTorch's update formulas; Python only keeps the groups and the
state and passes them in. Adagrad, Adadelta, Adamax, NAdam, RAdam, LBFGS and Muon are written
with tensor ops, as PyTorch's single-tensor implementations.
"""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rprop import Rprop
from .asgd import ASGD
from .adafactor import Adafactor
from .rmsprop import RMSprop
from .sgd import SGD
from .sparse_adam import SparseAdam

# PyTorch's Adafactor and Muon name torch.optim as their module (their files are private there).
for _cls in (Adafactor, Muon):
    _cls.__module__ = __name__

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "LBFGS", "lr_scheduler", "Rprop", "ASGD", "Adafactor", "swa_utils", "SparseAdam", "Muon"]
