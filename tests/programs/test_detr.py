"""facebookresearch/detr: the minimal DETR of its demo notebook (DETRdemo: a ResNet backbone
reached into layer by layer after `del self.backbone.fc`, a 1x1 conv, the stock nn.Transformer fed
(HW, N, C) sequences, learned row/col positional encodings built by repeat and cat, 100 object
queries from torch.rand, class and box heads with .sigmoid()), its detect() post-processing
(softmax(-1)[0, :, :-1], probas.max(-1).values > threshold, rescale_bboxes), and training as main.py
and engine.py do it with models/matcher.py's HungarianMatcher (torch.cdist(p=1), the generalized
IoU of util/box_ops.py, C.view(bs, q, -1).cpu().split(sizes, -1) handed to
scipy.optimize.linear_sum_assignment, torch.as_tensor of its NumPy answer) and models/detr.py's
SetCriterion (empty_weight buffer, target_classes[idx] = ..., cross entropy over transpose(1, 2)
with class weights, cardinality and class-error logging under no_grad, L1 and GIoU box losses with
torch.diag), AdamW with a separate backbone learning rate, clip_grad_norm_ and StepLR. The backbone
is a narrow ResNet-18 (tests/programs/torchvision_models.py) in place of a pretrained ResNet-50;
images are random arrays normalised as the demo's transform does."""
import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from
from torchvision_models import torchvision_resnet

scipy_optimize = pytest.importorskip("scipy.optimize")


def box_ops(torch):
    """util/box_ops.py (and torchvision.ops.box_area)."""

    def box_area(boxes):
        return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])

    def box_cxcywh_to_xyxy(x):
        x_c, y_c, w, h = x.unbind(-1)
        b = [(x_c - 0.5 * w), (y_c - 0.5 * h),
             (x_c + 0.5 * w), (y_c + 0.5 * h)]
        return torch.stack(b, dim=-1)

    # modified from torchvision to also return the union
    def box_iou(boxes1, boxes2):
        area1 = box_area(boxes1)
        area2 = box_area(boxes2)

        lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
        rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]

        wh = (rb - lt).clamp(min=0)  # [N,M,2]
        inter = wh[:, :, 0] * wh[:, :, 1]  # [N,M]

        union = area1[:, None] + area2 - inter

        iou = inter / union
        return iou, union

    def generalized_box_iou(boxes1, boxes2):
        # degenerate boxes gives inf / nan results
        # so do an early check
        assert (boxes1[:, 2:] >= boxes1[:, :2]).all()
        assert (boxes2[:, 2:] >= boxes2[:, :2]).all()
        iou, union = box_iou(boxes1, boxes2)

        lt = torch.min(boxes1[:, None, :2], boxes2[:, :2])
        rb = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])

        wh = (rb - lt).clamp(min=0)  # [N,M,2]
        area = wh[:, :, 0] * wh[:, :, 1]

        return iou - (area - union) / area

    return box_cxcywh_to_xyxy, generalized_box_iou


def detr_module(torch):
    nn, F = torch.nn, torch.nn.functional
    _, _, resnet18 = torchvision_resnet(torch)
    box_cxcywh_to_xyxy, generalized_box_iou = box_ops(torch)
    linear_sum_assignment = scipy_optimize.linear_sum_assignment

    class DETRdemo(nn.Module):
        """
        Demo DETR implementation.
        """
        def __init__(self, num_classes, hidden_dim=256, nheads=8,
                     num_encoder_layers=6, num_decoder_layers=6):
            super().__init__()

            # create ResNet-50 backbone (here a narrow ResNet-18, 32 output channels)
            self.backbone = resnet18(layers=(1, 1, 1, 1), widths=(8, 16, 16, 32))
            del self.backbone.fc

            # create conversion layer
            self.conv = nn.Conv2d(32, hidden_dim, 1)

            # create a default PyTorch transformer
            self.transformer = nn.Transformer(
                hidden_dim, nheads, num_encoder_layers, num_decoder_layers)

            # prediction heads, one extra class for predicting non-empty slots
            # note that in baseline DETR linear_bbox layer is 3-layer MLP
            self.linear_class = nn.Linear(hidden_dim, num_classes + 1)
            self.linear_bbox = nn.Linear(hidden_dim, 4)

            # output positional encodings (object queries)
            self.query_pos = nn.Parameter(torch.rand(100, hidden_dim))

            # spatial positional encodings
            # note that in baseline DETR we use sine positional encodings
            self.row_embed = nn.Parameter(torch.rand(50, hidden_dim // 2))
            self.col_embed = nn.Parameter(torch.rand(50, hidden_dim // 2))

        def forward(self, inputs):
            # propagate inputs through ResNet-50 up to avg-pool layer
            x = self.backbone.conv1(inputs)
            x = self.backbone.bn1(x)
            x = self.backbone.relu(x)
            x = self.backbone.maxpool(x)

            x = self.backbone.layer1(x)
            x = self.backbone.layer2(x)
            x = self.backbone.layer3(x)
            x = self.backbone.layer4(x)

            # convert from 2048 to 256 feature planes for the transformer
            h = self.conv(x)

            # construct positional encodings
            H, W = h.shape[-2:]
            pos = torch.cat([
                self.col_embed[:W].unsqueeze(0).repeat(H, 1, 1),
                self.row_embed[:H].unsqueeze(1).repeat(1, W, 1),
            ], dim=-1).flatten(0, 1).unsqueeze(1)

            # propagate through the transformer
            h = self.transformer(pos + 0.1 * h.flatten(2).permute(2, 0, 1),
                                 self.query_pos.unsqueeze(1)).transpose(0, 1)

            # finally project transformer outputs to class labels and bounding boxes
            return {'pred_logits': self.linear_class(h),
                    'pred_boxes': self.linear_bbox(h).sigmoid()}

    class HungarianMatcher(nn.Module):
        def __init__(self, cost_class: float = 1, cost_bbox: float = 1, cost_giou: float = 1):
            super().__init__()
            self.cost_class = cost_class
            self.cost_bbox = cost_bbox
            self.cost_giou = cost_giou
            assert cost_class != 0 or cost_bbox != 0 or cost_giou != 0, "all costs cant be 0"

        @torch.no_grad()
        def forward(self, outputs, targets):
            bs, num_queries = outputs["pred_logits"].shape[:2]

            # We flatten to compute the cost matrices in a batch
            out_prob = outputs["pred_logits"].flatten(0, 1).softmax(-1)  # [batch_size * num_queries, num_classes]
            out_bbox = outputs["pred_boxes"].flatten(0, 1)  # [batch_size * num_queries, 4]

            # Also concat the target labels and boxes
            tgt_ids = torch.cat([v["labels"] for v in targets])
            tgt_bbox = torch.cat([v["boxes"] for v in targets])

            # Compute the classification cost. Contrary to the loss, we don't use the NLL,
            # but approximate it in 1 - proba[target class].
            # The 1 is a constant that doesn't change the matching, it can be ommitted.
            cost_class = -out_prob[:, tgt_ids]

            # Compute the L1 cost between boxes
            cost_bbox = torch.cdist(out_bbox, tgt_bbox, p=1)

            # Compute the giou cost betwen boxes
            cost_giou = -generalized_box_iou(box_cxcywh_to_xyxy(out_bbox), box_cxcywh_to_xyxy(tgt_bbox))

            # Final cost matrix
            C = self.cost_bbox * cost_bbox + self.cost_class * cost_class + self.cost_giou * cost_giou
            C = C.view(bs, num_queries, -1).cpu()

            sizes = [len(v["boxes"]) for v in targets]
            indices = [linear_sum_assignment(c[i]) for i, c in enumerate(C.split(sizes, -1))]
            return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64)) for i, j in indices]

    @torch.no_grad()
    def accuracy(output, target, topk=(1,)):
        """Computes the precision@k for the specified values of k"""
        if target.numel() == 0:
            return [torch.zeros([], device=output.device)]
        maxk = max(topk)
        batch_size = target.size(0)

        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))

        res = []
        for k in topk:
            correct_k = correct[:k].view(-1).float().sum(0)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res

    class SetCriterion(nn.Module):
        def __init__(self, num_classes, matcher, weight_dict, eos_coef, losses):
            super().__init__()
            self.num_classes = num_classes
            self.matcher = matcher
            self.weight_dict = weight_dict
            self.eos_coef = eos_coef
            self.losses = losses
            empty_weight = torch.ones(self.num_classes + 1)
            empty_weight[-1] = self.eos_coef
            self.register_buffer('empty_weight', empty_weight)

        def loss_labels(self, outputs, targets, indices, num_boxes, log=True):
            assert 'pred_logits' in outputs
            src_logits = outputs['pred_logits']

            idx = self._get_src_permutation_idx(indices)
            target_classes_o = torch.cat([t["labels"][J] for t, (_, J) in zip(targets, indices)])
            target_classes = torch.full(src_logits.shape[:2], self.num_classes,
                                        dtype=torch.int64, device=src_logits.device)
            target_classes[idx] = target_classes_o

            loss_ce = F.cross_entropy(src_logits.transpose(1, 2), target_classes, self.empty_weight)
            losses = {'loss_ce': loss_ce}

            if log:
                # TODO this should probably be a separate loss, not hacked in this one here
                losses['class_error'] = 100 - accuracy(src_logits[idx], target_classes_o)[0]
            return losses

        @torch.no_grad()
        def loss_cardinality(self, outputs, targets, indices, num_boxes):
            pred_logits = outputs['pred_logits']
            device = pred_logits.device
            tgt_lengths = torch.as_tensor([len(v["labels"]) for v in targets], device=device)
            # Count the number of predictions that are NOT "no-object" (which is the last class)
            card_pred = (pred_logits.argmax(-1) != pred_logits.shape[-1] - 1).sum(1)
            card_err = F.l1_loss(card_pred.float(), tgt_lengths.float())
            losses = {'cardinality_error': card_err}
            return losses

        def loss_boxes(self, outputs, targets, indices, num_boxes):
            assert 'pred_boxes' in outputs
            idx = self._get_src_permutation_idx(indices)
            src_boxes = outputs['pred_boxes'][idx]
            target_boxes = torch.cat([t['boxes'][i] for t, (_, i) in zip(targets, indices)], dim=0)

            loss_bbox = F.l1_loss(src_boxes, target_boxes, reduction='none')

            losses = {}
            losses['loss_bbox'] = loss_bbox.sum() / num_boxes

            loss_giou = 1 - torch.diag(generalized_box_iou(
                box_cxcywh_to_xyxy(src_boxes),
                box_cxcywh_to_xyxy(target_boxes)))
            losses['loss_giou'] = loss_giou.sum() / num_boxes
            return losses

        def _get_src_permutation_idx(self, indices):
            # permute predictions following indices
            batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
            src_idx = torch.cat([src for (src, _) in indices])
            return batch_idx, src_idx

        def get_loss(self, loss, outputs, targets, indices, num_boxes, **kwargs):
            loss_map = {
                'labels': self.loss_labels,
                'cardinality': self.loss_cardinality,
                'boxes': self.loss_boxes,
            }
            assert loss in loss_map, f'do you really want to compute {loss} loss?'
            return loss_map[loss](outputs, targets, indices, num_boxes, **kwargs)

        def forward(self, outputs, targets):
            outputs_without_aux = {k: v for k, v in outputs.items() if k != 'aux_outputs'}

            # Retrieve the matching between the outputs of the last layer and the targets
            indices = self.matcher(outputs_without_aux, targets)

            # Compute the average number of target boxes accross all nodes, for normalization purposes
            num_boxes = sum(len(t["labels"]) for t in targets)
            num_boxes = torch.as_tensor([num_boxes], dtype=torch.float, device=next(iter(outputs.values())).device)
            num_boxes = torch.clamp(num_boxes / 1, min=1).item()

            # Compute all the requested losses
            losses = {}
            for loss in self.losses:
                losses.update(self.get_loss(loss, outputs, targets, indices, num_boxes))
            return losses, indices

    def rescale_bboxes(out_bbox, size):
        img_w, img_h = size
        b = box_cxcywh_to_xyxy(out_bbox)
        b = b * torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32)
        return b

    def detect(img, size, model, threshold):
        outputs = model(img)
        probas = outputs['pred_logits'].softmax(-1)[0, :, :-1]
        keep = probas.max(-1).values > threshold
        bboxes_scaled = rescale_bboxes(outputs['pred_boxes'][0, keep], size)
        return probas[keep], bboxes_scaled

    return DETRdemo, HungarianMatcher, SetCriterion, detect


def detr_program(torch, init=None, steps=3):
    DETRdemo, HungarianMatcher, SetCriterion, detect = detr_module(torch)
    NUM_CLASSES = 5
    torch.manual_seed(0)
    model = DETRdemo(num_classes=NUM_CLASSES, hidden_dim=32, nheads=4, num_encoder_layers=2, num_decoder_layers=2)
    result = {"nparams": sum(p.numel() for p in model.parameters()), "has_fc": hasattr(model.backbone, "fc")}
    start_from(torch, model, init, result)
    matcher = HungarianMatcher(cost_class=1, cost_bbox=5, cost_giou=2)
    weight_dict = {'loss_ce': 1, 'loss_bbox': 5, 'loss_giou': 2}
    criterion = SetCriterion(NUM_CLASSES, matcher=matcher, weight_dict=weight_dict, eos_coef=0.1,
                             losses=['labels', 'boxes', 'cardinality'])
    param_dicts = [
        {"params": [p for n, p in model.named_parameters() if "backbone" not in n and p.requires_grad]},
        {"params": [p for n, p in model.named_parameters() if "backbone" in n and p.requires_grad], "lr": 1e-5},
    ]
    optimizer = torch.optim.AdamW(param_dicts, lr=1e-4, weight_decay=1e-4)
    lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 2)

    rng = np.random.default_rng(0)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    logs, matches = [], []
    model.train()  # the transformer's dropout masks come from the seeded generator in both libraries
    for step in range(steps):
        images = ((rng.uniform(0, 1, (2, 64, 64, 3)) - mean) / std).transpose(0, 3, 1, 2).astype(np.float32)
        samples = torch.from_numpy(images)
        targets = []
        for n in (2, 3):
            cxcy = rng.uniform(0.3, 0.7, (n, 2))
            wh = rng.uniform(0.1, 0.3, (n, 2))
            targets.append({"labels": torch.from_numpy(rng.integers(0, NUM_CLASSES, n)),
                            "boxes": torch.from_numpy(np.concatenate([cxcy, wh], 1).astype(np.float32))})
        # the demo model takes one image at a time (its queries carry a batch of 1)
        per_image = [model(img[None]) for img in samples]
        outputs = {k: torch.cat([o[k] for o in per_image]) for k in per_image[0]}
        loss_dict, indices = criterion(outputs, targets)
        weight_dict = criterion.weight_dict
        losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)
        optimizer.zero_grad()
        losses.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        lr_scheduler.step()
        logs.append({k: v.item() for k, v in loss_dict.items()})
        matches.append([[numpy_of(i), numpy_of(j)] for i, j in indices])
    result.update(logs=logs, matches=matches, lrs=[g["lr"] for g in optimizer.param_groups])
    image = torch.from_numpy(((rng.uniform(0, 1, (1, 64, 48, 3)) - mean) / std).transpose(0, 3, 1, 2)
                             .astype(np.float32))
    model.eval()
    with torch.no_grad():
        scores, boxes = detect(image, (480, 640), model, threshold=0.2)
    result.update(scores=numpy_of(scores), boxes=numpy_of(boxes))
    result["state"] = {k: numpy_of(v) for k, v in model.state_dict().items()}
    return result


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")
def test_detr_demo_training_with_hungarian_matching():
    compare_program(detr_program)
