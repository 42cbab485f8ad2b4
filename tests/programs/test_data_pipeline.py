"""The data-loading tutorial's pipeline: a Dataset subclass over in-memory "files" whose
__getitem__ turns a tensor index into a list (torch.is_tensor(idx) -> idx.tolist()) and returns a
dict sample; transform classes (Rescale by striding, RandomCrop from NumPy, ToTensor transposing
HWC to CHW) chained by a Compose-like class; a DataLoader with num_workers=2, a worker_init_fn,
persistent workers and pin_memory=False batching the dicts with the default collate; a
BatchSampler over a SequentialSampler and default_collate called directly; then a regression
model trained on the batches in loader order and compared with PyTorch's."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

N, SIDE = 24, 10


def make_store(seed=0):
    rng = np.random.default_rng(seed)
    images = rng.random((N, SIDE, SIDE, 3)).astype(np.float32)
    landmarks = rng.random((N, 2, 2)).astype(np.float32) * SIDE
    return [{"name": f"img_{i:02d}.png", "image": images[i], "landmarks": landmarks[i]} for i in range(N)]


def seed_worker(worker_id):
    np.random.seed(1000 + worker_id)


def data_pipeline(torch, init=None, epochs=2, workers=2):
    nn = torch.nn
    data = torch.utils.data
    torch.manual_seed(0)
    store = make_store()

    class Rescale:
        def __init__(self, step):
            self.step = step

        def __call__(self, sample):
            image, landmarks = sample["image"], sample["landmarks"]
            return {"image": image[::self.step, ::self.step], "landmarks": landmarks / self.step}

    class CenterCrop:
        def __init__(self, output_size):
            self.output_size = (output_size, output_size) if isinstance(output_size, int) else output_size

        def __call__(self, sample):
            image, landmarks = sample["image"], sample["landmarks"]
            h, w = image.shape[:2]
            new_h, new_w = self.output_size
            top, left = (h - new_h) // 2, (w - new_w) // 2
            return {"image": image[top: top + new_h, left: left + new_w], "landmarks": landmarks - [left, top]}

    class ToTensor:
        def __call__(self, sample):
            image, landmarks = sample["image"], sample["landmarks"]
            image = image.transpose((2, 0, 1))
            return {"image": torch.from_numpy(np.ascontiguousarray(image)),
                    "landmarks": torch.from_numpy(landmarks.astype(np.float32))}

    class Compose:
        def __init__(self, transforms):
            self.transforms = transforms

        def __call__(self, sample):
            for t in self.transforms:
                sample = t(sample)
            return sample

    class FaceLandmarksDataset(data.Dataset):
        def __init__(self, records, transform=None):
            self.records, self.transform = records, transform

        def __len__(self):
            return len(self.records)

        def __getitem__(self, idx):
            if torch.is_tensor(idx):
                idx = idx.tolist()
            record = self.records[idx]
            sample = {"image": record["image"], "landmarks": record["landmarks"].reshape(-1, 2)}
            if self.transform:
                sample = self.transform(sample)
            return sample

    dataset = FaceLandmarksDataset(store, transform=Compose([CenterCrop(8), Rescale(2), ToTensor()]))
    first = dataset[torch.tensor(3)]
    loader = data.DataLoader(dataset, batch_size=5, shuffle=False, num_workers=workers,
                             worker_init_fn=seed_worker, persistent_workers=workers > 0, pin_memory=False)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 4 * 4, 16), nn.Tanh(), nn.Linear(16, 4))
    result = {"first": numpy_of(first["image"]), "first_landmarks": numpy_of(first["landmarks"])}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses, shapes = [], []
    for epoch in range(epochs):
        for i_batch, sample_batched in enumerate(loader):
            images, landmarks = sample_batched["image"], sample_batched["landmarks"]
            shapes.append(list(images.size()) + list(landmarks.size()))
            loss = nn.functional.mse_loss(model(images), landmarks.view(landmarks.size(0), -1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    sampler = data.BatchSampler(data.SequentialSampler(range(7)), batch_size=3, drop_last=False)
    collated = data.default_collate([{"a": np.float32(i), "b": (i, "x"), "c": torch.full((2,), i)} for i in range(3)])
    result.update(losses=losses, shapes=np.array(shapes), batches=[list(b) for b in sampler], n_loader=len(loader),
                  collated_a=numpy_of(collated["a"]), collated_b0=numpy_of(collated["b"][0]),
                  collated_b1=list(collated["b"][1]), collated_c=numpy_of(collated["c"]))
    return result


def test_dataset_transforms_multiworker_loader():
    ref, got = compare_program(data_pipeline)
    assert got["shapes"][0].tolist() == [5, 3, 4, 4, 5, 2, 2]
