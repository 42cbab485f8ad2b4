"""Training stopped half-way and resumed from a checkpoint, as the PyTorch tutorials save one:
torch.save of {'epoch', 'model', 'optimizer'} state dicts, then a fresh model and optimizer
(with other random weights) restored by torch.load and load_state_dict. The resumed run must
end exactly where the uninterrupted one does; and minitorch must resume from PyTorch's file."""
import numpy as np

from prog_helpers import assert_same_results, compare_program, numpy_of, start_from


def checkpoint_resume(torch, init=None, path=None, resume_from=None, epochs=6, stop=3):
    nn = torch.nn
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((48, 6)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 3, 48))

    def build():
        model = nn.Sequential(nn.Linear(6, 24), nn.ReLU(), nn.Linear(24, 3))
        return model, torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-3)

    def train_epoch(model, optimizer):
        losses = []
        for batch in range(0, 48, 12):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x[batch:batch + 12]), y[batch:batch + 12])
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    model, optimizer = build()
    result = {}
    start_from(torch, model, init, result)
    losses = []
    for epoch in range(stop):
        losses += train_epoch(model, optimizer)
    torch.save({"epoch": stop, "model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)

    # What a new process does: fresh objects, then the checkpoint.
    resumed, resumed_optimizer = build()
    checkpoint = torch.load(resume_from or path)
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    resumed_losses = list(losses)
    for epoch in range(checkpoint["epoch"], epochs):
        resumed_losses += train_epoch(resumed, resumed_optimizer)
        losses += train_epoch(model, optimizer)  # the uninterrupted run, side by side

    result.update(losses=losses, params={k: numpy_of(v) for k, v in model.named_parameters()},
                  own={"resumed_losses": resumed_losses,
                       "resumed_params": {k: numpy_of(v) for k, v in resumed.named_parameters()},
                       "optimizer_state": {k: numpy_of(v)
                                           for k, v in resumed_optimizer.state_dict()["state"][0].items()}})
    return result


def test_checkpoint_save_load_resume(tmp_path):
    ref, got = compare_program(checkpoint_resume, path=str(tmp_path / "ckpt.pt"))
    for res in (ref, got):  # resuming changes nothing, to the last bit
        assert_same_results(res["own"]["resumed_losses"], res["losses"], rtol=0, atol=0)
        assert_same_results(res["own"]["resumed_params"], res["params"], rtol=0, atol=0)
    assert_same_results(got["own"], ref["own"])


def test_checkpoint_written_by_pytorch_resumes_in_minitorch(tmp_path):
    torch_file = str(tmp_path / "torch.pt")
    ref, got = compare_program(checkpoint_resume, path=torch_file,
                               mt_options={"path": str(tmp_path / "mt.pt"), "resume_from": torch_file})
    assert_same_results(got["own"], ref["own"])
