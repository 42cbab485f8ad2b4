"""The "NLP from scratch" tutorials: a character-level RNN classifying names by language, its cell
written by hand (torch.cat of input and hidden, two Linears, nn.LogSoftmax(dim=1)), names turned
into one-hot (line_length, 1, n_letters) tensors by letterToIndex, trained one name at a time
with NLLLoss and p.data.add_(p.grad.data, alpha=-learning_rate), categories read back by
output.topk(1) and topk(3) for predictions, a confusion matrix filled and normalised by row sums;
then the generating RNN conditioned on a one-hot category (category, input, hidden through
i2h/i2o/o2o with Dropout(0.1)), its loss summed over the characters of a name, and names sampled
by argmax (equal in both libraries) and by torch.multinomial (the library's own draws, checked by
structure)."""
import string

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

ALL_LETTERS = string.ascii_letters + " .,;'"
N_LETTERS = len(ALL_LETTERS)
NAMES = {
    "English": ["Smith", "Jones", "Taylor", "Brown", "Wilson", "Evans"],
    "French": ["Dubois", "Lefevre", "Moreau", "Laurent", "Girard", "Roux"],
    "Italian": ["Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano"],
}
CATEGORIES = list(NAMES)


def letter_to_index(letter):
    return ALL_LETTERS.find(letter)


def line_to_tensor(torch, line):
    tensor = torch.zeros(len(line), 1, N_LETTERS)
    for li, letter in enumerate(line):
        tensor[li][0][letter_to_index(letter)] = 1
    return tensor


def name_classifier(torch, init=None, steps=36, n_hidden=32, learning_rate=0.005):
    nn = torch.nn

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            combined = torch.cat((input, hidden), 1)
            hidden = torch.tanh(self.i2h(combined))
            output = self.softmax(self.h2o(hidden))
            return output, hidden

        def initHidden(self):
            return torch.zeros(1, self.hidden_size)

    torch.manual_seed(0)
    rnn = RNN(N_LETTERS, n_hidden, len(CATEGORIES))
    result = {"J": numpy_of(line_to_tensor(torch, "J")).nonzero()[2].tolist(),
              "Jones_size": tuple(line_to_tensor(torch, "Jones").size())}
    start_from(torch, rnn, init, result)
    criterion = nn.NLLLoss()

    def category_from_output(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return CATEGORIES[category_i], category_i

    def train(category_tensor, line_tensor):
        hidden = rnn.initHidden()
        rnn.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        return output, loss.item()

    rng = np.random.default_rng(1)
    losses, guesses = [], []
    for it in range(steps):
        category = CATEGORIES[rng.integers(len(CATEGORIES))]
        line = NAMES[category][rng.integers(len(NAMES[category]))]
        category_tensor = torch.tensor([CATEGORIES.index(category)], dtype=torch.long)
        output, loss = train(category_tensor, line_to_tensor(torch, line))
        losses.append(loss)
        guesses.append(category_from_output(output)[0])

    def evaluate(line_tensor):
        hidden = rnn.initHidden()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        return output

    confusion = torch.zeros(len(CATEGORIES), len(CATEGORIES))
    for category in CATEGORIES:
        for line in NAMES[category]:
            output = evaluate(line_to_tensor(torch, line))
            guess, guess_i = category_from_output(output)
            confusion[CATEGORIES.index(category)][guess_i] += 1
    for i in range(len(CATEGORIES)):
        confusion[i] = confusion[i] / confusion[i].sum()

    with torch.no_grad():
        output = evaluate(line_to_tensor(torch, "Dovesky"))
        topv, topi = output.topk(3, 1, True)
        predictions = [(topv[0][i].item(), CATEGORIES[topi[0][i].item()]) for i in range(3)]
    result.update(losses=losses, guesses=guesses, confusion=numpy_of(confusion),
                  predictions=[p[0] for p in predictions], predicted=[p[1] for p in predictions])
    return result


def name_generator(torch, init=None, steps=24, n_hidden=32, learning_rate=0.0005, max_length=8):
    nn = torch.nn
    n_categories = len(CATEGORIES)

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
            self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
            self.o2o = nn.Linear(hidden_size + output_size, output_size)
            self.dropout = nn.Dropout(0.1)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, category, input, hidden):
            input_combined = torch.cat((category, input, hidden), 1)
            hidden = self.i2h(input_combined)
            output = self.i2o(input_combined)
            output_combined = torch.cat((hidden, output), 1)
            output = self.o2o(output_combined)
            output = self.dropout(output)
            output = self.softmax(output)
            return output, hidden

        def initHidden(self):
            return torch.zeros(1, self.hidden_size)

    def category_tensor(category):
        tensor = torch.zeros(1, n_categories)
        tensor[0][CATEGORIES.index(category)] = 1
        return tensor

    def input_tensor(line):
        tensor = torch.zeros(len(line), 1, N_LETTERS + 1)
        for li in range(len(line)):
            tensor[li][0][ALL_LETTERS.find(line[li])] = 1
        return tensor

    def target_tensor(line):
        letter_indexes = [ALL_LETTERS.find(line[li]) for li in range(1, len(line))]
        letter_indexes.append(N_LETTERS)  # EOS
        return torch.LongTensor(letter_indexes)

    torch.manual_seed(0)
    rnn = RNN(N_LETTERS + 1, n_hidden, N_LETTERS + 1)
    result = {}
    start_from(torch, rnn, init, result)
    rnn.eval()  # dropout off for the compared run: its masks come from each library's generator
    criterion = nn.NLLLoss()
    rng = np.random.default_rng(2)
    losses = []
    for it in range(steps):
        category = CATEGORIES[rng.integers(n_categories)]
        line = NAMES[category][rng.integers(len(NAMES[category]))]
        cat, inp, target = category_tensor(category), input_tensor(line), target_tensor(line)
        target.unsqueeze_(-1)
        hidden = rnn.initHidden()
        rnn.zero_grad()
        loss = torch.Tensor([0])
        for i in range(inp.size(0)):
            output, hidden = rnn(cat, inp[i], hidden)
            l = criterion(output, target[i])
            loss += l
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        losses.append(loss.item() / inp.size(0))

    def sample(category, start_letter, pick):
        with torch.no_grad():
            cat = category_tensor(category)
            inp = input_tensor(start_letter)
            hidden = rnn.initHidden()
            output_name = start_letter
            for i in range(max_length):
                output, hidden = rnn(cat, inp[0], hidden)
                topi = pick(output)
                if topi == N_LETTERS:
                    break
                output_name += ALL_LETTERS[topi]
                inp = input_tensor(ALL_LETTERS[topi])
            return output_name

    greedy = [sample(c, s, lambda o: o.topk(1)[1][0][0].item()) for c in CATEGORIES for s in "RD"]
    argmaxed = [sample(c, s, lambda o: int(o.argmax())) for c in CATEGORIES for s in "RD"]
    torch.manual_seed(3)
    drawn = [sample(c, "S", lambda o: torch.multinomial(o.exp().squeeze(0), 1).item()) for c in CATEGORIES]
    rnn.train()
    out_train, _ = rnn(category_tensor("French"), input_tensor("A")[0], rnn.initHidden())
    result.update(losses=losses, greedy=greedy, argmaxed=argmaxed,
                  own={"drawn": drawn, "train_sum": out_train.exp().sum().item()})
    return result


def test_char_rnn_classification():
    ref, got = compare_program(name_classifier, rtol=1e-3, atol=1e-4)
    assert got["J"] == [ALL_LETTERS.find("J")] and got["Jones_size"] == (5, 1, N_LETTERS)
    np.testing.assert_allclose(got["confusion"].sum(1), 1, rtol=1e-6)


def test_char_rnn_generation():
    ref, got = compare_program(name_generator, rtol=1e-3, atol=1e-4)
    assert got["greedy"] == got["argmaxed"]
    for name in got["own"]["drawn"]:
        assert name.startswith("S") and 1 <= len(name) <= 9 and set(name) <= set(ALL_LETTERS)
    assert abs(got["own"]["train_sum"] - 1) < 1e-4
