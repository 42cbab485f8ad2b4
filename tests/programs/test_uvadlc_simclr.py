"""Phillip Lippe's UvA deep-learning tutorial 17 ("Self-Supervised Contrastive Learning with
SimCLR") as written, STL10 replaced by small local RGB images, torchvision's resnet18 by the
stand-in of tests/programs/torchvision_models.py (narrow widths), torchvision's random augmentations
by transforms of the same kind drawn from torch's generator (flip by torch.rand(1) < p, a crop at
torch.randint offsets resized back by F.interpolate, a brightness jitter by torch.empty(1).uniform_),
and PyTorch Lightning by the loop a run makes: ContrastiveTransformations returning n_views views,
SimCLR with convnet.fc replaced by nn.Sequential(convnet.fc, nn.ReLU(inplace=True), nn.Linear(...)),
AdamW with CosineAnnealingLR(eta_min=lr / 50), info_nce_loss (torch.cat of the views,
F.cosine_similarity(feats[:, None, :], feats[None, :, :], dim=-1), a boolean torch.eye self mask
given to masked_fill_(self_mask, -9e15), the positives by self_mask.roll(shifts=N // 2, dims=0),
-cos_sim[pos_mask] + torch.logsumexp(cos_sim, dim=-1), the rank of the positive by
comb_sim.argsort(dim=-1, descending=True).argmin(dim=-1)); then prepare_data_features under
@torch.no_grad() (copy.deepcopy of the convnet with fc = nn.Identity(), features and labels sorted
by labels.sort()), get_smaller_dataset through t.unflatten(0, (classes, -1))[:, :n].flatten(0, 1)
over TensorDataset.tensors, and the logistic-regression probe (AdamW, MultiStepLR at 60% and 80% of
the epochs, F.cross_entropy, accuracy); and the ResNet baseline trained from scratch on the labels.
Seeds are torch.manual_seed in both libraries, so weights, augmentations and shuffles agree."""
import copy

import numpy as np

from prog_helpers import compare_program, numpy_of
from torchvision_models import torchvision_resnet

NUM_CLASSES = 3


def make_rgb_images(n, size, seed):
    """n images per class, sorted by class: a red band, a green disc, a blue diagonal, with noise."""
    rng = np.random.default_rng(seed)
    imgs = rng.uniform(0, 0.3, (NUM_CLASSES * n, 3, size, size))
    yy, xx = np.mgrid[:size, :size]
    for i in range(NUM_CLASSES * n):
        c, k = i // n, rng.integers(3, size - 3)
        if c == 0:
            imgs[i, 0, k - 2:k + 2, :] += 0.7
        elif c == 1:
            imgs[i, 1][(yy - k) ** 2 + (xx - size // 2) ** 2 < 9] += 0.7
        else:
            imgs[i, 2] += 0.7 * np.eye(size, k=int(k) - size // 2)
    return imgs.clip(0, 1).astype(np.float32), np.repeat(np.arange(NUM_CLASSES), n)


def simclr(torch, init=None, max_epochs=3, batch_size=8, hidden_dim=16, n_train=8):
    nn = torch.nn
    F = nn.functional
    optim = torch.optim
    data = torch.utils.data
    _, _, resnet18 = torchvision_resnet(torch)
    device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    torch.manual_seed(42)

    class ContrastiveTransformations(object):

        def __init__(self, base_transforms, n_views=2):
            self.base_transforms = base_transforms
            self.n_views = n_views

        def __call__(self, x):
            return [self.base_transforms(x) for i in range(self.n_views)]

    class Compose:
        def __init__(self, transforms):
            self.transforms = transforms

        def __call__(self, x):
            for t in self.transforms:
                x = t(x)
            return x

    class RandomHorizontalFlip:
        def __init__(self, p=0.5):
            self.p = p

        def __call__(self, img):
            return img.flip(-1) if torch.rand(1) < self.p else img

    class RandomResizedCrop:
        """A square crop of a random size at a random place, resized back (bilinear)."""

        def __init__(self, size, scale=(0.5, 1.0)):
            self.size, self.scale = size, scale

        def __call__(self, img):
            side = int(self.size * torch.empty(1).uniform_(*self.scale).sqrt().item())
            i = int(torch.randint(0, self.size - side + 1, size=(1,)).item())
            j = int(torch.randint(0, self.size - side + 1, size=(1,)).item())
            crop = img[:, i:i + side, j:j + side]
            return F.interpolate(crop[None], size=(self.size, self.size), mode="bilinear", align_corners=False)[0]

    class ColorJitter:
        def __init__(self, brightness=0.5):
            self.brightness = brightness

        def __call__(self, img):
            factor = torch.empty(1).uniform_(1 - self.brightness, 1 + self.brightness)
            return (img * factor).clamp(0, 1)

    class Normalize:
        def __init__(self, mean, std):
            self.mean, self.std = torch.tensor(mean)[:, None, None], torch.tensor(std)[:, None, None]

        def __call__(self, img):
            return (img - self.mean) / self.std

    class ImageDataset(data.Dataset):
        """STL10's interface: (image, label) items through a transform; label -1 when unlabeled."""

        def __init__(self, imgs, labels, transform=None):
            self.imgs, self.labels, self.transform = torch.tensor(imgs), labels, transform

        def __len__(self):
            return len(self.imgs)

        def __getitem__(self, idx):
            img = self.imgs[idx]
            return (self.transform(img) if self.transform else img), int(self.labels[idx])

    contrast_transforms = Compose([RandomHorizontalFlip(),
                                   RandomResizedCrop(size=16),
                                   ColorJitter(brightness=0.5),
                                   Normalize((0.5,) * 3, (0.5,) * 3)])
    imgs, labels = make_rgb_images(n_train, 16, seed=0)
    unlabeled_data = ImageDataset(imgs, -np.ones_like(labels), transform=ContrastiveTransformations(contrast_transforms,
                                                                                                     n_views=2))

    class SimCLR(nn.Module):

        def __init__(self, hidden_dim, lr, temperature, weight_decay, max_epochs=500):
            super().__init__()
            self.hparams = dict(hidden_dim=hidden_dim, lr=lr, temperature=temperature, weight_decay=weight_decay,
                                max_epochs=max_epochs)
            assert self.hparams["temperature"] > 0.0, 'The temperature must be a positive float!'
            # Base model f(.)
            self.convnet = resnet18(pretrained=False, num_classes=4 * hidden_dim, widths=(8, 8, 16, 16))
            # The MLP for g(.) consists of Linear->ReLU->Linear
            self.convnet.fc = nn.Sequential(
                self.convnet.fc,  # Linear(ResNet output, 4*hidden_dim)
                nn.ReLU(inplace=True),
                nn.Linear(4 * hidden_dim, hidden_dim)
            )
            self.logged = []

        def log(self, name, value):
            self.logged.append((name, float(value)))

        def configure_optimizers(self):
            optimizer = optim.AdamW(self.parameters(),
                                    lr=self.hparams["lr"],
                                    weight_decay=self.hparams["weight_decay"])
            lr_scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer,
                                                                T_max=self.hparams["max_epochs"],
                                                                eta_min=self.hparams["lr"] / 50)
            return [optimizer], [lr_scheduler]

        def info_nce_loss(self, batch, mode='train'):
            imgs, _ = batch
            imgs = torch.cat(imgs, dim=0)

            # Encode all images
            feats = self.convnet(imgs)
            # Calculate cosine similarity
            cos_sim = F.cosine_similarity(feats[:, None, :], feats[None, :, :], dim=-1)
            # Mask out cosine similarity to itself
            self_mask = torch.eye(cos_sim.shape[0], dtype=torch.bool, device=cos_sim.device)
            cos_sim.masked_fill_(self_mask, -9e15)
            # Find positive example -> batch_size//2 away from the original example
            pos_mask = self_mask.roll(shifts=cos_sim.shape[0] // 2, dims=0)
            # InfoNCE loss
            cos_sim = cos_sim / self.hparams["temperature"]
            nll = -cos_sim[pos_mask] + torch.logsumexp(cos_sim, dim=-1)
            nll = nll.mean()

            # Logging loss
            self.log(mode + '_loss', nll)
            # Get ranking position of positive example
            comb_sim = torch.cat([cos_sim[pos_mask][:, None],  # First position positive example
                                  cos_sim.masked_fill(pos_mask, -9e15)],
                                 dim=-1)
            sim_argsort = comb_sim.argsort(dim=-1, descending=True).argmin(dim=-1)
            # Logging ranking metrics
            self.log(mode + '_acc_top1', (sim_argsort == 0).float().mean())
            self.log(mode + '_acc_top5', (sim_argsort < 5).float().mean())
            self.log(mode + '_acc_mean_pos', 1 + sim_argsort.float().mean())

            return nll

        def training_step(self, batch, batch_idx):
            return self.info_nce_loss(batch, mode='train')

    model = SimCLR(hidden_dim=hidden_dim, lr=5e-4, temperature=0.07, weight_decay=1e-4, max_epochs=max_epochs)
    model.to(device)
    init_state = {k: numpy_of(v) for k, v in model.state_dict().items()}
    train_loader = data.DataLoader(unlabeled_data, batch_size=batch_size, shuffle=True, drop_last=True,
                                   pin_memory=True, num_workers=0)
    [optimizer], [scheduler] = model.configure_optimizers()
    for epoch in range(max_epochs):
        model.train()
        for batch_idx, batch in enumerate(train_loader):
            optimizer.zero_grad()
            loss = model.training_step(batch, batch_idx)
            loss.backward()
            optimizer.step()
        scheduler.step()

    # Logistic regression on the frozen features
    img_transforms = Normalize((0.5,) * 3, (0.5,) * 3)
    train_img_data = ImageDataset(imgs, labels, transform=img_transforms)
    test_imgs, test_labels = make_rgb_images(4, 16, seed=1)
    test_img_data = ImageDataset(test_imgs, test_labels, transform=img_transforms)

    @torch.no_grad()
    def prepare_data_features(model, dataset):
        # Prepare model
        network = copy.deepcopy(model.convnet)
        network.fc = nn.Identity()  # Removing projection head g(.)
        network.eval()
        network.to(device)

        # Encode all images
        data_loader = data.DataLoader(dataset, batch_size=8, num_workers=0, shuffle=False, drop_last=False)
        feats, labels = [], []
        for batch_imgs, batch_labels in data_loader:
            batch_imgs = batch_imgs.to(device)
            batch_feats = network(batch_imgs)
            feats.append(batch_feats.detach().cpu())
            labels.append(batch_labels)

        feats = torch.cat(feats, dim=0)
        labels = torch.cat(labels, dim=0)

        # Sort images by labels
        labels, idxs = labels.sort()
        feats = feats[idxs]

        return data.TensorDataset(feats, labels)

    train_feats_simclr = prepare_data_features(model, train_img_data)
    test_feats_simclr = prepare_data_features(model, test_img_data)

    class LogisticRegression(nn.Module):

        def __init__(self, feature_dim, num_classes, lr, weight_decay, max_epochs=100):
            super().__init__()
            self.hparams = dict(lr=lr, weight_decay=weight_decay, max_epochs=max_epochs)
            # Mapping from representation h to classes
            self.model = nn.Linear(feature_dim, num_classes)

        def configure_optimizers(self):
            optimizer = optim.AdamW(self.parameters(),
                                    lr=self.hparams["lr"],
                                    weight_decay=self.hparams["weight_decay"])
            lr_scheduler = optim.lr_scheduler.MultiStepLR(optimizer,
                                                          milestones=[int(self.hparams["max_epochs"] * 0.6),
                                                                      int(self.hparams["max_epochs"] * 0.8)],
                                                          gamma=0.1)
            return [optimizer], [lr_scheduler]

        def _calculate_loss(self, batch, mode='train'):
            feats, labels = batch
            preds = self.model(feats)
            loss = F.cross_entropy(preds, labels)
            acc = (preds.argmax(dim=-1) == labels).float().mean()
            return loss, acc

    def get_smaller_dataset(original_dataset, num_imgs_per_label):
        new_dataset = data.TensorDataset(
            *[t.unflatten(0, (NUM_CLASSES, -1))[:, :num_imgs_per_label].flatten(0, 1) for t in original_dataset.tensors]
        )
        return new_dataset

    probe_results = {}
    for num_imgs_per_label in (4, 8):
        sub_train_set = get_smaller_dataset(train_feats_simclr, num_imgs_per_label)
        torch.manual_seed(42)
        probe = LogisticRegression(feature_dim=train_feats_simclr.tensors[0].shape[1], num_classes=NUM_CLASSES,
                                   lr=1e-3, weight_decay=1e-3, max_epochs=10)
        [opt], [sched] = probe.configure_optimizers()
        loader = data.DataLoader(sub_train_set, batch_size=4, shuffle=True, drop_last=False)
        for epoch in range(10):
            for batch in loader:
                opt.zero_grad()
                loss, acc = probe._calculate_loss(batch)
                loss.backward()
                opt.step()
            sched.step()
        with torch.no_grad():
            test_loss, test_acc = probe._calculate_loss(test_feats_simclr.tensors, mode='test')
        probe_results[num_imgs_per_label] = [len(sub_train_set), test_loss.item(), test_acc.item(),
                                             sched.get_last_lr()[0], loss.item()]

    # labels.sort() is not stable: the order of the images within a label (so which 4 a smaller
    # dataset keeps) is each library's own; the features are compared as a set per label
    feats, labels = numpy_of(train_feats_simclr.tensors[0]), numpy_of(train_feats_simclr.tensors[1])
    feats_by_label = [f[np.lexsort(f.T[::-1])] for f in np.split(feats, NUM_CLASSES)]
    return {"init": init_state, "logged": [v for _, v in model.logged],
            "names": sorted({n for n, _ in model.logged}),
            "feats": feats_by_label, "labels": labels,
            # the shuffled batches index the features in each library's own order: the last batch's
            # loss differs, the test loss of the probe trained on all the features agrees
            "probe": probe_results[8][:4], "own": [probe_results[4], probe_results[8][4]],
            "state": {k: numpy_of(v) for k, v in model.state_dict().items() if "num_batches" not in k}}


def test_uvadlc_simclr():
    ref, got = compare_program(simclr, rtol=2e-3, atol=2e-4)
    assert got["names"] == ["train_acc_mean_pos", "train_acc_top1", "train_acc_top5", "train_loss"]
