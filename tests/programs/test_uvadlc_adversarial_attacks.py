"""Phillip Lippe's UvA deep-learning tutorial 10 ("Adversarial Attacks") as written, the ImageNet
subset replaced by small local RGB images normalised by the tutorial's NORM_MEAN/NORM_STD and the
pretrained ResNet-34 by the torchvision stand-in of tests/programs/torchvision_models.py (random
weights from the seed, narrow widths, ten classes), frozen by eval() and p.requires_grad = False:
eval_model (top-1 and top-5 errors through preds.topk(5, dim=-1)[1] == labels[..., None] and
.any(dim=-1)), the fast gradient sign method (imgs.clone().requires_grad_(), -torch.gather of
F.log_softmax, torch.sign of the input's gradient, fake_imgs.detach_()) and the accuracy under it;
then the adversarial patch: patch_forward (torch.tanh mapped to the normalised range), place_patch
writing the patch in place into each image at np.random offsets (a copy into a slice of a tensor
that does not require grad, of a value that does), patch_attack with torch.utils.data.random_split,
nn.Parameter(torch.zeros(3, h, w), requires_grad=True) trained by SGD(momentum=0.8) against a
CrossEntropyLoss to the target class built by torch.zeros(..., dtype=torch.long).fill_(target),
and eval_patch (torch.logical_and of the hits with img_labels != target_class). Seeds are
torch.manual_seed and np.random.seed in both runs, so weights, splits, shuffles and patch offsets
agree."""
import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines
from test_uvadlc_simclr import make_rgb_images
from torchvision_models import torchvision_resnet

NORM_MEAN = np.array([0.485, 0.456, 0.406])
NORM_STD = np.array([0.229, 0.224, 0.225])


def adversarial(torch, init=None, target_class=2, num_epochs=2):
    nn = torch.nn
    F = nn.functional
    data = torch.utils.data
    device = torch.device("cpu")
    _, _, resnet18 = torchvision_resnet(torch)

    with captured_run(torch, 42) as out:
        np.random.seed(42)
        torch.manual_seed(42)
        imgs, labels = make_rgb_images(8, 32, seed=6)
        labels = labels * 3  # ten classes in the head, three of them present
        imgs = (imgs - NORM_MEAN[:, None, None].astype(np.float32)) / NORM_STD[:, None, None].astype(np.float32)
        dataset = data.TensorDataset(torch.tensor(imgs), torch.tensor(labels))
        data_loader = data.DataLoader(dataset, batch_size=8, shuffle=False, drop_last=False, num_workers=0)

        pretrained_model = resnet18(pretrained=False, num_classes=10, widths=(8, 8, 16, 16))
        pretrained_model = pretrained_model.to(device)
        result = {"init": {k: numpy_of(v) for k, v in pretrained_model.state_dict().items()}}

        # No gradients needed for the network
        pretrained_model.eval()
        for p in pretrained_model.parameters():
            p.requires_grad = False

        def eval_model(dataset_loader, img_func=None):
            tp, tp_5, counter = 0., 0., 0.
            for imgs, labels in dataset_loader:
                imgs = imgs.to(device)
                labels = labels.to(device)
                if img_func is not None:
                    imgs = img_func(imgs, labels)
                with torch.no_grad():
                    preds = pretrained_model(imgs)
                tp += (preds.argmax(dim=-1) == labels).sum()
                tp_5 += (preds.topk(5, dim=-1)[1] == labels[..., None]).any(dim=-1).sum()
                counter += preds.shape[0]
            acc = tp.float().item() / counter
            top5 = tp_5.float().item() / counter
            print(f"Top-1 error: {(100.0 * (1 - acc)):4.2f}%")
            print(f"Top-5 error: {(100.0 * (1 - top5)):4.2f}%")
            return acc, top5

        _ = eval_model(data_loader)

        def fast_gradient_sign_method(model, imgs, labels, epsilon=0.02):
            # Determine prediction of the model
            inp_imgs = imgs.clone().requires_grad_()
            preds = model(inp_imgs.to(device))
            preds = F.log_softmax(preds, dim=-1)
            # Calculate loss by NLL
            loss = -torch.gather(preds, 1, labels.to(device).unsqueeze(dim=-1))
            loss.sum().backward()
            # Update image to adversarial example as written above
            noise_grad = torch.sign(inp_imgs.grad.to(imgs.device))
            fake_imgs = imgs + epsilon * noise_grad
            fake_imgs.detach_()
            return fake_imgs, noise_grad

        exmp_batch, label_batch = next(iter(data_loader))
        adv_imgs, noise_grad = fast_gradient_sign_method(pretrained_model, exmp_batch, label_batch, epsilon=0.02)
        with torch.no_grad():
            adv_preds = pretrained_model(adv_imgs.to(device))
        _ = eval_model(data_loader, img_func=lambda x, y: fast_gradient_sign_method(pretrained_model, x, y,
                                                                                     epsilon=0.02)[0])

        TENSOR_MEANS, TENSOR_STD = torch.FloatTensor(NORM_MEAN)[:, None, None], torch.FloatTensor(NORM_STD)[:, None, None]

        def patch_forward(patch):
            # Map patch values from [-infty,infty] to ImageNet min and max
            patch = (torch.tanh(patch) + 1 - 2 * TENSOR_MEANS) / (2 * TENSOR_STD)
            return patch

        def place_patch(img, patch):
            for i in range(img.shape[0]):
                h_offset = np.random.randint(0, img.shape[2] - patch.shape[1] - 1)
                w_offset = np.random.randint(0, img.shape[3] - patch.shape[2] - 1)
                img[i, :, h_offset:h_offset + patch.shape[1], w_offset:w_offset + patch.shape[2]] = patch_forward(patch)
            return img

        def eval_patch(model, patch, val_loader, target_class):
            model.eval()
            tp, tp_5, counter = 0., 0., 0.
            with torch.no_grad():
                for img, img_labels in val_loader:
                    # For stability, place the patch at 4 random locations per image, and average the performance
                    for _ in range(4):
                        patch_img = place_patch(img, patch)
                        patch_img = patch_img.to(device)
                        img_labels = img_labels.to(device)
                        pred = model(patch_img)
                        # In the accuracy calculation, we need to exclude the images that are of our target class
                        # as we would not "fool" the model into predicting those
                        tp += torch.logical_and(pred.argmax(dim=-1) == target_class, img_labels != target_class).sum()
                        tp_5 += torch.logical_and((pred.topk(5, dim=-1)[1] == target_class).any(dim=-1),
                                                  img_labels != target_class).sum()
                        counter += (img_labels != target_class).sum()
            acc = tp / counter
            top5 = tp_5 / counter
            return acc, top5

        def patch_attack(model, target_class, patch_size=64, num_epochs=5):
            # Leave a small set of images out to check generalization
            train_set, val_set = torch.utils.data.random_split(dataset, [18, 6])
            train_loader = data.DataLoader(train_set, batch_size=6, shuffle=True, drop_last=True, num_workers=0)
            val_loader = data.DataLoader(val_set, batch_size=6, shuffle=False, drop_last=False, num_workers=0)

            # Create parameter and optimizer
            if not isinstance(patch_size, tuple):
                patch_size = (patch_size, patch_size)
            patch = nn.Parameter(torch.zeros(3, patch_size[0], patch_size[1]), requires_grad=True)
            optimizer = torch.optim.SGD([patch], lr=1e-1, momentum=0.8)
            loss_module = nn.CrossEntropyLoss()

            # Training loop
            losses = []
            for epoch in range(num_epochs):
                for img, _ in train_loader:
                    img = place_patch(img, patch)
                    img = img.to(device)
                    pred = model(img)
                    labels = torch.zeros(img.shape[0], device=pred.device, dtype=torch.long).fill_(target_class)
                    loss = loss_module(pred, labels)
                    optimizer.zero_grad()
                    loss.mean().backward()
                    optimizer.step()
                    losses.append(loss.item())

            # Final validation
            acc, top5 = eval_patch(model, patch, val_loader, target_class)

            return patch.data, {"acc": acc.item(), "top5": top5.item()}, losses

        patch, val_results, patch_losses = patch_attack(pretrained_model, target_class=target_class, patch_size=8,
                                                        num_epochs=num_epochs)
        print(f"Validation results for target class {target_class}: {val_results}")
    result.update(printed=printed_lines(out), noise=numpy_of(noise_grad), adv_preds=numpy_of(adv_preds),
                  patch=numpy_of(patch), patch_losses=patch_losses)
    return result


def test_uvadlc_adversarial_attacks():
    ref, got = compare_program(adversarial, rtol=1e-3, atol=1e-4)
    assert any(line.startswith("Validation results for target class 2") for line in got["printed"])
