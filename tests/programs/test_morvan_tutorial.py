"""MorvanZhou's PyTorch-Tutorial scripts as they are written, randomness and all from
torch.manual_seed(1) (both libraries draw PyTorch's CPU streams): 301 regression (torch.unsqueeze(
torch.linspace(-1, 1, 100), dim=1), x.pow(2) + 0.2*torch.rand(x.size())), 302 classification
(torch.normal(2*n_data, 1), torch.cat(...).type(torch.FloatTensor) and .type(torch.LongTensor),
torch.max(out, 1)[1], .data.numpy() accuracy), 303 the same net built quickly with Sequential and
both printed, 304 saving the entire net and its parameters with torch.save and restoring them,
305/306 batch training with Data.TensorDataset and a shuffling DataLoader, four nets with SGD,
Momentum, RMSprop and Adam, 403 an RNN regressor carrying h_state = h_state.data between windows,
406 a GAN drawing "paintings" with D_loss.backward(retain_graph=True), 501 dropout against
overfitting with eval()/train()."""
import os

import numpy as np

from prog_helpers import compare_program, numpy_of


def regression_classification(torch, init=None, tmp=None):
    F = torch.nn.functional
    torch.manual_seed(1)    # reproducible
    x = torch.unsqueeze(torch.linspace(-1, 1, 100), dim=1)  # x data (tensor), shape=(100, 1)
    y = x.pow(2) + 0.2*torch.rand(x.size())                 # noisy y data (tensor), shape=(100, 1)

    class Net(torch.nn.Module):
        def __init__(self, n_feature, n_hidden, n_output):
            super(Net, self).__init__()
            self.hidden = torch.nn.Linear(n_feature, n_hidden)   # hidden layer
            self.predict = torch.nn.Linear(n_hidden, n_output)   # output layer

        def forward(self, x):
            x = F.relu(self.hidden(x))      # activation function for hidden layer
            x = self.predict(x)             # linear output
            return x

    net = Net(n_feature=1, n_hidden=10, n_output=1)     # define the network
    printed = [str(net)]  # net architecture
    optimizer = torch.optim.SGD(net.parameters(), lr=0.2)
    loss_func = torch.nn.MSELoss()  # this is for regression mean squared loss
    reg_losses = []
    for t in range(100):
        prediction = net(x)     # input x and predict based on x
        loss = loss_func(prediction, y)     # must be (1. nn output, 2. target)
        optimizer.zero_grad()   # clear gradients for next train
        loss.backward()         # backpropagation, compute gradients
        optimizer.step()        # apply gradients
        if t % 5 == 0:
            reg_losses.append(float(loss.data.numpy()))

    # 302: classification
    n_data = torch.ones(100, 2)
    x0 = torch.normal(2*n_data, 1)      # class0 x data (tensor), shape=(100, 2)
    y0 = torch.zeros(100)               # class0 y data (tensor), shape=(100, 1)
    x1 = torch.normal(-2*n_data, 1)     # class1 x data (tensor), shape=(100, 2)
    y1 = torch.ones(100)                # class1 y data (tensor), shape=(100, 1)
    x = torch.cat((x0, x1), 0).type(torch.FloatTensor)  # shape (200, 2) FloatTensor = 32-bit floating
    y = torch.cat((y0, y1), ).type(torch.LongTensor)    # shape (200,) LongTensor = 64-bit integer
    net = Net(n_feature=2, n_hidden=10, n_output=2)     # define the network
    optimizer = torch.optim.SGD(net.parameters(), lr=0.02)
    loss_func = torch.nn.CrossEntropyLoss()  # the target label is NOT an one-hotted
    accuracies = []
    for t in range(40):
        out = net(x)                 # input x and predict based on x
        loss = loss_func(out, y)     # must be (1. nn output, 2. target), the target label is NOT one-hotted
        optimizer.zero_grad()   # clear gradients for next train
        loss.backward()         # backpropagation, compute gradients
        optimizer.step()        # apply gradients
        if t % 2 == 0:
            prediction = torch.max(out, 1)[1]
            pred_y = prediction.data.numpy()
            target_y = y.data.numpy()
            accuracy = float((pred_y == target_y).astype(int).sum()) / float(target_y.size)
            accuracies.append(accuracy)

    # 303: the same thing built quickly
    net2 = torch.nn.Sequential(
        torch.nn.Linear(2, 10),
        torch.nn.ReLU(),
        torch.nn.Linear(10, 2)
    )
    printed.append(str(net2))

    # 304: save and reload
    x = torch.unsqueeze(torch.linspace(-1, 1, 100), dim=1)  # x data (tensor), shape=(100, 1)
    y = x.pow(2) + 0.2*torch.rand(x.size())  # noisy y data (tensor), shape=(100, 1)
    net1 = torch.nn.Sequential(
        torch.nn.Linear(1, 10),
        torch.nn.ReLU(),
        torch.nn.Linear(10, 1)
    )
    optimizer = torch.optim.SGD(net1.parameters(), lr=0.5)
    loss_func = torch.nn.MSELoss()
    for t in range(100):
        prediction = net1(x)
        loss = loss_func(prediction, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    prediction1 = net1(x)
    torch.save(net1, os.path.join(tmp, 'net.pkl'))  # save entire net
    torch.save(net1.state_dict(), os.path.join(tmp, 'net_params.pkl'))   # save only the parameters
    # restore entire net1 to net2
    net2 = torch.load(os.path.join(tmp, 'net.pkl'), weights_only=False)
    prediction2 = net2(x)
    # restore only the parameters in net1 to net3
    net3 = torch.nn.Sequential(
        torch.nn.Linear(1, 10),
        torch.nn.ReLU(),
        torch.nn.Linear(10, 1)
    )
    # copy net1's parameters into net3
    net3.load_state_dict(torch.load(os.path.join(tmp, 'net_params.pkl')))
    prediction3 = net3(x)
    return {"printed": printed, "reg_losses": reg_losses, "accuracies": accuracies,
            "predictions": [numpy_of(p) for p in (prediction1, prediction2, prediction3)],
            "restored_type": type(net2).__name__}


def batch_train_optimizers(torch, init=None, EPOCH=3, LR=0.01, BATCH_SIZE=32):
    Data = torch.utils.data
    F = torch.nn.functional
    torch.manual_seed(1)    # reproducible

    # 305: batch training
    x = torch.linspace(1, 10, 10)       # this is x data (torch tensor)
    y = torch.linspace(10, 1, 10)       # this is y data (torch tensor)
    torch_dataset = Data.TensorDataset(x, y)
    loader = Data.DataLoader(
        dataset=torch_dataset,      # torch TensorDataset format
        batch_size=5,               # mini batch size
        shuffle=True,               # random shuffle for training
        num_workers=0,              # subprocesses for loading data
    )
    printed = []
    for epoch in range(3):   # train entire dataset 3 times
        for step, (batch_x, batch_y) in enumerate(loader):  # for each training step
            printed.append(f"Epoch: {epoch} | Step: {step} | batch x: {batch_x.numpy()} | batch y: {batch_y.numpy()}")

    # 306: optimizers
    x = torch.unsqueeze(torch.linspace(-1, 1, 256), dim=1)
    y = x.pow(2) + 0.1*torch.normal(torch.zeros(*x.size()))
    torch_dataset = Data.TensorDataset(x, y)
    loader = Data.DataLoader(dataset=torch_dataset, batch_size=BATCH_SIZE, shuffle=True, num_workers=0,)

    class Net(torch.nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.hidden = torch.nn.Linear(1, 20)   # hidden layer
            self.predict = torch.nn.Linear(20, 1)   # output layer

        def forward(self, x):
            x = F.relu(self.hidden(x))      # activation function for hidden layer
            x = self.predict(x)             # linear output
            return x

    # different nets
    net_SGD = Net()
    net_Momentum = Net()
    net_RMSprop = Net()
    net_Adam = Net()
    nets = [net_SGD, net_Momentum, net_RMSprop, net_Adam]
    # different optimizers
    opt_SGD = torch.optim.SGD(net_SGD.parameters(), lr=LR)
    opt_Momentum = torch.optim.SGD(net_Momentum.parameters(), lr=LR, momentum=0.8)
    opt_RMSprop = torch.optim.RMSprop(net_RMSprop.parameters(), lr=LR, alpha=0.9)
    opt_Adam = torch.optim.Adam(net_Adam.parameters(), lr=LR, betas=(0.9, 0.99))
    optimizers = [opt_SGD, opt_Momentum, opt_RMSprop, opt_Adam]
    loss_func = torch.nn.MSELoss()
    losses_his = [[], [], [], []]   # record loss
    for epoch in range(EPOCH):
        for step, (b_x, b_y) in enumerate(loader):          # for each training step
            for net, opt, l_his in zip(nets, optimizers, losses_his):
                output = net(b_x)              # get output for every net
                loss = loss_func(output, b_y)  # compute loss for every net
                opt.zero_grad()                # clear gradients for next train
                loss.backward()                # backpropagation, compute gradients
                opt.step()                     # apply gradients
                l_his.append(loss.data.numpy())     # loss recoder
    return {"printed": printed, "losses": [np.array(h) for h in losses_his]}


def rnn_regressor(torch, init=None, TIME_STEP=10, INPUT_SIZE=1, LR=0.02, STEPS=30):
    nn = torch.nn
    torch.manual_seed(1)    # reproducible

    class RNN(nn.Module):
        def __init__(self):
            super(RNN, self).__init__()
            self.rnn = nn.RNN(
                input_size=INPUT_SIZE,
                hidden_size=32,     # rnn hidden unit
                num_layers=1,       # number of rnn layer
                batch_first=True,   # input & output will has batch size as 1s dimension. e.g. (batch, time_step, input_size)
            )
            self.out = nn.Linear(32, 1)

        def forward(self, x, h_state):
            # x (batch, time_step, input_size)
            # h_state (n_layers, batch, hidden_size)
            # r_out (batch, time_step, hidden_size)
            r_out, h_state = self.rnn(x, h_state)
            outs = []    # save all predictions
            for time_step in range(r_out.size(1)):    # calculate output for each time step
                outs.append(self.out(r_out[:, time_step, :]))
            return torch.stack(outs, dim=1), h_state

    rnn = RNN()
    optimizer = torch.optim.Adam(rnn.parameters(), lr=LR)   # optimize all cnn parameters
    loss_func = nn.MSELoss()
    h_state = None      # for initial hidden state
    losses = []
    for step in range(STEPS):
        start, end = step * np.pi, (step+1)*np.pi   # time range
        # use sin predicts cos
        steps = np.linspace(start, end, TIME_STEP, dtype=np.float32, endpoint=False)  # float32 for converting torch FloatTensor
        x_np = np.sin(steps)
        y_np = np.cos(steps)
        x = torch.from_numpy(x_np[np.newaxis, :, np.newaxis])    # shape (batch, time_step, input_size)
        y = torch.from_numpy(y_np[np.newaxis, :, np.newaxis])
        prediction, h_state = rnn(x, h_state)   # rnn output
        # !! next step is important !!
        h_state = h_state.data        # repack the hidden state, break the connection from last iteration
        loss = loss_func(prediction, y)         # calculate loss
        optimizer.zero_grad()                   # clear gradients for this training step
        loss.backward()                         # backpropagation, compute gradients
        optimizer.step()                        # apply gradients
        losses.append(loss.item())
    return {"losses": losses, "h_state": numpy_of(h_state), "prediction": numpy_of(prediction)}


def gan_and_dropout(torch, init=None, STEPS=40, BATCH_SIZE=64, N_SAMPLES=20, N_HIDDEN=100):
    nn = torch.nn
    torch.manual_seed(1)    # reproducible
    rng = np.random.default_rng(1)  # the script's np.random.seed(1)

    LR_G = 0.0001           # learning rate for generator
    LR_D = 0.0001           # learning rate for discriminator
    N_IDEAS = 5             # think of this as number of ideas for generating an art work (Generator)
    ART_COMPONENTS = 15     # it could be total point G can draw in the canvas
    PAINT_POINTS = np.vstack([np.linspace(-1, 1, ART_COMPONENTS) for _ in range(BATCH_SIZE)])

    def artist_works():     # painting from the famous artist (real target)
        a = rng.uniform(1, 2, size=BATCH_SIZE)[:, np.newaxis]
        paintings = a * np.power(PAINT_POINTS, 2) + (a-1)
        paintings = torch.from_numpy(paintings).float()
        return paintings

    G = nn.Sequential(                      # Generator
        nn.Linear(N_IDEAS, 128),            # random ideas (could from normal distribution)
        nn.ReLU(),
        nn.Linear(128, ART_COMPONENTS),     # making a painting from these random ideas
    )
    D = nn.Sequential(                      # Discriminator
        nn.Linear(ART_COMPONENTS, 128),     # receive art work either from the famous artist or a newbie like G
        nn.ReLU(),
        nn.Linear(128, 1),
        nn.Sigmoid(),                       # tell the probability that the art work is made by artist
    )
    opt_D = torch.optim.Adam(D.parameters(), lr=LR_D)
    opt_G = torch.optim.Adam(G.parameters(), lr=LR_G)
    d_losses, g_losses = [], []
    for step in range(STEPS):
        artist_paintings = artist_works()  # real painting from artist
        G_ideas = torch.randn(BATCH_SIZE, N_IDEAS, requires_grad=True)  # random ideas\n
        G_paintings = G(G_ideas)                    # fake painting from G (random ideas)
        prob_artist1 = D(G_paintings)               # D try to reduce this prob
        G_loss = torch.mean(torch.log(1. - prob_artist1))
        opt_G.zero_grad()
        G_loss.backward()
        opt_G.step()

        prob_artist0 = D(artist_paintings)          # D try to increase this prob
        prob_artist1 = D(G_paintings.detach())  # D try to reduce this prob
        D_loss = - torch.mean(torch.log(prob_artist0) + torch.log(1. - prob_artist1))
        opt_D.zero_grad()
        D_loss.backward(retain_graph=True)      # reusing computational graph
        opt_D.step()
        d_losses.append(D_loss.item())
        g_losses.append(G_loss.item())

    # 501: dropout
    x = torch.unsqueeze(torch.linspace(-1, 1, N_SAMPLES), 1)
    y = x + 0.3*torch.normal(torch.zeros(N_SAMPLES, 1), torch.ones(N_SAMPLES, 1))
    test_x = torch.unsqueeze(torch.linspace(-1, 1, N_SAMPLES), 1)
    test_y = test_x + 0.3*torch.normal(torch.zeros(N_SAMPLES, 1), torch.ones(N_SAMPLES, 1))
    net_overfitting = torch.nn.Sequential(
        torch.nn.Linear(1, N_HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Linear(N_HIDDEN, N_HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Linear(N_HIDDEN, 1),
    )
    net_dropped = torch.nn.Sequential(
        torch.nn.Linear(1, N_HIDDEN),
        torch.nn.Dropout(0.5),  # drop 50% of the neuron
        torch.nn.ReLU(),
        torch.nn.Linear(N_HIDDEN, N_HIDDEN),
        torch.nn.Dropout(0.5),  # drop 50% of the neuron
        torch.nn.ReLU(),
        torch.nn.Linear(N_HIDDEN, 1),
    )
    optimizer_ofit = torch.optim.Adam(net_overfitting.parameters(), lr=0.01)
    optimizer_drop = torch.optim.Adam(net_dropped.parameters(), lr=0.01)
    loss_func = torch.nn.MSELoss()
    test_losses = []
    for t in range(30):
        pred_ofit = net_overfitting(x)
        pred_drop = net_dropped(x)
        loss_ofit = loss_func(pred_ofit, y)
        loss_drop = loss_func(pred_drop, y)
        optimizer_ofit.zero_grad()
        optimizer_drop.zero_grad()
        loss_ofit.backward()
        loss_drop.backward()
        optimizer_ofit.step()
        optimizer_drop.step()
        if t % 10 == 0:
            # change to eval mode in order to fix drop out effect
            net_overfitting.eval()
            net_dropped.eval()  # parameters for dropout differ from train mode
            test_pred_ofit = net_overfitting(test_x)
            test_pred_drop = net_dropped(test_x)
            test_losses.append((loss_func(test_pred_ofit, test_y).data.numpy(),
                                loss_func(test_pred_drop, test_y).data.numpy()))
            # change back to train mode
            net_overfitting.train()
            net_dropped.train()
    return {"d_losses": d_losses, "g_losses": g_losses, "test_losses": [np.array(t) for t in test_losses],
            "G": {k: numpy_of(v) for k, v in G.state_dict().items()}}


def test_regression_classification_save_reload(tmp_path):
    ref, got = compare_program(regression_classification, tmp=str(tmp_path))
    assert ref["printed"][1].endswith("Sequential(\n  (0): Linear(in_features=2, out_features=10, bias=True)\n"
                                      "  (1): ReLU()\n  (2): Linear(in_features=10, out_features=2, bias=True)\n)")
    assert ref["accuracies"][-1] > 0.9 and got["restored_type"] == "Sequential"
    np.testing.assert_array_equal(got["predictions"][0], got["predictions"][1])
    np.testing.assert_array_equal(got["predictions"][0], got["predictions"][2])


def test_batch_train_and_optimizers():
    ref, got = compare_program(batch_train_optimizers)
    assert len(ref["printed"]) == 6 and ref["printed"][0].startswith("Epoch: 0 | Step: 0 | batch x: [")


def test_rnn_regressor():
    compare_program(rnn_regressor)


def test_gan_and_dropout():
    compare_program(gan_and_dropout)
