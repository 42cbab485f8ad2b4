"""The "Sequence Models and Long Short-Term Memory Networks" page as written, randomness from
torch.manual_seed(1) (both libraries draw PyTorch's CPU streams): an nn.LSTM(3, 3) stepped one
element at a time over [torch.randn(1, 3) for _ in range(5)] with the hidden state (torch.randn(1,
1, 3), torch.randn(1, 1, 3)) fed back, then the whole sequence at once by torch.cat(inputs).view(
len(inputs), 1, -1); the LSTMTagger (word_embeddings, lstm, hidden2tag, F.log_softmax(tag_space,
dim=1)) over the two training sentences with prepare_sequence, the scores under no_grad before
training, NLLLoss and SGD(lr=0.1) for the epochs, and the scores after."""
from prog_helpers import compare_program, numpy_of


def lstm_pages(torch, init=None, epochs=30):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    result = {}
    torch.manual_seed(1)

    lstm = nn.LSTM(3, 3)  # Input dim is 3, output dim is 3
    inputs = [torch.randn(1, 3) for _ in range(5)]  # make a sequence of length 5

    # initialize the hidden state.
    hidden = (torch.randn(1, 1, 3),
              torch.randn(1, 1, 3))
    steps = []
    for i in inputs:
        # Step through the sequence one element at a time.
        # after each step, hidden contains the hidden state.
        out, hidden = lstm(i.view(1, 1, -1), hidden)
        steps.append(numpy_of(out))
    result["steps"] = steps

    inputs = torch.cat(inputs).view(len(inputs), 1, -1)
    hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))  # clean out hidden state
    out, hidden = lstm(inputs, hidden)
    result["whole"] = [numpy_of(out), numpy_of(hidden[0]), numpy_of(hidden[1])]

    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return torch.tensor(idxs, dtype=torch.long)

    training_data = [
        # Tags are: DET - determiner; NN - noun; V - verb
        # For example, the word "The" is a determiner
        ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
        ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])
    ]
    word_to_ix = {}
    # For each words-list (sentence) and tags-list in each tuple of training_data
    for sent, tags in training_data:
        for word in sent:
            if word not in word_to_ix:  # word has not been assigned an index yet
                word_to_ix[word] = len(word_to_ix)  # Assign each word with a unique index
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}  # Assign each tag with a unique index

    # These will usually be more like 32 or 64 dimensional.
    # We will keep them small, so we can see how the weights change as we train.
    EMBEDDING_DIM = 6
    HIDDEN_DIM = 6

    class LSTMTagger(nn.Module):

        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super(LSTMTagger, self).__init__()
            self.hidden_dim = hidden_dim

            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)

            # The LSTM takes word embeddings as inputs, and outputs hidden states
            # with dimensionality hidden_dim.
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)

            # The linear layer that maps from hidden state space to tag space
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            tag_scores = F.log_softmax(tag_space, dim=1)
            return tag_scores

    model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    # See what the scores are before training
    # Note that element i,j of the output is the score for tag j for word i.
    # Here we don't need to train, so the code is wrapped in torch.no_grad()
    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        tag_scores = model(inputs)
        result["before"] = numpy_of(tag_scores)

    for epoch in range(epochs):  # again, normally you would NOT do 300 epochs, it is toy data
        for sentence, tags in training_data:
            # Remember that Pytorch accumulates gradients: clear them out before each instance;
            # then the inputs as Tensors of word indices, the forward pass, the loss, the step
            model.zero_grad()
            tag_scores = model(prepare_sequence(sentence, word_to_ix))
            loss_function(tag_scores, prepare_sequence(tags, tag_to_ix)).backward()
            optimizer.step()

    # See what the scores are after training
    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        tag_scores = model(inputs)
        result["after"] = numpy_of(tag_scores)
        result["tags"] = tag_scores.argmax(1).tolist()
    return result


def test_sequence_models_and_lstm_tagger():
    compare_program(lstm_pages, rtol=1e-4, atol=1e-5)
