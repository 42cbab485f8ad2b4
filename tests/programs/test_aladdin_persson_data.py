"""More of Aladdin Persson's Machine-Learning-Collection "Basics" scripts, torchvision's datasets
replaced by local ones of the same shape: Imbalanced_classes/main.py (class weights 1 / count per
class, a list of per-sample weights, WeightedRandomSampler(sample_weights,
num_samples=len(sample_weights), replacement=True) drawn from the seeded generator, labels counted
into a Python 0 by += torch.sum(labels == 0), .item() printed); pytorch_rnn_gru_lstm.py (RNN, GRU
and LSTM many-to-one classifiers with h0/c0 from torch.zeros(self.num_layers, x.size(0),
self.hidden_size).to(device), out.reshape(out.shape[0], -1) into a Linear of hidden_size *
sequence_length, data.squeeze(1), check_accuracy reading loader.dataset.train and printing the
f-string of tensors); and custom_dataset_txt's Vocabulary/FlickrDataset/MyCollate (frequency threshold vocabulary,
<SOS>/<EOS> numericalised captions, imgs by torch.cat of unsqueeze(0), pad_sequence(batch_first=
False, padding_value=pad_idx), DataLoader with worker processes, pin_memory and a collate object).
Seeds are torch.manual_seed in both libraries, so samplers, shuffles and initial weights agree."""
import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from
from test_d2l_modern_cnns import make_images


def imbalanced(torch, init=None):
    torch.manual_seed(0)

    class ImageFolder(torch.utils.data.Dataset):
        """datasets.ImageFolder over two subdirectories: 40 retrievers, 8 elkhounds."""
        classes = ["Golden retriever", "Swedish elkhound"]

        def __init__(self):
            self.files = {"Golden retriever": [f"r{i}.jpg" for i in range(40)],
                          "Swedish elkhound": [f"e{i}.jpg" for i in range(8)]}
            self.samples = [(f, c) for c, d in enumerate(self.classes) for f in self.files[d]]

        def __len__(self):
            return len(self.samples)

        def __getitem__(self, index):
            name, label = self.samples[index]
            return torch.full((3, 4, 4), float(index)), label

    def get_loader(root_dir, batch_size):
        dataset = ImageFolder()
        subdirectories = dataset.classes
        class_weights = []
        # loop through each subdirectory and calculate the class weight
        # that is 1 / len(files) in that subdirectory
        for subdir in subdirectories:
            files = dataset.files[subdir]  # os.listdir(os.path.join(root_dir, subdir))
            class_weights.append(1 / len(files))
        sample_weights = [0] * len(dataset)
        for idx, (data, label) in enumerate(dataset):
            class_weight = class_weights[label]
            sample_weights[idx] = class_weight
        sampler = torch.utils.data.WeightedRandomSampler(sample_weights, num_samples=len(sample_weights),
                                                         replacement=True)
        loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, sampler=sampler)
        return loader

    loader = get_loader(root_dir="dataset", batch_size=8)
    num_retrievers = 0
    num_elkhounds = 0
    seen = []
    for epoch in range(10):
        for data, labels in loader:
            num_retrievers += torch.sum(labels == 0)
            num_elkhounds += torch.sum(labels == 1)
            seen.append(numpy_of(data[:, 0, 0, 0]))
    return {"counts": [num_retrievers.item(), num_elkhounds.item()], "seen": np.concatenate(seen)}


def rnn_gru_lstm(torch, init=None, kind="LSTM"):
    nn = torch.nn
    optim = torch.optim
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    input_size = 12
    hidden_size = 16
    num_layers = 2
    num_classes = 3
    sequence_length = 12
    learning_rate = 0.005
    batch_size = 16
    num_epochs = 2

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers, num_classes):
            super(RNN, self).__init__()
            self.hidden_size = hidden_size
            self.num_layers = num_layers
            self.rnn = nn.RNN(input_size, hidden_size, num_layers, batch_first=True)
            self.fc = nn.Linear(hidden_size * sequence_length, num_classes)

        def forward(self, x):
            h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size).to(device)
            out, _ = self.rnn(x, h0)
            out = out.reshape(out.shape[0], -1)
            out = self.fc(out)
            return out

    class RNN_GRU(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers, num_classes):
            super(RNN_GRU, self).__init__()
            self.hidden_size = hidden_size
            self.num_layers = num_layers
            self.gru = nn.GRU(input_size, hidden_size, num_layers, batch_first=True)
            self.fc = nn.Linear(hidden_size * sequence_length, num_classes)

        def forward(self, x):
            h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size).to(device)
            out, _ = self.gru(x, h0)
            out = out.reshape(out.shape[0], -1)
            out = self.fc(out)
            return out

    class RNN_LSTM(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers, num_classes):
            super(RNN_LSTM, self).__init__()
            self.hidden_size = hidden_size
            self.num_layers = num_layers
            self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
            self.fc = nn.Linear(hidden_size * sequence_length, num_classes)

        def forward(self, x):
            h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size).to(device)
            c0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size).to(device)
            out, _ = self.lstm(x, (h0, c0))  # out: tensor of shape (batch_size, seq_length, hidden_size)
            out = out.reshape(out.shape[0], -1)
            out = self.fc(out)
            return out

    class MNIST(torch.utils.data.Dataset):
        def __init__(self, train):
            self.train = train
            x, y = make_images(48 if train else 16, 12, 0 if train else 1)
            self.x, self.y = x, y

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            return torch.from_numpy(self.x[i]), int(self.y[i])

    torch.manual_seed(0)
    train_loader = torch.utils.data.DataLoader(dataset=MNIST(True), batch_size=batch_size, shuffle=True)
    test_loader = torch.utils.data.DataLoader(dataset=MNIST(False), batch_size=batch_size, shuffle=True)
    model = {"RNN": RNN, "GRU": RNN_GRU, "LSTM": RNN_LSTM}[kind](input_size, hidden_size, num_layers,
                                                                  num_classes).to(device)
    result = {}
    start_from(torch, model, init, result)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=learning_rate)
    losses = []
    for epoch in range(num_epochs):
        for batch_idx, (data, targets) in enumerate(train_loader):
            data = data.to(device=device).squeeze(1)
            targets = targets.to(device=device)
            scores = model(data)
            loss = criterion(scores, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())

    def check_accuracy(loader, model):
        if loader.dataset.train:
            print("Checking accuracy on training data")
        else:
            print("Checking accuracy on test data")
        num_correct = 0
        num_samples = 0
        model.eval()
        with torch.no_grad():
            for x, y in loader:
                x = x.to(device=device).squeeze(1)
                y = y.to(device=device)
                scores = model(x)
                _, predictions = scores.max(1)
                num_correct += (predictions == y).sum()
                num_samples += predictions.size(0)
            print(f"Got {num_correct} / {num_samples} with \
              accuracy {float(num_correct)/float(num_samples)*100:.2f}")
        model.train()

    check_accuracy(train_loader, model)
    check_accuracy(test_loader, model)
    result.update(losses=losses, printed="\n".join(printed).replace("minitorch", "torch"),
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


CAPTIONS = ["A dog runs on the grass .", "A black dog runs .", "Two dogs play on the grass .",
            "A child plays with a dog .", "The child runs on the beach .", "A dog and a child play ."]


def flickr_loader(torch, init=None):
    pad_sequence = torch.nn.utils.rnn.pad_sequence

    class Vocabulary:
        def __init__(self, freq_threshold):
            self.itos = {0: "<PAD>", 1: "<SOS>", 2: "<EOS>", 3: "<UNK>"}
            self.stoi = {"<PAD>": 0, "<SOS>": 1, "<EOS>": 2, "<UNK>": 3}
            self.freq_threshold = freq_threshold

        def __len__(self):
            return len(self.itos)

        @staticmethod
        def tokenizer_eng(text):
            return [tok.lower() for tok in text.split()]  # spacy_eng.tokenizer on plain words

        def build_vocabulary(self, sentence_list):
            frequencies = {}
            idx = 4
            for sentence in sentence_list:
                for word in self.tokenizer_eng(sentence):
                    if word not in frequencies:
                        frequencies[word] = 1
                    else:
                        frequencies[word] += 1
                    if frequencies[word] == self.freq_threshold:
                        self.stoi[word] = idx
                        self.itos[idx] = word
                        idx += 1

        def numericalize(self, text):
            tokenized_text = self.tokenizer_eng(text)
            return [self.stoi[token] if token in self.stoi else self.stoi["<UNK>"] for token in tokenized_text]

    class FlickrDataset(torch.utils.data.Dataset):
        def __init__(self, captions, transform=None, freq_threshold=5):
            self.captions = captions
            self.imgs = np.random.default_rng(0).uniform(size=(len(captions), 3, 8, 8)).astype(np.float32)
            self.transform = transform
            # Initialize vocabulary and build vocab
            self.vocab = Vocabulary(freq_threshold)
            self.vocab.build_vocabulary(self.captions)

        def __len__(self):
            return len(self.captions)

        def __getitem__(self, index):
            caption = self.captions[index]
            img = torch.from_numpy(self.imgs[index])
            if self.transform is not None:
                img = self.transform(img)
            numericalized_caption = [self.vocab.stoi["<SOS>"]]
            numericalized_caption += self.vocab.numericalize(caption)
            numericalized_caption.append(self.vocab.stoi["<EOS>"])
            return img, torch.tensor(numericalized_caption)

    class MyCollate:
        def __init__(self, pad_idx):
            self.pad_idx = pad_idx

        def __call__(self, batch):
            imgs = [item[0].unsqueeze(0) for item in batch]
            imgs = torch.cat(imgs, dim=0)
            targets = [item[1] for item in batch]
            targets = pad_sequence(targets, batch_first=False, padding_value=self.pad_idx)
            return imgs, targets

    def get_loader(transform, batch_size=32, num_workers=8, shuffle=True, pin_memory=True):
        dataset = FlickrDataset(CAPTIONS, transform=transform, freq_threshold=2)
        pad_idx = dataset.vocab.stoi["<PAD>"]
        loader = torch.utils.data.DataLoader(dataset=dataset, batch_size=batch_size, num_workers=num_workers,
                                             shuffle=shuffle, pin_memory=pin_memory,
                                             collate_fn=MyCollate(pad_idx=pad_idx))
        return loader, dataset

    torch.manual_seed(0)
    loader, dataset = get_loader(transform=lambda img: img * 2 - 1, batch_size=4, num_workers=2)
    shapes, batches = [], []
    for idx, (imgs, captions) in enumerate(loader):
        shapes.append([list(imgs.shape), list(captions.shape)])
        batches.append([numpy_of(imgs), numpy_of(captions)])
    return {"stoi": sorted(dataset.vocab.stoi.items()), "shapes": shapes, "batches": batches}


def test_imbalanced_classes():
    ref, got = compare_program(imbalanced)
    assert sum(ref["counts"]) == 480 and ref["counts"][1] > 100  # oversampled well past 8 / 48


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_rnn_gru_lstm(kind):
    ref, got = compare_program(rnn_gru_lstm, rtol=1e-3, atol=1e-4, kind=kind)
    assert "Checking accuracy on test data" in got["printed"]


def test_custom_text_loader():
    ref, got = compare_program(flickr_loader)
    assert got["shapes"][0][0] == [4, 3, 8, 8]
