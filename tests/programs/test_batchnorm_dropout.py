"""Two MLPs initialised by model.apply with nn.init (Kaiming normal weights, zero biases).
One with BatchNorm1d is trained, switched to eval and back to train, and compared number by number
(running statistics, eval outputs, the train-mode forward after eval). One with Dropout is used
for Monte-Carlo dropout; its masks come from each library's generator, so it is compared by
statistics: the share of dropped units, the 1/(1-p) scaling, and the mean over many train-mode
passes against the eval-mode output."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

P = 0.3


def kaiming_init(torch):
    def init_weights(m):
        if isinstance(m, torch.nn.Linear):
            torch.nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            torch.nn.init.zeros_(m.bias)
    return init_weights


def regression_data(n):
    rng = np.random.default_rng(0)
    w_true = rng.standard_normal((10, 1))
    x = (rng.standard_normal((n, 10)) * 3 + 1).astype(np.float32)
    return x, np.tanh(x @ w_true).astype(np.float32)


def batchnorm_mlp(torch, init=None, steps=10, batch=32):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 1))
    model.apply(kaiming_init(torch))
    result = {"own": {"init_std": numpy_of(model[0].weight).std(), "init_bias": numpy_of(model[0].bias)}}
    start_from(torch, model, init, result)
    x_all, y_all = regression_data(steps * batch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    model.train()
    for step in range(steps):
        x = torch.from_numpy(x_all[step * batch:(step + 1) * batch])
        y = torch.from_numpy(y_all[step * batch:(step + 1) * batch])
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    x_test = torch.from_numpy(x_all[:batch])
    model.eval()
    with torch.no_grad():
        eval_out = model(x_test)
    model.train()
    with torch.no_grad():
        train_out = model(x_test)  # batch statistics again, and one more update of the running ones
    bn = model[1]
    result.update(losses=losses, eval_out=numpy_of(eval_out), train_out=numpy_of(train_out),
                  running_mean=numpy_of(bn.running_mean), running_var=numpy_of(bn.running_var),
                  num_batches_tracked=int(bn.num_batches_tracked),
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def mc_dropout(torch, init=None, passes=400):
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Dropout(P), nn.Linear(64, 1))
    model.apply(kaiming_init(torch))
    result = {}
    start_from(torch, model, init, result)
    x = torch.from_numpy(regression_data(32)[0])
    model.eval()
    with torch.no_grad():
        hidden = model[:2](x)
        prediction = model(x)
    model.train()
    with torch.no_grad():
        dropped = model[2](hidden.repeat(50, 1))
        mc_mean = torch.stack([model(x) for _ in range(passes)]).mean(0)
    result.update(prediction=numpy_of(prediction), hidden=numpy_of(hidden),
                  own={"dropped": numpy_of(dropped), "mc_mean": numpy_of(mc_mean)})
    return result


def test_batchnorm_train_eval_switch():
    ref, got = compare_program(batchnorm_mlp)
    assert got["num_batches_tracked"] == 11
    assert not np.allclose(got["eval_out"], got["train_out"])  # the two modes differ
    for own in (ref["own"], got["own"]):
        assert abs(own["init_std"] - np.sqrt(2 / 10)) < 0.05  # kaiming_normal_, fan_in 10, 640 draws
        np.testing.assert_array_equal(own["init_bias"], 0)


def test_mc_dropout_statistics():
    ref, got = compare_program(mc_dropout)
    for res in (ref, got):
        hidden, dropped = np.tile(res["hidden"], (50, 1)), res["own"]["dropped"]
        live = hidden != 0  # ReLU's zeros stay zero either way
        kept = dropped != 0
        assert abs(1 - kept[live].mean() - P) < 0.02  # tens of thousands of units
        np.testing.assert_allclose(dropped[kept], hidden[kept] / (1 - P), rtol=1e-6)
        # The mean over 400 masks approaches the eval-mode prediction.
        scale = np.abs(res["prediction"]).max()
        np.testing.assert_allclose(res["own"]["mc_mean"], res["prediction"], atol=0.1 * scale)
