"""MIT 6.S191 (Introduction to Deep Learning) lab 1 in its PyTorch edition, the TODOs filled as the
course's solution notebooks fill them. Part 1, "Intro to PyTorch": 0-d tensors printed in
f-strings, torch.tensor(range(100)), a 2-d and a 4-d tensor (torch.zeros(10, 3, 256, 256)) checked
with isinstance and shape == tuple, slicing, torch.add of two tensors and the computation graph
func(a, b) called with two Python floats (torch.add, torch.subtract, torch.multiply of numbers),
OurDenseLayer (nn.Parameter(torch.randn(...)), torch.matmul, torch.sigmoid), nn.Sequential of
Linear and Sigmoid, a subclassed LinearWithSigmoidActivation, LinearButSometimesIdentity's
isidentity switch, y = x ** 2 differentiated, and the minimisation loop that rebuilds x as
torch.tensor([x], requires_grad=True) from the last step's tensor 500 times. Part 2, "Music
Generation with RNNs": the ABC-song download replaced by a few songs written here, the vocabulary
and vectorize_string, get_batch over np.random.choice picks (torch.tensor of a list of NumPy
rows, then torch.tensor of that tensor with dtype=torch.long), LSTMModel (Embedding, batch-first
nn.LSTM, Linear, init_hidden of zeros .to(device)), the untrained model's multinomial sample over
torch.softmax(pred[0], dim=-1) decoded through idx2char[x[0].cpu()], compute_loss over
labels.view(-1) and logits.view(-1, vocab_size), Adam training steps, state_dict checkpoints saved
with torch.save, and generate_text sampling one character at a time with the LSTM state carried
(idx2char[input_idx].item())."""
import os

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines, start_from


def intro(torch, init=None):
    nn = torch.nn
    with captured_run(torch) as out:
        integer = torch.tensor(1234)
        decimal = torch.tensor(3.14159265359)
        print(f"`integer` is a {integer.ndim}-d Tensor: {integer}")
        print(f"`decimal` is a {decimal.ndim}-d Tensor: {decimal}")

        fibonacci = torch.tensor([1, 1, 2, 3, 5, 8])
        count_to_100 = torch.tensor(range(100))
        print(f"`fibonacci` is a {fibonacci.ndim}-d Tensor with shape: {fibonacci.shape}")
        print(f"`count_to_100` is a {count_to_100.ndim}-d Tensor with shape: {count_to_100.shape}")

        matrix = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        assert isinstance(matrix, torch.Tensor), "matrix must be a torch Tensor object"
        assert matrix.ndim == 2
        images = torch.zeros(10, 3, 256, 256)
        assert isinstance(images, torch.Tensor), "images must be a torch Tensor object"
        assert images.ndim == 4, "images must have 4 dimensions"
        assert images.shape == (10, 3, 256, 256), "images is incorrect shape"
        print(f"images is a {images.ndim}-d Tensor with shape: {images.shape}")

        row_vector = matrix[1]
        column_vector = matrix[:, 1]
        scalar = matrix[0, 1]
        print(f"`row_vector`: {row_vector}")
        print(f"`column_vector`: {column_vector}")
        print(f"`scalar`: {scalar}")

        a = torch.tensor(15)
        b = torch.tensor(61)
        c1 = torch.add(a, b)
        c2 = a + b  # PyTorch overrides the "+" operation so that it is able to act on Tensors
        print(f"c1: {c1}")
        print(f"c2: {c2}")

        def func(a, b):
            c = torch.add(a, b)
            d = torch.subtract(b, 1)
            e = torch.multiply(c, d)
            return e

        a, b = 1.5, 2.5
        e_out = func(a, b)
        print(f"e_out: {e_out}")

        class OurDenseLayer(torch.nn.Module):
            def __init__(self, num_inputs, num_outputs):
                super(OurDenseLayer, self).__init__()
                self.W = torch.nn.Parameter(torch.randn(num_inputs, num_outputs))
                self.bias = torch.nn.Parameter(torch.randn(num_outputs))

            def forward(self, x):
                z = torch.matmul(x, self.W) + self.bias
                y = torch.sigmoid(z)
                return y

        num_inputs = 2
        num_outputs = 3
        layer = OurDenseLayer(num_inputs, num_outputs)
        x_input = torch.tensor([[1, 2.]])
        y = layer(x_input)
        print(f"input shape: {x_input.shape}")
        print(f"output shape: {y.shape}")
        print(f"output result: {y}")

        n_input_nodes = 2
        n_output_nodes = 3
        model = nn.Sequential(nn.Linear(n_input_nodes, n_output_nodes), nn.Sigmoid())
        x_input = torch.tensor([[1, 2.]])
        y = model(x_input)
        print(f"input shape: {x_input.shape}")
        print(f"output shape: {y.shape}")
        print(f"output result: {y}")

        class LinearWithSigmoidActivation(nn.Module):
            def __init__(self, num_inputs, num_outputs):
                super(LinearWithSigmoidActivation, self).__init__()
                self.linear = nn.Linear(num_inputs, num_outputs)
                self.activation = nn.Sigmoid()

            def forward(self, inputs):
                linear_output = self.linear(inputs)
                output = self.activation(linear_output)
                return output

        model = LinearWithSigmoidActivation(n_input_nodes, n_output_nodes)
        y = model(x_input)
        print(f"input shape: {x_input.shape}")
        print(f"output shape: {y.shape}")
        print(f"output result: {y}")

        class LinearButSometimesIdentity(nn.Module):
            def __init__(self, num_inputs, num_outputs):
                super(LinearButSometimesIdentity, self).__init__()
                self.linear = nn.Linear(num_inputs, num_outputs)

            def forward(self, inputs, isidentity=False):
                if isidentity:
                    return inputs
                else:
                    return self.linear(inputs)

        model = LinearButSometimesIdentity(num_inputs=2, num_outputs=3)
        x_input = torch.tensor([[1, 2.]])
        out_with_linear = model(x_input)
        out_with_identity = model(x_input, isidentity=True)
        print(f"input: {x_input}")
        print("Network linear output: {}; network identity output: {}".format(out_with_linear, out_with_identity))

        x = torch.tensor(3.0, requires_grad=True)
        y = x ** 2
        y.backward()  # Compute the gradient
        dy_dx = x.grad
        print("dy_dx of y=x^2 at x=3.0 is: ", dy_dx)
        assert dy_dx == 6.0

        x = torch.randn(1)
        print(f"Initializing x={x.item()}")
        learning_rate = 1e-2  # Learning rate
        history = []
        x_f = 4  # Target value
        for i in range(500):
            x = torch.tensor([x], requires_grad=True)
            loss = (x - x_f)**2
            loss.backward()
            x = x.item() - learning_rate * x.grad
            history.append(x.item())
    return {"printed": printed_lines(out), "history": np.array(history), "x_shape": list(x.shape)}


SONGS = [
    "X:1\nT:The Reel of Tulloch\nZ: id:dc-reel-1\nM:C\nL:1/8\nK:D Major\n|:A2|dB AF D2 FA|dfed Bdef|g2 fg efge|",
    "X:2\nT:Jig of Slurs\nZ: id:dc-jig-2\nM:6/8\nL:1/8\nK:D Major\n|:dcd BAF|ABd fef|gfe d2B|AFA d2:|",
    "X:3\nT:Polka Four\nZ: id:dc-polka-3\nM:2/4\nL:1/8\nK:G Major\n|:GB dB|GB d2|ed cB|AB cA|GB dB|",
]


def music_generation(torch, init=None, steps=4, tmp=None):
    nn, optim = torch.nn, torch.optim
    result = {}
    np.random.seed(0)
    torch.manual_seed(0)
    songs = SONGS
    example_song = songs[0]
    songs_joined = "\n\n".join(songs)
    vocab = sorted(set(songs_joined))
    char2idx = {u: i for i, u in enumerate(vocab)}
    idx2char = np.array(vocab)

    def vectorize_string(string):
        vectorized_output = np.array([char2idx[char] for char in string])
        return vectorized_output

    vectorized_songs = vectorize_string(songs_joined)
    assert isinstance(vectorized_songs, np.ndarray), "returned result should be a numpy array"

    def get_batch(vectorized_songs, seq_length, batch_size):
        n = vectorized_songs.shape[0] - 1
        idx = np.random.choice(n - seq_length, batch_size)
        input_batch = [vectorized_songs[i: i + seq_length] for i in idx]
        output_batch = [vectorized_songs[i + 1: i + seq_length + 1] for i in idx]
        x_batch = torch.tensor(input_batch, dtype=torch.long)
        y_batch = torch.tensor(output_batch, dtype=torch.long)
        return x_batch, y_batch

    test_args = (vectorized_songs, 10, 2)
    x_batch, y_batch = get_batch(*test_args)
    assert x_batch.shape == (2, 10), "x_batch shape is incorrect"
    assert y_batch.shape == (2, 10), "y_batch shape is incorrect"
    x_batch, y_batch = get_batch(vectorized_songs, seq_length=5, batch_size=1)
    steps_seen = []
    for i, (input_idx, target_idx) in enumerate(zip(x_batch[0], y_batch[0])):
        steps_seen.append("Step {:3d}".format(i))
        steps_seen.append("  input: {} ({:s})".format(input_idx, repr(idx2char[input_idx.item()])))
        steps_seen.append("  expected output: {} ({:s})".format(target_idx, repr(idx2char[target_idx.item()])))
    result["steps"] = steps_seen

    class LSTMModel(nn.Module):
        def __init__(self, vocab_size, embedding_dim, hidden_size):
            super(LSTMModel, self).__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_size, batch_first=True)
            self.fc = nn.Linear(hidden_size, vocab_size)

        def init_hidden(self, batch_size, device):
            return (torch.zeros(1, batch_size, self.hidden_size).to(device),
                    torch.zeros(1, batch_size, self.hidden_size).to(device))

        def forward(self, x, state=None, return_state=False):
            x = self.embedding(x)
            if state is None:
                state = self.init_hidden(x.size(0), x.device)
            out, state = self.lstm(x, state)
            out = self.fc(out)
            return out if not return_state else (out, state)

    vocab_size = len(vocab)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    params = dict(num_training_iterations=steps, batch_size=4, seq_length=20, learning_rate=5e-3,
                  embedding_dim=16, hidden_size=32)
    model = LSTMModel(vocab_size, params["embedding_dim"], params["hidden_size"]).to(device)
    start_from(torch, model, init, result)
    result["summary"] = str(model)

    x, y = get_batch(vectorized_songs, seq_length=30, batch_size=6)
    x = x.to(device)
    y = y.to(device)
    pred = model(x)
    result["pred"] = numpy_of(pred)
    sampled_indices = torch.multinomial(torch.softmax(pred[0], dim=-1), num_samples=1)
    sampled_indices = sampled_indices.squeeze(-1).cpu().numpy()
    result["input_text"] = repr("".join(idx2char[x[0].cpu()]))
    result["own"] = {"untrained_sample": repr("".join(idx2char[sampled_indices]))}

    cross_entropy = nn.CrossEntropyLoss()

    def compute_loss(labels, logits):
        batched_labels = labels.view(-1)
        batched_logits = logits.view(-1, logits.size(-1))
        loss = cross_entropy(batched_logits, batched_labels)
        return loss

    example_batch_loss = compute_loss(y, pred)
    result["example_loss"] = example_batch_loss.mean().item()

    checkpoint_dir = os.path.join(tmp, "training_checkpoints")
    checkpoint_prefix = os.path.join(checkpoint_dir, "my_ckpt")
    os.makedirs(checkpoint_dir, exist_ok=True)
    optimizer = optim.Adam(model.parameters(), lr=params["learning_rate"])

    def train_step(x, y):
        model.train()
        optimizer.zero_grad()
        y_hat = model(x)
        loss = compute_loss(y, y_hat)
        loss.backward()
        optimizer.step()
        return loss

    history = []
    for iter in range(params["num_training_iterations"]):
        x_batch, y_batch = get_batch(vectorized_songs, params["seq_length"], params["batch_size"])
        x_batch = torch.tensor(x_batch, dtype=torch.long).to(device)
        y_batch = torch.tensor(y_batch, dtype=torch.long).to(device)
        loss = train_step(x_batch, y_batch)
        history.append(loss.item())
        if iter % 100 == 0:
            torch.save(model.state_dict(), checkpoint_prefix)
    torch.save(model.state_dict(), checkpoint_prefix)
    result["history"] = history
    result["trained"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    model.load_state_dict(torch.load(checkpoint_prefix))

    def generate_text(model, start_string, generation_length=1000):
        input_idx = [char2idx[s] for s in start_string]
        input_idx = torch.tensor([input_idx], dtype=torch.long).to(device)
        state = model.init_hidden(input_idx.size(0), device)
        text_generated = []
        for i in range(generation_length):
            predictions, state = model(input_idx, state, return_state=True)
            predictions = predictions.squeeze(0)
            input_idx = torch.multinomial(torch.softmax(predictions, dim=-1), num_samples=1)
            text_generated.append(idx2char[input_idx].item())
        return (start_string + ''.join(text_generated))

    generated_text = generate_text(model, "X", 60)
    assert len(generated_text) == 61 and set(generated_text) <= set(vocab)
    result["own"]["generated"] = generated_text
    result["example_song"] = example_song
    return result


def test_mit_6s191_intro_to_pytorch():
    ref, got = compare_program(intro)
    assert ref["x_shape"] == [1]
    assert abs(got["history"][-1] - 4.0) < 1e-3


def test_mit_6s191_music_generation_lstm(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    ref, got = compare_program(music_generation, rtol=1e-3, atol=1e-4, tmp=str(tmp_path / "pt"),
                               mt_options={"tmp": str(tmp_path / "mt")})
    assert got["history"][-1] < got["history"][0]
