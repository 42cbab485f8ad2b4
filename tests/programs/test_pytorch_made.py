"""karpathy/pytorch-made: made.py's MaskedLinear (a subclass of nn.Linear with a registered 'mask'
buffer, set by self.mask.data.copy_(torch.from_numpy(mask.astype(np.uint8).T)): a transposed, so
non-contiguous, uint8 array copied into a float buffer; forward F.linear(input, self.mask *
self.weight, self.bias)) and MADE (masks from np.random.RandomState orderings, cycled by
update_masks, nout = k * nin replicating the output mask), its __main__'s autoregressive check
(the gradient of each output with respect to the input is zero on the inputs it must not see), and
run.py's run_epoch: torch.set_grad_enabled(split == 'train') as a call, model.train() if ... else
model.eval(), Variable, torch.zeros_like, the loss
F.binary_cross_entropy_with_logits(xbhat, xb, size_average=False) / B (the legacy size_average
argument), loss.data.item(), Adam with weight_decay and StepLR stepped with the epoch
(scheduler.step(epoch), deprecated in both), on a binarised random array in place of MNIST and on
the CPU instead of .cuda()."""
import warnings

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def made_module(torch):
    """made.py as published, for the library `torch`."""
    nn = torch.nn
    F = torch.nn.functional

    class MaskedLinear(nn.Linear):
        """ same as Linear except has a configurable mask on the weights """

        def __init__(self, in_features, out_features, bias=True):
            super().__init__(in_features, out_features, bias)
            self.register_buffer('mask', torch.ones(out_features, in_features))

        def set_mask(self, mask):
            self.mask.data.copy_(torch.from_numpy(mask.astype(np.uint8).T))

        def forward(self, input):
            return F.linear(input, self.mask * self.weight, self.bias)

    class MADE(nn.Module):
        def __init__(self, nin, hidden_sizes, nout, num_masks=1, natural_ordering=False):
            super().__init__()
            self.nin = nin
            self.nout = nout
            self.hidden_sizes = hidden_sizes
            assert self.nout % self.nin == 0, "nout must be integer multiple of nin"

            # define a simple MLP neural net
            self.net = []
            hs = [nin] + hidden_sizes + [nout]
            for h0, h1 in zip(hs, hs[1:]):
                self.net.extend([
                    MaskedLinear(h0, h1),
                    nn.ReLU(),
                ])
            self.net.pop()  # pop the last ReLU for the output layer
            self.net = nn.Sequential(*self.net)

            # seeds for orders/connectivities of the model ensemble
            self.natural_ordering = natural_ordering
            self.num_masks = num_masks
            self.seed = 0  # for cycling through num_masks orderings

            self.m = {}
            self.update_masks()  # builds the initial self.m connectivity

        def update_masks(self):
            if self.m and self.num_masks == 1:
                return  # only a single seed, skip for efficiency
            L = len(self.hidden_sizes)

            # fetch the next seed and construct a random stream
            rng = np.random.RandomState(self.seed)
            self.seed = (self.seed + 1) % self.num_masks

            # sample the order of the inputs and the connectivity of all neurons
            self.m[-1] = np.arange(self.nin) if self.natural_ordering else rng.permutation(self.nin)
            for l in range(L):
                self.m[l] = rng.randint(self.m[l - 1].min(), self.nin - 1, size=self.hidden_sizes[l])

            # construct the mask matrices
            masks = [self.m[l - 1][:, None] <= self.m[l][None, :] for l in range(L)]
            masks.append(self.m[L - 1][:, None] < self.m[-1][None, :])

            # handle the case where nout = nin * k, for integer k > 1
            if self.nout > self.nin:
                k = int(self.nout / self.nin)
                # replicate the mask across the other outputs
                masks[-1] = np.concatenate([masks[-1]] * k, axis=1)

            # set the masks in all MaskedLinear layers
            layers = [l for l in self.net.modules() if isinstance(l, MaskedLinear)]
            for l, m in zip(layers, masks):
                l.set_mask(m)

        def forward(self, x):
            return self.net(x)

    return MaskedLinear, MADE


def made_program(torch, init=None, epochs=2):
    Variable = torch.autograd.Variable  # run.py's `from torch.autograd import Variable`
    F = torch.nn.functional
    MaskedLinear, MADE = made_module(torch)
    result = {}

    # made.py's __main__: which inputs each output depends on, from the gradients
    D = 10
    rng = np.random.RandomState(14)
    x = (rng.rand(1, D) > 0.5).astype(np.float32)
    configs = [(D, [], D, False), (D, [200], D, False), (D, [200, 220], D, False), (D, [200, 220], 3 * D, False)]
    torch.manual_seed(0)
    checks = []
    for nin, hiddens, nout, natural_ordering in configs:
        model = MADE(nin, hiddens, nout, natural_ordering=natural_ordering)
        res = []
        for k in range(nout):
            xtr = Variable(torch.from_numpy(x), requires_grad=True)
            xtrhat = model(xtr)
            loss = xtrhat[0, k]
            loss.backward()
            depends = (xtr.grad[0].numpy() != 0).astype(np.uint8)
            depends_ix = list(np.where(depends)[0])
            isok = k % nin not in depends_ix
            res.append((len(depends_ix), k, depends_ix, isok))
        res.sort()
        checks.append([(nl, k, [int(i) for i in ix], isok) for nl, k, ix, isok in res])
        assert all(isok for _, _, _, isok in res)
    result["own"] = {"dependencies": checks}  # from each library's own initial weights

    # run.py on a binarised random array in place of binarized_mnist.npz
    data = np.random.RandomState(0)
    xtr = torch.from_numpy((data.rand(400, 16) > 0.5).astype(np.float32))
    xte = torch.from_numpy((data.rand(200, 16) > 0.5).astype(np.float32))
    hidden_list = [64, 64]
    model = MADE(xtr.size(1), hidden_list, xtr.size(1), num_masks=2)
    start_from(torch, model, init, result)
    opt = torch.optim.Adam(model.parameters(), 1e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=45, gamma=0.1)
    samples, resample_every = 2, 3
    printed = []

    def run_epoch(split, upto=None):
        torch.set_grad_enabled(split == 'train')  # enable/disable grad for efficiency of forwarding test batches
        model.train() if split == 'train' else model.eval()
        nsamples = 1 if split == 'train' else samples
        x = xtr if split == 'train' else xte
        N, D = x.size()
        B = 100  # batch size
        nsteps = N // B if upto is None else min(N // B, upto)
        lossfs = []
        for step in range(nsteps):

            # fetch the next batch of data
            xb = Variable(x[step * B:step * B + B])

            # get the logits, potentially run the same batch a number of times, resampling each time
            xbhat = torch.zeros_like(xb)
            for s in range(nsamples):
                # perform order/connectivity-agnostic training by resampling the masks
                if step % resample_every == 0 or split == 'test':  # if in test, cycle masks every time
                    model.update_masks()
                # forward the model
                xbhat += model(xb)
            xbhat /= nsamples

            # evaluate the binary cross entropy loss
            loss = F.binary_cross_entropy_with_logits(xbhat, xb, size_average=False) / B
            lossf = loss.data.item()
            lossfs.append(lossf)

            # backward/update
            if split == 'train':
                opt.zero_grad()
                loss.backward()
                opt.step()

        printed.append("%s epoch average loss: %f" % (split, np.mean(lossfs)))
        return lossfs

    losses = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # size_average and scheduler.step(epoch) are deprecated
        for epoch in range(epochs):
            scheduler.step(epoch)
            losses.append(run_epoch('test', upto=5))  # run only a few batches for approximate test accuracy
            losses.append(run_epoch('train'))
        losses.append(run_epoch('test'))
    torch.set_grad_enabled(True)
    result.update(losses=losses, lr=opt.param_groups[0]["lr"], seed=model.seed,
                  masks=[numpy_of(l.mask) for l in model.net.modules() if isinstance(l, MaskedLinear)],
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_pytorch_made():
    compare_program(made_program, rtol=1e-3, atol=1e-4)
