"""lucidrains' byol-pytorch (byol_pytorch/byol_pytorch.py) as published, run as its README runs it:
BYOL(net, image_size, hidden_layer='avgpool') around a small ResNet-like CNN standing in for
torchvision's resnet50 (its children conv/bn/relu/layers, an 'avgpool' AdaptiveAvgPool2d and an
fc), custom augment_fn/augment_fn2 in place of the torchvision default (the README's documented
option), images from torch.randn. What it leans on: the singleton decorator caching the projector
and the target encoder through getattr/setattr, a forward hook found by dict([*net.named_modules()])
that keeps flatten(output) per input device, MaybeSyncBatchnorm asking dist.is_initialized(),
projector.to(hidden) (Module.to with a tensor), a mock forward on torch.randn(2, 3, size, size,
device=device) in __init__, copy.deepcopy of the online encoder with requires_grad turned off,
F.normalize(x, dim=-1, p=2) in the loss, chunk(2, dim=0) of predictions and projections, and the
moving average written as ma_params.data = old * beta + (1 - beta) * new; the SimSiam variant
(use_momentum=False) with its bias-free MLP and BatchNorm1d(affine=False). Randomness from
torch.manual_seed (both libraries draw PyTorch's CPU streams)."""
import copy
from functools import wraps

import pytest

from prog_helpers import compare_program, numpy_of, split_bias_before_norm, state_numpy


def byol_program(torch, init=None, use_momentum=True):
    nn = torch.nn
    F = torch.nn.functional
    dist = torch.distributed
    torch.manual_seed(0)

    # helper functions
    def default(val, def_val):
        return def_val if val is None else val

    def flatten(t):
        return t.reshape(t.shape[0], -1)

    def singleton(cache_key):
        def inner_fn(fn):
            @wraps(fn)
            def wrapper(self, *args, **kwargs):
                instance = getattr(self, cache_key)
                if instance is not None:
                    return instance

                instance = fn(self, *args, **kwargs)
                setattr(self, cache_key, instance)
                return instance
            return wrapper
        return inner_fn

    def get_module_device(module):
        return next(module.parameters()).device

    def set_requires_grad(model, val):
        for p in model.parameters():
            p.requires_grad = val

    def MaybeSyncBatchnorm(is_distributed=None):
        is_distributed = default(is_distributed, dist.is_initialized() and dist.get_world_size() > 1)
        return nn.SyncBatchNorm if is_distributed else nn.BatchNorm1d

    # loss fn
    def loss_fn(x, y):
        x = F.normalize(x, dim=-1, p=2)
        y = F.normalize(y, dim=-1, p=2)
        return 2 - 2 * (x * y).sum(dim=-1)

    # exponential moving average
    class EMA():
        def __init__(self, beta):
            super().__init__()
            self.beta = beta

        def update_average(self, old, new):
            if old is None:
                return new
            return old * self.beta + (1 - self.beta) * new

    def update_moving_average(ema_updater, ma_model, current_model):
        for current_params, ma_params in zip(current_model.parameters(), ma_model.parameters()):
            old_weight, up_weight = ma_params.data, current_params.data
            ma_params.data = ema_updater.update_average(old_weight, up_weight)

    # MLP class for projector and predictor
    def MLP(dim, projection_size, hidden_size=4096, sync_batchnorm=None):
        return nn.Sequential(
            nn.Linear(dim, hidden_size),
            MaybeSyncBatchnorm(sync_batchnorm)(hidden_size),
            nn.ReLU(inplace=True),
            nn.Linear(hidden_size, projection_size)
        )

    def SimSiamMLP(dim, projection_size, hidden_size=4096, sync_batchnorm=None):
        return nn.Sequential(
            nn.Linear(dim, hidden_size, bias=False),
            MaybeSyncBatchnorm(sync_batchnorm)(hidden_size),
            nn.ReLU(inplace=True),
            nn.Linear(hidden_size, hidden_size, bias=False),
            MaybeSyncBatchnorm(sync_batchnorm)(hidden_size),
            nn.ReLU(inplace=True),
            nn.Linear(hidden_size, projection_size, bias=False),
            MaybeSyncBatchnorm(sync_batchnorm)(projection_size, affine=False)
        )

    # a wrapper class for the base neural network
    # will manage the interception of the hidden layer output
    # and pipe it into the projecter and predictor nets
    class NetWrapper(nn.Module):
        def __init__(self, net, projection_size, projection_hidden_size, layer=-2, use_simsiam_mlp=False,
                     sync_batchnorm=None):
            super().__init__()
            self.net = net
            self.layer = layer
            self.projector = None
            self.projection_size = projection_size
            self.projection_hidden_size = projection_hidden_size
            self.use_simsiam_mlp = use_simsiam_mlp
            self.sync_batchnorm = sync_batchnorm
            self.hidden = {}
            self.hook_registered = False

        def _find_layer(self):
            if type(self.layer) == str:
                modules = dict([*self.net.named_modules()])
                return modules.get(self.layer, None)
            elif type(self.layer) == int:
                children = [*self.net.children()]
                return children[self.layer]
            return None

        def _hook(self, _, input, output):
            device = input[0].device
            self.hidden[device] = flatten(output)

        def _register_hook(self):
            layer = self._find_layer()
            assert layer is not None, f'hidden layer ({self.layer}) not found'
            layer.register_forward_hook(self._hook)
            self.hook_registered = True

        @singleton('projector')
        def _get_projector(self, hidden):
            _, dim = hidden.shape
            create_mlp_fn = MLP if not self.use_simsiam_mlp else SimSiamMLP
            projector = create_mlp_fn(dim, self.projection_size, self.projection_hidden_size,
                                      sync_batchnorm=self.sync_batchnorm)
            return projector.to(hidden)

        def get_representation(self, x):
            if self.layer == -1:
                return self.net(x)
            if not self.hook_registered:
                self._register_hook()
            self.hidden.clear()
            _ = self.net(x)
            hidden = self.hidden[x.device]
            self.hidden.clear()
            assert hidden is not None, f'hidden layer {self.layer} never emitted an output'
            return hidden

        def forward(self, x, return_projection=True):
            representation = self.get_representation(x)
            if not return_projection:
                return representation
            projector = self._get_projector(representation)
            projection = projector(representation)
            return projection, representation

    # main class
    class BYOL(nn.Module):
        def __init__(self, net, image_size, hidden_layer=-2, projection_size=256, projection_hidden_size=4096,
                     augment_fn=None, augment_fn2=None, moving_average_decay=0.99, use_momentum=True,
                     sync_batchnorm=None):
            super().__init__()
            self.net = net
            # (the default SimCLR augmentation of torchvision transforms is not built: augment_fn is given)
            self.augment1 = augment_fn
            self.augment2 = default(augment_fn2, self.augment1)
            self.online_encoder = NetWrapper(net, projection_size, projection_hidden_size, layer=hidden_layer,
                                             use_simsiam_mlp=not use_momentum, sync_batchnorm=sync_batchnorm)
            self.use_momentum = use_momentum
            self.target_encoder = None
            self.target_ema_updater = EMA(moving_average_decay)
            self.online_predictor = MLP(projection_size, projection_size, projection_hidden_size)
            # get device of network and make wrapper same device
            device = get_module_device(net)
            self.to(device)
            # send a mock image tensor to instantiate singleton parameters
            self.forward(torch.randn(2, 3, image_size, image_size, device=device))

        @singleton('target_encoder')
        def _get_target_encoder(self):
            target_encoder = copy.deepcopy(self.online_encoder)
            set_requires_grad(target_encoder, False)
            return target_encoder

        def reset_moving_average(self):
            del self.target_encoder
            self.target_encoder = None

        def update_moving_average(self):
            assert self.use_momentum, 'you do not need to update the moving average, since you have turned off ' \
                                      'momentum for the target encoder'
            assert self.target_encoder is not None, 'target encoder has not been created yet'
            update_moving_average(self.target_ema_updater, self.target_encoder, self.online_encoder)

        def forward(self, x, return_embedding=False, return_projection=True):
            assert not (self.training and x.shape[0] == 1), 'you must have greater than 1 sample when training, ' \
                                                            'due to the batchnorm in the projection layer'
            if return_embedding:
                return self.online_encoder(x, return_projection=return_projection)
            image_one, image_two = self.augment1(x), self.augment2(x)
            images = torch.cat((image_one, image_two), dim=0)
            online_projections, _ = self.online_encoder(images)
            online_predictions = self.online_predictor(online_projections)
            online_pred_one, online_pred_two = online_predictions.chunk(2, dim=0)
            with torch.no_grad():
                target_encoder = self._get_target_encoder() if self.use_momentum else self.online_encoder
                target_projections, _ = target_encoder(images)
                target_projections = target_projections.detach()
                target_proj_one, target_proj_two = target_projections.chunk(2, dim=0)
            loss_one = loss_fn(online_pred_one, target_proj_two.detach())
            loss_two = loss_fn(online_pred_two, target_proj_one.detach())
            loss = loss_one + loss_two
            return loss.mean()

    # a small stand-in for torchvision's resnet50 (same child names for the parts BYOL touches)
    class SmallResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
                                        nn.ReLU())
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.layer1(self.relu(self.bn1(self.conv1(x))))
            x = self.avgpool(x)
            return self.fc(torch.flatten(x, 1))

    resnet = SmallResNet()
    learner = BYOL(resnet, image_size=16, hidden_layer='avgpool', projection_size=16, projection_hidden_size=32,
                   augment_fn=lambda x: x.flip(-1), augment_fn2=lambda x: x * 0.9 + 0.05,
                   use_momentum=use_momentum)
    opt = torch.optim.Adam(learner.parameters(), lr=3e-4)

    def sample_unlabelled_images():
        return torch.randn(6, 3, 16, 16)

    losses = []
    for _ in range(3):
        images = sample_unlabelled_images()
        loss = learner(images)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if use_momentum:
            learner.update_moving_average()  # update moving average of target encoder
        losses.append(loss.item())
    learner.eval()
    projection, embedding = learner(torch.randn(2, 3, 16, 16), return_embedding=True)
    # The projector's first Linear feeds a BatchNorm1d: its bias gets gradients of rounding size, which
    # Adam turns into steps of lr, and its running mean follows (split_bias_before_norm); the eval-mode
    # projection reads that running mean, so it is compared by the losses only.
    biases = {"projector.0.bias", "net.layer1.0.bias"}
    own = {"projection": numpy_of(projection)}
    result = {"losses": losses, "embedding": numpy_of(embedding),
              "net": {k: numpy_of(v) for k, v in resnet.state_dict().items()}, "own": own}
    if use_momentum:
        result["target"], own["target"] = split_bias_before_norm(state_numpy(learner.target_encoder), biases)
    return result


@pytest.mark.parametrize("use_momentum", [True, False], ids=["byol", "simsiam"])
def test_byol(use_momentum):
    compare_program(byol_program, use_momentum=use_momentum, rtol=1e-3, atol=1e-4)
