"""Understanding Deep Learning's (udlbook, Prince) PyTorch notebooks as written, the TO DOs filled as
the book's figures say, the MNIST-1D download (mnist1d.data.get_dataset) replaced by local arrays of
its layout (data['x'] rows of 40 offsets, data['y'] labels, the same for the test split):
8.1 "MNIST_1D_Performance" (an nn.Sequential MLP, weights_init by model.apply with
nn.init.kaiming_uniform_ and layer_in.bias.data.fill_(0.0), SGD with momentum and StepLR, a
DataLoader(TensorDataset, shuffle=True, worker_init_fn=np.random.seed(1)) whose worker_init_fn is
None, torch.max(pred.data, 1), a 0-d tensor stored into a NumPy array slot, the per-epoch f-string
report); 10.2 "Convolution for MNIST-1D" (nn.Conv1d(padding="valid") stacks, Flatten, x[:, None, :]);
11.2 "Residual Networks" (a subclassed ResidualNetwork with count_params by p.view(-1).shape[0] and
residual forward of .relu() calls); 11.3 "Batch Normalization" (print_variance of
np.var(data.detach().numpy(), axis=0) through each residual branch, one SGD step from a shuffled
DataLoader, then the network with nn.BatchNorm1d before each residual branch)."""
import numpy as np
import pytest

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines, start_from


def mnist1d_like(n_train=400, n_test=100, seed=0):
    """mnist1d.data.get_dataset's dict: templates shifted, scaled and noised into 40 samples."""
    rng = np.random.default_rng(seed)
    templates = rng.normal(0, 1, (10, 12))

    def make(n):
        y = rng.integers(0, 10, n)
        x = np.zeros((n, 40))
        for k, c in enumerate(y):
            shift = rng.integers(0, 28)
            x[k, shift:shift + 12] = templates[c] * rng.uniform(0.8, 1.2)
        return x + rng.normal(0, 0.25, x.shape), y

    x, y = make(n_train)
    x_test, y_test = make(n_test)
    return {"x": x, "y": y, "x_test": x_test, "y_test": y_test, "templates": templates}


def train_mnist1d(torch, model, data, n_epoch, step_size, conv=False):
    """The training cell the chapter 8-11 notebooks share, as written; the printed report."""
    nn = torch.nn
    from importlib import import_module
    TensorDataset, DataLoader = (getattr(import_module(torch.__name__ + ".utils.data"), n)
                                 for n in ("TensorDataset", "DataLoader"))
    StepLR = import_module(torch.__name__ + ".optim.lr_scheduler").StepLR

    def weights_init(layer_in):
        if isinstance(layer_in, nn.Linear):
            nn.init.kaiming_uniform_(layer_in.weight)
            layer_in.bias.data.fill_(0.0)

    train_data_x, train_data_y = data["x"].transpose(), data["y"]
    val_data_x, val_data_y = data["x_test"].transpose(), data["y_test"]
    loss_function = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = StepLR(optimizer, step_size=step_size, gamma=0.5)
    x_train = torch.tensor(train_data_x.transpose().astype('float32'))
    y_train = torch.tensor(train_data_y.astype('long'))
    x_val = torch.tensor(val_data_x.transpose().astype('float32'))
    y_val = torch.tensor(val_data_y.astype('long'))
    data_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=100, shuffle=True,
                             worker_init_fn=np.random.seed(1))
    model.apply(weights_init)
    losses_train = np.zeros((n_epoch))
    errors_train = np.zeros((n_epoch))
    losses_val = np.zeros((n_epoch))
    errors_val = np.zeros((n_epoch))
    shape = (lambda x: x[:, None, :]) if conv else (lambda x: x)
    with captured_run(torch, seed=1) as out:
        for epoch in range(n_epoch):
            for i, data in enumerate(data_loader):
                x_batch, y_batch = data
                optimizer.zero_grad()
                pred = model(shape(x_batch))
                loss = loss_function(pred, y_batch)
                loss.backward()
                optimizer.step()
            pred_train = model(shape(x_train))
            pred_val = model(shape(x_val))
            _, predicted_train_class = torch.max(pred_train.data, 1)
            _, predicted_val_class = torch.max(pred_val.data, 1)
            errors_train[epoch] = 100 - 100 * (predicted_train_class == y_train).float().sum() / len(y_train)
            errors_val[epoch] = 100 - 100 * (predicted_val_class == y_val).float().sum() / len(y_val)
            losses_train[epoch] = loss_function(pred_train, y_train).item()
            losses_val[epoch] = loss_function(pred_val, y_val).item()
            print(f'Epoch {epoch:5d}, train loss {losses_train[epoch]:.6f}, train error {errors_train[epoch]:3.2f},  '
                  f'val loss {losses_val[epoch]:.6f}, percent error {errors_val[epoch]:3.2f}')
            scheduler.step()
    return {"printed": printed_lines(out), "losses": [losses_train, losses_val], "errors": [errors_train, errors_val],
            "lr": scheduler.get_last_lr()}


def mnist1d_performance(torch, init=None, n_epoch=4):
    """Notebook 8.1: two hidden layers of 100 with ReLUs (figure 7.8), He initialisation."""
    nn = torch.nn
    torch.manual_seed(0)
    data = mnist1d_like()
    D_i, D_k, D_o = 40, 100, 10
    model = torch.nn.Sequential(torch.nn.Linear(D_i, D_k), torch.nn.ReLU(), torch.nn.Linear(D_k, D_k),
                                torch.nn.ReLU(), torch.nn.Linear(D_k, D_o))
    result = {}
    start_from(torch, model, init, result)
    assert isinstance(model[0], nn.Linear)
    result.update(train_mnist1d(torch, model, data, n_epoch, step_size=2))
    result["final"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return result


def conv_mnist1d(torch, init=None, n_epoch=3):
    """Notebook 10.2: three valid stride-2 convolutions of 15 channels, Flatten, Linear(60, 10)."""
    nn = torch.nn
    torch.manual_seed(0)
    data = mnist1d_like(seed=1)
    model = nn.Sequential(
        nn.Conv1d(1, 15, kernel_size=3, stride=2, padding="valid"),
        nn.ReLU(),
        nn.Conv1d(15, 15, kernel_size=3, stride=2, padding="valid"),
        nn.ReLU(),
        nn.Conv1d(15, 15, kernel_size=3, stride=2, padding="valid"),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(60, 10))
    result = {}
    start_from(torch, model, init, result)
    result.update(train_mnist1d(torch, model, data, n_epoch, step_size=20, conv=True))
    result["final"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return result


def residual_networks(torch, init=None, n_epoch=3):
    """Notebook 11.2: linear1, then ReLU+linear2 and ReLU+linear3 as residual branches (figure 11.5b)."""
    nn = torch.nn
    torch.manual_seed(0)
    data = mnist1d_like(seed=2)

    class ResidualNetwork(torch.nn.Module):
        def __init__(self, input_size, output_size, hidden_size=100):
            super(ResidualNetwork, self).__init__()
            self.linear1 = nn.Linear(input_size, hidden_size)
            self.linear2 = nn.Linear(hidden_size, hidden_size)
            self.linear3 = nn.Linear(hidden_size, hidden_size)
            self.linear4 = nn.Linear(hidden_size, output_size)
            print("Initialized MLPBase model with {} parameters".format(self.count_params()))

        def count_params(self):
            return sum([p.view(-1).shape[0] for p in self.parameters()])

        def forward(self, x):
            h1 = self.linear1(x)
            h2 = h1 + self.linear2(h1.relu())
            h3 = h2 + self.linear3(h2.relu())
            return self.linear4(h3)

    with captured_run(torch) as out:
        model = ResidualNetwork(40, 10)
    result = {"made": printed_lines(out)}
    start_from(torch, model, init, result)
    result.update(train_mnist1d(torch, model, data, n_epoch, step_size=20))
    return result


def batch_normalization(torch, init=None):
    """Notebook 11.3: the variance through five residual branches, without and with BatchNorm1d."""
    nn = torch.nn
    from importlib import import_module
    TensorDataset, DataLoader = (getattr(import_module(torch.__name__ + ".utils.data"), n)
                                 for n in ("TensorDataset", "DataLoader"))
    data = mnist1d_like(seed=3)
    train_data_x, train_data_y = data["x"].transpose(), data["y"]

    def print_variance(name, data):
        np_data = data.detach().numpy()
        neuron_variance = np.mean(np.var(np_data, axis=0))
        print("%s variance=%f" % (name, neuron_variance))

    def weights_init(layer_in):
        if isinstance(layer_in, nn.Linear):
            nn.init.kaiming_uniform_(layer_in.weight)
            layer_in.bias.data.fill_(0.0)

    def run_one_step_of_model(model, x_train, y_train):
        loss_function = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        data_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=200, shuffle=True,
                                 worker_init_fn=np.random.seed(1))
        model.apply(weights_init)
        for i, data in enumerate(data_loader):
            x_batch, y_batch = data
            optimizer.zero_grad()
            pred = model(x_batch)
            loss = loss_function(pred, y_batch)
            loss.backward()
            optimizer.step()
            break

    x_train = torch.tensor(train_data_x.transpose().astype('float32'))
    y_train = torch.tensor(train_data_y.astype('long'))

    class ResidualNetwork(torch.nn.Module):
        def __init__(self, input_size, output_size, hidden_size=100):
            super(ResidualNetwork, self).__init__()
            self.linear1 = nn.Linear(input_size, hidden_size)
            self.linear2 = nn.Linear(hidden_size, hidden_size)
            self.linear3 = nn.Linear(hidden_size, hidden_size)
            self.linear4 = nn.Linear(hidden_size, hidden_size)
            self.linear5 = nn.Linear(hidden_size, hidden_size)
            self.linear6 = nn.Linear(hidden_size, output_size)

        def count_params(self):
            return sum([p.view(-1).shape[0] for p in self.parameters()])

        def forward(self, x):
            print_variance("Input", x)
            f = self.linear1(x)
            print_variance("First preactivation", f)
            res1 = f + self.linear2(f.relu())
            print_variance("After first residual connection", res1)
            res2 = res1 + self.linear3(res1.relu())
            print_variance("After second residual connection", res2)
            res3 = res2 + self.linear4(res2.relu())
            print_variance("After third residual connection", res3)
            res4 = res3 + self.linear4(res3.relu())
            print_variance("After fourth residual connection", res4)
            res5 = res4 + self.linear4(res4.relu())
            print_variance("After fifth residual connection", res5)
            return self.linear6(res5)

    class ResidualNetworkWithBatchNorm(torch.nn.Module):
        def __init__(self, input_size, output_size, hidden_size=100):
            super(ResidualNetworkWithBatchNorm, self).__init__()
            self.linear1 = nn.Linear(input_size, hidden_size)
            self.bn1 = nn.BatchNorm1d(hidden_size)
            self.linear2 = nn.Linear(hidden_size, hidden_size)
            self.bn2 = nn.BatchNorm1d(hidden_size)
            self.linear3 = nn.Linear(hidden_size, hidden_size)
            self.bn3 = nn.BatchNorm1d(hidden_size)
            self.linear4 = nn.Linear(hidden_size, hidden_size)
            self.bn4 = nn.BatchNorm1d(hidden_size)
            self.linear5 = nn.Linear(hidden_size, hidden_size)
            self.linear6 = nn.Linear(hidden_size, output_size)

        def count_params(self):
            return sum([p.view(-1).shape[0] for p in self.parameters()])

        def forward(self, x):
            print_variance("Input", x)
            f = self.linear1(x)
            print_variance("First preactivation", f)
            res1 = f + self.linear2(self.bn1(f).relu())
            print_variance("After first residual connection", res1)
            res2 = res1 + self.linear3(self.bn2(res1).relu())
            print_variance("After second residual connection", res2)
            res3 = res2 + self.linear4(self.bn3(res2).relu())
            print_variance("After third residual connection", res3)
            res4 = res3 + self.linear4(self.bn4(res3).relu())
            print_variance("After fourth residual connection", res4)
            res5 = res4 + self.linear4(self.bn4(res4).relu())
            print_variance("After fifth residual connection", res5)
            return self.linear6(res5)

    result = {}
    n_hidden, n_input, n_output = 100, 40, 10
    with captured_run(torch) as out:
        model = ResidualNetwork(n_input, n_output, n_hidden)
        run_one_step_of_model(model, x_train, y_train)
        result["plain_params"] = model.count_params()
        result["plain"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
        model = ResidualNetworkWithBatchNorm(n_input, n_output, n_hidden)
        run_one_step_of_model(model, x_train, y_train)
        result["bn"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
        result["bn_params"] = model.count_params()
    result["printed"] = printed_lines(out)
    return result


def mnist1d_train_model(torch, dataset, model, args):
    """mnist1d's train.train_model, which notebook 20.3 calls (the package is not installed)."""
    import copy
    nn = torch.nn

    def accuracy(model, inputs, targets):
        preds = model(inputs).argmax(-1).cpu().numpy()
        targets = targets.cpu().numpy().astype(np.float32)
        return 100 * sum(preds == targets) / len(targets)

    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    x_train, x_test = torch.Tensor(dataset['x']), torch.Tensor(dataset['x_test'])
    y_train, y_test = torch.LongTensor(dataset['y']), torch.LongTensor(dataset['y_test'])
    model = model.to(args.device)
    x_train, x_test, y_train, y_test = [v.to(args.device) for v in [x_train, x_test, y_train, y_test]]
    results = {'checkpoints': [], 'train_losses': [], 'test_losses': [], 'train_acc': [], 'test_acc': []}
    for step in range(args.total_steps + 1):
        bix = (step * args.batch_size) % len(y_train)  # batch index
        x, y = x_train[bix:bix + args.batch_size], y_train[bix:bix + args.batch_size]
        loss = criterion(model(x), y)
        results['train_losses'].append(loss.item())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if args.eval_every > 0 and step % args.eval_every == 0:  # evaluate the model
            test_loss = criterion(model(x_test), y_test)
            results['test_losses'].append(test_loss.item())
            results['train_acc'].append(accuracy(model, x_train, y_train))
            results['test_acc'].append(accuracy(model, x_test, y_test))
        if args.checkpoint_every > 0 and step % args.checkpoint_every == 0:
            results['checkpoints'].append(copy.deepcopy(model))
    return results


def lottery_tickets(torch, init=None, num_retrains=4):
    """Notebook 20.3: SparseLinear's parameter-wise masks applied through param.data = new_param.data
    on every forward, magnitude pruning (get_mask by torch.topk(largest=False)), find_lottery_ticket's
    retrain-and-prune cycle over mnist1d's train_model (torch.Tensor / torch.LongTensor of the arrays,
    Adam, copy.deepcopy checkpoints)."""
    import copy
    import types
    data = mnist1d_like(seed=4)

    class SparseLinear(torch.nn.Module):
        def __init__(self, x_size, y_size):
            super(SparseLinear, self).__init__()
            self.linear = torch.nn.Linear(x_size, y_size)
            param_vec = torch.cat([p.flatten() for p in self.parameters()])
            self.mask = torch.ones_like(param_vec)

        def forward(self, x, apply_mask=True):
            if apply_mask:
                self.apply_mask()
            return self.linear(x)

        def update_mask(self, new_mask):
            self.mask = new_mask
            self.apply_mask()

        def apply_mask(self):
            self.vec2param(self.param2vec())

        def param2vec(self):
            vec = torch.cat([p.flatten() for p in self.parameters()])
            return self.mask * vec

        def vec2param(self, vec):
            pointer = 0
            for param in self.parameters():
                param_len = np.cumprod(param.shape)[-1]
                new_param = vec[pointer:pointer + param_len].reshape(param.shape)
                param.data = new_param.data
                pointer += param_len

    class SparseMLP(torch.nn.Module):
        def __init__(self, input_size, output_size, hidden_size=100):
            super(SparseMLP, self).__init__()
            self.linear1 = SparseLinear(input_size, hidden_size)
            self.linear2 = SparseLinear(hidden_size, hidden_size)
            self.linear3 = SparseLinear(hidden_size, output_size)
            self.layers = [self.linear1, self.linear2, self.linear3]

        def forward(self, x):
            h = torch.relu(self.linear1(x))
            h = h + torch.relu(self.linear2(h))
            h = self.linear3(h)
            return h

        def get_layer_masks(self):
            return [l.mask for l in self.layers]

        def set_layer_masks(self, new_masks):
            for i, l in enumerate(self.layers):
                l.update_mask(new_masks[i])

        def get_layer_vecs(self):
            return [l.param2vec() for l in self.layers]

        def set_layer_vecs(self, vecs):
            for i, l in enumerate(self.layers):
                l.vec2param(vecs[i])

    def get_mask(absolute_weights, percent_sparse):
        mask = torch.ones_like(absolute_weights)
        num_to_prune = int(percent_sparse * len(absolute_weights))
        if num_to_prune > 0:
            _, idx = torch.topk(absolute_weights, num_to_prune, largest=False)
            mask[idx] = 0
        return mask

    printed = []

    def find_lottery_ticket(model, dataset, args, sparsity_schedule, criteria_fn=None, **kwargs):
        criteria_fn = lambda init_params, final_params: final_params.abs()  # noqa: E731
        init_params = model.get_layer_vecs()
        stats = {'train_losses': [], 'test_losses': [], 'train_accs': [], 'test_accs': []}
        models = []
        for i, percent_sparse in enumerate(sparsity_schedule):
            final_params = model.get_layer_vecs()
            scores = [criteria_fn(ip, fp) for ip, fp in zip(init_params, final_params)]
            masks = [get_mask(s, percent_sparse) for s in scores]
            model.set_layer_vecs(init_params)
            model.set_layer_masks(masks)
            results = mnist1d_train_model(torch, dataset, model, args)
            model = results['checkpoints'][-1]
            stats['train_losses'].append(results['train_losses'])
            stats['test_losses'].append(results['test_losses'])
            stats['train_accs'].append(results['train_acc'])
            stats['test_accs'].append(results['test_acc'])
            if (i + 1) % 1 == 0:
                printed.append('\tretrain #{}, sparsity {:.2f}, final_train_loss {:.3e}, max_acc {:.1f}, last_acc {:.1f}, '
                               'mean_acc {:.1f}'.format(i + 1, percent_sparse, results['train_losses'][-1],
                                                        np.max(results['test_acc']), results['test_acc'][-1],
                                                        np.mean(results['test_acc'])))
                models.append(copy.deepcopy(model))
        stats = {k: np.stack(v) for k, v in stats.items()}
        return models, stats

    model_args = types.SimpleNamespace(input_size=40, output_size=10, hidden_size=64, learning_rate=2e-2,
                                       weight_decay=0, batch_size=100, total_steps=16, print_every=5000,
                                       eval_every=4, checkpoint_every=8, device=str('cpu'), seed=42)
    sparsity_schedule = np.linspace(0, 0.9, num_retrains)
    torch.manual_seed(model_args.seed)
    model = SparseMLP(model_args.input_size, model_args.output_size, hidden_size=model_args.hidden_size)
    result = {}
    start_from(torch, model, init, result)
    criteria_fn = lambda init_params, final_params: final_params.abs()  # noqa: E731
    lott_models, lott_stats = find_lottery_ticket(model, data, model_args, sparsity_schedule,
                                                  criteria_fn=criteria_fn, prune_print_every=1)
    result.update(stats=lott_stats, printed=printed,
                  zeros=[int((m.linear2.linear.weight == 0).sum()) for m in lott_models],
                  last={k: numpy_of(v) for k, v in lott_models[-1].state_dict().items()})
    return result


def adversarial_attacks(torch, init=None, n_epochs=2):
    """Notebook 20.4: an MNIST Net with nn.Dropout2d, F.log_softmax without dim (its deprecation
    warning), F.nll_loss(size_average=False), the train/test routines' format strings of tensors
    (correct and 100. * correct / len), and the FGSM attack on x = example_data[i, :, :, :][None]
    made a leaf by x.requires_grad = True, x.grad.data and torch.sign."""
    import warnings
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    rng = np.random.default_rng(7)
    # torchvision.datasets.MNIST with ToTensor and Normalize((0.1307,), (0.3081,)), as local batches
    train_x = ((rng.random((256, 1, 28, 28)) - 0.1307) / 0.3081).astype(np.float32)
    train_y = rng.integers(0, 10, 256)
    test_x = ((rng.random((128, 1, 28, 28)) - 0.1307) / 0.3081).astype(np.float32)
    test_y = rng.integers(0, 10, 128)
    data = torch.utils.data
    torch.manual_seed(0)
    train_loader = data.DataLoader(data.TensorDataset(torch.tensor(train_x), torch.tensor(train_y)),
                                   batch_size=64, shuffle=True)
    test_loader = data.DataLoader(data.TensorDataset(torch.tensor(test_x), torch.tensor(test_y)),
                                  batch_size=100, shuffle=True)
    examples = enumerate(test_loader)
    batch_idx, (example_data, example_targets) = next(examples)

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.drop = nn.Dropout2d()
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.max_pool2d(x, 2)
            x = F.relu(x)
            x = self.conv2(x)
            x = self.drop(x)
            x = F.max_pool2d(x, 2)
            x = F.relu(x)
            x = x.flatten(1)
            x = F.relu(self.fc1(x))
            x = self.fc2(x)
            x = F.log_softmax(x)
            return x

    def weights_init(layer_in):
        if isinstance(layer_in, nn.Linear):
            nn.init.kaiming_uniform_(layer_in.weight)
            layer_in.bias.data.fill_(0.0)

    model = Net()
    model.apply(weights_init)
    result = {}
    start_from(torch, model, init, result)
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)

    def train(epoch):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            if batch_idx % 10 == 0:
                print('Train Epoch: {} [{}/{}]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset), loss.item()))

    def test():
        model.eval()
        test_loss = 0
        correct = 0
        with torch.no_grad():
            for data, target in test_loader:
                output = model(data)
                test_loss += F.nll_loss(output, target, size_average=False).item()
                pred = output.data.max(1, keepdim=True)[1]
                correct += pred.eq(target.data.view_as(pred)).sum()
        test_loss /= len(test_loader.dataset)
        print('\nTest set: Avg. loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
            test_loss, correct, len(test_loader.dataset),
            100. * correct / len(test_loader.dataset)))

    def fgsm_attack(x, epsilon, dLdx):
        sign_dLdx = torch.sign(dLdx)
        x_modified = x + epsilon * sign_dLdx
        return x_modified

    with warnings.catch_warnings(record=True) as caught, captured_run(torch, seed=1) as out:
        warnings.simplefilter("always")
        test()
        for epoch in range(1, n_epochs + 1):
            train(epoch)
            test()
        output = model(example_data)
        print(["Prediction: {}".format(output.data.max(1, keepdim=True)[1][i].item()) for i in range(6)])
        no_examples = 3
        epsilon = 0.5
        for i in range(no_examples):
            optimizer.zero_grad()
            x = example_data[i, :, :, :]
            x = x[None, :, :, :]
            x.requires_grad = True
            y = torch.ones(1, dtype=torch.long) * example_targets[i]
            output = model(x)
            loss = F.nll_loss(output, y)
            loss.backward()
            dLdx = x.grad.data
            x_prime = fgsm_attack(x, epsilon, dLdx)
            output_prime = model(x_prime)
            x = x.detach().numpy()
            print("Original Prediction: {}".format(output.data.max(1, keepdim=True)[1][0].item()),
                  "Perturbed Prediction: {}".format(output_prime.data.max(1, keepdim=True)[1][0].item()),
                  x[0][0].shape, x_prime[0][0].detach().numpy().shape)
    result["printed"] = printed_lines(out)
    result["warnings"] = sorted({str(w.message).split(".")[0] for w in caught})
    return result


@pytest.mark.parametrize("program", [mnist1d_performance, conv_mnist1d, residual_networks, batch_normalization,
                                     lottery_tickets, adversarial_attacks],
                         ids=lambda p: p.__name__)
def test_udlbook_notebook(program):
    compare_program(program, rtol=1e-3, atol=1e-4)
