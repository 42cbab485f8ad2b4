"""facebookresearch/moco's MoCo v2 (moco/builder.py and main_moco.py) run as its main_worker runs on
one process: dist.init_process_group("gloo", init_method="tcp://...", world_size=1, rank=0),
the model wrapped in nn.parallel.DistributedDataParallel; the builder with the v2 MLP head
(dim_mlp = self.encoder_q.fc.weight.shape[1], nn.Sequential(nn.Linear(dim_mlp, dim_mlp),
nn.ReLU(), self.encoder_q.fc)), the key encoder copied by param_k.data.copy_(param_q.data) with
requires_grad = False, the queue buffer registered from torch.randn(dim, K) and re-bound to
nn.functional.normalize(self.queue, dim=0), queue_ptr a long buffer; the momentum update
param_k.data = param_k.data * m + param_q.data * (1. - m) under torch.no_grad(); shuffling BN by
concat_all_gather (dist.all_gather into torch.ones_like tensors), torch.randperm,
dist.broadcast(idx_shuffle, src=0), torch.argsort, idx_shuffle.view(num_gpus, -1)[gpu_idx];
l_pos = torch.einsum('nc,nc->n', [q, k]).unsqueeze(-1), l_neg = torch.einsum('nc,ck->nk', [q,
self.queue.clone().detach()]), logits /= self.T, labels torch.zeros(..., dtype=torch.long); the
enqueue self.queue[:, ptr:ptr + batch_size] = keys.T with int(self.queue_ptr) and
self.queue_ptr[0] = ptr. Training as main_moco.py: CrossEntropyLoss, SGD(momentum=0.9,
weight_decay=1e-4), adjust_learning_rate with the cosine rule written into param_groups,
accuracy(output, target, topk=(1, 5)) from output.topk(maxk, 1, True, True). The base encoder is
a small ResNet-style CNN with a .fc layer, in torchvision's place; the two augmented views of each
image come from NumPy (random crops, flips and colour scaling)."""
import math
import socket

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from test_imagenet_style import accuracy  # main_moco.py's accuracy is the ImageNet example's

IMG = 16


def moco_builder(torch):
    nn = torch.nn

    @torch.no_grad()
    def concat_all_gather(tensor):
        """Performs all_gather operation on the provided tensors.
        *** Warning ***: torch.distributed.all_gather has no gradient.
        """
        tensors_gather = [torch.ones_like(tensor) for _ in range(torch.distributed.get_world_size())]
        torch.distributed.all_gather(tensors_gather, tensor, async_op=False)

        output = torch.cat(tensors_gather, dim=0)
        return output

    class MoCo(nn.Module):
        """Build a MoCo model with: a query encoder, a key encoder, and a queue
        https://arxiv.org/abs/1911.05722
        """

        def __init__(self, base_encoder, dim=128, K=65536, m=0.999, T=0.07, mlp=False):
            """dim: feature dimension (default: 128); K: queue size; number of negative keys
            (default: 65536); m: moco momentum of updating key encoder (default: 0.999);
            T: softmax temperature (default: 0.07)"""
            super(MoCo, self).__init__()

            self.K = K
            self.m = m
            self.T = T

            # create the encoders
            # num_classes is the output fc dimension
            self.encoder_q = base_encoder(num_classes=dim)
            self.encoder_k = base_encoder(num_classes=dim)

            if mlp:  # hack: brute-force replacement
                dim_mlp = self.encoder_q.fc.weight.shape[1]
                self.encoder_q.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_q.fc)
                self.encoder_k.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_k.fc)

            for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
                param_k.data.copy_(param_q.data)  # initialize
                param_k.requires_grad = False  # not update by gradient

            # create the queue
            self.register_buffer("queue", torch.randn(dim, K))
            self.queue = nn.functional.normalize(self.queue, dim=0)

            self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

        @torch.no_grad()
        def _momentum_update_key_encoder(self):
            """Momentum update of the key encoder"""
            for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
                param_k.data = param_k.data * self.m + param_q.data * (1. - self.m)

        @torch.no_grad()
        def _dequeue_and_enqueue(self, keys):
            # gather keys before updating queue
            keys = concat_all_gather(keys)

            batch_size = keys.shape[0]

            ptr = int(self.queue_ptr)
            assert self.K % batch_size == 0  # for simplicity

            # replace the keys at ptr (dequeue and enqueue)
            self.queue[:, ptr:ptr + batch_size] = keys.T
            ptr = (ptr + batch_size) % self.K  # move pointer

            self.queue_ptr[0] = ptr

        @torch.no_grad()
        def _batch_shuffle_ddp(self, x):
            """Batch shuffle, for making use of BatchNorm.
            *** Only support DistributedDataParallel (DDP) model. ***
            """
            # gather from all gpus
            batch_size_this = x.shape[0]
            x_gather = concat_all_gather(x)
            batch_size_all = x_gather.shape[0]

            num_gpus = batch_size_all // batch_size_this

            # random shuffle index
            idx_shuffle = torch.randperm(batch_size_all).to(x.device)

            # broadcast to all gpus
            torch.distributed.broadcast(idx_shuffle, src=0)

            # index for restoring
            idx_unshuffle = torch.argsort(idx_shuffle)

            # shuffled index for this gpu
            gpu_idx = torch.distributed.get_rank()
            idx_this = idx_shuffle.view(num_gpus, -1)[gpu_idx]

            return x_gather[idx_this], idx_unshuffle

        @torch.no_grad()
        def _batch_unshuffle_ddp(self, x, idx_unshuffle):
            """Undo batch shuffle.
            *** Only support DistributedDataParallel (DDP) model. ***
            """
            # gather from all gpus
            batch_size_this = x.shape[0]
            x_gather = concat_all_gather(x)
            batch_size_all = x_gather.shape[0]

            num_gpus = batch_size_all // batch_size_this

            # restored index for this gpu
            gpu_idx = torch.distributed.get_rank()
            idx_this = idx_unshuffle.view(num_gpus, -1)[gpu_idx]

            return x_gather[idx_this]

        def forward(self, im_q, im_k):
            """im_q: a batch of query images; im_k: a batch of key images.
            Output: logits, targets"""
            # compute query features
            q = self.encoder_q(im_q)  # queries: NxC
            q = nn.functional.normalize(q, dim=1)

            # compute key features
            with torch.no_grad():  # no gradient to keys
                self._momentum_update_key_encoder()  # update the key encoder

                # shuffle for making use of BN
                im_k, idx_unshuffle = self._batch_shuffle_ddp(im_k)

                k = self.encoder_k(im_k)  # keys: NxC
                k = nn.functional.normalize(k, dim=1)

                # undo shuffle
                k = self._batch_unshuffle_ddp(k, idx_unshuffle)

            # compute logits
            # Einstein sum is more intuitive
            # positive logits: Nx1
            l_pos = torch.einsum('nc,nc->n', [q, k]).unsqueeze(-1)
            # negative logits: NxK
            l_neg = torch.einsum('nc,ck->nk', [q, self.queue.clone().detach()])

            # logits: Nx(1+K)
            logits = torch.cat([l_pos, l_neg], dim=1)

            # apply temperature
            logits /= self.T

            # labels: positive key indicators
            labels = torch.zeros(logits.shape[0], dtype=torch.long).to(logits.device)

            # dequeue and enqueue
            self._dequeue_and_enqueue(k)

            return logits, labels

    class SmallResNet(nn.Module):
        """The base encoder: a stem, two residual stages and global pooling, then .fc."""

        def __init__(self, num_classes=1000, width=16):
            super().__init__()
            self.conv1 = nn.Conv2d(3, width, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = nn.Sequential(nn.Conv2d(width, width, 3, padding=1, bias=False), nn.BatchNorm2d(width),
                                        nn.ReLU(inplace=True))
            self.layer2 = nn.Sequential(nn.Conv2d(width, 2 * width, 3, stride=2, padding=1, bias=False),
                                        nn.BatchNorm2d(2 * width), nn.ReLU(inplace=True))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(2 * width, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

        def forward(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = x + self.layer1(x)
            x = self.layer2(x)
            x = torch.flatten(self.avgpool(x), 1)
            return self.fc(x)

    return MoCo, SmallResNet


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def two_crops(rng, images):
    """TwoCropsTransform without torchvision: two random crops of 16 from 20x20 images, each with a
    random flip and colour scaling."""
    views = []
    for _ in range(2):
        out = np.empty((len(images), 3, IMG, IMG), dtype=np.float32)
        for i, im in enumerate(images):
            y, x = rng.integers(0, im.shape[-1] - IMG + 1, 2)
            crop = im[:, y:y + IMG, x:x + IMG]
            if rng.uniform() < 0.5:
                crop = crop[:, :, ::-1]
            out[i] = crop * rng.uniform(0.6, 1.4, (3, 1, 1))
        views.append(out)
    return views


def moco(torch, init=None, epochs=2, iters=2, batch=8, K=32):
    nn, dist = torch.nn, torch.distributed
    args = {"lr": 0.03, "epochs": epochs, "cos": True, "moco_m": 0.99, "moco_t": 0.2}
    dist.init_process_group(backend="gloo", init_method="tcp://127.0.0.1:%d" % free_port(), world_size=1, rank=0)
    try:
        torch.manual_seed(0)
        MoCo, SmallResNet = moco_builder(torch)
        model = MoCo(SmallResNet, 16, K, args["moco_m"], args["moco_t"], mlp=True)
        result = {"queue_norms": numpy_of(model.queue.norm(dim=0))}
        start_from(torch, model, init, result)
        model = torch.nn.parallel.DistributedDataParallel(model)

        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), args["lr"], momentum=0.9, weight_decay=1e-4)

        def adjust_learning_rate(optimizer, epoch, args):
            """Decay the learning rate based on schedule"""
            lr = args["lr"]
            if args["cos"]:  # cosine lr schedule
                lr *= 0.5 * (1.0 + math.cos(math.pi * epoch / args["epochs"]))
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr

        rng = np.random.default_rng(1)
        losses, top1s, top5s, ptrs = [], [], [], []
        torch.manual_seed(1)  # the shuffling-BN permutations: randperm draws the same in both libraries
        for epoch in range(epochs):
            adjust_learning_rate(optimizer, epoch, args)
            model.train()
            for i in range(iters):
                images = [torch.from_numpy(v) for v in two_crops(rng, rng.uniform(0, 1, (batch, 3, 20, 20)))]
                output, target = model(im_q=images[0], im_k=images[1])
                loss = criterion(output, target)
                acc1, acc5 = accuracy(torch, output, target, topk=(1, 5))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
                top1s.append(acc1[0].item())
                top5s.append(acc5[0].item())
                ptrs.append(int(model.module.queue_ptr))
        result.update(losses=losses, top1=top1s, top5=top5s, ptrs=ptrs, queue=numpy_of(model.module.queue),
                      lr=optimizer.param_groups[0]["lr"],
                      state={k: numpy_of(v) for k, v in model.module.state_dict().items()})
    finally:
        dist.destroy_process_group()
    return result


def test_moco_v2():
    ref, got = compare_program(moco)
    np.testing.assert_allclose(ref["queue_norms"], 1.0, rtol=1e-5)
    assert ref["ptrs"] == [8, 16, 24, 0]  # the queue of 32 keys wraps after four batches of 8
    # the key encoder moved by momentum only: it is neither the query encoder nor its start
    state, init = ref["state"], ref["init"]
    assert not np.allclose(state["encoder_k.fc.2.weight"], init["encoder_k.fc.2.weight"])
    assert not np.allclose(state["encoder_k.fc.2.weight"], state["encoder_q.fc.2.weight"])
