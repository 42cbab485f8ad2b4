"""The "Knowledge Distillation Tutorial" as published, CIFAR-10 replaced by a local dataset of
32x32 RGB images with torchvision's interface (normalised by the tutorial's mean and std) and
made small (16 training and 8 test images, batch 8, one epoch per training): DeepNN (teacher)
and LightNN (student) CNNs with Dropout(0.1) in the classifier, each built after
torch.manual_seed(42) so the students start equal (torch.norm of their first layers printed),
parameter counts by "{:,}".format(sum(p.numel() ...)), train with CrossEntropyLoss/Adam and test
with torch.max(outputs.data, 1); train_knowledge_distillation (soft targets by
nn.functional.softmax(teacher_logits / T, dim=-1), soft_prob by log_softmax,
-torch.sum(soft_targets * soft_prob) / soft_prob.size()[0] * (T**2)); ModifiedDeepNNCosine and
ModifiedLightNNCosine loaded from the teacher's state_dict, the teacher's hidden representation
pooled by nn.functional.avg_pool1d(flattened, 2) of a 2-D tensor, nn.CosineEmbeddingLoss with
target=torch.ones(inputs.size(0)); the regressor students (a Conv2d after the features, MSELoss
against the teacher's feature map) and test_multiple_outputs. The tutorial's repeated layer stacks
and training loops are written once each here (the same modules, names and steps). From the
tutorial's seeds both libraries draw the same weights, shuffles and dropout masks (PyTorch's CPU
stream), so the printed log is compared number by number."""
import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def local_cifar10(torch, mean, std):
    """datasets.CIFAR10(train=...) with transforms.Compose([ToTensor(), Normalize(mean, std)])."""

    class CIFAR10(torch.utils.data.Dataset):
        def __init__(self, root, train=True, download=False, transform=None):
            rng = np.random.default_rng(0 if train else 1)
            n = 16 if train else 8
            self.targets = rng.integers(0, 10, n).tolist()
            self.data = (rng.random((n, 32, 32, 3)) * 160).astype(np.uint8)
            for i, c in enumerate(self.targets):  # a class-coloured square, so that there is something to learn
                self.data[i, 3 * c:3 * c + 8, 3 * c:3 * c + 8, c % 3] = 255

        def __len__(self):
            return len(self.targets)

        def __getitem__(self, i):
            img = torch.tensor(self.data[i]).permute(2, 0, 1).float() / 255
            img = (img - torch.tensor(mean).view(3, 1, 1)) / torch.tensor(std).view(3, 1, 1)
            return img, self.targets[i]

    return CIFAR10


def distillation(torch, init=None, epochs=1):
    nn, optim = torch.nn, torch.optim
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    CIFAR10 = local_cifar10(torch, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = CIFAR10(root='./data', train=True, download=True)
    test_dataset = CIFAR10(root='./data', train=False, download=True)
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=8, shuffle=True, num_workers=0)
    test_loader = torch.utils.data.DataLoader(test_dataset, batch_size=8, shuffle=False, num_workers=0)

    def deep_layers(num_classes):
        """The tutorial's features stack, and a maker of its classifier (drawn after what the
        class builds between them, in the tutorial's order)."""
        features = nn.Sequential(
            nn.Conv2d(3, 128, kernel_size=3, padding=1), nn.ReLU(),
            nn.Conv2d(128, 64, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(64, 64, kernel_size=3, padding=1), nn.ReLU(),
            nn.Conv2d(64, 32, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        return features, lambda: nn.Sequential(nn.Linear(2048, 512), nn.ReLU(), nn.Dropout(0.1),
                                               nn.Linear(512, num_classes))

    def light_layers(num_classes):
        features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(16, 16, kernel_size=3, padding=1), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        return features, lambda: nn.Sequential(nn.Linear(1024, 256), nn.ReLU(), nn.Dropout(0.1),
                                               nn.Linear(256, num_classes))

    class DeepNN(nn.Module):
        def __init__(self, num_classes=10):
            super(DeepNN, self).__init__()
            self.features, classifier = deep_layers(num_classes)
            self.classifier = classifier()

        def forward(self, x):
            x = self.features(x)
            x = torch.flatten(x, 1)
            x = self.classifier(x)
            return x

    class LightNN(DeepNN):
        def __init__(self, num_classes=10):
            nn.Module.__init__(self)
            self.features, classifier = light_layers(num_classes)
            self.classifier = classifier()

    class ModifiedDeepNNCosine(DeepNN):
        def forward(self, x):
            x = self.features(x)
            flattened_conv_output = torch.flatten(x, 1)
            x = self.classifier(flattened_conv_output)
            flattened_conv_output_after_pooling = torch.nn.functional.avg_pool1d(flattened_conv_output, 2)
            return x, flattened_conv_output_after_pooling

    class ModifiedLightNNCosine(LightNN):
        def forward(self, x):
            x = self.features(x)
            flattened_conv_output = torch.flatten(x, 1)
            x = self.classifier(flattened_conv_output)
            return x, flattened_conv_output

    class ModifiedDeepNNRegressor(DeepNN):
        def forward(self, x):
            x = self.features(x)
            conv_feature_map = x
            x = torch.flatten(x, 1)
            x = self.classifier(x)
            return x, conv_feature_map

    class ModifiedLightNNRegressor(LightNN):
        def __init__(self, num_classes=10):
            nn.Module.__init__(self)
            self.features, classifier = light_layers(num_classes)
            self.regressor = nn.Sequential(nn.Conv2d(16, 32, kernel_size=3, padding=1))
            self.classifier = classifier()

        def forward(self, x):
            x = self.features(x)
            regressor_output = self.regressor(x)
            x = torch.flatten(x, 1)
            x = self.classifier(x)
            return x, regressor_output

    def fit(student, train_loader, epochs, learning_rate, device, batch_loss, teacher=None):
        """The loop all four of the tutorial's train functions share: Adam on the student, the
        teacher in eval mode, running_loss printed per epoch; batch_loss gives each one's loss."""
        optimizer = optim.Adam(student.parameters(), lr=learning_rate)
        if teacher is not None:
            teacher.to(device)
            teacher.eval()
        student.to(device)
        student.train()
        for epoch in range(epochs):
            running_loss = 0.0
            for inputs, labels in train_loader:
                inputs, labels = inputs.to(device), labels.to(device)
                optimizer.zero_grad()
                loss = batch_loss(inputs, labels)
                loss.backward()
                optimizer.step()
                running_loss += loss.item()
            print(f"Epoch {epoch+1}/{epochs}, Loss: {running_loss / len(train_loader)}")

    def train(model, train_loader, epochs, learning_rate, device):
        criterion = nn.CrossEntropyLoss()
        fit(model, train_loader, epochs, learning_rate, device, lambda inputs, labels: criterion(model(inputs), labels))

    def train_knowledge_distillation(teacher, student, train_loader, epochs, learning_rate, T,
                                     soft_target_loss_weight, ce_loss_weight, device):
        ce_loss = nn.CrossEntropyLoss()

        def batch_loss(inputs, labels):
            with torch.no_grad():
                teacher_logits = teacher(inputs)
            student_logits = student(inputs)
            soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
            soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
            soft_targets_loss = -torch.sum(soft_targets * soft_prob) / soft_prob.size()[0] * (T**2)
            label_loss = ce_loss(student_logits, labels)
            return soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss

        fit(student, train_loader, epochs, learning_rate, device, batch_loss, teacher)

    def train_hidden_loss(teacher, student, train_loader, epochs, learning_rate, hidden_weight, ce_loss_weight, device,
                          hidden_loss):
        """train_cosine_loss (hidden_loss(student's, teacher's, inputs)) and train_mse_loss."""
        ce_loss = nn.CrossEntropyLoss()

        def batch_loss(inputs, labels):
            with torch.no_grad():
                _, teacher_hidden = teacher(inputs)
            student_logits, student_hidden = student(inputs)
            hidden_rep_loss = hidden_loss(student_hidden, teacher_hidden, inputs)
            label_loss = ce_loss(student_logits, labels)
            return hidden_weight * hidden_rep_loss + ce_loss_weight * label_loss

        fit(student, train_loader, epochs, learning_rate, device, batch_loss, teacher)

    def test(model, test_loader, device, multiple_outputs=False):
        model.to(device)
        model.eval()
        correct = 0
        total = 0
        with torch.no_grad():
            for inputs, labels in test_loader:
                inputs, labels = inputs.to(device), labels.to(device)
                outputs = model(inputs)
                if multiple_outputs:  # test_multiple_outputs: disregard the second tensor of the tuple
                    outputs, _ = outputs
                _, predicted = torch.max(outputs.data, 1)
                total += labels.size(0)
                correct += (predicted == labels).sum().item()
        accuracy = 100 * correct / total
        print(f"Test Accuracy: {accuracy:.2f}%")
        return accuracy

    with captured_run(torch, seed=42) as out:
        torch.manual_seed(42)
        nn_deep = DeepNN(num_classes=10).to(device)
        train(nn_deep, train_loader, epochs=epochs, learning_rate=0.001, device=device)
        test_accuracy_deep = test(nn_deep, test_loader, device)
        torch.manual_seed(42)
        nn_light = LightNN(num_classes=10).to(device)
        torch.manual_seed(42)
        new_nn_light = LightNN(num_classes=10).to(device)
        print("Norm of 1st layer of nn_light:", torch.norm(nn_light.features[0].weight).item())
        print("Norm of 1st layer of new_nn_light:", torch.norm(new_nn_light.features[0].weight).item())
        total_params_deep = "{:,}".format(sum(p.numel() for p in nn_deep.parameters()))
        print(f"DeepNN parameters: {total_params_deep}")
        total_params_light = "{:,}".format(sum(p.numel() for p in nn_light.parameters()))
        print(f"LightNN parameters: {total_params_light}")
        train(nn_light, train_loader, epochs=epochs, learning_rate=0.001, device=device)
        test_accuracy_light_ce = test(nn_light, test_loader, device)
        print(f"Teacher accuracy: {test_accuracy_deep:.2f}%")
        print(f"Student accuracy: {test_accuracy_light_ce:.2f}%")

        train_knowledge_distillation(teacher=nn_deep, student=new_nn_light, train_loader=train_loader,
                                     epochs=epochs, learning_rate=0.001, T=2, soft_target_loss_weight=0.25,
                                     ce_loss_weight=0.75, device=device)
        test_accuracy_light_ce_and_kd = test(new_nn_light, test_loader, device)
        print(f"Student accuracy with CE + KD: {test_accuracy_light_ce_and_kd:.2f}%")

        modified_nn_deep = ModifiedDeepNNCosine(num_classes=10).to(device)
        modified_nn_deep.load_state_dict(nn_deep.state_dict())
        print("Norm of 1st layer for deep_nn:", torch.norm(nn_deep.features[0].weight).item())
        print("Norm of 1st layer for modified_deep_nn:", torch.norm(modified_nn_deep.features[0].weight).item())
        torch.manual_seed(42)
        modified_light_nn = ModifiedLightNNCosine(num_classes=10).to(device)
        print("Norm of 1st layer:", torch.norm(modified_light_nn.features[0].weight).item())
        cosine_loss = nn.CosineEmbeddingLoss()
        train_hidden_loss(modified_nn_deep, modified_light_nn, train_loader, epochs, 0.001, 0.25, 0.75, device,
                          lambda s, t, inputs: cosine_loss(s, t, target=torch.ones(inputs.size(0)).to(device)))
        test_accuracy_light_ce_and_cosine_loss = test(modified_light_nn, test_loader, device, multiple_outputs=True)

        torch.manual_seed(42)
        modified_light_nn_mse = ModifiedLightNNRegressor(num_classes=10).to(device)
        modified_nn_deep_reg = ModifiedDeepNNRegressor(num_classes=10).to(device)
        modified_nn_deep_reg.load_state_dict(nn_deep.state_dict())
        mse_loss = nn.MSELoss()
        train_hidden_loss(modified_nn_deep_reg, modified_light_nn_mse, train_loader, epochs, 0.001, 0.25, 0.75, device,
                          lambda s, t, inputs: mse_loss(s, t))
        test_accuracy_light_ce_and_mse_loss = test(modified_light_nn_mse, test_loader, device, multiple_outputs=True)
        print(f"Student accuracy with CE + CosineLoss: {test_accuracy_light_ce_and_cosine_loss:.2f}%")
        print(f"Student accuracy with CE + RegressorMSE: {test_accuracy_light_ce_and_mse_loss:.2f}%")
    return {"printed": printed_lines(out),
            "own": {name: {k: numpy_of(v) for k, v in m.state_dict().items()}
                         for name, m in [("kd", new_nn_light), ("cosine", modified_light_nn),
                                         ("mse", modified_light_nn_mse)]}}


def test_knowledge_distillation_tutorial():
    ref, got = compare_program(distillation, rtol=1e-3, atol=1e-4)
    # The students' weights: Adam turns a gradient of rounding noise (a weight whose input is all
    # but zero on a batch) into a full step of lr, so a few weights of a tensor differ by up to a
    # step per batch (two batches of lr=0.001); every other weight matches.
    for name, state in ref["own"].items():
        for key, want in state.items():
            have = got["own"][name][key]
            off = ~np.isclose(have, want, rtol=1e-3, atol=1e-4)
            assert off.sum() <= 8 and np.abs(have - want).max() <= 2e-3 + 1e-4, (name, key, off.sum())
    printed = got["printed"]
    assert "DeepNN parameters: 1,186,986" in printed and "LightNN parameters: 267,738" in printed
    norms = [line.rsplit(" ", 1)[1] for line in printed if line.startswith("Norm of 1st layer")]
    assert norms[0] == norms[1] == norms[4] and norms[2] == norms[3]
    assert sum(line.startswith("Test Accuracy: ") for line in printed) == 5
