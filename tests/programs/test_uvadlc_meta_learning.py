"""Phillip Lippe's UvA deep-learning tutorial 16 ("Meta-Learning - Learning to Learn") as written,
CIFAR-100 replaced by small local images of a few classes, torchvision's DenseNet by a small
convolutional encoder, torchvision's transforms by the normalisation alone, and PyTorch Lightning by
the loop a run makes (pl.seed_everything as random.seed, np.random.seed and torch.manual_seed):
dataset_from_labels ((targets[:, None] == class_set[None, :]).any(dim=-1) as a mask), the
FewShotBatchSampler (torch.unique(...).tolist(), torch.where(targets == c)[0], torch.randperm per
class, random.shuffle of the class list, batches of 0-d index tensors from slices, reordered by
index_batch[::2] + index_batch[1::2]) given to DataLoader(batch_sampler=...), split_batch by chunk(2);
ProtoNet (calculate_prototypes from torch.unique(targets).sort() and torch.where, classify_feats by
torch.pow(prototypes[None, :] - feats[:, None], 2).sum(dim=2) and F.log_softmax(-dist, dim=1), labels
by (classes[None, :] == targets[:, None]).long().argmax(dim=-1)), AdamW with MultiStepLR,
test_proto_net under @torch.no_grad() (features sorted by targets.sort(), reshaped to
[classes, examples, ...] and transposed (sort(stable=True) where the tutorial sorts unstably: the
order of equal targets is each library's own), statistics.mean/stdev of accuracies over k-shot supports);
ProtoMAML (deepcopy of the encoder as the inner model, output layer initialised from 2 * prototypes
and -torch.norm(prototypes, dim=1)**2, detach().requires_grad_(), inner SGD steps with
output_weight.data -= lr * output_weight.grad and grad.fill_(0), the graph re-attached by
(w - init).detach() + init, first-order meta-gradients by p_global.grad += p_local.grad) over a
TaskBatchSampler with its collate_fn chunking a batch into tasks. Seeds are shared, so weights,
episodes and shuffles agree between the libraries."""
import random
from collections import defaultdict
from copy import deepcopy
from statistics import mean, stdev

import numpy as np

from prog_helpers import compare_program, numpy_of

NUM_CLASSES, PER_CLASS, SIZE = 6, 8, 12


def make_class_images(seed):
    """PER_CLASS images of each of NUM_CLASSES patterns (a band at a class-dependent angle and
    colour), shuffled, as CIFAR's uint8-like [N, 3, H, W] floats, and their labels."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:SIZE, :SIZE]
    imgs, targets = [], []
    for c in range(NUM_CLASSES):
        for _ in range(PER_CLASS):
            img = rng.uniform(0, 0.4, (3, SIZE, SIZE))
            angle = np.pi * c / NUM_CLASSES
            band = np.abs(np.cos(angle) * (xx - SIZE / 2) + np.sin(angle) * (yy - SIZE / 2) - rng.normal(0, 1)) < 1.5
            img[c % 3][band] += 0.6
            imgs.append(img)
            targets.append(c)
    order = rng.permutation(len(targets))
    return np.asarray(imgs, dtype=np.float32)[order], np.asarray(targets)[order]


def meta_learning(torch, init=None, method="ProtoNet", epochs=2):
    nn = torch.nn
    F = nn.functional
    optim = torch.optim
    data = torch.utils.data
    device = torch.device("cpu")

    def seed_everything(seed):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)

    seed_everything(0)
    imgs, targets = make_class_images(seed=0)
    CIFAR_all_images = torch.tensor(imgs)
    CIFAR_all_targets = torch.LongTensor(targets)
    classes = torch.randperm(NUM_CLASSES)  # Returns random permutation of numbers 0 to 99
    train_classes, val_classes = classes[:4], classes[4:]

    class ImageDataset(data.Dataset):

        def __init__(self, imgs, targets, img_transform=None):
            super().__init__()
            self.img_transform = img_transform
            self.imgs = imgs
            self.targets = targets

        def __getitem__(self, idx):
            img, target = self.imgs[idx], self.targets[idx]
            if self.img_transform is not None:
                img = self.img_transform(img)
            return img, target

        def __len__(self):
            return self.imgs.shape[0]

    def dataset_from_labels(imgs, targets, class_set, **kwargs):
        class_mask = (targets[:, None] == class_set[None, :]).any(dim=-1)
        return ImageDataset(imgs=imgs[class_mask],
                            targets=targets[class_mask],
                            **kwargs)

    DATA_MEANS = (CIFAR_all_images.mean(dim=[0, 2, 3]))[:, None, None]
    DATA_STD = (CIFAR_all_images.std(dim=[0, 2, 3]))[:, None, None]
    normalize = lambda img: (img - DATA_MEANS) / DATA_STD
    train_set = dataset_from_labels(CIFAR_all_images, CIFAR_all_targets, train_classes, img_transform=normalize)
    val_set = dataset_from_labels(CIFAR_all_images, CIFAR_all_targets, val_classes, img_transform=normalize)

    class FewShotBatchSampler(object):

        def __init__(self, dataset_targets, N_way, K_shot, include_query=False, shuffle=True, shuffle_once=False):
            super().__init__()
            self.dataset_targets = dataset_targets
            self.N_way = N_way
            self.K_shot = K_shot
            self.shuffle = shuffle
            self.include_query = include_query
            if self.include_query:
                self.K_shot *= 2
            self.batch_size = self.N_way * self.K_shot  # Number of overall images per batch

            # Organize examples by class
            self.classes = torch.unique(self.dataset_targets).tolist()
            self.num_classes = len(self.classes)
            self.indices_per_class = {}
            self.batches_per_class = {}  # Number of K-shot batches that each class can provide
            for c in self.classes:
                self.indices_per_class[c] = torch.where(self.dataset_targets == c)[0]
                self.batches_per_class[c] = self.indices_per_class[c].shape[0] // self.K_shot

            # Create a list of classes from which we select the N classes per batch
            self.iterations = sum(self.batches_per_class.values()) // self.N_way
            self.class_list = [c for c in self.classes for _ in range(self.batches_per_class[c])]
            if shuffle_once or self.shuffle:
                self.shuffle_data()
            else:
                # For testing, we iterate over classes instead of shuffling them
                sort_idxs = [i + p * self.num_classes for i,
                             c in enumerate(self.classes) for p in range(self.batches_per_class[c])]
                self.class_list = np.array(self.class_list)[np.argsort(sort_idxs)].tolist()

        def shuffle_data(self):
            # Shuffle the examples per class
            for c in self.classes:
                perm = torch.randperm(self.indices_per_class[c].shape[0])
                self.indices_per_class[c] = self.indices_per_class[c][perm]
            # Shuffle the class list from which we sample. Note that this way of shuffling
            # does not prevent to choose the same class twice in a batch. However, for
            # training and validation, this is not a problem.
            random.shuffle(self.class_list)

        def __iter__(self):
            # Shuffle data
            if self.shuffle:
                self.shuffle_data()

            # Sample few-shot batches
            start_index = defaultdict(int)
            for it in range(self.iterations):
                class_batch = self.class_list[it * self.N_way:(it + 1) * self.N_way]  # Select N classes for the batch
                index_batch = []
                for c in class_batch:  # For each class, select the next K examples and add them to the batch
                    index_batch.extend(self.indices_per_class[c][start_index[c]:start_index[c] + self.K_shot])
                    start_index[c] += self.K_shot
                if self.include_query:  # If we return support+query set, sort them so that they are easy to split
                    index_batch = index_batch[::2] + index_batch[1::2]
                yield index_batch

        def __len__(self):
            return self.iterations

    def split_batch(imgs, targets):
        support_imgs, query_imgs = imgs.chunk(2, dim=0)
        support_targets, query_targets = targets.chunk(2, dim=0)
        return support_imgs, query_imgs, support_targets, query_targets

    def get_convnet(output_size):
        """Stands in for torchvision.models.DenseNet(growth_rate=32, block_config=(6, 6, 6), ...)."""
        convnet = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
            nn.Linear(16, output_size))
        return convnet

    class ProtoNet(nn.Module):

        def __init__(self, proto_dim, lr):
            super().__init__()
            self.hparams = dict(proto_dim=proto_dim, lr=lr)
            self.model = get_convnet(output_size=self.hparams["proto_dim"])
            self.logged = []

        def log(self, name, value):
            self.logged.append((name, float(value)))

        def configure_optimizers(self):
            optimizer = optim.AdamW(self.parameters(), lr=self.hparams["lr"])
            scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[140, 180], gamma=0.1)
            return [optimizer], [scheduler]

        @staticmethod
        def calculate_prototypes(features, targets):
            # Given a stack of features vectors and labels, return class prototypes
            # features - shape [N, proto_dim], targets - shape [N]
            classes, _ = torch.unique(targets).sort()  # Determine which classes we have
            prototypes = []
            for c in classes:
                p = features[torch.where(targets == c)[0]].mean(dim=0)  # Average class feature vectors
                prototypes.append(p)
            prototypes = torch.stack(prototypes, dim=0)
            # Return the 'classes' tensor to know which prototype belongs to which class
            return prototypes, classes

        def classify_feats(self, prototypes, classes, feats, targets):
            # Classify new examples with prototypes and return classification error
            dist = torch.pow(prototypes[None, :] - feats[:, None], 2).sum(dim=2)  # Squared euclidean distance
            preds = F.log_softmax(-dist, dim=1)
            labels = (classes[None, :] == targets[:, None]).long().argmax(dim=-1)
            acc = (preds.argmax(dim=1) == labels).float().mean()
            return preds, labels, acc

        def calculate_loss(self, batch, mode):
            # Determine training loss for a given support and query set
            imgs, targets = batch
            features = self.model(imgs)  # Encode all images of support and query set
            support_feats, query_feats, support_targets, query_targets = split_batch(features, targets)
            prototypes, classes = ProtoNet.calculate_prototypes(support_feats, support_targets)
            preds, labels, acc = self.classify_feats(prototypes, classes, query_feats, query_targets)
            loss = F.cross_entropy(preds, labels)

            self.log(f"{mode}_loss", loss.item())
            self.log(f"{mode}_acc", acc)
            return loss

        def training_step(self, batch, batch_idx):
            return self.calculate_loss(batch, mode="train")

        def validation_step(self, batch, batch_idx):
            _ = self.calculate_loss(batch, mode="val")

    class ProtoMAML(nn.Module):

        def __init__(self, proto_dim, lr, lr_inner, lr_output, num_inner_steps):
            super().__init__()
            self.hparams = dict(proto_dim=proto_dim, lr=lr, lr_inner=lr_inner, lr_output=lr_output,
                                num_inner_steps=num_inner_steps)
            self.model = get_convnet(output_size=self.hparams["proto_dim"])
            self.logged = []

        log = ProtoNet.log

        def configure_optimizers(self):
            optimizer = optim.AdamW(self.parameters(), lr=self.hparams["lr"])
            scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[140, 180], gamma=0.1)
            return [optimizer], [scheduler]

        def run_model(self, local_model, output_weight, output_bias, imgs, labels):
            # Execute a model with given output layer weights and inputs
            feats = local_model(imgs)
            preds = F.linear(feats, output_weight, output_bias)
            loss = F.cross_entropy(preds, labels)
            acc = (preds.argmax(dim=1) == labels).float()
            return loss, preds, acc

        def adapt_few_shot(self, support_imgs, support_targets):
            # Determine prototype initialization
            support_feats = self.model(support_imgs)
            prototypes, classes = ProtoNet.calculate_prototypes(support_feats, support_targets)
            support_labels = (classes[None, :] == support_targets[:, None]).long().argmax(dim=-1)
            # Create inner-loop model and optimizer
            local_model = deepcopy(self.model)
            local_model.train()
            local_optim = optim.SGD(local_model.parameters(), lr=self.hparams["lr_inner"])
            local_optim.zero_grad()
            # Create output layer weights with prototype-based initialization
            init_weight = 2 * prototypes
            init_bias = -torch.norm(prototypes, dim=1) ** 2
            output_weight = init_weight.detach().requires_grad_()
            output_bias = init_bias.detach().requires_grad_()

            # Optimize inner loop model on support set
            for _ in range(self.hparams["num_inner_steps"]):
                # Determine loss on the support set
                loss, _, _ = self.run_model(local_model, output_weight, output_bias, support_imgs, support_labels)
                # Calculate gradients and perform inner loop update
                loss.backward()
                local_optim.step()
                # Update output layer via SGD
                output_weight.data -= self.hparams["lr_output"] * output_weight.grad
                output_bias.data -= self.hparams["lr_output"] * output_bias.grad
                # Reset gradients
                local_optim.zero_grad()
                output_weight.grad.fill_(0)
                output_bias.grad.fill_(0)

            # Re-attach computation graph of prototypes
            output_weight = (output_weight - init_weight).detach() + init_weight
            output_bias = (output_bias - init_bias).detach() + init_bias

            return local_model, output_weight, output_bias, classes

        def outer_loop(self, batch, mode="train"):
            accuracies = []
            losses = []
            self.model.zero_grad()

            # Determine gradients for batch of tasks
            for task_batch in batch:
                imgs, targets = task_batch
                support_imgs, query_imgs, support_targets, query_targets = split_batch(imgs, targets)
                # Perform inner loop adaptation
                local_model, output_weight, output_bias, classes = self.adapt_few_shot(support_imgs, support_targets)
                # Determine loss of query set
                query_labels = (classes[None, :] == query_targets[:, None]).long().argmax(dim=-1)
                loss, preds, acc = self.run_model(local_model, output_weight, output_bias, query_imgs, query_labels)
                # Calculate gradients for query set loss
                if mode == "train":
                    loss.backward()

                    for p_global, p_local in zip(self.model.parameters(), local_model.parameters()):
                        p_global.grad += p_local.grad  # First-order approx. -> add gradients of finetuned and base model

                accuracies.append(acc.mean().detach())
                losses.append(loss.detach())

            # Perform update of base model
            if mode == "train":
                opt = self.optimizers()
                opt.step()
                opt.zero_grad()

            self.log(f"{mode}_loss", sum(losses) / len(losses))
            self.log(f"{mode}_acc", sum(accuracies) / len(accuracies))

        def training_step(self, batch, batch_idx):
            self.outer_loop(batch, mode="train")
            return None  # Returning None means we skip the default training optimizer steps by PyTorch Lightning

        def validation_step(self, batch, batch_idx):
            # Validation requires to finetune a model, hence we need to enable gradients
            torch.set_grad_enabled(True)
            self.outer_loop(batch, mode="val")
            torch.set_grad_enabled(False)

    class TaskBatchSampler(object):

        def __init__(self, dataset_targets, batch_size, N_way, K_shot, include_query=False, shuffle=True):
            super().__init__()
            self.batch_sampler = FewShotBatchSampler(dataset_targets, N_way, K_shot, include_query, shuffle)
            self.task_batch_size = batch_size
            self.local_batch_size = self.batch_sampler.batch_size

        def __iter__(self):
            # Aggregate multiple batches before returning the indices
            batch_list = []
            for batch_idx, batch in enumerate(self.batch_sampler):
                batch_list.extend(batch)
                if (batch_idx + 1) % self.task_batch_size == 0:
                    yield batch_list
                    batch_list = []

        def __len__(self):
            return len(self.batch_sampler) // self.task_batch_size

        def get_collate_fn(self):
            # Returns a collate function that converts one big tensor into a list of task-specific tensors
            def collate_fn(item_list):
                imgs = torch.stack([img for img, target in item_list], dim=0)
                targets = torch.stack([target for img, target in item_list], dim=0)
                imgs = imgs.chunk(self.task_batch_size, dim=0)
                targets = targets.chunk(self.task_batch_size, dim=0)
                return list(zip(imgs, targets))
            return collate_fn

    N_WAY, K_SHOT = 2, 2
    result = {}
    seed_everything(42)  # To be reproducable
    if method == "ProtoNet":
        train_data_loader = data.DataLoader(train_set,
                                            batch_sampler=FewShotBatchSampler(train_set.targets,
                                                                              include_query=True,
                                                                              N_way=N_WAY,
                                                                              K_shot=K_SHOT,
                                                                              shuffle=True),
                                            num_workers=0)
        val_data_loader = data.DataLoader(val_set,
                                          batch_sampler=FewShotBatchSampler(val_set.targets,
                                                                            include_query=True,
                                                                            N_way=N_WAY,
                                                                            K_shot=K_SHOT,
                                                                            shuffle=False,
                                                                            shuffle_once=True),
                                          num_workers=0)
        model = ProtoNet(proto_dim=8, lr=2e-4)
    else:
        train_protomaml_sampler = TaskBatchSampler(train_set.targets, include_query=True, N_way=N_WAY, K_shot=K_SHOT,
                                                   batch_size=2)
        train_data_loader = data.DataLoader(train_set, batch_sampler=train_protomaml_sampler,
                                            collate_fn=train_protomaml_sampler.get_collate_fn(), num_workers=0)
        val_protomaml_sampler = TaskBatchSampler(val_set.targets, include_query=True, N_way=N_WAY, K_shot=K_SHOT,
                                                 batch_size=1, shuffle=False)
        val_data_loader = data.DataLoader(val_set, batch_sampler=val_protomaml_sampler,
                                          collate_fn=val_protomaml_sampler.get_collate_fn(), num_workers=0)
        model = ProtoMAML(proto_dim=8, lr=1e-3, lr_inner=0.1, lr_output=0.1, num_inner_steps=2)
    result["init"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    [optimizer], [scheduler] = model.configure_optimizers()
    model.optimizers = lambda: optimizer
    batches = []
    for epoch in range(epochs):
        model.train()
        for batch_idx, batch in enumerate(train_data_loader):
            if method == "ProtoNet":
                batches.append(numpy_of(batch[1]))
                optimizer.zero_grad()
                loss = model.training_step(batch, batch_idx)
                loss.backward()
                optimizer.step()
            else:
                batches.append([numpy_of(t) for _, t in batch])
                model.training_step(batch, batch_idx)
        model.eval()
        if method == "ProtoNet":
            with torch.no_grad():
                for batch_idx, batch in enumerate(val_data_loader):
                    model.validation_step(batch, batch_idx)
        else:
            torch.set_grad_enabled(False)
            for batch_idx, batch in enumerate(val_data_loader):
                model.validation_step(batch, batch_idx)
            torch.set_grad_enabled(True)
        scheduler.step()
    state = {k: numpy_of(v) for k, v in model.state_dict().items() if "num_batches" not in k}
    # The encoder's last bias moves every feature alike, which the distances to the prototypes
    # (and the prototype-initialised output layer) cancel: its gradient is rounding noise that AdamW
    # scales into full steps, so it differs between the libraries by design.
    result.update(batches=batches, logged=[v for _, v in model.logged], names=[n for n, _ in model.logged],
                  state=state, own=state.pop("model.9.bias"))

    if method == "ProtoNet":
        @torch.no_grad()
        def test_proto_net(model, dataset, data_feats=None, k_shot=4):
            model = model.to(device)
            model.eval()
            num_classes = dataset.targets.unique().shape[0]
            exmps_per_class = dataset.targets.shape[0] // num_classes  # We assume uniform example distribution here

            # The encoder network remains unchanged across k-shot settings. Hence, we only need
            # to extract the features for all images once.
            if data_feats is None:
                # Dataset preparation
                dataloader = data.DataLoader(dataset, batch_size=128, num_workers=0, shuffle=False, drop_last=False)

                img_features = []
                img_targets = []
                for imgs, targets in dataloader:
                    imgs = imgs.to(device)
                    feats = model.model(imgs)
                    img_features.append(feats.detach().cpu())
                    img_targets.append(targets)
                img_features = torch.cat(img_features, dim=0)
                img_targets = torch.cat(img_targets, dim=0)
                # Sort by classes, so that we obtain tensors of shape [num_classes, exmps_per_class, ...]
                # Makes it easier to process later
                img_targets, sort_idx = img_targets.sort(stable=True)
                img_targets = img_targets.reshape(num_classes, exmps_per_class).transpose(0, 1)
                img_features = img_features[sort_idx].reshape(num_classes, exmps_per_class, -1).transpose(0, 1)
            else:
                img_features, img_targets = data_feats

            # We iterate through the full dataset in two manners. First, to select the k-shot batch.
            # Second, the evaluate the model on all other examples
            accuracies = []
            for k_idx in range(0, img_features.shape[0], k_shot):
                # Select support set and calculate prototypes
                k_img_feats = img_features[k_idx:k_idx + k_shot].flatten(0, 1)
                k_targets = img_targets[k_idx:k_idx + k_shot].flatten(0, 1)
                prototypes, proto_classes = model.calculate_prototypes(k_img_feats, k_targets)
                # Evaluate accuracy on the rest of the dataset
                batch_acc = 0
                for e_idx in range(0, img_features.shape[0], k_shot):
                    if k_idx == e_idx:  # Do not evaluate on the support set examples
                        continue
                    e_img_feats = img_features[e_idx:e_idx + k_shot].flatten(0, 1)
                    e_targets = img_targets[e_idx:e_idx + k_shot].flatten(0, 1)
                    _, _, acc = model.classify_feats(prototypes, proto_classes, e_img_feats, e_targets)
                    batch_acc += acc.item()
                batch_acc /= img_features.shape[0] // k_shot - 1
                accuracies.append(batch_acc)

            return (mean(accuracies), stdev(accuracies)), (img_features, img_targets)

        (acc_mean, acc_std), (feats, feat_targets) = test_proto_net(model, val_set, k_shot=2)
        # the features without the encoder's last bias (see above), which the accuracies do not see
        result.update(test=[acc_mean, acc_std], test_feats=numpy_of(feats) - result["own"],
                      test_targets=numpy_of(feat_targets))
    return result


def test_uvadlc_protonet():
    ref, got = compare_program(meta_learning, rtol=1e-3, atol=1e-4, method="ProtoNet")
    assert "val_acc" in got["names"] and len(got["batches"]) == 2 * 4


def test_uvadlc_protomaml():
    ref, got = compare_program(meta_learning, rtol=1e-3, atol=1e-4, method="ProtoMAML")
    assert "val_loss" in got["names"]
