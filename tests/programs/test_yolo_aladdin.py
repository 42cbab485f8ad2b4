"""Aladdin Persson's YOLO from scratch (Machine-Learning-Collection, ML/Pytorch/object_detection), as
its scripts run with the VOC loaders replaced by boxes drawn with NumPy.

YOLOv1: utils.py's intersection_over_union (midpoint and corners), non_max_suppression and
mean_average_precision (Counter of ground truths, TP/FP with cumsum, torch.trapz),
convert_cellboxes / cellboxes_to_boxes and get_bboxes; dataset.py's label matrix (S x S x 30 filled
cell by cell); model.py's Yolov1 built from an architecture_config of tuples, "M" and repeat lists
(widths / 32, the 448x448 input down to S=7) with its CNNBlock
(conv/BatchNorm/LeakyReLU(0.1)) and fcs; loss.py's YoloLoss (MSELoss(reduction="sum"), best box
by torch.max over stacked IoUs, torch.sign * torch.sqrt(torch.abs(...)) on widths, written into
box_predictions[..., 2:4] in place); train.py's Adam loop.

YOLOv3: config.py's ANCHORS and scaled_anchors, dataset.py's three target grids filled by
iou_width_height and argsort(descending=True) over the nine anchors (ignore_iou_thresh gives -1),
model.py's YOLOv3 (CNNBlock with bn_act, ResidualBlock, ScalePrediction, route connections and
Upsample + cat) with channels / 8, loss.py's YoloLoss (BCEWithLogitsLoss on noobj cells, IoU-scaled
objectness, predictions[..., 1:3] = sigmoid in place on the model's output, log-space width
targets, CrossEntropyLoss on classes), train.py's loop with torch.cuda.amp.autocast() and
torch.cuda.amp.GradScaler() (both disabled on a CPU-only machine), and utils.py's cells_to_bboxes
and non_max_suppression on the trained model's output."""
from collections import Counter

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def yolo_utils(torch):
    def intersection_over_union(boxes_preds, boxes_labels, box_format="midpoint"):
        if box_format == "midpoint":
            box1_x1 = boxes_preds[..., 0:1] - boxes_preds[..., 2:3] / 2
            box1_y1 = boxes_preds[..., 1:2] - boxes_preds[..., 3:4] / 2
            box1_x2 = boxes_preds[..., 0:1] + boxes_preds[..., 2:3] / 2
            box1_y2 = boxes_preds[..., 1:2] + boxes_preds[..., 3:4] / 2
            box2_x1 = boxes_labels[..., 0:1] - boxes_labels[..., 2:3] / 2
            box2_y1 = boxes_labels[..., 1:2] - boxes_labels[..., 3:4] / 2
            box2_x2 = boxes_labels[..., 0:1] + boxes_labels[..., 2:3] / 2
            box2_y2 = boxes_labels[..., 1:2] + boxes_labels[..., 3:4] / 2

        if box_format == "corners":
            box1_x1 = boxes_preds[..., 0:1]
            box1_y1 = boxes_preds[..., 1:2]
            box1_x2 = boxes_preds[..., 2:3]
            box1_y2 = boxes_preds[..., 3:4]
            box2_x1 = boxes_labels[..., 0:1]
            box2_y1 = boxes_labels[..., 1:2]
            box2_x2 = boxes_labels[..., 2:3]
            box2_y2 = boxes_labels[..., 3:4]

        x1 = torch.max(box1_x1, box2_x1)
        y1 = torch.max(box1_y1, box2_y1)
        x2 = torch.min(box1_x2, box2_x2)
        y2 = torch.min(box1_y2, box2_y2)

        # .clamp(0) is for the case when they do not intersect
        intersection = (x2 - x1).clamp(0) * (y2 - y1).clamp(0)

        box1_area = abs((box1_x2 - box1_x1) * (box1_y2 - box1_y1))
        box2_area = abs((box2_x2 - box2_x1) * (box2_y2 - box2_y1))

        return intersection / (box1_area + box2_area - intersection + 1e-6)

    def non_max_suppression(bboxes, iou_threshold, threshold, box_format="corners"):
        assert type(bboxes) == list

        bboxes = [box for box in bboxes if box[1] > threshold]
        bboxes = sorted(bboxes, key=lambda x: x[1], reverse=True)
        bboxes_after_nms = []

        while bboxes:
            chosen_box = bboxes.pop(0)

            bboxes = [
                box
                for box in bboxes
                if box[0] != chosen_box[0]
                or intersection_over_union(
                    torch.tensor(chosen_box[2:]),
                    torch.tensor(box[2:]),
                    box_format=box_format,
                )
                < iou_threshold
            ]

            bboxes_after_nms.append(chosen_box)

        return bboxes_after_nms

    def mean_average_precision(pred_boxes, true_boxes, iou_threshold=0.5, box_format="midpoint", num_classes=20):
        # list storing all AP for respective classes
        average_precisions = []

        # used for numerical stability later on
        epsilon = 1e-6

        for c in range(num_classes):
            detections = []
            ground_truths = []

            for detection in pred_boxes:
                if detection[1] == c:
                    detections.append(detection)

            for true_box in true_boxes:
                if true_box[1] == c:
                    ground_truths.append(true_box)

            # find the amount of bboxes for each training example
            amount_bboxes = Counter([gt[0] for gt in ground_truths])

            for key, val in amount_bboxes.items():
                amount_bboxes[key] = torch.zeros(val)

            # sort by box probabilities which is index 2
            detections.sort(key=lambda x: x[2], reverse=True)
            TP = torch.zeros((len(detections)))
            FP = torch.zeros((len(detections)))
            total_true_bboxes = len(ground_truths)

            # If none exists for this class then we can safely skip
            if total_true_bboxes == 0:
                continue

            for detection_idx, detection in enumerate(detections):
                ground_truth_img = [bbox for bbox in ground_truths if bbox[0] == detection[0]]

                num_gts = len(ground_truth_img)  # noqa: F841 (as published)
                best_iou = 0

                for idx, gt in enumerate(ground_truth_img):
                    iou = intersection_over_union(
                        torch.tensor(detection[3:]),
                        torch.tensor(gt[3:]),
                        box_format=box_format,
                    )

                    if iou > best_iou:
                        best_iou = iou
                        best_gt_idx = idx

                if best_iou > iou_threshold:
                    # only detect ground truth detection once
                    if amount_bboxes[detection[0]][best_gt_idx] == 0:
                        # true positive and add this bounding box to seen
                        TP[detection_idx] = 1
                        amount_bboxes[detection[0]][best_gt_idx] = 1
                    else:
                        FP[detection_idx] = 1

                # if IOU is lower then the detection is a false positive
                else:
                    FP[detection_idx] = 1

            TP_cumsum = torch.cumsum(TP, dim=0)
            FP_cumsum = torch.cumsum(FP, dim=0)
            recalls = TP_cumsum / (total_true_bboxes + epsilon)
            precisions = torch.divide(TP_cumsum, (TP_cumsum + FP_cumsum + epsilon))
            precisions = torch.cat((torch.tensor([1]), precisions))
            recalls = torch.cat((torch.tensor([0]), recalls))
            # torch.trapz for numerical integration
            average_precisions.append(torch.trapz(precisions, recalls))

        return sum(average_precisions) / len(average_precisions)

    return intersection_over_union, non_max_suppression, mean_average_precision


def v1_boxes(rng, n_images, max_objects=3):
    """Per image, rows [class_label, x, y, w, h] (relative, as VOC's label files)."""
    images = []
    for _ in range(n_images):
        k = int(rng.integers(1, max_objects + 1))
        xy = rng.uniform(0.1, 0.9, (k, 2))
        wh = rng.uniform(0.05, 0.5, (k, 2))
        cls = rng.integers(0, 20, (k, 1))
        images.append([[int(c), float(x), float(y), float(w), float(h)]
                       for (c,), (x, y), (w, h) in zip(cls, xy, wh)])
    return images


def yolov1(torch, init=None, steps=3, batch_size=2, image_size=448):
    nn = torch.nn
    intersection_over_union, non_max_suppression, mean_average_precision = yolo_utils(torch)
    torch.manual_seed(123)

    # Tuple is structured by (kernel_size, filters, stride, padding); "M" is simply maxpooling with
    # stride 2x2 and kernel 2x2; a list holds tuples and then the number of repeats.
    # (the paper's widths / 32: 1024 filters become 32)
    architecture_config = [
        (7, 8, 2, 3),
        "M",
        (3, 16, 1, 1),
        "M",
        (1, 8, 1, 0),
        (3, 16, 1, 1),
        (1, 16, 1, 0),
        (3, 16, 1, 1),
        "M",
        [(1, 8, 1, 0), (3, 16, 1, 1), 2],
        (1, 16, 1, 0),
        (3, 32, 1, 1),
        "M",
        [(1, 16, 1, 0), (3, 32, 1, 1), 2],
        (3, 32, 1, 1),
        (3, 32, 2, 1),
        (3, 32, 1, 1),
        (3, 32, 1, 1),
    ]

    class CNNBlock(nn.Module):
        def __init__(self, in_channels, out_channels, **kwargs):
            super(CNNBlock, self).__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
            self.batchnorm = nn.BatchNorm2d(out_channels)
            self.leakyrelu = nn.LeakyReLU(0.1)

        def forward(self, x):
            return self.leakyrelu(self.batchnorm(self.conv(x)))

    class Yolov1(nn.Module):
        def __init__(self, in_channels=3, **kwargs):
            super(Yolov1, self).__init__()
            self.architecture = architecture_config
            self.in_channels = in_channels
            self.darknet = self._create_conv_layers(self.architecture)
            self.fcs = self._create_fcs(**kwargs)

        def forward(self, x):
            x = self.darknet(x)
            return self.fcs(torch.flatten(x, start_dim=1))

        def _create_conv_layers(self, architecture):
            layers = []
            in_channels = self.in_channels

            for x in architecture:
                if type(x) == tuple:
                    layers += [CNNBlock(in_channels, x[1], kernel_size=x[0], stride=x[2], padding=x[3])]
                    in_channels = x[1]

                elif type(x) == str:
                    layers += [nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2))]

                elif type(x) == list:
                    conv1 = x[0]
                    conv2 = x[1]
                    num_repeats = x[2]

                    for _ in range(num_repeats):
                        layers += [CNNBlock(in_channels, conv1[1], kernel_size=conv1[0], stride=conv1[2],
                                            padding=conv1[3])]
                        layers += [CNNBlock(conv1[1], conv2[1], kernel_size=conv2[0], stride=conv2[2],
                                            padding=conv2[3])]
                        in_channels = conv2[1]

            return nn.Sequential(*layers)

        def _create_fcs(self, split_size, num_boxes, num_classes):
            S, B, C = split_size, num_boxes, num_classes
            return nn.Sequential(
                nn.Flatten(),
                nn.Linear(32 * S * S, 496),
                nn.Dropout(0.0),
                nn.LeakyReLU(0.1),
                nn.Linear(496, S * S * (C + B * 5)),
            )

    class YoloLoss(nn.Module):
        """Calculate the loss for yolo (v1) model"""

        def __init__(self, S=7, B=2, C=20):
            super(YoloLoss, self).__init__()
            self.mse = nn.MSELoss(reduction="sum")
            self.S = S
            self.B = B
            self.C = C
            self.lambda_noobj = 0.5
            self.lambda_coord = 5

        def forward(self, predictions, target):
            # predictions are shaped (BATCH_SIZE, S*S(C+B*5) when inputted
            predictions = predictions.reshape(-1, self.S, self.S, self.C + self.B * 5)

            # Calculate IoU for the two predicted bounding boxes with target bbox
            iou_b1 = intersection_over_union(predictions[..., 21:25], target[..., 21:25])
            iou_b2 = intersection_over_union(predictions[..., 26:30], target[..., 21:25])
            ious = torch.cat([iou_b1.unsqueeze(0), iou_b2.unsqueeze(0)], dim=0)

            # Take the box with highest IoU out of the two prediction
            iou_maxes, bestbox = torch.max(ious, dim=0)
            exists_box = target[..., 20].unsqueeze(3)  # in paper this is Iobj_i

            # ======================== #
            #   FOR BOX COORDINATES    #
            # ======================== #
            box_predictions = exists_box * (
                (bestbox * predictions[..., 26:30] + (1 - bestbox) * predictions[..., 21:25])
            )
            box_targets = exists_box * target[..., 21:25]

            # Take sqrt of width, height of boxes to ensure that
            box_predictions[..., 2:4] = torch.sign(box_predictions[..., 2:4]) * torch.sqrt(
                torch.abs(box_predictions[..., 2:4] + 1e-6)
            )
            box_targets[..., 2:4] = torch.sqrt(box_targets[..., 2:4])

            box_loss = self.mse(
                torch.flatten(box_predictions, end_dim=-2),
                torch.flatten(box_targets, end_dim=-2),
            )

            # ==================== #
            #   FOR OBJECT LOSS    #
            # ==================== #
            pred_box = bestbox * predictions[..., 25:26] + (1 - bestbox) * predictions[..., 20:21]
            object_loss = self.mse(
                torch.flatten(exists_box * pred_box),
                torch.flatten(exists_box * target[..., 20:21]),
            )

            # ======================= #
            #   FOR NO OBJECT LOSS    #
            # ======================= #
            no_object_loss = self.mse(
                torch.flatten((1 - exists_box) * predictions[..., 20:21], start_dim=1),
                torch.flatten((1 - exists_box) * target[..., 20:21], start_dim=1),
            )
            no_object_loss += self.mse(
                torch.flatten((1 - exists_box) * predictions[..., 25:26], start_dim=1),
                torch.flatten((1 - exists_box) * target[..., 20:21], start_dim=1),
            )

            # ================== #
            #   FOR CLASS LOSS   #
            # ================== #
            class_loss = self.mse(
                torch.flatten(exists_box * predictions[..., :20], end_dim=-2),
                torch.flatten(exists_box * target[..., :20], end_dim=-2),
            )

            loss = (
                self.lambda_coord * box_loss  # first two rows in paper
                + object_loss  # third row in paper
                + self.lambda_noobj * no_object_loss  # forth row
                + class_loss  # fifth row
            )
            return loss

    def label_matrix_of(boxes, S=7, B=2, C=20):
        # dataset.py's VOCDataset.__getitem__ after the transform
        boxes = torch.tensor(boxes)
        label_matrix = torch.zeros((S, S, C + 5 * B))
        for box in boxes:
            class_label, x, y, width, height = box.tolist()
            class_label = int(class_label)
            # i,j represents the cell row and cell column
            i, j = int(S * y), int(S * x)
            x_cell, y_cell = S * x - j, S * y - i
            width_cell, height_cell = (width * S, height * S)
            # If no object already found for specific cell i,j
            if label_matrix[i, j, 20] == 0:
                # Set that there exists an object
                label_matrix[i, j, 20] = 1
                box_coordinates = torch.tensor([x_cell, y_cell, width_cell, height_cell])
                label_matrix[i, j, 21:25] = box_coordinates
                # Set one hot encoding for class_label
                label_matrix[i, j, class_label] = 1
        return label_matrix

    def convert_cellboxes(predictions, S=7):
        predictions = predictions.to("cpu")
        batch_size = predictions.shape[0]
        predictions = predictions.reshape(batch_size, 7, 7, 30)
        bboxes1 = predictions[..., 21:25]
        bboxes2 = predictions[..., 26:30]
        scores = torch.cat((predictions[..., 20].unsqueeze(0), predictions[..., 25].unsqueeze(0)), dim=0)
        best_box = scores.argmax(0).unsqueeze(-1)
        best_boxes = bboxes1 * (1 - best_box) + best_box * bboxes2
        cell_indices = torch.arange(7).repeat(batch_size, 7, 1).unsqueeze(-1)
        x = 1 / S * (best_boxes[..., :1] + cell_indices)
        y = 1 / S * (best_boxes[..., 1:2] + cell_indices.permute(0, 2, 1, 3))
        w_y = 1 / S * best_boxes[..., 2:4]
        converted_bboxes = torch.cat((x, y, w_y), dim=-1)
        predicted_class = predictions[..., :20].argmax(-1).unsqueeze(-1)
        best_confidence = torch.max(predictions[..., 20], predictions[..., 25]).unsqueeze(-1)
        converted_preds = torch.cat((predicted_class, best_confidence, converted_bboxes), dim=-1)
        return converted_preds

    def cellboxes_to_boxes(out, S=7):
        converted_pred = convert_cellboxes(out).reshape(out.shape[0], S * S, -1)
        converted_pred[..., 0] = converted_pred[..., 0].long()
        all_bboxes = []

        for ex_idx in range(out.shape[0]):
            bboxes = []

            for bbox_idx in range(S * S):
                bboxes.append([x.item() for x in converted_pred[ex_idx, bbox_idx, :]])
            all_bboxes.append(bboxes)

        return all_bboxes

    def get_bboxes(loader, model, iou_threshold, threshold, box_format="midpoint"):
        all_pred_boxes = []
        all_true_boxes = []

        # make sure model is in eval before get bboxes
        model.eval()
        train_idx = 0

        for batch_idx, (x, labels) in enumerate(loader):
            with torch.no_grad():
                predictions = model(x)

            batch_size = x.shape[0]
            true_bboxes = cellboxes_to_boxes(labels)
            bboxes = cellboxes_to_boxes(predictions)

            for idx in range(batch_size):
                nms_boxes = non_max_suppression(
                    bboxes[idx],
                    iou_threshold=iou_threshold,
                    threshold=threshold,
                    box_format=box_format,
                )

                for nms_box in nms_boxes:
                    all_pred_boxes.append([train_idx] + nms_box)

                for box in true_bboxes[idx]:
                    # many will get converted to 0 pred
                    if box[1] > threshold:
                        all_true_boxes.append([train_idx] + box)

                train_idx += 1

        model.train()
        return all_pred_boxes, all_true_boxes

    rng = np.random.default_rng(0)
    n_images = steps * batch_size
    images = rng.uniform(0, 1, (n_images, 3, image_size, image_size)).astype(np.float32)
    boxes = v1_boxes(rng, n_images)
    loader = []
    for b in range(0, n_images, batch_size):
        x = torch.from_numpy(images[b:b + batch_size])
        y = torch.stack([label_matrix_of(boxes[i]) for i in range(b, b + batch_size)])
        loader.append((x, y))

    model = Yolov1(split_size=7, num_boxes=2, num_classes=20)
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-5, weight_decay=0)
    loss_fn = YoloLoss()

    def train_fn(train_loader, model, optimizer, loss_fn):
        mean_loss = []
        for batch_idx, (x, y) in enumerate(train_loader):
            out = model(x)
            loss = loss_fn(out, y)
            mean_loss.append(loss.item())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return mean_loss

    losses = []
    for epoch in range(2):
        losses += train_fn(loader, model, optimizer, loss_fn)

    pred_boxes, target_boxes = get_bboxes(loader, model, iou_threshold=0.5, threshold=0.4)
    mean_avg_prec = mean_average_precision(pred_boxes, target_boxes, iou_threshold=0.5, box_format="midpoint")

    # the utilities on boxes whose scores and overlaps are far from every threshold: ground truth
    # boxes with noisy copies of themselves, scored
    truth = [[img, box[0], 1.0] + box[1:] for img, bs in enumerate(boxes) for box in bs]
    noisy = []
    for t in truth:
        for k in range(3):
            jitter = rng.uniform(-0.02, 0.02, 4) * (k + 1) * 3
            noisy.append([t[0], t[1], float(rng.uniform(0.45, 1.0))] + [float(v) for v in np.asarray(t[3:]) + jitter])
    per_image = [[p[1:] for p in noisy if p[0] == img] for img in range(n_images)]
    kept = [non_max_suppression(bs, iou_threshold=0.5, threshold=0.5, box_format="midpoint") for bs in per_image]
    kept_flat = [[img] + box for img, bs in enumerate(kept) for box in bs]
    result.update(
        losses=losses,
        labels=[numpy_of(y) for _, y in loader],
        params={k: numpy_of(v) for k, v in model.named_parameters()},
        n_pred_boxes=len(pred_boxes), n_true_boxes=len(target_boxes),
        true_boxes=np.array(target_boxes, dtype=np.float64),
        map_trained=float(mean_avg_prec),
        kept=np.array(kept_flat, dtype=np.float64), n_noisy=len(noisy),
        map_noisy=float(mean_average_precision(noisy, truth, iou_threshold=0.5)),
        map_kept=float(mean_average_precision(kept_flat, truth, iou_threshold=0.5)),
        iou_corners=numpy_of(intersection_over_union(torch.tensor(np.array([[0.0, 0, 2, 2], [1, 1, 3, 4]])),
                                                     torch.tensor(np.array([[1.0, 1, 3, 3], [0, 0, 2, 2]])),
                                                     box_format="corners")),
    )
    return result


def yolov3(torch, init=None, steps=3, batch_size=2, image_size=64, num_classes=4):
    nn = torch.nn
    intersection_over_union, non_max_suppression, _ = yolo_utils(torch)
    torch.manual_seed(0)

    # config.py
    DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
    IMAGE_SIZE = image_size
    NUM_CLASSES = num_classes
    S = [IMAGE_SIZE // 32, IMAGE_SIZE // 16, IMAGE_SIZE // 8]
    ANCHORS = [
        [(0.28, 0.22), (0.38, 0.48), (0.9, 0.78)],
        [(0.07, 0.15), (0.15, 0.11), (0.14, 0.29)],
        [(0.02, 0.03), (0.04, 0.07), (0.08, 0.06)],
    ]  # Note these have been rescaled to be between [0, 1]
    LEARNING_RATE = 1e-5
    WEIGHT_DECAY = 1e-4
    NMS_IOU_THRESH = 0.45

    # model.py (widths / 8)
    config = [
        (4, 3, 1),
        (8, 3, 2),
        ["B", 1],
        (16, 3, 2),
        ["B", 2],
        (32, 3, 2),
        ["B", 8],
        (64, 3, 2),
        ["B", 8],
        (128, 3, 2),
        ["B", 4],  # To this point is Darknet-53
        (64, 1, 1),
        (128, 3, 1),
        "S",
        (32, 1, 1),
        "U",
        (32, 1, 1),
        (64, 3, 1),
        "S",
        (16, 1, 1),
        "U",
        (16, 1, 1),
        (32, 3, 1),
        "S",
    ]

    class CNNBlock(nn.Module):
        def __init__(self, in_channels, out_channels, bn_act=True, **kwargs):
            super().__init__()
            self.conv = nn.Conv2d(in_channels, out_channels, bias=not bn_act, **kwargs)
            self.bn = nn.BatchNorm2d(out_channels)
            self.leaky = nn.LeakyReLU(0.1)
            self.use_bn_act = bn_act

        def forward(self, x):
            if self.use_bn_act:
                return self.leaky(self.bn(self.conv(x)))
            else:
                return self.conv(x)

    class ResidualBlock(nn.Module):
        def __init__(self, channels, use_residual=True, num_repeats=1):
            super().__init__()
            self.layers = nn.ModuleList()
            for repeat in range(num_repeats):
                self.layers += [
                    nn.Sequential(
                        CNNBlock(channels, channels // 2, kernel_size=1),
                        CNNBlock(channels // 2, channels, kernel_size=3, padding=1),
                    )
                ]

            self.use_residual = use_residual
            self.num_repeats = num_repeats

        def forward(self, x):
            for layer in self.layers:
                if self.use_residual:
                    x = x + layer(x)
                else:
                    x = layer(x)

            return x

    class ScalePrediction(nn.Module):
        def __init__(self, in_channels, num_classes):
            super().__init__()
            self.pred = nn.Sequential(
                CNNBlock(in_channels, 2 * in_channels, kernel_size=3, padding=1),
                CNNBlock(2 * in_channels, (num_classes + 5) * 3, bn_act=False, kernel_size=1),
            )
            self.num_classes = num_classes

        def forward(self, x):
            return (
                self.pred(x)
                .reshape(x.shape[0], 3, self.num_classes + 5, x.shape[2], x.shape[3])
                .permute(0, 1, 3, 4, 2)
            )

    class YOLOv3(nn.Module):
        def __init__(self, in_channels=3, num_classes=80):
            super().__init__()
            self.num_classes = num_classes
            self.in_channels = in_channels
            self.layers = self._create_conv_layers()

        def forward(self, x):
            outputs = []  # for each scale
            route_connections = []
            for layer in self.layers:
                if isinstance(layer, ScalePrediction):
                    outputs.append(layer(x))
                    continue

                x = layer(x)

                if isinstance(layer, ResidualBlock) and layer.num_repeats == 8:
                    route_connections.append(x)

                elif isinstance(layer, nn.Upsample):
                    x = torch.cat([x, route_connections[-1]], dim=1)
                    route_connections.pop()

            return outputs

        def _create_conv_layers(self):
            layers = nn.ModuleList()
            in_channels = self.in_channels

            for module in config:
                if isinstance(module, tuple):
                    out_channels, kernel_size, stride = module
                    layers.append(
                        CNNBlock(
                            in_channels,
                            out_channels,
                            kernel_size=kernel_size,
                            stride=stride,
                            padding=1 if kernel_size == 3 else 0,
                        )
                    )
                    in_channels = out_channels

                elif isinstance(module, list):
                    num_repeats = module[1]
                    layers.append(ResidualBlock(in_channels, num_repeats=num_repeats))

                elif isinstance(module, str):
                    if module == "S":
                        layers += [
                            ResidualBlock(in_channels, use_residual=False, num_repeats=1),
                            CNNBlock(in_channels, in_channels // 2, kernel_size=1),
                            ScalePrediction(in_channels // 2, num_classes=self.num_classes),
                        ]
                        in_channels = in_channels // 2

                    elif module == "U":
                        layers.append(nn.Upsample(scale_factor=2))
                        in_channels = in_channels * 3

            return layers

    # loss.py
    class YoloLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.mse = nn.MSELoss()
            self.bce = nn.BCEWithLogitsLoss()
            self.entropy = nn.CrossEntropyLoss()
            self.sigmoid = nn.Sigmoid()

            # Constants signifying how much to pay for each respective part of the loss
            self.lambda_class = 1
            self.lambda_noobj = 10
            self.lambda_obj = 1
            self.lambda_box = 10

        def forward(self, predictions, target, anchors):
            # Check where obj and noobj (we ignore if target == -1)
            obj = target[..., 0] == 1  # in paper this is Iobj_i
            noobj = target[..., 0] == 0  # in paper this is Inoobj_i

            # ======================= #
            #   FOR NO OBJECT LOSS    #
            # ======================= #

            no_object_loss = self.bce(
                (predictions[..., 0:1][noobj]), (target[..., 0:1][noobj]),
            )

            # ==================== #
            #   FOR OBJECT LOSS    #
            # ==================== #

            anchors = anchors.reshape(1, 3, 1, 1, 2)
            box_preds = torch.cat([self.sigmoid(predictions[..., 1:3]), torch.exp(predictions[..., 3:5]) * anchors],
                                  dim=-1)
            ious = intersection_over_union(box_preds[obj], target[..., 1:5][obj]).detach()
            object_loss = self.mse(self.sigmoid(predictions[..., 0:1][obj]), ious * target[..., 0:1][obj])

            # ======================== #
            #   FOR BOX COORDINATES    #
            # ======================== #

            predictions[..., 1:3] = self.sigmoid(predictions[..., 1:3])  # x,y coordinates
            target[..., 3:5] = torch.log(
                (1e-16 + target[..., 3:5] / anchors)
            )  # width, height coordinates
            box_loss = self.mse(predictions[..., 1:5][obj], target[..., 1:5][obj])

            # ================== #
            #   FOR CLASS LOSS   #
            # ================== #

            class_loss = self.entropy(
                (predictions[..., 5:][obj]), (target[..., 5][obj].long()),
            )

            return (
                self.lambda_box * box_loss
                + self.lambda_obj * object_loss
                + self.lambda_noobj * no_object_loss
                + self.lambda_class * class_loss
            )

    # utils.py
    def iou_width_height(boxes1, boxes2):
        intersection = torch.min(boxes1[..., 0], boxes2[..., 0]) * torch.min(boxes1[..., 1], boxes2[..., 1])
        union = boxes1[..., 0] * boxes1[..., 1] + boxes2[..., 0] * boxes2[..., 1] - intersection
        return intersection / union

    def cells_to_bboxes(predictions, anchors, S, is_preds=True):
        BATCH_SIZE = predictions.shape[0]
        num_anchors = len(anchors)
        box_predictions = predictions[..., 1:5]
        if is_preds:
            anchors = anchors.reshape(1, len(anchors), 1, 1, 2)
            box_predictions[..., 0:2] = torch.sigmoid(box_predictions[..., 0:2])
            box_predictions[..., 2:] = torch.exp(box_predictions[..., 2:]) * anchors
            scores = torch.sigmoid(predictions[..., 0:1])
            best_class = torch.argmax(predictions[..., 5:], dim=-1).unsqueeze(-1)
        else:
            scores = predictions[..., 0:1]
            best_class = predictions[..., 5:6]

        cell_indices = (
            torch.arange(S)
            .repeat(predictions.shape[0], 3, S, 1)
            .unsqueeze(-1)
            .to(predictions.device)
        )
        x = 1 / S * (box_predictions[..., 0:1] + cell_indices)
        y = 1 / S * (box_predictions[..., 1:2] + cell_indices.permute(0, 1, 3, 2, 4))
        w_h = 1 / S * box_predictions[..., 2:4]
        converted_bboxes = torch.cat((best_class, scores, x, y, w_h), dim=-1).reshape(BATCH_SIZE, num_anchors * S * S,
                                                                                     6)
        return converted_bboxes.tolist()

    # dataset.py's YOLODataset.__getitem__ after the transform
    anchors_all = torch.tensor(ANCHORS[0] + ANCHORS[1] + ANCHORS[2])  # for all 3 scales
    num_anchors = anchors_all.shape[0]
    num_anchors_per_scale = num_anchors // 3
    ignore_iou_thresh = 0.5

    def targets_of(bboxes):
        # Below assumes 3 scale predictions (as paper) and same num of anchors per scale
        targets = [torch.zeros((num_anchors // 3, S, S, 6)) for S in globals_S]
        for box in bboxes:
            iou_anchors = iou_width_height(torch.tensor(box[2:4]), anchors_all)
            anchor_indices = iou_anchors.argsort(descending=True, dim=0)
            x, y, width, height, class_label = box
            has_anchor = [False] * 3  # each scale should have one anchor
            for anchor_idx in anchor_indices:
                scale_idx = anchor_idx // num_anchors_per_scale
                anchor_on_scale = anchor_idx % num_anchors_per_scale
                S = globals_S[scale_idx]
                i, j = int(S * y), int(S * x)  # which cell
                anchor_taken = targets[scale_idx][anchor_on_scale, i, j, 0]
                if not anchor_taken and not has_anchor[scale_idx]:
                    targets[scale_idx][anchor_on_scale, i, j, 0] = 1
                    x_cell, y_cell = S * x - j, S * y - i  # both between [0,1]
                    width_cell, height_cell = (width * S, height * S)  # can be greater than 1 since it's relative to cell
                    box_coordinates = torch.tensor([x_cell, y_cell, width_cell, height_cell])
                    targets[scale_idx][anchor_on_scale, i, j, 1:5] = box_coordinates
                    targets[scale_idx][anchor_on_scale, i, j, 5] = int(class_label)
                    has_anchor[scale_idx] = True

                elif not anchor_taken and iou_anchors[anchor_idx] > ignore_iou_thresh:
                    targets[scale_idx][anchor_on_scale, i, j, 0] = -1  # ignore prediction
        return tuple(targets)

    globals_S = S
    rng = np.random.default_rng(3)
    n_images = steps * batch_size
    images = rng.uniform(0, 1, (n_images, 3, IMAGE_SIZE, IMAGE_SIZE)).astype(np.float32)
    # albumentations' yolo format: [x, y, w, h, class_label]
    samples = []
    for _ in range(n_images):
        k = int(rng.integers(2, 5))
        xy = rng.uniform(0.05, 0.95, (k, 2))
        wh = rng.uniform(0.02, 0.6, (k, 2))
        cls = rng.integers(0, NUM_CLASSES, k)
        samples.append([[float(a), float(b), float(w), float(h), float(c)] for (a, b), (w, h), c in zip(xy, wh, cls)])

    def loader():
        for b in range(0, n_images, batch_size):
            per_image = [targets_of(samples[i]) for i in range(b, b + batch_size)]
            y = [torch.stack([t[s] for t in per_image]) for s in range(3)]
            yield torch.from_numpy(images[b:b + batch_size]), y

    model = YOLOv3(num_classes=NUM_CLASSES).to(DEVICE)
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    loss_fn = YoloLoss()
    scaler = torch.cuda.amp.GradScaler()
    scaled_anchors = (
        torch.tensor(ANCHORS) * torch.tensor(S).unsqueeze(1).unsqueeze(1).repeat(1, 3, 2)
    ).to(DEVICE)

    def train_fn(train_loader, model, optimizer, loss_fn, scaler, scaled_anchors):
        losses = []
        targets_seen = []
        for batch_idx, (x, y) in enumerate(train_loader):
            x = x.to(DEVICE)
            y0, y1, y2 = (
                y[0].to(DEVICE),
                y[1].to(DEVICE),
                y[2].to(DEVICE),
            )
            targets_seen.append([numpy_of(t) for t in (y0, y1, y2)])

            with torch.cuda.amp.autocast():
                out = model(x)
                loss = (
                    loss_fn(out[0], y0, scaled_anchors[0])
                    + loss_fn(out[1], y1, scaled_anchors[1])
                    + loss_fn(out[2], y2, scaled_anchors[2])
                )

            losses.append(loss.item())
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

            # update progress bar
            mean_loss = sum(losses) / len(losses)  # noqa: F841 (as published)
        return losses, targets_seen

    losses, targets_seen = [], []
    for epoch in range(2):
        epoch_losses, seen = train_fn(loader(), model, optimizer, loss_fn, scaler, scaled_anchors)
        losses += epoch_losses
        targets_seen += seen

    # utils.py's plot_couple_examples without the plot: boxes of the first image after NMS
    model.eval()
    x, _ = next(loader())
    with torch.no_grad():
        out = model(x)
        bboxes = [[] for _ in range(x.shape[0])]
        for i in range(3):
            batch_size, A, S_i, _, _ = out[i].shape
            anchor = scaled_anchors[i]
            boxes_scale_i = cells_to_bboxes(out[i], anchor, S=S_i, is_preds=True)
            for idx, (box) in enumerate(boxes_scale_i):
                bboxes[idx] += box
    model.train()
    scores = np.array([b[1] for b in bboxes[0]])
    threshold = float(np.quantile(scores, 0.9))  # a score level that keeps the top tenth
    nms_boxes = non_max_suppression(bboxes[0], iou_threshold=NMS_IOU_THRESH, threshold=threshold,
                                    box_format="midpoint")
    result.update(
        losses=losses, targets=targets_seen,
        params={k: numpy_of(v) for k, v in model.named_parameters()},
        scaled_anchors=numpy_of(scaled_anchors), scaler_enabled=scaler.is_enabled(),
        n_boxes=len(bboxes[0]), nms_boxes=np.array(nms_boxes, dtype=np.float64),
    )
    return result


def test_yolov1_loss_nms_and_map():
    ref, got = compare_program(yolov1, rtol=1e-3, atol=1e-4)
    assert 0 < ref["map_kept"] <= 1 and ref["map_noisy"] < ref["map_kept"] + 1e-6
    # NMS keeps about one box per object out of its three noisy copies
    assert len(ref["kept"]) < ref["n_noisy"] and ref["n_true_boxes"] > 0


def test_yolov3_anchors_loss_and_nms():
    ref, got = compare_program(yolov3, rtol=1e-3, atol=1e-4)
    assert ref["scaler_enabled"] is False and len(ref["losses"]) == 6
    # every target grid marks objects (1) and, for overlapping anchors, ignored cells (-1)
    marks = np.concatenate([t[..., 0].ravel() for step in ref["targets"] for t in step])
    assert {0.0, 1.0} <= set(np.unique(marks))
