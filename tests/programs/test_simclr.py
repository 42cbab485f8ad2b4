"""The widely used SimCLR implementation (sthalles/SimCLR), with a small CNN backbone in place of
torchvision's ResNet: ResNetSimCLR replacing backbone.fc by nn.Sequential(nn.Linear(dim_mlp,
dim_mlp), nn.ReLU(), backbone.fc) with dim_mlp = backbone.fc.in_features; a Dataset whose views
come from ContrastiveLearningViewGenerator (random crops and flips drawn from NumPy) and a
DataLoader collating lists of views; info_nce_loss (labels from torch.cat of aranges compared by
unsqueeze, F.normalize, the similarity matrix with its diagonal removed by a torch.eye(...,
dtype=torch.bool) mask and .view, positives and negatives selected by labels.bool(), logits divided
by the temperature); the training loop with `from torch.cuda.amp import GradScaler, autocast`
disabled (fp16_precision=False), CrossEntropyLoss, accuracy(output, target, topk=(1, 5)), Adam
with weight_decay, CosineAnnealingLR stepped after warm-up epochs, and save_checkpoint's dict."""
import io
import importlib

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from test_imagenet_style import accuracy


def simclr(torch, init=None, epochs=3, batch_size=8, n_views=2, out_dim=16, temperature=0.07, lr=3e-3,
           warmup=1):
    nn, F = torch.nn, torch.nn.functional
    amp = importlib.import_module(torch.__name__ + ".cuda.amp")  # from torch.cuda.amp import GradScaler, autocast
    GradScaler, autocast = amp.GradScaler, amp.autocast
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    device = torch.device('cpu')

    class SmallBackbone(nn.Module):
        """Stands in for torchvision.models.resnet18(pretrained=False, num_classes=out_dim): bias-free
        convolutions before BatchNorm, as ResNet's."""
        def __init__(self, num_classes):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
                                          nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32),
                                          nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1)))
            self.fc = nn.Linear(32, num_classes)

        def forward(self, x):
            return self.fc(torch.flatten(self.features(x), 1))

    class ResNetSimCLR(nn.Module):
        def __init__(self, base_model, out_dim):
            super(ResNetSimCLR, self).__init__()
            self.resnet_dict = {"small": SmallBackbone(num_classes=out_dim)}
            self.backbone = self._get_basemodel(base_model)
            dim_mlp = self.backbone.fc.in_features
            # add mlp projection head
            self.backbone.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.backbone.fc)

        def _get_basemodel(self, model_name):
            try:
                model = self.resnet_dict[model_name]
            except KeyError:
                raise ValueError("Invalid backbone architecture.")
            else:
                return model

        def forward(self, x):
            return self.backbone(x)

    class ContrastiveLearningViewGenerator(object):
        """Take two random crops of one image as the query and key."""
        def __init__(self, base_transform, n_views=2):
            self.base_transform = base_transform
            self.n_views = n_views

        def __call__(self, x):
            return [self.base_transform(x) for i in range(self.n_views)]

    def base_transform(image):
        """RandomResizedCrop and RandomHorizontalFlip in miniature: a random 12x12 crop, flipped half the time."""
        top, left = rng.integers(0, 5, 2)
        crop = image[:, top:top + 12, left:left + 12]
        if rng.random() < 0.5:
            crop = crop[:, :, ::-1]
        return torch.from_numpy(np.ascontiguousarray(crop))

    class ImagesDataset(torch.utils.data.Dataset):
        def __init__(self, images, transform):
            self.images, self.transform = images, transform

        def __len__(self):
            return len(self.images)

        def __getitem__(self, index):
            return self.transform(self.images[index]), 0

    images = rng.random((4 * batch_size, 3, 16, 16)).astype(np.float32)
    train_dataset = ImagesDataset(images, ContrastiveLearningViewGenerator(base_transform, n_views))
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=batch_size, shuffle=False, num_workers=0,
                                               pin_memory=False, drop_last=True)

    model = ResNetSimCLR(base_model="small", out_dim=out_dim)
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(train_loader), eta_min=0,
                                                           last_epoch=-1)
    criterion = torch.nn.CrossEntropyLoss().to(device)

    def info_nce_loss(features):
        labels = torch.cat([torch.arange(batch_size) for i in range(n_views)], dim=0)
        labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
        labels = labels.to(device)
        features = F.normalize(features, dim=1)
        similarity_matrix = torch.matmul(features, features.T)
        # discard the main diagonal from both: labels and similarities matrix
        mask = torch.eye(labels.shape[0], dtype=torch.bool).to(device)
        labels = labels[~mask].view(labels.shape[0], -1)
        similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)
        # select and combine multiple positives
        positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)
        # select only the negatives the negatives
        negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)
        logits = torch.cat([positives, negatives], dim=1)
        labels = torch.zeros(logits.shape[0], dtype=torch.long).to(device)
        logits = logits / temperature
        return logits, labels

    scaler = GradScaler(enabled=False)
    n_iter = 0
    log, lrs = [], []
    for epoch_counter in range(epochs):
        for images, _ in train_loader:
            images = torch.cat(images, dim=0)
            images = images.to(device)
            with autocast(enabled=False):
                features = model(images)
                logits, labels = info_nce_loss(features)
                loss = criterion(logits, labels)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            top1, top5 = accuracy(torch, logits, labels, topk=(1, 5))
            log.append([loss.item(), top1[0].item(), top5[0].item()])
            n_iter += 1
        # warmup for the first epochs
        if epoch_counter >= warmup:
            scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    buffer = io.BytesIO()
    torch.save({
        'epoch': epochs,
        'arch': "small",
        'state_dict': model.state_dict(),
        'optimizer': optimizer.state_dict(),
    }, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer)
    result.update(log=log, lrs=lrs, logits_shape=tuple(logits.shape), keys=sorted(checkpoint),
                  state={k: numpy_of(v) for k, v in checkpoint['state_dict'].items()})
    return result


def test_simclr_info_nce():
    ref, got = compare_program(simclr, rtol=1e-3, atol=1e-4)
    assert ref["logits_shape"] == (16, 15)  # one positive, 14 negatives per view
    assert ref["keys"] == ["arch", "epoch", "optimizer", "state_dict"]
