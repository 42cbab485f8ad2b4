"""torchvision.ops as the published detection programs reach into it (torchvision is not installed):
box_area, box_iou, generalized_box_iou, box_convert, generalized_box_iou_loss,
distance_box_iou_loss and sigmoid_focal_loss in torchvision's own torch code (their shared
reduction written once here), and nms / batched_nms. torchvision's nms is a
C++ kernel (torch.ops.torchvision.nms); here it is the same greedy algorithm written in torch ops
(boxes by descending score, each kept box suppressing the later ones whose IoU with it exceeds
iou_threshold), and batched_nms is torchvision's coordinate trick over it. Built for the library a
program runs on: `ops = torchvision_ops(torch)`, then `ops.nms(...)`."""
from types import SimpleNamespace


def torchvision_ops(torch):
    def _upcast(t):
        # Protects from numerical overflows in multiplications by upcasting to the equivalent higher type
        if t.is_floating_point():
            return t if t.dtype in (torch.float32, torch.float64) else t.float()
        else:
            return t if t.dtype in (torch.int32, torch.int64) else t.int()

    def _upcast_non_float(t):
        # Protects from numerical overflows in multiplications by upcasting to the equivalent higher type
        if t.dtype not in (torch.float32, torch.float64):
            return t.float()
        return t

    def box_area(boxes):
        boxes = _upcast(boxes)
        return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])

    def _box_inter_union(boxes1, boxes2):
        area1 = box_area(boxes1)
        area2 = box_area(boxes2)

        lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])  # [N,M,2]
        rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])  # [N,M,2]

        wh = _upcast(rb - lt).clamp(min=0)  # [N,M,2]
        inter = wh[:, :, 0] * wh[:, :, 1]  # [N,M]

        union = area1[:, None] + area2 - inter

        return inter, union

    def box_iou(boxes1, boxes2):
        inter, union = _box_inter_union(boxes1, boxes2)
        iou = inter / union
        return iou

    def generalized_box_iou(boxes1, boxes2):
        inter, union = _box_inter_union(boxes1, boxes2)
        iou = inter / union

        lti = torch.min(boxes1[:, None, :2], boxes2[:, :2])
        rbi = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])

        whi = _upcast(rbi - lti).clamp(min=0)  # [N,M,2]
        areai = whi[:, :, 0] * whi[:, :, 1]

        return iou - (areai - union) / areai

    def _box_cxcywh_to_xyxy(boxes):
        cx, cy, w, h = boxes.unbind(-1)
        x1 = cx - 0.5 * w
        y1 = cy - 0.5 * h
        x2 = cx + 0.5 * w
        y2 = cy + 0.5 * h
        return torch.stack((x1, y1, x2, y2), dim=-1)

    def _box_xyxy_to_cxcywh(boxes):
        x1, y1, x2, y2 = boxes.unbind(-1)
        cx = (x1 + x2) / 2
        cy = (y1 + y2) / 2
        w = x2 - x1
        h = y2 - y1
        return torch.stack((cx, cy, w, h), dim=-1)

    def _box_xywh_to_xyxy(boxes):
        x, y, w, h = boxes.unbind(-1)
        return torch.stack([x, y, x + w, y + h], dim=-1)

    def _box_xyxy_to_xywh(boxes):
        x1, y1, x2, y2 = boxes.unbind(-1)
        return torch.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)

    def box_convert(boxes, in_fmt, out_fmt):
        allowed_fmts = ("xyxy", "xywh", "cxcywh")
        if in_fmt not in allowed_fmts or out_fmt not in allowed_fmts:
            raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
        if in_fmt == out_fmt:
            return boxes.clone()
        if in_fmt != "xyxy" and out_fmt != "xyxy":
            # convert to xyxy and change in_fmt xyxy
            if in_fmt == "xywh":
                boxes = _box_xywh_to_xyxy(boxes)
            elif in_fmt == "cxcywh":
                boxes = _box_cxcywh_to_xyxy(boxes)
            in_fmt = "xyxy"
        if in_fmt == "xyxy":
            if out_fmt == "xywh":
                boxes = _box_xyxy_to_xywh(boxes)
            elif out_fmt == "cxcywh":
                boxes = _box_xyxy_to_cxcywh(boxes)
        elif out_fmt == "xyxy":
            if in_fmt == "xywh":
                boxes = _box_xywh_to_xyxy(boxes)
            elif in_fmt == "cxcywh":
                boxes = _box_cxcywh_to_xyxy(boxes)
        return boxes

    def nms(boxes, scores, iou_threshold):
        # the C++ kernel's greedy loop, in torch ops
        order = scores.argsort(descending=True)
        suppressed = torch.zeros(boxes.shape[0], dtype=torch.bool)
        iou = box_iou(boxes, boxes)
        keep = []
        for i in order.tolist():
            if suppressed[i]:
                continue
            keep.append(i)
            suppressed |= iou[i] > iou_threshold
        return torch.tensor(keep, dtype=torch.int64)

    def _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold):
        # strategy: in order to perform NMS independently per class,
        # we add an offset to all the boxes. The offset is dependent
        # only on the class idx, and is large enough so that boxes
        # from different classes do not overlap
        if boxes.numel() == 0:
            return torch.empty((0,), dtype=torch.int64, device=boxes.device)
        max_coordinate = boxes.max()
        offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
        boxes_for_nms = boxes + offsets[:, None]
        keep = nms(boxes_for_nms, scores, iou_threshold)
        return keep

    def _batched_nms_vanilla(boxes, scores, idxs, iou_threshold):
        # Based on Detectron2 implementation, just manually call nms() on each class independently
        keep_mask = torch.zeros_like(scores, dtype=torch.bool)
        for class_id in torch.unique(idxs):
            curr_indices = torch.where(idxs == class_id)[0]
            curr_keep_indices = nms(boxes[curr_indices], scores[curr_indices], iou_threshold)
            keep_mask[curr_indices[curr_keep_indices]] = True
        keep_indices = torch.where(keep_mask)[0]
        return keep_indices[scores[keep_indices].sort(descending=True)[1]]

    def batched_nms(boxes, scores, idxs, iou_threshold):
        # Benchmarks that drove the following thresholds are at
        # https://github.com/pytorch/vision/issues/1311#issuecomment-781329339
        if boxes.numel() > (4000 if boxes.device.type == "cpu" else 20000):
            return _batched_nms_vanilla(boxes, scores, idxs, iou_threshold)
        else:
            return _batched_nms_coordinate_trick(boxes, scores, idxs, iou_threshold)

    def _reduce(loss, reduction):
        # the reduction every torchvision.ops loss ends with
        if reduction == "none":
            pass
        elif reduction == "mean":
            loss = loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
        elif reduction == "sum":
            loss = loss.sum()
        else:
            raise ValueError(
                f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', 'sum'"
            )
        return loss

    def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction="none"):
        p = torch.sigmoid(inputs)
        ce_loss = torch.nn.functional.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        loss = ce_loss * ((1 - p_t) ** gamma)

        if alpha >= 0:
            alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
            loss = alpha_t * loss

        return _reduce(loss, reduction)

    def _loss_inter_union(boxes1, boxes2):
        x1, y1, x2, y2 = boxes1.unbind(dim=-1)
        x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)

        # Intersection keypoints
        xkis1 = torch.max(x1, x1g)
        ykis1 = torch.max(y1, y1g)
        xkis2 = torch.min(x2, x2g)
        ykis2 = torch.min(y2, y2g)

        intsctk = torch.zeros_like(x1)
        mask = (ykis2 > ykis1) & (xkis2 > xkis1)
        intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])
        unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk

        return intsctk, unionk

    def _enclosing_box(boxes1, boxes2):
        # the smallest box enclosing both, as generalized and distance IoU losses each compute it
        x1, y1, x2, y2 = boxes1.unbind(dim=-1)
        x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
        return torch.min(x1, x1g), torch.min(y1, y1g), torch.max(x2, x2g), torch.max(y2, y2g)

    def generalized_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
        boxes1 = _upcast_non_float(boxes1)
        boxes2 = _upcast_non_float(boxes2)
        intsctk, unionk = _loss_inter_union(boxes1, boxes2)
        iouk = intsctk / (unionk + eps)
        xc1, yc1, xc2, yc2 = _enclosing_box(boxes1, boxes2)

        area_c = (xc2 - xc1) * (yc2 - yc1)
        miouk = iouk - ((area_c - unionk) / (area_c + eps))

        loss = 1 - miouk

        return _reduce(loss, reduction)

    def _diou_iou_loss(boxes1, boxes2, eps=1e-7):
        intsct, union = _loss_inter_union(boxes1, boxes2)
        iou = intsct / (union + eps)
        xc1, yc1, xc2, yc2 = _enclosing_box(boxes1, boxes2)
        x1, y1, x2, y2 = boxes1.unbind(dim=-1)
        x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
        # The diagonal distance of the smallest enclosing box squared
        diagonal_distance_squared = ((xc2 - xc1) ** 2) + ((yc2 - yc1) ** 2) + eps
        # centers of boxes
        x_p = (x2 + x1) / 2
        y_p = (y2 + y1) / 2
        x_g = (x1g + x2g) / 2
        y_g = (y1g + y2g) / 2
        # The distance between boxes' centers squared.
        centers_distance_squared = ((x_p - x_g) ** 2) + ((y_p - y_g) ** 2)
        # The distance IoU is the IoU penalized by a normalized
        # distance between boxes' centers squared.
        loss = 1 - iou + (centers_distance_squared / diagonal_distance_squared)
        return loss, iou

    def distance_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
        boxes1 = _upcast_non_float(boxes1)
        boxes2 = _upcast_non_float(boxes2)

        loss, _ = _diou_iou_loss(boxes1, boxes2, eps)

        return _reduce(loss, reduction)

    return SimpleNamespace(box_area=box_area, box_iou=box_iou, generalized_box_iou=generalized_box_iou,
                           box_convert=box_convert, nms=nms, batched_nms=batched_nms,
                           generalized_box_iou_loss=generalized_box_iou_loss,
                           distance_box_iou_loss=distance_box_iou_loss, sigmoid_focal_loss=sigmoid_focal_loss)
