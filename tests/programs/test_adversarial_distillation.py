"""Two tutorials that train or attack a classifier through its inputs and outputs: FGSM
adversarial examples (data.requires_grad = True, F.nll_loss of log_softmax outputs,
model.zero_grad(), data.grad.data, sign(), clamp to [0, 1], a "denorm" of normalised inputs,
accuracy per epsilon, examples kept as .squeeze().detach().cpu().numpy()); and knowledge
distillation (a teacher trained with cross-entropy, a student trained on soft targets:
F.softmax(teacher_logits / T) against F.log_softmax(student_logits / T) as a sum of
soft_targets * (log soft_targets - soft_prob) / batch * T**2, nn.KLDivLoss(reduction="batchmean")
for the same, plus the hard-label loss; a cosine-similarity hidden-state loss with
nn.CosineEmbeddingLoss and torch.ones), both compared with PyTorch number by number."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

SIDE, CLASSES = 8, 4


def make_images(n, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, n)
    base = np.zeros((CLASSES, SIDE, SIDE), np.float32)
    for c in range(CLASSES):
        base[c, c * 2:(c * 2) + 2, :] = 1.0
    images = np.clip(base[labels] * 0.7 + rng.random((n, SIDE, SIDE)) * 0.3, 0, 1).astype(np.float32)
    return images[:, None], labels


def fgsm(torch, init=None, epsilons=(0, .05, .1, .2, .3)):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.fc1 = nn.Linear(4 * 3 * 3, 16)
            self.fc2 = nn.Linear(16, CLASSES)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)

    torch.manual_seed(0)
    model = Net()
    result = {}
    start_from(torch, model, init, result)
    images, labels = make_images(64, 0)
    data_all, target_all = torch.tensor(images), torch.tensor(labels)
    model.train()
    model.dropout1.p = 0.0  # the trained weights must agree: no dropout draws
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for start in range(0, 64, 16):
        opt.zero_grad()
        F.nll_loss(model(data_all[start:start + 16]), target_all[start:start + 16]).backward()
        opt.step()
    model.eval()

    def fgsm_attack(image, epsilon, data_grad):
        sign_data_grad = data_grad.sign()
        perturbed_image = image + epsilon * sign_data_grad
        return torch.clamp(perturbed_image, 0, 1)

    def denorm(batch, mean=[0.1307], std=[0.3081]):
        if isinstance(mean, list):
            mean = torch.tensor(mean)
        if isinstance(std, list):
            std = torch.tensor(std)
        return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)

    def test(model, epsilon):
        correct = 0
        adv_examples = []
        for k in range(len(images)):
            data, target = data_all[k:k + 1], target_all[k:k + 1]
            data = (data - 0.1307) / 0.3081
            data.requires_grad = True
            output = model(data)
            init_pred = output.max(1, keepdim=True)[1]
            if init_pred.item() != target.item():
                continue
            loss = F.nll_loss(output, target)
            model.zero_grad()
            loss.backward()
            data_grad = data.grad.data
            data_denorm = denorm(data)
            perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)
            perturbed_data_normalized = (perturbed_data - 0.1307) / 0.3081
            output = model(perturbed_data_normalized)
            final_pred = output.max(1, keepdim=True)[1]
            if final_pred.item() == target.item():
                correct += 1
                if epsilon == 0 and len(adv_examples) < 3:
                    adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                    adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
            elif len(adv_examples) < 3:
                adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
        final_acc = correct / float(len(images))
        return final_acc, adv_examples

    accuracies, examples = [], []
    for eps in epsilons:
        acc, ex = test(model, eps)
        accuracies.append(acc)
        examples.append([(a, b) for a, b, _ in ex])
        if ex:
            examples.append(ex[0][2])
    result.update(accuracies=accuracies, examples=examples)
    return result


def distillation(torch, init=None, epochs=2, T=2.0, soft_weight=0.25, ce_weight=0.75):
    nn, F = torch.nn, torch.nn.functional

    class DeepNN(nn.Module):
        def __init__(self, num_classes=CLASSES):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                          nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
            self.classifier = nn.Sequential(nn.Linear(8 * 2 * 2, 32), nn.ReLU(), nn.Linear(32, num_classes))

        def forward(self, x):
            x = self.features(x)
            x = torch.flatten(x, 1)
            return self.classifier(x)

    class LightNN(nn.Module):
        def __init__(self, num_classes=CLASSES):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
            self.classifier = nn.Sequential(nn.Linear(4 * 4 * 4, 16), nn.ReLU(), nn.Linear(16, num_classes))

        def forward(self, x):
            x = self.features(x)
            flattened = torch.flatten(x, 1)
            return self.classifier(flattened), flattened

    torch.manual_seed(42)
    teacher, student = DeepNN(), LightNN()
    result = {}
    start_from(torch, {"teacher": teacher, "student": student}, init, result)
    images, labels = make_images(48, 1)
    ds = torch.utils.data.TensorDataset(torch.tensor(images), torch.tensor(labels))
    loader = torch.utils.data.DataLoader(ds, batch_size=12, shuffle=False)

    def train(model, epochs, learning_rate):
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
        model.train()
        history = []
        for epoch in range(epochs):
            running_loss = 0.0
            for inputs, labels in loader:
                optimizer.zero_grad()
                outputs = model(inputs)
                loss = criterion(outputs, labels)
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            history.append(running_loss / len(loader))
        return history

    def test(model):
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for inputs, labels in loader:
                outputs = model(inputs)
                outputs = outputs[0] if isinstance(outputs, tuple) else outputs
                _, predicted = torch.max(outputs.data, 1)
                total += labels.size(0)
                correct += (predicted == labels).sum().item()
        return 100 * correct / total

    teacher_history = train(teacher, epochs, 1e-3)
    teacher_acc = test(teacher)

    def train_knowledge_distillation(teacher, student, epochs, learning_rate):
        ce_loss = nn.CrossEntropyLoss()
        kl = nn.KLDivLoss(reduction="batchmean")
        cosine_loss = nn.CosineEmbeddingLoss()
        optimizer = torch.optim.Adam(student.parameters(), lr=learning_rate)
        teacher.eval()
        student.train()
        history = []
        for epoch in range(epochs):
            running_loss = 0.0
            for inputs, labels in loader:
                optimizer.zero_grad()
                with torch.no_grad():
                    teacher_logits = teacher(inputs)
                    teacher_hidden = torch.flatten(teacher.features[:3](inputs)[:, :4], 1)
                student_logits, student_hidden = student(inputs)
                soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
                soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
                soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T ** 2)
                kl_loss = kl(soft_prob, soft_targets) * (T ** 2)
                hidden_loss = cosine_loss(student_hidden, teacher_hidden, target=torch.ones(inputs.size(0)))
                label_loss = ce_loss(student_logits, labels)
                loss = soft_weight * soft_targets_loss + ce_weight * label_loss + 0.1 * hidden_loss
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
                history.append([soft_targets_loss.item(), kl_loss.item(), hidden_loss.item()])
        return history

    kd_history = train_knowledge_distillation(teacher, student, epochs, 1e-3)
    student_acc = test(student)
    total_params = sum(p.numel() for p in teacher.parameters())
    result.update(teacher_history=teacher_history, teacher_acc=teacher_acc, kd=np.array(kd_history),
                  student_acc=student_acc, total_params=total_params,
                  student_w=numpy_of(student.classifier[0].weight))
    return result


def test_fgsm():
    ref, got = compare_program(fgsm, rtol=1e-3, atol=1e-4)
    assert got["accuracies"][0] >= got["accuracies"][-1]


def test_knowledge_distillation():
    ref, got = compare_program(distillation, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(got["kd"][:, 0], got["kd"][:, 1], rtol=1e-4)  # the sum written out is batchmean KL
