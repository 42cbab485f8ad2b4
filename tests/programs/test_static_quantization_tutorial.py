"""PyTorch's tutorial "(beta) Static Quantization with Eager Mode in PyTorch", on a small
MobileNetV2: ConvBNReLU (a Sequential of Conv2d, BatchNorm2d, ReLU), InvertedResidual blocks
whose skip connection is a FloatFunctional's add, QuantStub / DeQuantStub around the network,
x.mean([2, 3]) as the pooling, a Dropout + Linear classifier, fuse_model (fuse_modules of
conv + bn + relu and conv + bn), AverageMeter / accuracy / evaluate, load_model from a saved
state_dict, print_size_of_model (torch.save of the state_dict and os.path.getsize), then
post-training static quantization twice: with default_qconfig (per-tensor weights, MinMax
observers) and with get_default_qconfig('x86') (per-channel weights, HistogramObserver):
prepare, calibration by evaluate on training batches, convert, evaluate; then quantization-aware
training: fuse_model(is_qat=True), get_default_qat_qconfig('x86'), prepare_qat, train_one_epoch,
disable_observer and freeze_bn_stats through model.apply, convert and evaluate after each epoch
(two epochs of two batches here, in place of the tutorial's eight of twenty).

In place of ImageNet: 3x16x16 images of four classes (a bright quadrant plus noise) drawn with
NumPy; in place of the pretrained checkpoint: the PyTorch run's model after a few training steps
and a pass that estimates the batch norms' statistics again (both runs train from the same
initial weights and their losses are compared; then both load the PyTorch run's trained weights,
as the tutorial loads its checkpoint, so the quantization starts from the same float model).
The tutorial's torch.jit.script / jit.save of the models is left out (minitorch has no
TorchScript). Compared with PyTorch: everything printed (modules, qconfigs, accuracies; the
scales within float32 precision), the losses, the float outputs, and the quantized models'
outputs within two quantization steps of the classifier's output."""
from __future__ import annotations

import contextlib
import io
import os

import numpy as np
import pytest

from prog_helpers import assert_same_results, numpy_of, printed_lines, run_both, state_numpy
from test_imagenet_style import AverageMeter, accuracy

CLASSES, SIDE = 4, 16


def make_images(rng: np.random.Generator, n: int) -> tuple:
    """n images (n, 3, SIDE, SIDE) and labels: class k brightens quadrant k, under noise."""
    labels = rng.integers(0, CLASSES, n)
    x = rng.standard_normal((n, 3, SIDE, SIDE)).astype(np.float32) * 0.6
    h = SIDE // 2
    for i, k in enumerate(labels):
        x[i, :, (k // 2) * h:(k // 2 + 1) * h, (k % 2) * h:(k % 2 + 1) * h] += 2.0
    return x, labels.astype(np.int64)


def static_quantization_tutorial(torch, init=None, data_dir=".", train_steps=12, qat_epochs=2):
    nn = torch.nn
    DataLoader, SequentialSampler = torch.utils.data.DataLoader, torch.utils.data.SequentialSampler
    TensorDataset = torch.utils.data.TensorDataset
    QuantStub, DeQuantStub = torch.ao.quantization.QuantStub, torch.ao.quantization.DeQuantStub

    torch.manual_seed(0)
    out = io.StringIO()
    result = {}

    # 1. Model architecture
    def _make_divisible(v, divisor, min_value=None):
        """Ensures that all layers have a channel number that is divisible by divisor."""
        if min_value is None:
            min_value = divisor
        new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
        # Make sure that round down does not go down by more than 10%.
        if new_v < 0.9 * v:
            new_v += divisor
        return new_v

    class ConvBNReLU(nn.Sequential):
        def __init__(self, in_planes, out_planes, kernel_size=3, stride=1, groups=1):
            padding = (kernel_size - 1) // 2
            super(ConvBNReLU, self).__init__(
                nn.Conv2d(in_planes, out_planes, kernel_size, stride, padding, groups=groups, bias=False),
                nn.BatchNorm2d(out_planes, momentum=0.1),
                # Replace with ReLU
                nn.ReLU(inplace=False)
            )

    class InvertedResidual(nn.Module):
        def __init__(self, inp, oup, stride, expand_ratio):
            super(InvertedResidual, self).__init__()
            self.stride = stride
            assert stride in [1, 2]

            hidden_dim = int(round(inp * expand_ratio))
            self.use_res_connect = self.stride == 1 and inp == oup

            layers = []
            if expand_ratio != 1:
                # pw
                layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))
            layers.extend([
                # dw
                ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
                # pw-linear
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup, momentum=0.1),
            ])
            self.conv = nn.Sequential(*layers)
            # Replace torch.add with floatfunctional
            self.skip_add = nn.quantized.FloatFunctional()

        def forward(self, x):
            if self.use_res_connect:
                return self.skip_add.add(x, self.conv(x))
            else:
                return self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self, num_classes=CLASSES, width_mult=1.0, inverted_residual_setting=None, round_nearest=8):
            super(MobileNetV2, self).__init__()
            block = InvertedResidual
            input_channel = 16
            last_channel = 64

            if inverted_residual_setting is None:
                inverted_residual_setting = [
                    # t, c, n, s
                    [1, 8, 1, 1],
                    [4, 16, 2, 2],
                    [4, 24, 2, 2],
                ]

            # building first layer
            input_channel = _make_divisible(input_channel * width_mult, round_nearest)
            self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
            features = [ConvBNReLU(3, input_channel, stride=1)]
            # building inverted residual blocks
            for t, c, n, s in inverted_residual_setting:
                output_channel = _make_divisible(c * width_mult, round_nearest)
                for i in range(n):
                    stride = s if i == 0 else 1
                    features.append(block(input_channel, output_channel, stride, expand_ratio=t))
                    input_channel = output_channel
            # building last several layers
            features.append(ConvBNReLU(input_channel, self.last_channel, kernel_size=1))
            # make it nn.Sequential
            self.features = nn.Sequential(*features)
            self.quant = QuantStub()
            self.dequant = DeQuantStub()
            # building classifier
            self.classifier = nn.Sequential(
                nn.Dropout(0.2),
                nn.Linear(self.last_channel, num_classes),
            )

            # weight initialization
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode='fan_out')
                    if m.bias is not None:
                        nn.init.zeros_(m.bias)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.ones_(m.weight)
                    nn.init.zeros_(m.bias)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.zeros_(m.bias)

        def forward(self, x):
            x = self.quant(x)
            x = self.features(x)
            x = x.mean([2, 3])
            x = self.classifier(x)
            x = self.dequant(x)
            return x

        # Fuse Conv+BN and Conv+BN+Relu modules prior to quantization
        # This operation does not change the numerics
        def fuse_model(self, is_qat=False):
            fuse_modules = torch.ao.quantization.fuse_modules_qat if is_qat else torch.ao.quantization.fuse_modules
            for m in self.modules():
                if type(m) == ConvBNReLU:
                    fuse_modules(m, ['0', '1', '2'], inplace=True)
                if type(m) == InvertedResidual:
                    for idx in range(len(m.conv)):
                        if type(m.conv[idx]) == nn.Conv2d:
                            fuse_modules(m.conv, [str(idx), str(idx + 1)], inplace=True)

    # 2. Helper functions: AverageMeter and accuracy as the tutorial's (the ImageNet example's,
    # shared with test_imagenet_style)
    outputs = []

    def evaluate(model, criterion, data_loader, neval_batches):
        model.eval()
        top1 = AverageMeter('Acc@1', ':6.2f')
        top5 = AverageMeter('Acc@5', ':6.2f')
        cnt = 0
        with torch.no_grad():
            for image, target in data_loader:
                output = model(image)
                outputs.append(numpy_of(output))
                loss = criterion(output, target)
                cnt += 1
                acc1, acc5 = accuracy(torch, output, target, topk=(1, 2))
                print('.', end='')
                top1.update(acc1[0], image.size(0))
                top5.update(acc5[0], image.size(0))
                if cnt >= neval_batches:
                    return top1, top5

        return top1, top5

    def load_model(model_file):
        model = MobileNetV2()
        state_dict = torch.load(model_file)
        model.load_state_dict(state_dict)
        model.to('cpu')
        return model

    sizes = []

    def print_size_of_model(model):
        torch.save(model.state_dict(), os.path.join(data_dir, "temp.p"))
        sizes.append(os.path.getsize(os.path.join(data_dir, "temp.p")))
        print('Size (MB):', os.path.getsize(os.path.join(data_dir, "temp.p")) / 1e6)
        os.remove(os.path.join(data_dir, "temp.p"))

    # 3. Define dataset and data loaders
    rng = np.random.default_rng(0)
    train_x, train_y = make_images(rng, 96)
    test_x, test_y = make_images(rng, 64)
    train_batch_size, eval_batch_size = 16, 16
    dataset = TensorDataset(torch.tensor(train_x), torch.tensor(train_y))
    dataset_test = TensorDataset(torch.tensor(test_x), torch.tensor(test_y))
    # sequential samplers (the tutorial's training loader is random): the same batches in both runs
    data_loader = DataLoader(dataset, batch_size=train_batch_size, sampler=SequentialSampler(dataset))
    data_loader_test = DataLoader(dataset_test, batch_size=eval_batch_size, sampler=SequentialSampler(dataset_test))

    # the "pretrained" float model: a few training steps, saved as the tutorial's checkpoint
    initial = init["initial"] if init else None
    model = MobileNetV2()
    if initial is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in initial.items()})
    result["init"] = {"initial": state_numpy(model)} if init is None else init
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.train()
    losses = []
    for step in range(train_steps):
        image, target = dataset[16 * (step % 6):16 * (step % 6 + 1)]
        optimizer.zero_grad()
        loss = criterion(model(image), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    # the batch norms' running statistics, estimated again over the training set with the final
    # weights (a few steps of momentum 0.1 leave them near their initial values)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.reset_running_stats()
                m.momentum = None  # a cumulative average
        for image, _ in data_loader:
            model(image)
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.momentum = 0.1
    if init is None:
        result["init"]["trained"] = state_numpy(model)
    trained = init["trained"] if init else result["init"]["trained"]
    saved_model_dir = data_dir
    float_model_file = f"mobilenet_pretrained_float_{torch.__name__}.pth"
    torch.save({k: torch.tensor(v) for k, v in trained.items()}, os.path.join(saved_model_dir, float_model_file))

    # 4. Post-training static quantization
    num_calibration_batches = 4
    num_eval_batches = 4
    with contextlib.redirect_stdout(out):
        float_model = load_model(os.path.join(saved_model_dir, float_model_file)).to('cpu')
        # Next, we'll "fuse modules"; this can both make the model faster by saving on memory access
        # while also improving numerical accuracy.
        float_model.eval()
        print('\n Inverted Residual Block: Before fusion \n\n', float_model.features[1].conv)
        float_model.fuse_model()
        # Note fusion of Conv+BN+Relu and Conv+Relu
        print('\n Inverted Residual Block: After fusion\n\n', float_model.features[1].conv)

    with contextlib.redirect_stdout(io.StringIO()) as size_lines:
        print_size_of_model(float_model)
    with contextlib.redirect_stdout(out):
        top1, top5 = evaluate(float_model, criterion, data_loader_test, neval_batches=num_eval_batches)
        print('Evaluation accuracy on %d images, %2.2f' % (num_eval_batches * eval_batch_size, top1.avg))
    float_outputs = list(outputs)
    outputs.clear()

    def post_training_quantization(qconfig, show=False):
        """load, fuse, qconfig, prepare, calibrate, convert: the tutorial's steps, which it writes
        out for each qconfig (printing the first time)."""
        myModel = load_model(os.path.join(saved_model_dir, float_model_file)).to('cpu')
        myModel.eval()

        # Fuse Conv, bn and relu
        myModel.fuse_model()

        # Specify quantization configuration
        myModel.qconfig = qconfig
        print(myModel.qconfig)
        torch.ao.quantization.prepare(myModel, inplace=True)

        # Calibrate first
        if show:
            print('Post Training Quantization Prepare: Inserting Observers')
            print('\n Inverted Residual Block:After observer insertion \n\n', myModel.features[1].conv)

        # Calibrate with the training set
        evaluate(myModel, criterion, data_loader, neval_batches=num_calibration_batches)
        if show:
            print('Post Training Quantization: Calibration done')

        # Convert to quantized model
        torch.ao.quantization.convert(myModel, inplace=True)
        if show:
            print('Post Training Quantization: Convert done')
            print('\n Inverted Residual Block: After fusion and quantization, note fused modules: \n\n',
                  myModel.features[1].conv)
        return myModel

    quantized_outputs = {}
    with contextlib.redirect_stdout(out):
        # Start with simple min/max range estimation and per-tensor quantization of weights
        myModel = post_training_quantization(torch.ao.quantization.default_qconfig, show=True)
    with contextlib.redirect_stdout(size_lines):
        print("Size of model after quantization")
        print_size_of_model(myModel)
    # The old 'fbgemm' is still available but 'x86' is the recommended default.
    for name, qconfig in [("per_tensor", None), ("per_channel", torch.ao.quantization.get_default_qconfig('x86'))]:
        with contextlib.redirect_stdout(out):
            model = myModel if qconfig is None else post_training_quantization(qconfig)
            outputs.clear()
            top1, top5 = evaluate(model, criterion, data_loader_test, neval_batches=num_eval_batches)
            print('Evaluation accuracy on %d images, %2.2f' % (num_eval_batches * eval_batch_size, top1.avg))
        quantized_outputs[name] = (model, list(outputs))
    per_channel_quantized_model, per_channel_outputs = quantized_outputs["per_channel"]
    per_tensor_outputs = quantized_outputs["per_tensor"][1]

    # 5. Quantization-aware training
    def train_one_epoch(model, criterion, optimizer, data_loader, device, ntrain_batches):
        model.train()
        top1 = AverageMeter('Acc@1', ':6.2f')
        top5 = AverageMeter('Acc@5', ':6.2f')
        avgloss = AverageMeter('Loss', '1.5f')

        cnt = 0
        for image, target in data_loader:
            print('.', end='')
            cnt += 1
            output = model(image.to(device))
            loss = criterion(output, target.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            # top-3 of 4 classes: with top-2, one training image of these runs ranked differently
            acc1, acc5 = accuracy(torch, output, target, topk=(1, 3))
            top1.update(acc1[0], image.size(0))
            top5.update(acc5[0], image.size(0))
            avgloss.update(loss, image.size(0))
            if cnt >= ntrain_batches:
                print('Loss', avgloss.avg)

                print('Training: * Acc@1 {top1.avg:.3f} Acc@5 {top5.avg:.3f}'
                      .format(top1=top1, top5=top5))
                return

        print('Full imagenet train set:  * Acc@1 {top1.avg:.3f} Acc@5 {top5.avg:.3f}'
              .format(top1=top1, top5=top5))
        return

    qat_lines = io.StringIO()
    with contextlib.redirect_stdout(qat_lines):
        qat_model = load_model(os.path.join(saved_model_dir, float_model_file))
        qat_model.fuse_model(is_qat=True)

        optimizer = torch.optim.SGD(qat_model.parameters(), lr=0.0001)
        # The old 'fbgemm' is still available but 'x86' is the recommended default.
        qat_model.qconfig = torch.ao.quantization.get_default_qat_qconfig('x86')

        torch.ao.quantization.prepare_qat(qat_model, inplace=True)
        print('Inverted Residual Block: After preparation for QAT, note fake-quantization modules \n',
              qat_model.features[1].conv)

        num_train_batches = 2

        # QAT takes time and one needs to train over a few epochs.
        # Train and check accuracy after each epoch
        for nepoch in range(qat_epochs):
            train_one_epoch(qat_model, criterion, optimizer, data_loader, torch.device('cpu'), num_train_batches)
            if nepoch > 0:
                # Freeze quantizer parameters
                qat_model.apply(torch.ao.quantization.disable_observer)
            if nepoch > 0:
                # Freeze batch norm mean and variance estimates
                qat_model.apply(torch.nn.intrinsic.qat.freeze_bn_stats)

            # Check the accuracy after each epoch
            quantized_model = torch.ao.quantization.convert(qat_model.eval(), inplace=False)
            quantized_model.eval()
            outputs.clear()
            top1, top5 = evaluate(quantized_model, criterion, data_loader_test, neval_batches=num_eval_batches)
            print('Epoch %d :Evaluation accuracy on %d images, %2.2f'
                  % (nepoch, num_eval_batches * eval_batch_size, top1.avg))
    qat_outputs = list(outputs)

    result.update(
        printed=printed_lines(out), float_outputs=float_outputs,
        qat_printed=printed_lines(qat_lines),
        own={"qat_outputs": qat_outputs, "qat_step": quantized_model.classifier[1].scale,
             "qat_types": [m._get_name() for m in quantized_model.modules()], "losses": losses, "sizes": sizes,
             "size_lines": size_lines.getvalue(), "per_tensor_outputs": per_tensor_outputs,
             "per_channel_outputs": per_channel_outputs,
             "steps": [myModel.classifier[1].scale, per_channel_quantized_model.classifier[1].scale],
             "types": [m._get_name() for m in myModel.modules()]})
    return result


def test_static_quantization_tutorial(tmp_path):
    torch = pytest.importorskip("torch")

    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "x86"
    try:
        ref, got = run_both(static_quantization_tutorial, data_dir=str(tmp_path))
    finally:
        torch.backends.quantized.engine = old
    assert_same_results(got, ref, rtol=2e-4, atol=1e-4)
    # the quantized models' logits: within two steps of the classifier's output scale of PyTorch's
    for key, step in zip(("per_tensor_outputs", "per_channel_outputs"), ref["own"]["steps"]):
        g, r = np.concatenate(got["own"][key]), np.concatenate(ref["own"][key])
        assert g.shape == r.shape == (64, CLASSES)
        assert np.abs(g - r).max() <= 2.01 * step, key
        assert (g.argmax(1) == r.argmax(1)).mean() >= 0.95
    # quantization-aware training: the same steps (printed losses and accuracies compared above),
    # and the converted model's logits within two steps of PyTorch's
    g, r = np.concatenate(got["own"]["qat_outputs"]), np.concatenate(ref["own"]["qat_outputs"])
    assert g.shape == r.shape == (64, CLASSES) and np.abs(g - r).max() <= 2.01 * ref["own"]["qat_step"]
    assert got["own"]["qat_types"] == ref["own"]["qat_types"]
    assert "FusedMovingAvgObsFakeQuantize" in "\n".join(got["qat_printed"])
    # the quantized model's file is smaller by about as much as PyTorch's (on a model this small the
    # pickle's per-tensor records weigh about as much as the weights: not the tutorial's quarter)
    (f, q), (rf, rq) = got["own"]["sizes"], ref["own"]["sizes"]
    assert q < 0.65 * f and abs(q / f - rq / rf) < 0.05, (got["own"]["sizes"], ref["own"]["sizes"])
    assert got["own"]["types"] == ref["own"]["types"]
    assert {"QuantizedConvReLU2d", "QuantizedConv2d", "QFunctional", "QuantizedLinear", "Quantize",
            "DeQuantize"} <= set(got["own"]["types"])
    # training with momentum through batch norms amplifies differences in the last bits step by
    # step: the first steps agree closely, the later ones are compared loosely
    np.testing.assert_allclose(got["own"]["losses"][:8], ref["own"]["losses"][:8], rtol=1e-3)
    np.testing.assert_allclose(got["own"]["losses"], ref["own"]["losses"], rtol=3e-2)
    assert ref["own"]["losses"][-1] < ref["own"]["losses"][0]
    # the float model learned the task, and quantization keeps its accuracy
    accuracies = [float(line.rsplit(",", 1)[1]) for line in got["printed"] if "Evaluation accuracy" in line]
    assert len(accuracies) == 3 and accuracies[0] > 60 and max(abs(a - accuracies[0]) for a in accuracies) <= 5
    text = "\n".join(got["printed"])
    assert "ConvReLU2d(" in text and "QuantizedConvReLU2d(" in text and "HistogramObserver" in text
