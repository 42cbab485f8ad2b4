"""Phillip Lippe's UvA deep-learning tutorials (uvadlc_notebooks) 2-4 as written, FashionMNIST
replaced by local images: tutorial 2 (XORDataset drawing torch.randint(low=0, high=2, size=(size, 2),
dtype=torch.float32) plus noise, SimpleClassifier with Tanh, BCEWithLogitsLoss on preds.squeeze(dim=1),
state_dict saved to "our_model.tar" and loaded into a new model, eval_model accumulating tensors and
printing f"{100.0*acc:4.2f}%", the decision map over torch.meshgrid(..., indexing='ij')); tutorial 3
(activation functions as nn.Modules with self.config = {"name": ...}, ReLU as x * (x > 0).float(),
LeakyReLU and ELU by torch.where, get_grads by out.sum().backward(); BaseNetwork with its config,
save_model/load_model through json and torch.load(map_location=device) rebuilding the activation by
name, gradient statistics per weight by grad.data.view(-1).cpu().clone().numpy(), training with early
stopping on the best validation score, and measure_number_dead_neurons with torch.logical_and over
(imgs == 0).all(dim=0)); tutorial 4 (const/var/equal-variance/xavier/kaiming initialisation by
param.data.fill_/normal_/uniform_, activation statistics per Linear, the OptimizerTemplate with
p.grad.detach_() and @torch.no_grad() step, SGD, SGDMomentum and Adam keeping per-parameter dicts
keyed by tensors, trained on the pathological curve and the bivariate Gaussian surface from
nn.Parameter(torch.FloatTensor(init), requires_grad=True)). Seeds are torch.manual_seed in both
libraries, so the data, shuffles and initial weights agree."""
import json
import math
import os

import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from
from test_d2l_modern_cnns import make_images


def tutorial2(torch, init=None, path=None):
    nn = torch.nn
    data = torch.utils.data
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    torch.manual_seed(42)
    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")

    class SimpleClassifier(nn.Module):
        def __init__(self, num_inputs, num_hidden, num_outputs):
            super().__init__()
            # Initialize the modules we need to build the network
            self.linear1 = nn.Linear(num_inputs, num_hidden)
            self.act_fn = nn.Tanh()
            self.linear2 = nn.Linear(num_hidden, num_outputs)

        def forward(self, x):
            # Perform the calculation of the model to determine the prediction
            x = self.linear1(x)
            x = self.act_fn(x)
            x = self.linear2(x)
            return x

    class XORDataset(data.Dataset):
        def __init__(self, size, std=0.1):
            super().__init__()
            self.size = size
            self.std = std
            self.generate_continuous_xor()

        def generate_continuous_xor(self):
            data = torch.randint(low=0, high=2, size=(self.size, 2), dtype=torch.float32)
            label = (data.sum(dim=1) == 1).to(torch.long)
            data += self.std * torch.randn(data.shape)
            self.data = data
            self.label = label

        def __len__(self):
            return self.size

        def __getitem__(self, idx):
            data_point = self.data[idx]
            data_label = self.label[idx]
            return data_point, data_label

    model = SimpleClassifier(num_inputs=2, num_hidden=4, num_outputs=1)
    print(model)
    for name, param in model.named_parameters():
        print(f"Parameter {name}, shape {param.shape}")
    dataset = XORDataset(size=200)
    print("Size of dataset:", len(dataset))
    print("Data point 0:", dataset[0])
    data_loader = data.DataLoader(dataset, batch_size=8, shuffle=True)
    data_inputs, data_labels = next(iter(data_loader))
    print("Data inputs", data_inputs.shape, "\n", data_inputs)
    print("Data labels", data_labels.shape, "\n", data_labels)
    loss_module = nn.BCEWithLogitsLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_dataset = XORDataset(size=250)
    train_data_loader = data.DataLoader(train_dataset, batch_size=32, shuffle=True)
    model.to(device)

    def train_model(model, optimizer, data_loader, loss_module, num_epochs=100):
        # Set model to train mode
        model.train()
        # Training loop
        for epoch in range(num_epochs):
            for data_inputs, data_labels in data_loader:
                ## Step 1: Move input data to device (only strictly necessary if we use GPU)
                data_inputs = data_inputs.to(device)
                data_labels = data_labels.to(device)
                ## Step 2: Run the model on the input data
                preds = model(data_inputs)
                preds = preds.squeeze(dim=1)  # Output is [Batch size, 1], but we want [Batch size]
                ## Step 3: Calculate the loss
                loss = loss_module(preds, data_labels.float())
                ## Step 4: Perform backpropagation
                optimizer.zero_grad()
                loss.backward()
                ## Step 5: Update the parameters
                optimizer.step()

    train_model(model, optimizer, train_data_loader, loss_module, num_epochs=20)
    state_dict = model.state_dict()
    print(state_dict)
    torch.save(state_dict, os.path.join(path, "our_model.tar"))
    state_dict = torch.load(os.path.join(path, "our_model.tar"))
    new_model = SimpleClassifier(num_inputs=2, num_hidden=4, num_outputs=1)
    new_model.load_state_dict(state_dict)
    test_dataset = XORDataset(size=500)
    test_data_loader = data.DataLoader(test_dataset, batch_size=128, shuffle=False, drop_last=False)

    def eval_model(model, data_loader):
        model.eval()  # Set model to eval mode
        true_preds, num_preds = 0., 0.
        with torch.no_grad():  # Deactivate gradients for the following code
            for data_inputs, data_labels in data_loader:
                # Determine prediction of model on dev set
                data_inputs, data_labels = data_inputs.to(device), data_labels.to(device)
                preds = model(data_inputs)
                preds = preds.squeeze(dim=1)
                preds = torch.sigmoid(preds)  # Sigmoid to map predictions between 0 and 1
                pred_labels = (preds >= 0.5).long()  # Binarize predictions to 0 and 1
                # Keep records of predictions for the accuracy metric (true_preds=TP+TN, num_preds=TP+TN+FP+FN)
                true_preds += (pred_labels == data_labels).sum()
                num_preds += data_labels.shape[0]
        acc = true_preds / num_preds
        print(f"Accuracy of the model: {100.0*acc:4.2f}%")

    eval_model(new_model, test_data_loader)

    @torch.no_grad()  # Decorator, same effect as "with torch.no_grad(): ..." over the whole function.
    def visualize_classification(model, data, label):
        model.to(device)
        c0 = torch.Tensor([0.12, 0.47, 0.71, 1.0]).to(device)  # to_rgba("C0")
        c1 = torch.Tensor([1.0, 0.5, 0.05, 1.0]).to(device)  # to_rgba("C1")
        x1 = torch.arange(-0.5, 1.5, step=0.1, device=device)
        x2 = torch.arange(-0.5, 1.5, step=0.1, device=device)
        xx1, xx2 = torch.meshgrid(x1, x2, indexing='ij')  # Meshgrid function as in numpy
        model_inputs = torch.stack([xx1, xx2], dim=-1)
        preds = model(model_inputs)
        preds = torch.sigmoid(preds)
        output_image = (1 - preds) * c0[None, None] + preds * c1[None, None]  # Specifying "None" in a dimension creates a new one
        output_image = output_image.cpu().numpy()  # Convert to numpy array. This only works for tensors on CPU, hence first push to CPU
        return output_image

    image = visualize_classification(model, dataset.data, dataset.label)
    return {"printed": "\n".join(printed).replace("minitorch", "torch"), "image": image,
            "state": {k: numpy_of(v) for k, v in model.state_dict().items()}}


def tutorial3(torch, init=None, path=None, act="relu"):
    nn = torch.nn
    F = torch.nn.functional
    data = torch.utils.data
    optim = torch.optim
    printed = []

    def print(*args):
        printed.append(" ".join(str(a) for a in args))

    class ActivationFunction(nn.Module):
        def __init__(self):
            super().__init__()
            self.name = self.__class__.__name__
            self.config = {"name": self.name}

    class Sigmoid(ActivationFunction):
        def forward(self, x):
            return 1 / (1 + torch.exp(-x))

    class Tanh(ActivationFunction):
        def forward(self, x):
            x_exp, neg_x_exp = torch.exp(x), torch.exp(-x)
            return (x_exp - neg_x_exp) / (x_exp + neg_x_exp)

    class ReLU(ActivationFunction):
        def forward(self, x):
            return x * (x > 0).float()

    class LeakyReLU(ActivationFunction):
        def __init__(self, alpha=0.1):
            super().__init__()
            self.config["alpha"] = alpha

        def forward(self, x):
            return torch.where(x > 0, x, self.config["alpha"] * x)

    class ELU(ActivationFunction):
        def forward(self, x):
            return torch.where(x > 0, x, torch.exp(x) - 1)

    class Swish(ActivationFunction):
        def forward(self, x):
            return x * torch.sigmoid(x)

    act_fn_by_name = {"sigmoid": Sigmoid, "tanh": Tanh, "relu": ReLU, "leakyrelu": LeakyReLU, "elu": ELU,
                      "swish": Swish}

    def get_grads(act_fn, x):
        x = x.clone().requires_grad_()  # Mark the input as tensor for which we want to store gradients
        out = act_fn(x)
        out.sum().backward()  # Summing results in an equal gradient flow to each element in x
        return x.grad  # Accessing the gradients of x by "x.grad"

    x = torch.linspace(-5, 5, 1000)
    grads = {name: numpy_of(get_grads(fn(), x)) for name, fn in act_fn_by_name.items()}

    class BaseNetwork(nn.Module):
        def __init__(self, act_fn, input_size=784, num_classes=10, hidden_sizes=[512, 256, 256, 128]):
            super().__init__()
            # Create the network based on the specified hidden sizes
            layers = []
            layer_sizes = [input_size] + hidden_sizes
            layer_size_last = layer_sizes[0]
            for layer_size in layer_sizes[1:]:
                layers += [nn.Linear(layer_size_last, layer_size), act_fn]
                layer_size_last = layer_size
            layers += [nn.Linear(layer_sizes[-1], num_classes)]
            # nn.Sequential summarizes a list of modules into a single module, applying them in sequence
            self.layers = nn.Sequential(*layers)
            # We store all hyperparameters in a dictionary for saving and loading of the model
            self.config = {"act_fn": act_fn.config, "input_size": input_size, "num_classes": num_classes,
                           "hidden_sizes": hidden_sizes}

        def forward(self, x):
            x = x.view(x.size(0), -1)  # Reshape images to a flat vector
            out = self.layers(x)
            return out

    def _get_config_file(model_path, model_name):
        return os.path.join(model_path, model_name + ".config")

    def _get_model_file(model_path, model_name):
        return os.path.join(model_path, model_name + ".tar")

    device = torch.device("cpu")

    def load_model(model_path, model_name, net=None):
        config_file, model_file = _get_config_file(model_path, model_name), _get_model_file(model_path, model_name)
        assert os.path.isfile(config_file), f"Could not find the config file \"{config_file}\"."
        assert os.path.isfile(model_file), f"Could not find the model file \"{model_file}\"."
        with open(config_file, "r") as f:
            config_dict = json.load(f)
        if net is None:
            act_fn_name = config_dict["act_fn"].pop("name").lower()
            act_fn = act_fn_by_name[act_fn_name](**config_dict.pop("act_fn"))
            net = BaseNetwork(act_fn=act_fn, **config_dict)
        net.load_state_dict(torch.load(model_file, map_location=device))
        return net

    def save_model(model, model_path, model_name):
        config_dict = model.config
        os.makedirs(model_path, exist_ok=True)
        config_file, model_file = _get_config_file(model_path, model_name), _get_model_file(model_path, model_name)
        with open(config_file, "w") as f:
            json.dump(config_dict, f)
        torch.save(model.state_dict(), model_file)

    class FashionMNIST(data.Dataset):
        def __init__(self, n, seed):
            x, y = make_images(n, 12, seed)
            self.x, self.y = (x - x.mean()) / x.std(), y

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            return torch.from_numpy(self.x[i]), int(self.y[i])

    torch.manual_seed(42)
    train_set, val_set, test_set = FashionMNIST(64, 0), FashionMNIST(24, 1), FashionMNIST(24, 2)
    test_loader = data.DataLoader(test_set, batch_size=16, shuffle=False, drop_last=False)

    def visualize_gradients(net, color="C0"):
        net.eval()
        small_loader = data.DataLoader(train_set, batch_size=32, shuffle=False)
        imgs, labels = next(iter(small_loader))
        imgs, labels = imgs.to(device), labels.to(device)
        # Pass one batch through the network, and calculate the gradients for the weights
        net.zero_grad()
        preds = net(imgs)
        loss = F.cross_entropy(preds, labels)
        loss.backward()
        # We limit our visualization to the weight parameters and exclude the bias to reduce the number of plots
        grads = {name: params.grad.data.view(-1).cpu().clone().numpy()
                 for name, params in net.named_parameters() if "weight" in name}
        net.zero_grad()
        return {k: [float(v.mean()), float(v.std())] for k, v in grads.items()}

    def test_model(net, data_loader):
        net.eval()
        true_preds, count = 0., 0
        for imgs, labels in data_loader:
            imgs, labels = imgs.to(device), labels.to(device)
            with torch.no_grad():
                preds = net(imgs).argmax(dim=-1)
                true_preds += (preds == labels).sum().item()
                count += labels.shape[0]
        test_acc = true_preds / count
        return test_acc

    def train_model(net, model_name, max_epochs=50, patience=7, batch_size=256, overwrite=False):
        file_exists = os.path.isfile(_get_model_file(path, model_name))
        if file_exists and not overwrite:
            print("Model file already exists. Skipping training...")
        else:
            if file_exists:
                print("Model file exists, but will be overwritten...")
            # Defining optimizer, loss and data loader
            optimizer = optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)  # Default parameters, feel free to change
            loss_module = nn.CrossEntropyLoss()
            train_loader_local = data.DataLoader(train_set, batch_size=batch_size, shuffle=True, drop_last=True,
                                                 pin_memory=True)
            val_scores = []
            best_val_epoch = -1
            for epoch in range(max_epochs):
                ############
                # Training #
                ############
                net.train()
                true_preds, count = 0., 0
                for imgs, labels in train_loader_local:
                    imgs, labels = imgs.to(device), labels.to(device)  # To GPU
                    optimizer.zero_grad()  # Zero-grad can be placed anywhere before "loss.backward()"
                    preds = net(imgs)
                    loss = loss_module(preds, labels)
                    loss.backward()
                    optimizer.step()
                    # Record statistics during training
                    true_preds += (preds.argmax(dim=-1) == labels).sum()
                    count += labels.shape[0]
                train_acc = true_preds / count
                ##############
                # Validation #
                ##############
                val_acc = test_model(net, data.DataLoader(val_set, batch_size=16))
                val_scores.append(val_acc)
                print(f"[Epoch {epoch+1:2i}] Training accuracy: {train_acc*100.0:05.2f}%, Validation accuracy: "
                      f"{val_acc*100.0:05.2f}%".replace(":2i", ":2d") if False else
                      f"[Epoch {epoch+1:2d}] Training accuracy: {train_acc*100.0:05.2f}%, Validation accuracy: "
                      f"{val_acc*100.0:05.2f}%")
                if len(val_scores) == 1 or val_acc > val_scores[best_val_epoch]:
                    print("\t   (New best performance, saving model...)")
                    save_model(net, path, model_name)
                    best_val_epoch = epoch
                elif best_val_epoch <= epoch - patience:
                    print(f"Early stopping due to no improvement over the last {patience} epochs")
                    break
        load_model(path, model_name, net=net)
        test_acc = test_model(net, test_loader)
        print((f" Test accuracy: {test_acc*100.0:4.2f}% ").center(50, "=") + "\n")
        return test_acc

    @torch.no_grad()
    def measure_number_dead_neurons(net):
        # For each neuron, we create a boolean variable initially set to 1. If it has an activation unequals 0 at any time,
        # we set this variable to 0. After running through the whole training set, only dead neurons will have a 1.
        neurons_dead = [torch.ones(layer.weight.shape[0], device=device, dtype=torch.bool)
                        for layer in net.layers[:-1] if isinstance(layer, nn.Linear)]  # Same shapes as hidden size in BaseNetwork
        net.eval()
        for imgs, labels in data.DataLoader(train_set, batch_size=16, shuffle=False):  # Run through whole training set
            layer_index = 0
            imgs = imgs.to(device)
            imgs = imgs.view(imgs.size(0), -1)
            for layer in net.layers[:-1]:
                imgs = layer(imgs)
                if isinstance(layer, ActivationFunction):
                    # Are all activations == 0 in the batch, and we did not record the opposite in the last batches?
                    neurons_dead[layer_index] = torch.logical_and(neurons_dead[layer_index], (imgs == 0).all(dim=0))
                    layer_index += 1
        number_neurons_dead = [t.sum().item() for t in neurons_dead]
        print("Number of dead neurons:", number_neurons_dead)
        print("In percentage:", ", ".join([f"{(100.0 * num_dead / tens.shape[0]):4.2f}%"
                                          for tens, num_dead in zip(neurons_dead, number_neurons_dead)]))
        return number_neurons_dead

    act_fn = act_fn_by_name[act]()
    net_actfn = BaseNetwork(act_fn=act_fn, input_size=144, num_classes=3, hidden_sizes=[32, 16, 16]).to(device)
    result = {"grads": grads}
    start_from(torch, net_actfn, init, result)
    result["grad_stats"] = visualize_gradients(net_actfn)
    result["test_acc"] = train_model(net_actfn, f"FashionMNIST_{act}", max_epochs=6, patience=2, batch_size=16,
                                     overwrite=True)
    reloaded = load_model(path, f"FashionMNIST_{act}")  # the activation rebuilt by its name
    result["reloaded_name"] = type(reloaded.layers[1]).__name__
    result["dead"] = measure_number_dead_neurons(net_actfn)
    result["printed"] = "\n".join(printed)
    result["state"] = {k: numpy_of(v) for k, v in net_actfn.state_dict().items()}
    return result


def tutorial4(torch, init=None, initialization="kaiming", optimizer="Adam"):
    nn = torch.nn
    F = torch.nn.functional

    class BaseNetwork(nn.Module):
        def __init__(self, act_fn, input_size=144, num_classes=3, hidden_sizes=[32, 32, 16, 16]):
            super().__init__()
            layers = []
            layer_sizes = [input_size] + hidden_sizes
            for layer_index in range(1, len(layer_sizes)):
                layers += [nn.Linear(layer_sizes[layer_index - 1], layer_sizes[layer_index]), act_fn]
            layers += [nn.Linear(layer_sizes[-1], num_classes)]
            self.layers = nn.ModuleList(layers)  # A module list registers a list of modules as submodules (e.g. for parameters)
            self.config = {"act_fn": act_fn.__class__.__name__, "input_size": input_size,
                           "num_classes": num_classes, "hidden_sizes": hidden_sizes}

        def forward(self, x):
            x = x.view(x.size(0), -1)
            for layer in self.layers:
                x = layer(x)
            return x

    def const_init(model, fill=0.0):
        for name, param in model.named_parameters():
            param.data.fill_(fill)

    def var_init(model, std=0.01):
        for name, param in model.named_parameters():
            param.data.normal_(mean=0.0, std=std)

    def equal_var_init(model):
        for name, param in model.named_parameters():
            if name.endswith(".bias"):
                param.data.fill_(0)
            else:
                param.data.normal_(std=1.0 / math.sqrt(param.shape[1]))

    def xavier_init(model):
        for name, param in model.named_parameters():
            if name.endswith(".bias"):
                param.data.fill_(0)
            else:
                bound = math.sqrt(6) / math.sqrt(param.shape[0] + param.shape[1])
                param.data.uniform_(-bound, bound)

    def kaiming_init(model):
        for name, param in model.named_parameters():
            if name.endswith(".bias"):
                param.data.fill_(0)
            elif name.startswith("layers.0"):  # The first layer does not have ReLU applied on its input
                param.data.normal_(0, 1 / math.sqrt(param.shape[1]))
            else:
                param.data.normal_(0, math.sqrt(2) / math.sqrt(param.shape[1]))

    class OptimizerTemplate:
        def __init__(self, params, lr):
            self.params = list(params)
            self.lr = lr

        def zero_grad(self):
            ## Set gradients of all parameters to zero
            for p in self.params:
                if p.grad is not None:
                    p.grad.detach_()  # For second-order optimizers important
                    p.grad.zero_()

        @torch.no_grad()
        def step(self):
            ## Apply update step to all parameters
            for p in self.params:
                if p.grad is None:  # We skip parameters without any gradients
                    continue
                self.update_param(p)

        def update_param(self, p):
            # To be implemented in optimizer-specific classes
            raise NotImplementedError

    class SGD(OptimizerTemplate):
        def __init__(self, params, lr):
            super().__init__(params, lr)

        def update_param(self, p):
            p_update = -self.lr * p.grad
            p.add_(p_update)  # In-place update => saves memory and does not create computation graph

    class SGDMomentum(OptimizerTemplate):
        def __init__(self, params, lr, momentum=0.0):
            super().__init__(params, lr)
            self.momentum = momentum  # Corresponds to beta_1 in the equation above
            self.param_momentum = {p: torch.zeros_like(p.data) for p in self.params}  # Dict to store m_t

        def update_param(self, p):
            self.param_momentum[p] = (1 - self.momentum) * p.grad + self.momentum * self.param_momentum[p]
            p_update = -self.lr * self.param_momentum[p]
            p.add_(p_update)

    class Adam(OptimizerTemplate):
        def __init__(self, params, lr, beta1=0.9, beta2=0.999, eps=1e-8):
            super().__init__(params, lr)
            self.beta1 = beta1
            self.beta2 = beta2
            self.eps = eps
            self.param_step = {p: 0 for p in self.params}  # Remembers "t" for each parameter for bias correction
            self.param_momentum = {p: torch.zeros_like(p.data) for p in self.params}
            self.param_2nd_momentum = {p: torch.zeros_like(p.data) for p in self.params}

        def update_param(self, p):
            self.param_step[p] += 1
            self.param_momentum[p] = (1 - self.beta1) * p.grad + self.beta1 * self.param_momentum[p]
            self.param_2nd_momentum[p] = (1 - self.beta2) * (p.grad) ** 2 + self.beta2 * self.param_2nd_momentum[p]
            bias_correction_1 = 1 - self.beta1 ** self.param_step[p]
            bias_correction_2 = 1 - self.beta2 ** self.param_step[p]
            p_2nd_mom = self.param_2nd_momentum[p] / bias_correction_2
            p_mom = self.param_momentum[p] / bias_correction_1
            p_lr = self.lr / (torch.sqrt(p_2nd_mom) + self.eps)
            p_update = -p_lr * p_mom
            p.add_(p_update)

    def pathological_curve_loss(w1, w2):
        # Example of a pathological curvature. There are many more possible, feel free to experiment here!
        x1_loss = torch.tanh(w1) ** 2 + 0.01 * torch.abs(w1)
        x2_loss = torch.sigmoid(w2)
        return x1_loss + x2_loss

    def bivar_gaussian(w1, w2, x_mean=0.0, y_mean=0.0, x_sig=1.0, y_sig=1.0):
        norm = 1 / (2 * np.pi * x_sig * y_sig)
        x_exp = (-1 * (w1 - x_mean) ** 2) / (2 * x_sig ** 2)
        y_exp = (-1 * (w2 - y_mean) ** 2) / (2 * y_sig ** 2)
        return norm * torch.exp(x_exp + y_exp)

    def comb_func(w1, w2):
        z = -bivar_gaussian(w1, w2, x_mean=1.0, y_mean=-0.5, x_sig=0.2, y_sig=0.2)
        z -= bivar_gaussian(w1, w2, x_mean=-1.0, y_mean=0.5, x_sig=0.2, y_sig=0.2)
        z -= bivar_gaussian(w1, w2, x_mean=-0.5, y_mean=-0.8, x_sig=0.2, y_sig=0.2)
        return z

    def train_curve(optimizer_func, curve_func=pathological_curve_loss, num_updates=100, init=[5, 5]):
        weights = nn.Parameter(torch.FloatTensor(init), requires_grad=True)
        optimizer = optimizer_func([weights])
        list_points = []
        for _ in range(num_updates):
            loss = curve_func(weights[0], weights[1])
            list_points.append(torch.cat([weights.data.detach(), loss.unsqueeze(dim=0).detach()], dim=0))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        points = torch.stack(list_points, dim=0).numpy()
        return points

    make_opt = {"SGD": lambda params: SGD(params, lr=0.1),
                "SGDMomentum": lambda params: SGDMomentum(params, lr=0.1, momentum=0.9),
                "Adam": lambda params: Adam(params, lr=0.1)}[optimizer]
    result = {"curve": train_curve(make_opt, num_updates=30),
              "comb": train_curve(make_opt, comb_func, num_updates=30, init=[0, 0])}

    class Identity(nn.Module):
        def forward(self, x):
            return x

    torch.manual_seed(42)
    model = BaseNetwork(act_fn=nn.ReLU() if initialization == "kaiming" else Identity())
    {"const": lambda m: const_init(m, fill=0.005), "var": var_init, "equal_var": equal_var_init,
     "xavier": xavier_init, "kaiming": kaiming_init}[initialization](model)
    x, y = make_images(48, 12, 0)
    imgs, labels = torch.from_numpy(x), torch.from_numpy(y)
    # visualize_activations: the spread of each Linear layer's outputs
    activations = {}
    with torch.no_grad():
        feats = imgs.view(imgs.shape[0], -1)
        for layer_index, layer in enumerate(model.layers[:-1]):
            feats = layer(feats)
            if isinstance(layer, nn.Linear):
                activations[f"Layer {layer_index}"] = feats.view(-1).detach().cpu().numpy()
    result["act_std"] = [float(v.std()) for v in activations.values()]
    # the notebook's training rates: SGD(lr=1e-1), SGDMomentum(lr=1e-1, momentum=0.9), Adam(lr=1e-3)
    opt = {"SGD": lambda params: SGD(params, lr=1e-1),
           "SGDMomentum": lambda params: SGDMomentum(params, lr=1e-1, momentum=0.9),
           "Adam": lambda params: Adam(params, lr=1e-3)}[optimizer](model.parameters())
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(model(imgs), labels)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    result.update(losses=losses, state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_tutorial2_xor(tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    ref, got = compare_program(tutorial2, path=str(tmp_path / "pt"), mt_options={"path": str(tmp_path / "mt")})
    assert "Accuracy of the model: " in got["printed"] and "Parameter linear1.weight" in got["printed"]


@pytest.mark.parametrize("act", ["relu", "leakyrelu", "swish"])
def test_tutorial3_activation_functions(act, tmp_path):
    (tmp_path / "pt").mkdir()
    (tmp_path / "mt").mkdir()
    ref, got = compare_program(tutorial3, rtol=1e-3, atol=1e-4, act=act, path=str(tmp_path / "pt"),
                               mt_options={"path": str(tmp_path / "mt")})
    assert "New best performance" in got["printed"]


@pytest.mark.parametrize("initialization,optimizer", [("const", "SGD"), ("var", "SGDMomentum"),
                                                      ("equal_var", "Adam"), ("xavier", "SGD"),
                                                      ("kaiming", "Adam")])
def test_tutorial4_initialization_and_optimizers(initialization, optimizer):
    compare_program(tutorial4, rtol=1e-3, atol=1e-4, initialization=initialization, optimizer=optimizer)
