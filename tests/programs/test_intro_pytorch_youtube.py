"""The pytorch.org "Introduction to PyTorch - YouTube Series" pages as they run, randomness from
torch.manual_seed (both libraries draw PyTorch's CPU streams), FashionMNIST replaced by local
28x28 images in a Dataset returning (tensor, int). "Introduction to PyTorch Tensors": torch.empty
and type(x), zeros/ones/rand after torch.manual_seed(1729) (r1 == r3), the *_like factories,
torch.tensor of nested lists and tuples, dtype=torch.int16 and b.to(torch.int32), arithmetic with
scalars and twos ** torch.tensor([[1, 2], [3, 4]]), broadcasting a * torch.rand(3, 1) and its
RuntimeError wording, abs/ceil/floor/clamp, sin/asin, bitwise_xor, torch.eq, max/mean/std/prod/
unique with .item(), torch.linalg.cross/matmul/svd, in-place a.sin_()/add_/mul_, matmul(out=c)
keeping id(c) and torch.rand(2, 2, out=c), clone/detach, unsqueeze/squeeze/unsqueeze_ and
reshape, the NumPy bridge both ways. "The Fundamentals of Autograd": torch.linspace(0., 2. *
math.pi, steps=25, requires_grad=True) through sin/2*/+1/sum, grad_fn.next_functions walked,
a.grad; TinyModel trained by SGD with layer2.weight.grad[0][0:10] accumulating over steps and
zero_grad(set_to_none=False); requires_grad = False on a leaf, torch.no_grad() and the
@torch.no_grad() decorator, detach, the RuntimeError of torch.sin_ on a leaf that requires grad,
autograd.profiler.profile(use_cuda=False) with key_averages().table(sort_by='self_cpu_time_total')
(its rows are each library's own), y.backward(v) after a data-dependent while loop on
y.data.norm(), torch.autograd.functional.jacobian of exp_adder and vjp of do_some_doubling.
"Building Models": TinyModel's parameters, an nn.Linear(3, 2) with its parameters printed, LeNet,
the LSTMTagger, MaxPool2d(3), BatchNorm1d(4) of torch.rand(1, 4, 4) * 20 + 5 and the mean of its
output, Dropout(p=0.4) twice (PyTorch's masks). "Training with PyTorch": GarmentClassifier,
CrossEntropyLoss of dummy outputs, SGD(lr=0.001, momentum=0.9), train_one_epoch reporting every
few batches into a SummaryWriter ('Loss/train', tb_x), the per-epoch validation under
model.eval()/no_grad, 'LOSS train {} valid {}' (a float and a tensor), writer.add_scalars
('Training vs. Validation Loss', {...}), the best model saved and loaded."""
import importlib
import math

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def tensors_autograd(torch, init=None):
    res = {}
    with captured_run(torch) as out:
        x = torch.empty(3, 4)
        print(type(x).__name__, x.shape)
        zeros = torch.zeros(2, 3)
        print(zeros)
        ones = torch.ones(2, 3)
        print(ones)
        torch.manual_seed(1729)
        random = torch.rand(2, 3)
        print(random)
        torch.manual_seed(1729)
        random1 = torch.rand(2, 3)
        random2 = torch.rand(2, 3)
        torch.manual_seed(1729)
        random3 = torch.rand(2, 3)
        print(random1, random2, random3)
        x = torch.empty(2, 2, 3)
        print(x.shape)
        empty_like_x = torch.empty_like(x)
        print(empty_like_x.shape)
        zeros_like_x = torch.zeros_like(x)
        print(zeros_like_x)
        ones_like_x = torch.ones_like(x)
        print(ones_like_x)
        rand_like_x = torch.rand_like(x)
        print(rand_like_x)
        some_constants = torch.tensor([[3.1415926, 2.71828], [1.61803, 0.0072897]])
        print(some_constants)
        some_integers = torch.tensor((2, 3, 5, 7, 11, 13, 17, 19))
        print(some_integers)
        more_integers = torch.tensor(((2, 4, 6), [3, 6, 9]))
        print(more_integers)
        a = torch.ones((2, 3), dtype=torch.int16)
        print(a)
        b = torch.rand((2, 3), dtype=torch.float64) * 20.
        print(b)
        c = b.to(torch.int32)
        print(c)
        ones = torch.zeros(2, 2) + 1
        twos = torch.ones(2, 2) * 2
        threes = (torch.ones(2, 2) * 7 - 1) / 2
        fours = twos ** 2
        sqrt2s = twos ** 0.5
        print(ones, twos, threes, fours, sqrt2s)
        powers2 = twos ** torch.tensor([[1, 2], [3, 4]])
        print(powers2)
        fives = ones + fours
        print(fives)
        dozens = threes * fours
        print(dozens)
        a = torch.rand(2, 3)
        b = torch.rand(3, 2)
        try:
            print(a * b)
        except RuntimeError as e:
            print(e)
        rand = torch.rand(2, 4)
        doubled = rand * (torch.ones(1, 4) * 2)
        print(rand)
        print(doubled)
        a = torch.ones(4, 3, 2)
        b = a * torch.rand(3, 2)
        print(b)
        c = a * torch.rand(3, 1)
        print(c)
        d = a * torch.rand(1, 2)
        print(d)
        for shape in ((4, 3), (2, 3)):
            try:
                print((a * torch.rand(*shape)).shape)
            except RuntimeError as e:
                print(e)
        a = torch.rand(2, 4) * 2 - 1
        print('Common functions:')
        print(torch.abs(a))
        print(torch.ceil(a))
        print(torch.floor(a))
        print(torch.clamp(a, -0.5, 0.5))
        angles = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
        sines = torch.sin(angles)
        inverses = torch.asin(sines)
        print('\nSine and arcsine:')
        print(angles)
        print(sines)
        print(inverses)
        print('\nBitwise XOR:')
        b = torch.tensor([1, 5, 11])
        c = torch.tensor([2, 7, 10])
        print(torch.bitwise_xor(b, c))
        print('\nBroadcasted, element-wise equality comparison:')
        d = torch.tensor([[1., 2.], [3., 4.]])
        e = torch.ones(1, 2)
        print(torch.eq(d, e))
        print('\nReduction ops:')
        print(torch.max(d))
        print(torch.max(d).item())
        print(torch.mean(d))
        print(torch.std(d))
        print(torch.prod(d))
        print(torch.unique(torch.tensor([1, 2, 1, 2, 1, 2])))
        v1 = torch.tensor([1., 0., 0.])
        v2 = torch.tensor([0., 1., 0.])
        m1 = torch.rand(2, 2)
        m2 = torch.tensor([[3., 0.], [0., 3.]])
        print('\nVectors & Matrices:')
        print(torch.linalg.cross(v2, v1))
        print(m1)
        m3 = torch.linalg.matmul(m1, m2)
        print(m3)
        U, S, Vh = torch.linalg.svd(m3)
        print(S)
        res["svd_product"] = numpy_of(U @ torch.diag(S) @ Vh)
        a = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
        print('a:')
        print(a)
        print(torch.sin(a))
        print(a)
        b = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
        print('\nb:')
        print(b)
        print(b.sin_())
        print(b)
        a = torch.ones(2, 2)
        b = torch.rand(2, 2)
        print('Before:')
        print(a)
        print(b)
        print('\nAfter adding:')
        print(a.add_(b))
        print(a)
        print(b)
        print('\nAfter multiplying')
        print(b.mul_(b))
        print(b)
        a = torch.rand(2, 2)
        b = torch.rand(2, 2)
        c = torch.zeros(2, 2)
        old_id = id(c)
        print(c)
        d = torch.matmul(a, b, out=c)
        print(c)
        assert c is d
        assert id(c) == old_id
        torch.rand(2, 2, out=c)
        print(c)
        assert id(c) == old_id
        a = torch.ones(2, 2)
        b = a
        a[0][1] = 561
        print(b)
        a = torch.ones(2, 2)
        b = a.clone()
        assert b is not a
        print(torch.eq(a, b))
        a[0][1] = 561
        print(b)
        a = torch.rand(2, 2, requires_grad=True)
        print(a)
        b = a.clone()
        print(b)
        c = a.detach().clone()
        print(c)
        print(a)
        a = torch.rand(3, 226, 226)
        b = a.unsqueeze(0)
        print(a.shape)
        print(b.shape)
        c = torch.rand(1, 1, 1, 1, 1)
        print(c)
        a = torch.rand(1, 20)
        print(a.shape)
        print(a)
        b = a.squeeze(0)
        print(b.shape)
        print(b)
        c = torch.rand(2, 2)
        print(c.shape)
        d = c.squeeze(0)
        print(d.shape)
        a = torch.ones(4, 3, 2)
        b = torch.rand(3)
        c = b.unsqueeze(1)
        print(c.shape)
        print(a * c)
        batch_me = torch.rand(3, 226, 226)
        print(batch_me.shape)
        batch_me.unsqueeze_(0)
        print(batch_me.shape)
        output3d = torch.rand(6, 20, 20)
        print(output3d.shape)
        input1d = output3d.reshape(6 * 20 * 20)
        print(input1d.shape)
        print(torch.reshape(output3d, (6 * 20 * 20,)).shape)
        numpy_array = np.ones((2, 3))
        print(numpy_array)
        pytorch_tensor = torch.from_numpy(numpy_array)
        print(pytorch_tensor)
        pytorch_rand = torch.rand(2, 3)
        print(pytorch_rand)
        numpy_rand = pytorch_rand.numpy()
        print(numpy_rand)
        numpy_array[1, 1] = 23
        print(pytorch_tensor)
        pytorch_rand[1, 1] = 17
        print(numpy_rand)

        # The Fundamentals of Autograd
        a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
        print(a)
        b = torch.sin(a)
        print(b)
        c = 2 * b
        print(c)
        d = c + 1
        print(d)
        out_ = d.sum()
        print(out_)
        print('d:')
        print(d.grad_fn)
        print(d.grad_fn.next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions)
        print('\nc:')
        print(c.grad_fn)
        print('\nb:')
        print(b.grad_fn)
        print('\na:')
        print(a.grad_fn)
        out_.backward()
        print(a.grad)
        res["linspace_grad"] = numpy_of(a.grad)

        BATCH_SIZE = 16
        DIM_IN = 1000
        HIDDEN_SIZE = 100
        DIM_OUT = 10

        class TinyModel(torch.nn.Module):
            def __init__(self):
                super(TinyModel, self).__init__()
                self.layer1 = torch.nn.Linear(DIM_IN, HIDDEN_SIZE)
                self.relu = torch.nn.ReLU()
                self.layer2 = torch.nn.Linear(HIDDEN_SIZE, DIM_OUT)

            def forward(self, x):
                x = self.layer1(x)
                x = self.relu(x)
                x = self.layer2(x)
                return x

        some_input = torch.randn(BATCH_SIZE, DIM_IN, requires_grad=False)
        ideal_output = torch.randn(BATCH_SIZE, DIM_OUT, requires_grad=False)
        model = TinyModel()
        print(model.layer2.weight[0][0:10])
        print(model.layer2.weight.grad)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
        prediction = model(some_input)
        loss = (ideal_output - prediction).pow(2).sum()
        print(loss)
        loss.backward()
        print(model.layer2.weight[0][0:10])
        print(model.layer2.weight.grad[0][0:10])
        optimizer.step()
        print(model.layer2.weight[0][0:10])
        print(model.layer2.weight.grad[0][0:10])
        for i in range(0, 5):
            prediction = model(some_input)
            loss = (ideal_output - prediction).pow(2).sum()
            loss.backward()
        print(model.layer2.weight.grad[0][0:10])
        optimizer.zero_grad(set_to_none=False)
        print(model.layer2.weight.grad[0][0:10])

        a = torch.ones(2, 3, requires_grad=True)
        print(a)
        b1 = 2 * a
        print(b1)
        a.requires_grad = False
        b2 = 2 * a
        print(b2)
        a = torch.ones(2, 3, requires_grad=True) * 2
        b = torch.ones(2, 3, requires_grad=True) * 3
        c1 = a + b
        print(c1)
        with torch.no_grad():
            c2 = a + b
        print(c2)
        c3 = a * b
        print(c3)

        def add_tensors1(x, y):
            return x + y

        @torch.no_grad()
        def add_tensors2(x, y):
            return x + y

        a = torch.ones(2, 3, requires_grad=True) * 2
        b = torch.ones(2, 3, requires_grad=True) * 3
        c1 = add_tensors1(a, b)
        print(c1)
        c2 = add_tensors2(a, b)
        print(c2)
        x = torch.rand(5, requires_grad=True)
        y = x.detach()
        print(x)
        print(y)
        a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
        try:
            torch.sin_(a)
        except RuntimeError as e:
            print(e)

        device = torch.device('cpu')
        run_on_gpu = False
        x = torch.randn(2, 3, requires_grad=True)
        y = torch.rand(2, 3, requires_grad=True)
        z = torch.ones(2, 3, requires_grad=True)
        with torch.autograd.profiler.profile(use_cuda=run_on_gpu) as prf:
            for _ in range(100):
                z = (z / x) * y
        res["own"] = {"profile": prf.key_averages().table(sort_by='self_cpu_time_total')}
        res["profiled_z"] = numpy_of(z)

        x = torch.randn(3, requires_grad=True)
        y = x * 2
        while y.data.norm() < 1000:
            y = y * 2
        print(y)
        v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
        y.backward(v)
        print(x.grad)

        def exp_adder(x, y):
            return 2 * x.exp() + 3 * y

        inputs = (torch.rand(1), torch.rand(1))
        print(torch.autograd.functional.jacobian(exp_adder, inputs))
        inputs = (torch.rand(3), torch.rand(3))
        print(torch.autograd.functional.jacobian(exp_adder, inputs))

        def do_some_doubling(x):
            y = x * 2
            while y.data.norm() < 1000:
                y = y * 2
            return y

        inputs = torch.randn(3)
        my_gradients = torch.tensor([0.1, 1.0, 0.0001])
        print(torch.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients))
    res["printed"] = printed_lines(out)
    return res


def garments(n, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    x = rng.uniform(0, 0.3, (n, 1, 28, 28)).astype(np.float32)
    for i, c in enumerate(labels):
        x[i, 0, 2 + 2 * c:8 + 2 * c, 3:25] += 0.6
    return (x - 0.5) / 0.5, labels


def models_training(torch, init=None, tmp=None, EPOCHS=2):
    nn = torch.nn
    F = torch.nn.functional
    SummaryWriter = importlib.import_module(torch.__name__ + ".utils.tensorboard").SummaryWriter
    res = {}
    with captured_run(torch) as out:
        class TinyModel(torch.nn.Module):
            def __init__(self):
                super(TinyModel, self).__init__()
                self.linear1 = torch.nn.Linear(100, 200)
                self.activation = torch.nn.ReLU()
                self.linear2 = torch.nn.Linear(200, 10)
                self.softmax = torch.nn.Softmax()

            def forward(self, x):
                x = self.linear1(x)
                x = self.activation(x)
                x = self.linear2(x)
                x = self.softmax(x)
                return x

        tinymodel = TinyModel()
        print('The model:')
        print(tinymodel)
        print('\n\nJust one layer:')
        print(tinymodel.linear2)
        print('\n\nModel params:')
        for param in tinymodel.parameters():
            print(param.shape)
        print('\n\nLayer params:')
        for param in tinymodel.linear2.parameters():
            print(param.shape)
        lin = torch.nn.Linear(3, 2)
        x = torch.rand(1, 3)
        print('Input:')
        print(x)
        print('\n\nWeight and Bias parameters:')
        for param in lin.parameters():
            print(param)
        y = lin(x)
        print('\n\nOutput:')
        print(y)

        class LeNet(torch.nn.Module):
            def __init__(self):
                super(LeNet, self).__init__()
                self.conv1 = torch.nn.Conv2d(1, 6, 5)
                self.conv2 = torch.nn.Conv2d(6, 16, 3)
                self.fc1 = torch.nn.Linear(16 * 6 * 6, 120)
                self.fc2 = torch.nn.Linear(120, 84)
                self.fc3 = torch.nn.Linear(84, 10)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
                x = F.max_pool2d(F.relu(self.conv2(x)), 2)
                x = x.view(-1, self.num_flat_features(x))
                x = F.relu(self.fc1(x))
                x = F.relu(self.fc2(x))
                x = self.fc3(x)
                return x

            def num_flat_features(self, x):
                size = x.size()[1:]
                num_features = 1
                for s in size:
                    num_features *= s
                return num_features

        net = LeNet()
        print(net)
        input = torch.rand(1, 1, 32, 32)
        print('\nImage batch shape:')
        print(input.shape)
        output = net(input)
        print('\nRaw output:')
        print(output)
        print(output.shape)

        class LSTMTagger(torch.nn.Module):
            def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
                super(LSTMTagger, self).__init__()
                self.hidden_dim = hidden_dim
                self.word_embeddings = torch.nn.Embedding(vocab_size, embedding_dim)
                self.lstm = torch.nn.LSTM(embedding_dim, hidden_dim)
                self.hidden2tag = torch.nn.Linear(hidden_dim, tagset_size)

            def forward(self, sentence):
                embeds = self.word_embeddings(sentence)
                lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
                tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
                tag_scores = F.log_softmax(tag_space, dim=1)
                return tag_scores

        tagger = LSTMTagger(6, 6, 9, 3)
        res["tags"] = numpy_of(tagger(torch.tensor([0, 1, 2, 3, 4])))
        my_tensor = torch.rand(1, 6, 6)
        print(my_tensor)
        maxpool_layer = torch.nn.MaxPool2d(3)
        print(maxpool_layer(my_tensor))
        my_tensor = torch.rand(1, 4, 4) * 20 + 5
        print(my_tensor)
        print(my_tensor.mean())
        norm_layer = torch.nn.BatchNorm1d(4)
        normed_tensor = norm_layer(my_tensor)
        print(normed_tensor)
        print(normed_tensor.mean())
        my_tensor = torch.rand(1, 4, 4)
        dropout = torch.nn.Dropout(p=0.4)
        print(dropout(my_tensor))
        print(dropout(my_tensor))

        # Training with PyTorch
        class Garments(torch.utils.data.Dataset):
            def __init__(self, n, seed):
                self.x, self.y = garments(n, seed)

            def __len__(self):
                return len(self.x)

            def __getitem__(self, i):
                return torch.from_numpy(self.x[i]), int(self.y[i])

        training_set = Garments(96, 0)
        validation_set = Garments(32, 1)
        training_loader = torch.utils.data.DataLoader(training_set, batch_size=4, shuffle=True)
        validation_loader = torch.utils.data.DataLoader(validation_set, batch_size=4, shuffle=False)
        classes = ('T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat',
                   'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle Boot')
        print('Training set has {} instances'.format(len(training_set)))
        print('Validation set has {} instances'.format(len(validation_set)))
        dataiter = iter(training_loader)
        images, labels = next(dataiter)
        print('  '.join(classes[labels[j]] for j in range(4)))

        class GarmentClassifier(nn.Module):
            def __init__(self):
                super(GarmentClassifier, self).__init__()
                self.conv1 = nn.Conv2d(1, 6, 5)
                self.pool = nn.MaxPool2d(2, 2)
                self.conv2 = nn.Conv2d(6, 16, 5)
                self.fc1 = nn.Linear(16 * 4 * 4, 120)
                self.fc2 = nn.Linear(120, 84)
                self.fc3 = nn.Linear(84, 10)

            def forward(self, x):
                x = self.pool(F.relu(self.conv1(x)))
                x = self.pool(F.relu(self.conv2(x)))
                x = x.view(-1, 16 * 4 * 4)
                x = F.relu(self.fc1(x))
                x = F.relu(self.fc2(x))
                x = self.fc3(x)
                return x

        model = GarmentClassifier()
        loss_fn = torch.nn.CrossEntropyLoss()
        dummy_outputs = torch.rand(4, 10)
        dummy_labels = torch.tensor([1, 5, 3, 7])
        print(dummy_outputs)
        print(dummy_labels)
        loss = loss_fn(dummy_outputs, dummy_labels)
        print('Total loss for this batch: {}'.format(loss.item()))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)

        def train_one_epoch(epoch_index, tb_writer):
            running_loss = 0.
            last_loss = 0.
            for i, data in enumerate(training_loader):
                inputs, labels = data
                optimizer.zero_grad()
                outputs = model(inputs)
                loss = loss_fn(outputs, labels)
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
                if i % 8 == 7:
                    last_loss = running_loss / 8
                    print('  batch {} loss: {}'.format(i + 1, last_loss))
                    tb_x = epoch_index * len(training_loader) + i + 1
                    tb_writer.add_scalar('Loss/train', last_loss, tb_x)
                    running_loss = 0.
            return last_loss

        timestamp = "20240101_000000"  # datetime.now().strftime('%Y%m%d_%H%M%S')
        writer = SummaryWriter(str(tmp / 'runs/fashion_trainer_{}'.format(timestamp)))
        epoch_number = 0
        best_vloss = 1_000_000.
        for epoch in range(EPOCHS):
            print('EPOCH {}:'.format(epoch_number + 1))
            model.train(True)
            avg_loss = train_one_epoch(epoch_number, writer)
            running_vloss = 0.0
            model.eval()
            with torch.no_grad():
                for i, vdata in enumerate(validation_loader):
                    vinputs, vlabels = vdata
                    voutputs = model(vinputs)
                    vloss = loss_fn(voutputs, vlabels)
                    running_vloss += vloss
            avg_vloss = running_vloss / (i + 1)
            print('LOSS train {} valid {}'.format(avg_loss, avg_vloss))
            writer.add_scalars('Training vs. Validation Loss',
                               {'Training': avg_loss, 'Validation': avg_vloss},
                               epoch_number + 1)
            writer.flush()
            if avg_vloss < best_vloss:
                best_vloss = avg_vloss
                model_path = tmp / 'model_{}_{}'.format(timestamp, epoch_number)
                torch.save(model.state_dict(), model_path)
            epoch_number += 1
        writer.close()
        saved_model = GarmentClassifier()
        print(saved_model.load_state_dict(torch.load(model_path)))
        res["saved_fc3"] = numpy_of(saved_model.fc3.weight)
        res["best_vloss"] = float(best_vloss)
    res["printed"] = printed_lines(out)
    return res


def read_scalars(logdir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(logdir))
    ea.Reload()
    return {tag: [(e.step, e.value) for e in ea.Scalars(tag)] for tag in ea.Tags()["scalars"]}


def test_youtube_tensors_and_autograd():
    ref, got = compare_program(tensors_autograd, rtol=1e-3, atol=1e-4)
    assert "a leaf Variable that requires grad is being used in an in-place operation." in got["printed"]
    assert "DivBackward0" in got["own"]["profile"] or "div" in got["own"]["profile"]


def test_youtube_models_and_training(tmp_path):
    for lib in ("torch", "minitorch"):
        (tmp_path / lib).mkdir()
    ref, got = compare_program(lambda torch, init=None: models_training(torch, tmp=tmp_path / torch.__name__),
                               rtol=1e-3, atol=1e-4)
    run = "runs/fashion_trainer_20240101_000000"
    got_scalars, ref_scalars = read_scalars(tmp_path / "minitorch" / run), read_scalars(tmp_path / "torch" / run)
    assert sorted(got_scalars) == sorted(ref_scalars) == ["Loss/train"]
    np.testing.assert_allclose(np.array(got_scalars["Loss/train"]), np.array(ref_scalars["Loss/train"]), rtol=1e-4)
    assert got["printed"][-1] == "<All keys matched successfully>"
