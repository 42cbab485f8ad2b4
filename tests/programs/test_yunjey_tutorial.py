"""Three programs in the style of yunjey's pytorch-tutorial: a bidirectional LSTM classifier over
image rows (h0/c0 from torch.zeros(self.num_layers*2, x.size(0), self.hidden_size).to(device),
out[:, -1, :] into a Linear of hidden_size*2, images.reshape(-1, sequence_length, input_size),
torch.max(outputs.data, 1), (predicted == labels).sum().item()); the image-captioning decoder
(an EncoderCNN whose features pass through a frozen backbone under torch.no_grad(), Linear and
BatchNorm1d(momentum=0.01), embeddings concatenated with features.unsqueeze(1),
pack_padded_sequence(embeddings, lengths, batch_first=True) into an LSTM and hiddens[0] into the
vocabulary Linear, targets = pack_padded_sequence(captions, lengths, batch_first=True)[0], and a
greedy sample() with predicted.max(1), inputs.unsqueeze(1) and torch.stack(sampled_ids, 1));
and the GAN on flattened images (D with LeakyReLU(0.2) and Sigmoid, G with Tanh, BCELoss against
torch.ones(batch_size, 1) / torch.zeros(batch_size, 1), reset_grad(), denorm with clamp(0, 1),
d_optimizer / g_optimizer Adam(lr=0.0002))."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def birnn(torch, init=None, epochs=2):
    nn = torch.nn
    device = torch.device('cuda' if torch.cuda.is_available() and False else 'cpu')
    sequence_length, input_size, hidden_size, num_layers, num_classes = 7, 7, 16, 2, 4
    batch_size, learning_rate = 8, 0.003

    class BiRNN(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers, num_classes):
            super(BiRNN, self).__init__()
            self.hidden_size = hidden_size
            self.num_layers = num_layers
            self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(hidden_size * 2, num_classes)

        def forward(self, x):
            h0 = torch.zeros(self.num_layers * 2, x.size(0), self.hidden_size).to(device)
            c0 = torch.zeros(self.num_layers * 2, x.size(0), self.hidden_size).to(device)
            out, _ = self.lstm(x, (h0, c0))
            out = self.fc(out[:, -1, :])
            return out

    torch.manual_seed(0)
    model = BiRNN(input_size, hidden_size, num_layers, num_classes).to(device)
    result = {}
    start_from(torch, model, init, result)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    rng = np.random.default_rng(0)
    images_all = torch.from_numpy(rng.random((32, 1, 7, 7)).astype(np.float32))
    labels_all = torch.from_numpy(rng.integers(0, num_classes, 32))
    train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images_all, labels_all),
                                               batch_size=batch_size, shuffle=False)
    total_step = len(train_loader)
    logs = []
    for epoch in range(epochs):
        for i, (images, labels) in enumerate(train_loader):
            images = images.reshape(-1, sequence_length, input_size).to(device)
            labels = labels.to(device)
            outputs = model(images)
            loss = criterion(outputs, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if (i + 1) % 2 == 0:
                logs.append('Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'.format(epoch + 1, epochs, i + 1, total_step,
                                                                               loss.item()))
    with torch.no_grad():
        correct = 0
        total = 0
        for images, labels in train_loader:
            images = images.reshape(-1, sequence_length, input_size).to(device)
            labels = labels.to(device)
            outputs = model(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    result.update(logs=logs, accuracy=100 * correct / total,
                  state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def captioning(torch, init=None, steps=3):
    nn = torch.nn
    pack_padded_sequence = torch.nn.utils.rnn.pack_padded_sequence
    embed_size, hidden_size, vocab_size, num_layers = 12, 16, 30, 1

    class EncoderCNN(nn.Module):
        def __init__(self, embed_size):
            super(EncoderCNN, self).__init__()
            backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)))
            modules = list(backbone.children())
            self.resnet = nn.Sequential(*modules)
            self.linear = nn.Linear(8, embed_size)
            self.bn = nn.BatchNorm1d(embed_size, momentum=0.01)

        def forward(self, images):
            with torch.no_grad():
                features = self.resnet(images)
            features = features.reshape(features.size(0), -1)
            features = self.bn(self.linear(features))
            return features

    class DecoderRNN(nn.Module):
        def __init__(self, embed_size, hidden_size, vocab_size, num_layers, max_seq_length=10):
            super(DecoderRNN, self).__init__()
            self.embed = nn.Embedding(vocab_size, embed_size)
            self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
            self.linear = nn.Linear(hidden_size, vocab_size)
            self.max_seg_length = max_seq_length

        def forward(self, features, captions, lengths):
            embeddings = self.embed(captions)
            embeddings = torch.cat((features.unsqueeze(1), embeddings), 1)
            packed = pack_padded_sequence(embeddings, lengths, batch_first=True)
            hiddens, _ = self.lstm(packed)
            outputs = self.linear(hiddens[0])
            return outputs

        def sample(self, features, states=None):
            sampled_ids = []
            inputs = features.unsqueeze(1)
            for i in range(self.max_seg_length):
                hiddens, states = self.lstm(inputs, states)
                outputs = self.linear(hiddens.squeeze(1))
                _, predicted = outputs.max(1)
                sampled_ids.append(predicted)
                inputs = self.embed(predicted)
                inputs = inputs.unsqueeze(1)
            sampled_ids = torch.stack(sampled_ids, 1)
            return sampled_ids

    torch.manual_seed(0)
    encoder = EncoderCNN(embed_size)
    decoder = DecoderRNN(embed_size, hidden_size, vocab_size, num_layers)
    result = {}
    start_from(torch, {"encoder": encoder, "decoder": decoder}, init, result)
    criterion = nn.CrossEntropyLoss()
    params = list(decoder.parameters()) + list(encoder.linear.parameters()) + list(encoder.bn.parameters())
    optimizer = torch.optim.Adam(params, lr=0.001)
    rng = np.random.default_rng(0)

    def collate_fn(data):
        data.sort(key=lambda x: len(x[1]), reverse=True)
        images, captions = zip(*data)
        images = torch.stack(images, 0)
        lengths = [len(cap) for cap in captions]
        targets = torch.zeros(len(captions), max(lengths)).long()
        for i, cap in enumerate(captions):
            end = lengths[i]
            targets[i, :end] = cap[:end]
        return images, targets, lengths

    losses = []
    for i in range(steps):
        data = [(torch.from_numpy(rng.random((3, 8, 8)).astype(np.float32)),
                 torch.from_numpy(rng.integers(1, vocab_size, rng.integers(3, 8)))) for _ in range(4)]
        images, captions, lengths = collate_fn(data)
        targets = pack_padded_sequence(captions, lengths, batch_first=True)[0]
        features = encoder(images)
        outputs = decoder(features, captions, lengths)
        loss = criterion(outputs, targets)
        decoder.zero_grad()
        encoder.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        result.setdefault("targets", numpy_of(targets))
    encoder.eval()
    image = torch.from_numpy(rng.random((1, 3, 8, 8)).astype(np.float32))
    feature = encoder(image)
    sampled_ids = decoder.sample(feature)
    sampled_ids = sampled_ids[0].cpu().numpy()
    result.update(losses=losses, sampled=sampled_ids, running=numpy_of(encoder.bn.running_mean),
                  grad_none=encoder.resnet[0].weight.grad is None)
    return result


def gan(torch, init=None, steps=4):
    nn = torch.nn
    image_size, hidden_size, latent_size, batch_size = 36, 32, 8, 8

    D = nn.Sequential(nn.Linear(image_size, hidden_size), nn.LeakyReLU(0.2), nn.Linear(hidden_size, hidden_size),
                      nn.LeakyReLU(0.2), nn.Linear(hidden_size, 1), nn.Sigmoid())
    G = nn.Sequential(nn.Linear(latent_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, hidden_size), nn.ReLU(),
                      nn.Linear(hidden_size, image_size), nn.Tanh())
    result = {}
    start_from(torch, {"D": D, "G": G}, init, result)
    criterion = nn.BCELoss()
    d_optimizer = torch.optim.Adam(D.parameters(), lr=0.0002)
    g_optimizer = torch.optim.Adam(G.parameters(), lr=0.0002)

    def denorm(x):
        out = (x + 1) / 2
        return out.clamp(0, 1)

    def reset_grad():
        d_optimizer.zero_grad()
        g_optimizer.zero_grad()

    rng = np.random.default_rng(0)
    history = []
    for i in range(steps):
        images = torch.from_numpy(rng.uniform(-1, 1, (batch_size, 6, 6)).astype(np.float32))
        images = images.reshape(batch_size, -1)
        real_labels = torch.ones(batch_size, 1)
        fake_labels = torch.zeros(batch_size, 1)
        outputs = D(images)
        d_loss_real = criterion(outputs, real_labels)
        real_score = outputs
        z = torch.from_numpy(rng.standard_normal((batch_size, latent_size)).astype(np.float32))
        fake_images = G(z)
        outputs = D(fake_images)
        d_loss_fake = criterion(outputs, fake_labels)
        fake_score = outputs
        d_loss = d_loss_real + d_loss_fake
        reset_grad()
        d_loss.backward()
        d_optimizer.step()
        z = torch.from_numpy(rng.standard_normal((batch_size, latent_size)).astype(np.float32))
        fake_images = G(z)
        outputs = D(fake_images)
        g_loss = criterion(outputs, real_labels)
        reset_grad()
        g_loss.backward()
        g_optimizer.step()
        history.append([d_loss.item(), g_loss.item(), real_score.mean().item(), fake_score.mean().item()])
    fake_images = fake_images.reshape(fake_images.size(0), 1, 6, 6)
    result.update(history=np.array(history), fake=numpy_of(denorm(fake_images)))
    return result


def test_bidirectional_lstm_classifier():
    compare_program(birnn, rtol=1e-3, atol=1e-4)


def test_image_captioning_packed_sequences():
    compare_program(captioning, rtol=1e-3, atol=1e-4)


def test_gan_on_flat_images():
    compare_program(gan)
