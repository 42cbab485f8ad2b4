"""Two more of yunjey's pytorch-tutorial programs as published, smaller: intermediate/
deep_residual_network/main.py (conv3x3, ResidualBlock with `out += residual` after an optional
downsample, ResNet.make_layer, AvgPool2d(8), Adam, update_lr writing every param_group's lr,
torch.max(outputs.data, 1) accuracy, torch.save of the checkpoint) on CIFAR-10 replaced by local
32x32 RGB images, its torchvision transforms (Pad(4), RandomHorizontalFlip, RandomCrop(32), ToTensor)
replaced by stand-ins that draw as torchvision does (torch.rand(1) < p, torch.randint(0, h - th + 1,
size=(1,)).item()) applied after ToTensor; and intermediate/language_model (data_utils.py's
Dictionary and Corpus filling torch.LongTensor(tokens) element by element and viewing it as
(batch_size, -1), main.py's RNNLM with out.reshape(out.size(0)*out.size(1), out.size(2)),
truncated backpropagation by detach(states), clip_grad_norm_ imported from torch.nn.utils,
perplexity by np.exp, sampling with torch.multinomial of output.exp() and input.fill_(word_id),
writing sample.txt) on a local text in place of Penn Treebank. Randomness from torch.manual_seed
(both libraries draw PyTorch's CPU streams: flips, crops, shuffles and samples agree)."""
import os

import numpy as np

from prog_helpers import Printed, compare_in_folders, numpy_of

TEXT = """the cat sat on the mat
the dog sat on the log
a cat and a dog met on the mat
the bird sat on the cat
a dog ran to the log and the cat ran to the mat
the mat was red and the log was brown
""" * 4


def cifar_like(n, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    images = rng.integers(0, 80, (n, 32, 32, 3), dtype=np.uint8)
    for i, c in enumerate(labels):
        images[i, 2 * c:2 * c + 8, 4:28, c % 3] = 230
    return images, labels


def deep_residual_network(torch, init=None, workdir="."):
    nn = torch.nn
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    torch.manual_seed(0)
    # Device configuration
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    # Hyper-parameters
    num_epochs = 4  # 80 in the script
    batch_size = 8  # 100 in the script
    learning_rate = 0.001

    # stand-ins for torchvision.transforms, drawing from torch's generator as torchvision does
    class ToTensor:
        def __call__(self, pic):
            return torch.from_numpy(pic).permute(2, 0, 1).float().div(255)

    class Pad:
        def __init__(self, padding):
            self.padding = padding

        def __call__(self, img):
            return nn.functional.pad(img, [self.padding] * 4)

    class RandomHorizontalFlip:
        def __init__(self, p=0.5):
            self.p = p

        def __call__(self, img):
            if torch.rand(1) < self.p:
                return img.flip(-1)
            return img

    class RandomCrop:
        def __init__(self, size):
            self.size = (size, size)

        def __call__(self, img):
            h, w = img.shape[-2:]
            th, tw = self.size
            i = torch.randint(0, h - th + 1, size=(1,)).item()
            j = torch.randint(0, w - tw + 1, size=(1,)).item()
            return img[..., i:i + th, j:j + tw]

    class Compose:
        def __init__(self, transforms):
            self.transforms = transforms

        def __call__(self, img):
            for t in self.transforms:
                img = t(img)
            return img

    class CIFAR10(torch.utils.data.Dataset):  # stands in for torchvision.datasets.CIFAR10
        def __init__(self, root, train, transform, download=False):
            self.data, self.targets = cifar_like(32 if train else 16, 0 if train else 1)
            self.transform = transform

        def __len__(self):
            return len(self.data)

        def __getitem__(self, index):
            return self.transform(self.data[index]), int(self.targets[index])

    # Image preprocessing modules (ToTensor first: the stand-ins work on tensors)
    transform = Compose([
        ToTensor(),
        Pad(4),
        RandomHorizontalFlip(),
        RandomCrop(32)])
    train_dataset = CIFAR10(root='../../data/', train=True, transform=transform, download=True)
    test_dataset = CIFAR10(root='../../data/', train=False, transform=ToTensor())
    train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=batch_size, shuffle=True)
    test_loader = torch.utils.data.DataLoader(dataset=test_dataset, batch_size=batch_size, shuffle=False)

    # 3x3 convolution
    def conv3x3(in_channels, out_channels, stride=1):
        return nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)

    # Residual block
    class ResidualBlock(nn.Module):
        def __init__(self, in_channels, out_channels, stride=1, downsample=None):
            super(ResidualBlock, self).__init__()
            self.conv1 = conv3x3(in_channels, out_channels, stride)
            self.bn1 = nn.BatchNorm2d(out_channels)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = conv3x3(out_channels, out_channels)
            self.bn2 = nn.BatchNorm2d(out_channels)
            self.downsample = downsample

        def forward(self, x):
            residual = x
            out = self.conv1(x)
            out = self.bn1(out)
            out = self.relu(out)
            out = self.conv2(out)
            out = self.bn2(out)
            if self.downsample:
                residual = self.downsample(x)
            out += residual
            out = self.relu(out)
            return out

    # ResNet
    class ResNet(nn.Module):
        def __init__(self, block, layers, num_classes=10):
            super(ResNet, self).__init__()
            self.in_channels = 16
            self.conv = conv3x3(3, 16)
            self.bn = nn.BatchNorm2d(16)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = self.make_layer(block, 16, layers[0])
            self.layer2 = self.make_layer(block, 32, layers[1], 2)
            self.layer3 = self.make_layer(block, 64, layers[2], 2)
            self.avg_pool = nn.AvgPool2d(8)
            self.fc = nn.Linear(64, num_classes)

        def make_layer(self, block, out_channels, blocks, stride=1):
            downsample = None
            if (stride != 1) or (self.in_channels != out_channels):
                downsample = nn.Sequential(
                    conv3x3(self.in_channels, out_channels, stride=stride),
                    nn.BatchNorm2d(out_channels))
            layers = []
            layers.append(block(self.in_channels, out_channels, stride, downsample))
            self.in_channels = out_channels
            for i in range(1, blocks):
                layers.append(block(out_channels, out_channels))
            return nn.Sequential(*layers)

        def forward(self, x):
            out = self.conv(x)
            out = self.bn(out)
            out = self.relu(out)
            out = self.layer1(out)
            out = self.layer2(out)
            out = self.layer3(out)
            out = self.avg_pool(out)
            out = out.view(out.size(0), -1)
            out = self.fc(out)
            return out

    model = ResNet(ResidualBlock, [2, 2, 2]).to(device)
    # Loss and optimizer
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    # For updating learning rate
    def update_lr(optimizer, lr):
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr

    # Train the model
    total_step = len(train_loader)
    curr_lr = learning_rate
    losses = []
    for epoch in range(num_epochs):
        for i, (images, labels) in enumerate(train_loader):
            images = images.to(device)
            labels = labels.to(device)
            # Forward pass
            outputs = model(images)
            loss = criterion(outputs, labels)
            # Backward and optimize
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if (i + 1) % 2 == 0:
                print("Epoch [{}/{}], Step [{}/{}] Loss: {:.4f}".format(epoch + 1, num_epochs, i + 1, total_step,
                                                                        loss.item()))
        # Decay learning rate
        if (epoch + 1) % 2 == 0:
            curr_lr /= 3
            update_lr(optimizer, curr_lr)
    # Test the model
    model.eval()
    with torch.no_grad():
        correct = 0
        total = 0
        for images, labels in test_loader:
            images = images.to(device)
            labels = labels.to(device)
            outputs = model(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
        print('Accuracy of the model on the test images: {} %'.format(100 * correct / total))
    # Save the model checkpoint
    torch.save(model.state_dict(), os.path.join(workdir, 'resnet.ckpt'))
    state = torch.load(os.path.join(workdir, 'resnet.ckpt'))
    return {"printed": Printed(printed), "losses": losses, "lr": optimizer.param_groups[0]['lr'],
            "fc": numpy_of(state["fc.weight"]), "test_logits": numpy_of(outputs)}


def language_model(torch, init=None, workdir="."):
    nn = torch.nn
    clip_grad_norm_ = torch.nn.utils.clip_grad_norm_
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    torch.manual_seed(0)
    train_path = os.path.join(workdir, "train.txt")
    with open(train_path, "w") as f:
        f.write(TEXT)

    # data_utils.py
    class Dictionary(object):
        def __init__(self):
            self.word2idx = {}
            self.idx2word = {}
            self.idx = 0

        def add_word(self, word):
            if word not in self.word2idx:
                self.word2idx[word] = self.idx
                self.idx2word[self.idx] = word
                self.idx += 1

        def __len__(self):
            return len(self.word2idx)

    class Corpus(object):
        def __init__(self):
            self.dictionary = Dictionary()

        def get_data(self, path, batch_size=20):
            # Add words to the dictionary
            with open(path, 'r') as f:
                tokens = 0
                for line in f:
                    words = line.split() + ['<eos>']
                    tokens += len(words)
                    for word in words:
                        self.dictionary.add_word(word)
            # Tokenize the file content
            ids = torch.LongTensor(tokens)
            token = 0
            with open(path, 'r') as f:
                for line in f:
                    words = line.split() + ['<eos>']
                    for word in words:
                        ids[token] = self.dictionary.word2idx[word]
                        token += 1
            num_batches = ids.size(0) // batch_size
            ids = ids[:num_batches * batch_size]
            return ids.view(batch_size, -1)

    # main.py
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    # Hyper-parameters
    embed_size = 16  # 128
    hidden_size = 32  # 1024
    num_layers = 1
    num_epochs = 3  # 5
    num_samples = 40  # 1000, number of words to be sampled
    batch_size = 4  # 20
    seq_length = 6  # 30
    learning_rate = 0.002
    # Load "Penn Treebank" dataset
    corpus = Corpus()
    ids = corpus.get_data(train_path, batch_size)
    vocab_size = len(corpus.dictionary)
    num_batches = ids.size(1) // seq_length

    # RNN based language model
    class RNNLM(nn.Module):
        def __init__(self, vocab_size, embed_size, hidden_size, num_layers):
            super(RNNLM, self).__init__()
            self.embed = nn.Embedding(vocab_size, embed_size)
            self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
            self.linear = nn.Linear(hidden_size, vocab_size)

        def forward(self, x, h):
            # Embed word ids to vectors
            x = self.embed(x)
            # Forward propagate LSTM
            out, (h, c) = self.lstm(x, h)
            # Reshape output to (batch_size*sequence_length, hidden_size)
            out = out.reshape(out.size(0) * out.size(1), out.size(2))
            # Decode hidden states of all time steps
            out = self.linear(out)
            return out, (h, c)

    model = RNNLM(vocab_size, embed_size, hidden_size, num_layers).to(device)
    # Loss and optimizer
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    # Truncated backpropagation
    def detach(states):
        return [state.detach() for state in states]

    # Train the model
    for epoch in range(num_epochs):
        # Set initial hidden and cell states
        states = (torch.zeros(num_layers, batch_size, hidden_size).to(device),
                  torch.zeros(num_layers, batch_size, hidden_size).to(device))
        for i in range(0, ids.size(1) - seq_length, seq_length):
            # Get mini-batch inputs and targets
            inputs = ids[:, i:i + seq_length].to(device)
            targets = ids[:, (i + 1):(i + 1) + seq_length].to(device)
            # Forward pass
            states = detach(states)
            outputs, states = model(inputs, states)
            loss = criterion(outputs, targets.reshape(-1))
            # Backward and optimize
            optimizer.zero_grad()
            loss.backward()
            clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            step = (i + 1) // seq_length
            if step % 4 == 0:
                print('Epoch [{}/{}], Step[{}/{}], Loss: {:.4f}, Perplexity: {:5.2f}'
                      .format(epoch + 1, num_epochs, step, num_batches, loss.item(), np.exp(loss.item())))
    # Test the model
    sampled = []
    with torch.no_grad():
        with open(os.path.join(workdir, 'sample.txt'), 'w') as f:
            # Set intial hidden ane cell states
            state = (torch.zeros(num_layers, 1, hidden_size).to(device),
                     torch.zeros(num_layers, 1, hidden_size).to(device))
            # Select one word id randomly
            prob = torch.ones(vocab_size)
            input = torch.multinomial(prob, num_samples=1).unsqueeze(1).to(device)
            for i in range(num_samples):
                # Forward propagate RNN
                output, state = model(input, state)
                # Sample a word id
                prob = output.exp()
                word_id = torch.multinomial(prob, num_samples=1).item()
                sampled.append(word_id)
                # Fill input with sampled word id for the next time step
                input.fill_(word_id)
                # File write
                word = corpus.dictionary.idx2word[word_id]
                word = '\n' if word == '<eos>' else word + ' '
                f.write(word)
                if (i + 1) % 20 == 0:
                    print('Sampled [{}/{}] words and save to {}'.format(i + 1, num_samples, 'sample.txt'))
    # Save the model checkpoints
    torch.save(model.state_dict(), os.path.join(workdir, 'model.ckpt'))
    with open(os.path.join(workdir, 'sample.txt')) as f:
        sample_text = f.read()
    return {"printed": Printed(printed), "sampled": sampled, "sample_text": sample_text,
            "state": {k: numpy_of(v) for k, v in model.state_dict().items()}}


def test_deep_residual_network(tmp_path):
    ref, got = compare_in_folders(deep_residual_network, tmp_path, "workdir", rtol=1e-2, atol=2e-3)
    # 16 Adam steps through 13 BatchNorm layers: the losses agree closely, the eval-mode logits
    # (running statistics of every layer) to 1e-3
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=1e-3, atol=1e-4)


def test_language_model(tmp_path):
    compare_in_folders(language_model, tmp_path, "workdir", rtol=1e-3, atol=1e-4)
