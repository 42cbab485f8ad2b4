"""The CRNN text recogniser (meijieru/crnn.pytorch, in the PyTorch 1.x form of its much-used fork
Holmeyoung/crnn-pytorch) as written: models/crnn.py (BidirectionalLSTM folding (T, b, h) to
(T * b, h) for its Linear, the CNN built by convRelu(i, batchNormalization) through
cnn.add_module('conv{0}'.format(i), ...), MaxPool2d((2, 2), (2, 1), (0, 1)), conv.squeeze(2)
.permute(2, 0, 1), F.log_softmax over the classes), utils.py (strLabelConverter's encode to
zero-padded torch.LongTensor texts and lengths, its decode merging repeats and blanks, the averager checking
isinstance(v, Variable), loadData by v.resize_(data.size()).copy_(data) under no_grad) and
train.py (weights_init by class name with weight.data.normal_, the image / text / length buffers
made as torch.FloatTensor(batchSize, 3, imgH, imgH), torch.LongTensor(batchSize * 5) and
torch.LongTensor(batchSize) wrapped in Variable, torch.nn.CTCLoss(reduction='sum') over padded
targets and preds_size = Variable(torch.LongTensor([preds.size(0)] * batch_size)), Adam with
betas=(beta1, 0.999), and val's preds.max(2), transpose(1, 0).contiguous().view(-1) and the
decoded strings). Smaller: images 32x48 of drawn bars for the digits of short strings, 12
training images, batch 4; the layer widths are the published ones."""
import collections

import numpy as np

from prog_helpers import compare_program, numpy_of

ALPHABET = "0123456789"


def make_images(n, seed, h=32, w=48):
    """(images (n, 1, h, w) in [-1, 1], texts): each digit a vertical bar whose height codes it."""
    rng = np.random.default_rng(seed)
    images = rng.random((n, 1, h, w)).astype(np.float32) * 0.2
    texts = []
    for i in range(n):
        text = "".join(rng.choice(list(ALPHABET), rng.integers(2, 5)))
        for k, ch in enumerate(text):
            x = 4 + k * 10
            images[i, 0, h - 3 - 2 * int(ch) - 6:h - 3, x:x + 5] = 1.0
        texts.append(text)
    return images * 2 - 1, texts


def crnn_main(torch, init=None, epochs=3):
    nn, optim, F = torch.nn, torch.optim, torch.nn.functional
    Variable = torch.autograd.Variable
    r = {}

    # models/crnn.py
    class BidirectionalLSTM(nn.Module):

        def __init__(self, nIn, nHidden, nOut):
            super(BidirectionalLSTM, self).__init__()

            self.rnn = nn.LSTM(nIn, nHidden, bidirectional=True)
            self.embedding = nn.Linear(nHidden * 2, nOut)

        def forward(self, input):
            recurrent, _ = self.rnn(input)
            T, b, h = recurrent.size()
            t_rec = recurrent.view(T * b, h)

            output = self.embedding(t_rec)  # [T * b, nOut]
            output = output.view(T, b, -1)

            return output

    class CRNN(nn.Module):

        def __init__(self, imgH, nc, nclass, nh, n_rnn=2, leakyRelu=False):
            super(CRNN, self).__init__()
            assert imgH % 16 == 0, 'imgH has to be a multiple of 16'

            ks = [3, 3, 3, 3, 3, 3, 2]
            ps = [1, 1, 1, 1, 1, 1, 0]
            ss = [1, 1, 1, 1, 1, 1, 1]
            nm = [64, 128, 256, 256, 512, 512, 512]

            cnn = nn.Sequential()

            def convRelu(i, batchNormalization=False):
                nIn = nc if i == 0 else nm[i - 1]
                nOut = nm[i]
                cnn.add_module('conv{0}'.format(i),
                               nn.Conv2d(nIn, nOut, ks[i], ss[i], ps[i]))
                if batchNormalization:
                    cnn.add_module('batchnorm{0}'.format(i), nn.BatchNorm2d(nOut))
                if leakyRelu:
                    cnn.add_module('relu{0}'.format(i),
                                   nn.LeakyReLU(0.2, inplace=True))
                else:
                    cnn.add_module('relu{0}'.format(i), nn.ReLU(True))

            convRelu(0)
            cnn.add_module('pooling{0}'.format(0), nn.MaxPool2d(2, 2))  # 64x16x64
            convRelu(1)
            cnn.add_module('pooling{0}'.format(1), nn.MaxPool2d(2, 2))  # 128x8x32
            convRelu(2, True)
            convRelu(3)
            cnn.add_module('pooling{0}'.format(2),
                           nn.MaxPool2d((2, 2), (2, 1), (0, 1)))  # 256x4x16
            convRelu(4, True)
            convRelu(5)
            cnn.add_module('pooling{0}'.format(3),
                           nn.MaxPool2d((2, 2), (2, 1), (0, 1)))  # 512x2x16
            convRelu(6, True)  # 512x1x16

            self.cnn = cnn
            self.rnn = nn.Sequential(
                BidirectionalLSTM(512, nh, nh),
                BidirectionalLSTM(nh, nh, nclass))

        def forward(self, input):
            # conv features
            conv = self.cnn(input)
            b, c, h, w = conv.size()
            assert h == 1, "the height of conv must be 1"
            conv = conv.squeeze(2)
            conv = conv.permute(2, 0, 1)  # [w, b, c]

            # rnn features
            output = self.rnn(conv)

            # add log_softmax to converge output
            output = F.log_softmax(output, dim=2)

            return output

        def backward_hook(self, module, grad_input, grad_output):
            for g in grad_input:
                g[g != g] = 0   # replace all nan/inf in gradients to zero

    # utils.py
    class strLabelConverter(object):
        """Convert between str and label.

        NOTE:
            Insert `blank` to the alphabet for CTC.

        Args:
            alphabet (str): set of the possible characters.
            ignore_case (bool, default=True): whether or not to ignore all of the case.
        """

        def __init__(self, alphabet, ignore_case=False):
            self._ignore_case = ignore_case
            if self._ignore_case:
                alphabet = alphabet.lower()
            self.alphabet = alphabet + '-'  # for `-1` index

            self.dict = {}
            for i, char in enumerate(alphabet):
                # NOTE: 0 is reserved for 'blank' required by wrap_ctc
                self.dict[char] = i + 1

        def encode(self, text):
            length = []
            result = []
            for item in text:
                length.append(len(item))
                r = []
                for char in item:
                    index = self.dict[char]
                    # result.append(index)
                    r.append(index)
                result.append(r)

            max_len = 0
            for r in result:
                if len(r) > max_len:
                    max_len = len(r)

            result_temp = []
            for r in result:
                for i in range(max_len - len(r)):
                    r.append(0)
                result_temp.append(r)

            text = result_temp
            return (torch.LongTensor(text), torch.LongTensor(length))

        def decode(self, t, length, raw=False):
            if length.numel() == 1:
                length = length[0]
                assert t.numel() == length, "text with length: {} does not match declared length: {}".format(
                    t.numel(), length)
                if raw:
                    return ''.join([self.alphabet[i - 1] for i in t])
                else:
                    char_list = []
                    for i in range(length):
                        if t[i] != 0 and (not (i > 0 and t[i - 1] == t[i])):
                            char_list.append(self.alphabet[t[i] - 1])
                    return ''.join(char_list)
            else:
                # batch mode
                assert t.numel() == length.sum(), "texts with length: {} does not match declared length: {}".format(
                    t.numel(), length.sum())
                texts = []
                index = 0
                for i in range(length.numel()):
                    l = length[i]
                    texts.append(
                        self.decode(
                            t[index:index + l], torch.IntTensor([l]), raw=raw))
                    index += l
                return texts

    class averager(object):
        """Compute average for `torch.Variable` and `torch.Tensor`. """

        def __init__(self):
            self.reset()

        def add(self, v):
            if isinstance(v, Variable):
                count = v.data.numel()
                v = v.data.sum()
            elif isinstance(v, torch.Tensor):
                count = v.numel()
                v = v.sum()

            self.n_count += count
            self.sum += v

        def reset(self):
            self.n_count = 0
            self.sum = 0

        def val(self):
            res = 0
            if self.n_count != 0:
                res = self.sum / float(self.n_count)
            return res

    def loadData(v, data):
        with torch.no_grad():
            v.resize_(data.size()).copy_(data)

    # train.py
    torch.manual_seed(1234)
    np.random.seed(1234)
    imgH, nh, batchSize, lr, beta1 = 32, 32, 4, 0.001, 0.5
    nclass = len(ALPHABET) + 1
    nc = 1
    converter = strLabelConverter(ALPHABET)
    criterion = torch.nn.CTCLoss(reduction='sum')

    # custom weights initialization called on crnn
    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find('Conv') != -1:
            m.weight.data.normal_(0.0, 0.02)
        elif classname.find('BatchNorm') != -1:
            m.weight.data.normal_(1.0, 0.02)
            m.bias.data.fill_(0)

    crnn = CRNN(imgH, nc, nclass, nh)
    crnn.apply(weights_init)
    r["modules"] = [name for name, _ in crnn.cnn.named_children()]

    image = torch.FloatTensor(batchSize, 3, imgH, imgH)
    text = torch.LongTensor(batchSize * 5)
    length = torch.LongTensor(batchSize)
    image = Variable(image)
    text = Variable(text)
    length = Variable(length)

    loss_avg = averager()
    optimizer = optim.Adam(crnn.parameters(), lr=lr, betas=(beta1, 0.999))

    train_images, train_texts = make_images(12, 0)
    val_images, val_texts = make_images(8, 1)

    def val(net, criterion):
        for p in crnn.parameters():
            p.requires_grad = False
        net.eval()
        n_correct = 0
        loss_avg = averager()
        sims = []
        for i in range(0, len(val_texts), batchSize):
            cpu_images, cpu_texts = torch.from_numpy(val_images[i:i + batchSize]), val_texts[i:i + batchSize]
            batch_size = cpu_images.size(0)
            loadData(image, cpu_images)
            t, l = converter.encode(cpu_texts)
            loadData(text, t)
            loadData(length, l)

            preds = crnn(image)
            preds_size = Variable(torch.LongTensor([preds.size(0)] * batch_size))
            cost = criterion(preds, text, preds_size, length) / batch_size
            loss_avg.add(cost)

            _, preds = preds.max(2)
            preds = preds.transpose(1, 0).contiguous().view(-1)
            sim_preds = converter.decode(preds.data, preds_size.data, raw=False)
            for pred, target in zip(sim_preds, cpu_texts):
                if pred == target:
                    n_correct += 1
            sims.extend(sim_preds)
        raw_preds = converter.decode(preds.data, preds_size.data, raw=True)
        for p in crnn.parameters():
            p.requires_grad = True
        net.train()
        return {"loss": float(loss_avg.val()), "correct": n_correct, "sims": sims, "raw": raw_preds}

    def trainBatch(net, criterion, optimizer, data):
        cpu_images, cpu_texts = data
        batch_size = cpu_images.size(0)
        loadData(image, cpu_images)
        t, l = converter.encode(cpu_texts)
        loadData(text, t)
        loadData(length, l)

        optimizer.zero_grad()
        preds = crnn(image)
        preds_size = Variable(torch.LongTensor([preds.size(0)] * batch_size))
        cost = criterion(preds, text, preds_size, length) / batch_size
        # crnn.zero_grad()
        cost.backward()
        if not grads:
            grads.update({k: numpy_of(p.grad) for k, p in crnn.named_parameters()})
        optimizer.step()
        return cost

    grads = {}
    r["first_val"] = val(crnn, criterion)
    costs = []
    for epoch in range(epochs):
        order = np.random.permutation(len(train_texts))
        for i in range(0, len(order), batchSize):
            idx = order[i:i + batchSize]
            data = torch.from_numpy(train_images[idx]), [train_texts[k] for k in idx]
            cost = trainBatch(crnn, criterion, optimizer, data)
            loss_avg.add(cost)
            costs.append(cost.item())
        r.setdefault("train_loss", []).append(float(loss_avg.val()))
        loss_avg.reset()
    r["costs"] = costs
    r["first_grads"] = grads
    # After the first step the runs part: the biases of the convolutions that feed a BatchNorm get
    # gradients of rounding noise only (its batch mean takes them out), and Adam, whose early
    # steps are lr * sign(grad), turns noise into full steps, there and in every weight whose
    # gradient is near zero; eval mode then reads the running means those biases moved.
    r["own"] = {"val": val(crnn, criterion), "state": {k: numpy_of(v) for k, v in crnn.state_dict().items()}}
    r["sizes"] = [list(image.shape), list(text.shape), str(text.dtype).split(".")[1], list(length.shape)]
    r["encoded"] = [numpy_of(x) for x in converter.encode(["12", "3456"])]
    return r


def test_crnn_ctc():
    ref, got = compare_program(crnn_main, rtol=2e-3, atol=2e-4)
    # each of the 9 Adam steps moves a weight by at most lr (1e-3): a weight whose gradient's sign
    # was noise may differ by that much a step, no more
    for k, v in ref["own"]["state"].items():
        if "running" in k or "num_batches" in k:  # the means follow the noisy biases (above)
            continue
        np.testing.assert_allclose(got["own"]["state"][k], v, atol=9 * 2e-3, err_msg=k)
    assert len(got["own"]["val"]["sims"]) == 8 and abs(got["own"]["val"]["loss"] / ref["own"]["val"]["loss"] - 1) < 0.1
    assert got["costs"][-1] < got["costs"][0]
    assert got["sizes"][0] == [4, 1, 32, 48] and got["modules"][:3] == ["conv0", "relu0", "pooling0"]
