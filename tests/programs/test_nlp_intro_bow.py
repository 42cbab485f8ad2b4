"""The "Deep Learning for NLP with PyTorch" pages as written, randomness included
(torch.manual_seed(1); both libraries draw PyTorch's CPU streams): "Introduction to PyTorch"
(torch.tensor of lists, indexing V[0] / T[0] and .item(), torch.randn((2, 3, 4)), x + y,
torch.cat along dims 0 and 1, x.view(2, 12) and view(2, -1), requires_grad, z.grad_fn,
s = z.sum() and its grad_fn, backward and x.grad, requires_grad_() flipping, .detach(), and
torch.no_grad()); "Deep Learning with PyTorch" (lin = nn.Linear(5, 3) on torch.randn(2, 5),
F.relu, F.softmax / F.log_softmax on torch.randn(5), the BoWClassifier with make_bow_vector and
make_target over the Spanish/English sentences, log_probs under no_grad before training,
NLLLoss and SGD(lr=0.1) for 100 epochs over the data, then the test log-probs and the
"creo" column of the weight)."""
from prog_helpers import compare_program, numpy_of


def intro_to_torch(torch, init=None):
    result = {}
    torch.manual_seed(1)
    V_data = [1., 2., 3.]
    V = torch.tensor(V_data)
    M_data = [[1., 2., 3.], [4., 5., 6]]
    M = torch.tensor(M_data)
    T_data = [[[1., 2.], [3., 4.]], [[5., 6.], [7., 8.]]]
    T = torch.tensor(T_data)
    result["index"] = (numpy_of(V[0]), V[0].item(), numpy_of(M[0]), numpy_of(T[0]))
    x = torch.randn((3, 4, 5))
    result["randn"] = numpy_of(x)
    x = torch.tensor([1., 2., 3.])
    y = torch.tensor([4., 5., 6.])
    z = x + y
    result["add"] = numpy_of(z)
    x_1 = torch.randn(2, 5)
    y_1 = torch.randn(3, 5)
    z_1 = torch.cat([x_1, y_1])
    x_2 = torch.randn(2, 3)
    y_2 = torch.randn(2, 5)
    z_2 = torch.cat([x_2, y_2], 1)
    result["cat"] = (numpy_of(z_1), numpy_of(z_2))
    x = torch.randn(2, 3, 4)
    result["view"] = (numpy_of(x.view(2, 12)), numpy_of(x.view(2, -1)))
    x = torch.tensor([1., 2., 3], requires_grad=True)
    y = torch.tensor([4., 5., 6], requires_grad=True)
    z = x + y
    s = z.sum()
    result["grad_fn"] = (type(z.grad_fn).__name__, type(s.grad_fn).__name__)
    s.backward()
    result["x_grad"] = numpy_of(x.grad)
    x = torch.randn(2, 2)
    y = torch.randn(2, 2)
    flags = [x.requires_grad, y.requires_grad]
    z = x + y
    flags.append(z.grad_fn is None)
    x = x.requires_grad_()
    y = y.requires_grad_()
    z = x + y
    flags += [z.grad_fn is not None, z.requires_grad]
    new_z = z.detach()
    flags.append(new_z.grad_fn is None)
    flags.append(x.requires_grad)
    flags.append((x ** 2).requires_grad)
    with torch.no_grad():
        flags.append((x ** 2).requires_grad)
    result["flags"] = flags
    return result


def bow_classifier(torch, init=None, epochs=100):
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    result = {}
    torch.manual_seed(1)
    lin = nn.Linear(5, 3)  # maps from R^5 to R^3, parameters A, b
    # data is 2x5.  A maps from 5 to 3... can we map "data" under A?
    data = torch.randn(2, 5)
    result["lin"] = numpy_of(lin(data))
    data = torch.randn(2, 2)
    result["relu"] = (numpy_of(data), numpy_of(F.relu(data)))
    data = torch.randn(5)
    result["softmax"] = (numpy_of(F.softmax(data, dim=0)), F.softmax(data, dim=0).sum().item(),
                         numpy_of(F.log_softmax(data, dim=0)))

    data = [("me gusta comer en la cafeteria".split(), "SPANISH"),
            ("Give it to me".split(), "ENGLISH"),
            ("No creo que sea una buena idea".split(), "SPANISH"),
            ("No it is not a good idea to get lost at sea".split(), "ENGLISH")]

    test_data = [("Yo creo que si".split(), "SPANISH"),
                 ("it is lost on me".split(), "ENGLISH")]

    # word_to_ix maps each word in the vocab to a unique integer, which will be its
    # index into the Bag of words vector
    word_to_ix = {}
    for sent, _ in data + test_data:
        for word in sent:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)

    VOCAB_SIZE = len(word_to_ix)
    NUM_LABELS = 2

    class BoWClassifier(nn.Module):  # inheriting from nn.Module!

        def __init__(self, num_labels, vocab_size):
            # calls the init function of nn.Module.  Dont get confused by syntax,
            # just always do it in an nn.Module
            super(BoWClassifier, self).__init__()

            # Define the parameters that you will need.  In this case, we need A and b,
            # the parameters of the affine mapping.
            # Torch defines nn.Linear(), which provides the affine map.
            # Make sure you understand why the input dimension is vocab_size
            # and the output is num_labels!
            self.linear = nn.Linear(vocab_size, num_labels)

            # NOTE! The non-linearity log softmax does not have parameters! So we don't need
            # to worry about that here

        def forward(self, bow_vec):
            # Pass the input through the linear layer,
            # then pass that through log_softmax.
            # Many non-linearities and other functions are in torch.nn.functional
            return F.log_softmax(self.linear(bow_vec), dim=1)

    def make_bow_vector(sentence, word_to_ix):
        vec = torch.zeros(len(word_to_ix))
        for word in sentence:
            vec[word_to_ix[word]] += 1
        return vec.view(1, -1)

    def make_target(label, label_to_ix):
        return torch.LongTensor([label_to_ix[label]])

    model = BoWClassifier(NUM_LABELS, VOCAB_SIZE)
    result["params"] = [numpy_of(param) for param in model.parameters()]

    # To run the model, pass in a BoW vector
    # Here we don't need to train, so the code is wrapped in torch.no_grad()
    with torch.no_grad():
        sample = data[0]
        bow_vector = make_bow_vector(sample[0], word_to_ix)
        log_probs = model(bow_vector)
        result["untrained"] = numpy_of(log_probs)

    label_to_ix = {"SPANISH": 0, "ENGLISH": 1}

    # Run on test data before we train, just to see a before-and-after
    before = []
    with torch.no_grad():
        for instance, label in test_data:
            bow_vec = make_bow_vector(instance, word_to_ix)
            log_probs = model(bow_vec)
            before.append(numpy_of(log_probs))
    result["before"] = before
    # Print the matrix column corresponding to "creo"
    result["creo_before"] = numpy_of(next(model.parameters())[:, word_to_ix["creo"]])

    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    # Usually you want to pass over the training data several times.
    # 100 is much bigger than on a real data set, but real datasets have more than
    # two instances.  Usually, somewhere between 5 and 30 epochs is reasonable.
    for epoch in range(epochs):
        for instance, label in data:
            # Step 1. Remember that PyTorch accumulates gradients.
            # We need to clear them out before each instance
            model.zero_grad()

            # Step 2. Make our BOW vector and also we must wrap the target in a
            # Tensor as an integer. For example, if the target is SPANISH, then
            # we wrap the integer 0. The loss function then knows that the 0th
            # element of the log probabilities is the log probability
            # corresponding to SPANISH
            bow_vec = make_bow_vector(instance, word_to_ix)
            target = make_target(label, label_to_ix)

            # Step 3. Run our forward pass.
            log_probs = model(bow_vec)

            # Step 4. Compute the loss, gradients, and update the parameters by
            # calling optimizer.step()
            loss = loss_function(log_probs, target)
            loss.backward()
            optimizer.step()

    after = []
    with torch.no_grad():
        for instance, label in test_data:
            bow_vec = make_bow_vector(instance, word_to_ix)
            log_probs = model(bow_vec)
            after.append(numpy_of(log_probs))
    result["after"] = after
    # Index corresponding to Spanish goes up, English goes down!
    result["creo_after"] = numpy_of(next(model.parameters())[:, word_to_ix["creo"]])
    return result


def test_introduction_to_torch():
    compare_program(intro_to_torch)


def test_bag_of_words_classifier():
    compare_program(bow_classifier, rtol=1e-4, atol=1e-5)
