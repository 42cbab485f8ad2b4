"""Ultralytics YOLOv5's training loss and inference post-processing (utils/loss.py, utils/metrics.py,
utils/general.py, models/yolo.py) with torchvision.ops standing in as tests/programs/torchvision_ops.py
(torchvision is not installed): the Detect head (per-level 1x1 convs, view/permute to
(bs, na, ny, nx, no), _make_grid with meshgrid(indexing='ij') and expand, the sigmoid decode with
split((2, 2, nc + 1), 4) at inference), anchors divided by the strides as Model.__init__ does,
ComputeLoss (build_targets: targets repeated per anchor, the anchor-ratio filter torch.max(r, 1 / r),
the neighbouring-cell offsets from ((gxy % 1 < g) & (gxy > 1)).T, torch.stack of boolean masks, the
indices' clamp_ on views of gij.T; the loss: advanced indexing pi[b, a, gj, gi], bbox_iou with CIoU,
the objectness target written tobj[b, a, gj, gi] = iou, smooth_BCE targets written by
t[range(n), tcls[i]], FocalLoss wrapping BCEWithLogitsLoss(pos_weight) whose reduction it sets to
'none'), SGD with nesterov in three parameter groups as train.py builds them, and
non_max_suppression (xywh2xyxy, the class offsets and torchvision.ops.nms, multi_label via
nonzero(as_tuple=False).T, merge-NMS by box_iou weights). Then torchvision.ops' generalized and
distance IoU losses and batched_nms (both of its strategies) on boxes drawn with NumPy."""
import math

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from
from torchvision_ops import torchvision_ops


def yolov5_utils(torch):
    nn = torch.nn
    torchvision_ops_ = torchvision_ops(torch)

    def smooth_BCE(eps=0.1):  # https://github.com/ultralytics/yolov3/issues/238#issuecomment-598028441
        # return positive, negative label smoothing BCE targets
        return 1.0 - 0.5 * eps, 0.5 * eps

    class FocalLoss(nn.Module):
        # Wraps focal loss around existing loss_fcn(), i.e. criteria = FocalLoss(nn.BCEWithLogitsLoss(), gamma=1.5)
        def __init__(self, loss_fcn, gamma=1.5, alpha=0.25):
            super().__init__()
            self.loss_fcn = loss_fcn  # must be nn.BCEWithLogitsLoss()
            self.gamma = gamma
            self.alpha = alpha
            self.reduction = loss_fcn.reduction
            self.loss_fcn.reduction = 'none'  # required to apply FL to each element

        def forward(self, pred, true):
            loss = self.loss_fcn(pred, true)
            # p_t = torch.exp(-loss)
            # loss *= self.alpha * (1.000001 - p_t) ** self.gamma  # non-zero power for gradient stability

            # TF implementation https://github.com/tensorflow/addons/blob/v0.7.1/tensorflow_addons/losses/focal_loss.py
            pred_prob = torch.sigmoid(pred)  # prob from logits
            p_t = true * pred_prob + (1 - true) * (1 - pred_prob)
            alpha_factor = true * self.alpha + (1 - true) * (1 - self.alpha)
            modulating_factor = (1.0 - p_t) ** self.gamma
            loss *= alpha_factor * modulating_factor

            if self.reduction == 'mean':
                return loss.mean()
            elif self.reduction == 'sum':
                return loss.sum()
            else:  # 'none'
                return loss

    def bbox_iou(box1, box2, xywh=True, GIoU=False, DIoU=False, CIoU=False, eps=1e-7):
        # Returns Intersection over Union (IoU) of box1(1,4) to box2(n,4)

        # Get the coordinates of bounding boxes
        if xywh:  # transform from xywh to xyxy
            (x1, y1, w1, h1), (x2, y2, w2, h2) = box1.chunk(4, -1), box2.chunk(4, -1)
            w1_, h1_, w2_, h2_ = w1 / 2, h1 / 2, w2 / 2, h2 / 2
            b1_x1, b1_x2, b1_y1, b1_y2 = x1 - w1_, x1 + w1_, y1 - h1_, y1 + h1_
            b2_x1, b2_x2, b2_y1, b2_y2 = x2 - w2_, x2 + w2_, y2 - h2_, y2 + h2_
        else:  # x1, y1, x2, y2 = box1
            b1_x1, b1_y1, b1_x2, b1_y2 = box1.chunk(4, -1)
            b2_x1, b2_y1, b2_x2, b2_y2 = box2.chunk(4, -1)
            w1, h1 = b1_x2 - b1_x1, (b1_y2 - b1_y1).clamp(eps)
            w2, h2 = b2_x2 - b2_x1, (b2_y2 - b2_y1).clamp(eps)

        # Intersection area
        inter = (b1_x2.minimum(b2_x2) - b1_x1.maximum(b2_x1)).clamp(0) * \
                (b1_y2.minimum(b2_y2) - b1_y1.maximum(b2_y1)).clamp(0)

        # Union Area
        union = w1 * h1 + w2 * h2 - inter + eps

        # IoU
        iou = inter / union
        if CIoU or DIoU or GIoU:
            cw = b1_x2.maximum(b2_x2) - b1_x1.minimum(b2_x1)  # convex (smallest enclosing box) width
            ch = b1_y2.maximum(b2_y2) - b1_y1.minimum(b2_y1)  # convex height
            if CIoU or DIoU:  # Distance or Complete IoU https://arxiv.org/abs/1911.08287v1
                c2 = cw ** 2 + ch ** 2 + eps  # convex diagonal squared
                rho2 = ((b2_x1 + b2_x2 - b1_x1 - b1_x2) ** 2 + (b2_y1 + b2_y2 - b1_y1 - b1_y2) ** 2) / 4  # center dist ** 2
                if CIoU:  # https://github.com/Zzh-tju/DIoU-SSD-pytorch/blob/master/utils/box/box_utils.py#L47
                    v = (4 / math.pi ** 2) * (torch.atan(w2 / h2) - torch.atan(w1 / h1)).pow(2)
                    with torch.no_grad():
                        alpha = v / (v - iou + (1 + eps))
                    return iou - (rho2 / c2 + v * alpha)  # CIoU
                return iou - rho2 / c2  # DIoU
            c_area = cw * ch + eps  # convex area
            return iou - (c_area - union) / c_area  # GIoU https://arxiv.org/pdf/1902.09630.pdf
        return iou  # IoU

    def box_iou(box1, box2, eps=1e-7):
        # inter(N,M) = (rb(N,M,2) - lt(N,M,2)).clamp(0).prod(2)
        (a1, a2), (b1, b2) = box1.unsqueeze(1).chunk(2, 2), box2.unsqueeze(0).chunk(2, 2)
        inter = (torch.min(a2, b2) - torch.max(a1, b1)).clamp(0).prod(2)

        # IoU = inter / (area1 + area2 - inter)
        return inter / ((a2 - a1).prod(2) + (b2 - b1).prod(2) - inter + eps)

    def xywh2xyxy(x):
        # Convert nx4 boxes from [x, y, w, h] to [x1, y1, x2, y2] where xy1=top-left, xy2=bottom-right
        y = x.clone() if isinstance(x, torch.Tensor) else np.copy(x)
        y[:, 0] = x[:, 0] - x[:, 2] / 2  # top left x
        y[:, 1] = x[:, 1] - x[:, 3] / 2  # top left y
        y[:, 2] = x[:, 0] + x[:, 2] / 2  # bottom right x
        y[:, 3] = x[:, 1] + x[:, 3] / 2  # bottom right y
        return y

    def non_max_suppression(prediction, conf_thres=0.25, iou_thres=0.45, classes=None, agnostic=False,
                            multi_label=False, labels=(), max_det=300, merge=False):
        """Non-Maximum Suppression (NMS) on inference results to reject overlapping detections

        Returns:
             list of detections, on (n,6) tensor per image [xyxy, conf, cls]
        """
        bs = prediction.shape[0]  # batch size
        nc = prediction.shape[2] - 5  # number of classes
        xc = prediction[..., 4] > conf_thres  # candidates

        # Checks
        assert 0 <= conf_thres <= 1, f'Invalid Confidence threshold {conf_thres}, valid values are between 0.0 and 1.0'
        assert 0 <= iou_thres <= 1, f'Invalid IoU {iou_thres}, valid values are between 0.0 and 1.0'

        # Settings
        max_wh = 7680  # (pixels) maximum box width and height
        max_nms = 30000  # maximum number of boxes into torchvision.ops.nms()
        redundant = True  # require redundant detections
        multi_label &= nc > 1  # multiple labels per box (adds 0.5ms/img)

        output = [torch.zeros((0, 6), device=prediction.device)] * bs
        for xi, x in enumerate(prediction):  # image index, image inference
            # Apply constraints
            x = x[xc[xi]]  # confidence

            # If none remain process next image
            if not x.shape[0]:
                continue

            # Compute conf
            x[:, 5:] *= x[:, 4:5]  # conf = obj_conf * cls_conf

            # Box (center x, center y, width, height) to (x1, y1, x2, y2)
            box = xywh2xyxy(x[:, :4])

            # Detections matrix nx6 (xyxy, conf, cls)
            if multi_label:
                i, j = (x[:, 5:] > conf_thres).nonzero(as_tuple=False).T
                x = torch.cat((box[i], x[i, j + 5, None], j[:, None].float()), 1)
            else:  # best class only
                conf, j = x[:, 5:].max(1, keepdim=True)
                x = torch.cat((box, conf, j.float()), 1)[conf.view(-1) > conf_thres]

            # Filter by class
            if classes is not None:
                x = x[(x[:, 5:6] == torch.tensor(classes, device=x.device)).any(1)]

            # Check shape
            n = x.shape[0]  # number of boxes
            if not n:  # no boxes
                continue
            elif n > max_nms:  # excess boxes
                x = x[x[:, 4].argsort(descending=True)[:max_nms]]  # sort by confidence

            # Batched NMS
            c = x[:, 5:6] * (0 if agnostic else max_wh)  # classes
            boxes, scores = x[:, :4] + c, x[:, 4]  # boxes (offset by class), scores
            i = torchvision_ops_.nms(boxes, scores, iou_thres)  # NMS
            if i.shape[0] > max_det:  # limit detections
                i = i[:max_det]
            if merge and (1 < n < 3E3):  # Merge NMS (boxes merged using weighted mean)
                # update boxes as boxes(i,4) = weights(i,n) * boxes(n,4)
                iou = box_iou(boxes[i], boxes) > iou_thres  # iou matrix
                weights = iou * scores[None]  # box weights
                x[i, :4] = torch.mm(weights, x[:, :4]).float() / weights.sum(1, keepdim=True)  # merged boxes
                if redundant:
                    i = i[iou.sum(1) > 1]  # require redundancy

            output[xi] = x[i]

        return output

    return dict(smooth_BCE=smooth_BCE, FocalLoss=FocalLoss, bbox_iou=bbox_iou, box_iou=box_iou,
                non_max_suppression=non_max_suppression)


def yolov5_model(torch, nc, anchors, ch_widths=(8, 16, 32)):
    nn = torch.nn

    class Detect(nn.Module):
        # YOLOv5 Detect head for detection models
        stride = None  # strides computed during build
        dynamic = False  # force grid reconstruction

        def __init__(self, nc=80, anchors=(), ch=(), inplace=True):  # detection layer
            super().__init__()
            self.nc = nc  # number of classes
            self.no = nc + 5  # number of outputs per anchor
            self.nl = len(anchors)  # number of detection layers
            self.na = len(anchors[0]) // 2  # number of anchors
            self.grid = [torch.empty(0) for _ in range(self.nl)]  # init grid
            self.anchor_grid = [torch.empty(0) for _ in range(self.nl)]  # init anchor grid
            self.register_buffer('anchors', torch.tensor(anchors).float().view(self.nl, -1, 2))  # shape(nl,na,2)
            self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv
            self.inplace = inplace  # use inplace ops (e.g. slice assignment)

        def forward(self, x):
            z = []  # inference output
            for i in range(self.nl):
                x[i] = self.m[i](x[i])  # conv
                bs, _, ny, nx = x[i].shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
                x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()

                if not self.training:  # inference
                    if self.dynamic or self.grid[i].shape[2:4] != x[i].shape[2:4]:
                        self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)

                    xy, wh, conf = x[i].sigmoid().split((2, 2, self.nc + 1), 4)
                    xy = (xy * 2 + self.grid[i]) * self.stride[i]  # xy
                    wh = (wh * 2) ** 2 * self.anchor_grid[i]  # wh
                    y = torch.cat((xy, wh, conf), 4)
                    z.append(y.view(bs, self.na * nx * ny, self.no))

            return x if self.training else (torch.cat(z, 1), x)

        def _make_grid(self, nx=20, ny=20, i=0):
            d = self.anchors[i].device
            t = self.anchors[i].dtype
            shape = 1, self.na, ny, nx, 2  # grid shape
            y, x = torch.arange(ny, device=d, dtype=t), torch.arange(nx, device=d, dtype=t)
            yv, xv = torch.meshgrid(y, x, indexing='ij')
            grid = torch.stack((xv, yv), 2).expand(shape) - 0.5  # add grid offset, i.e. y = 2.0 * x - 0.5
            anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
            return grid, anchor_grid

    class Conv(nn.Module):
        # Standard convolution with args(ch_in, ch_out, kernel, stride, padding, groups, dilation, activation)
        default_act = nn.SiLU()  # default activation

        def __init__(self, c1, c2, k=1, s=1, p=None, g=1, d=1, act=True):
            super().__init__()
            self.conv = nn.Conv2d(c1, c2, k, s, k // 2 if p is None else p, groups=g, dilation=d, bias=False)
            self.bn = nn.BatchNorm2d(c2)
            self.act = self.default_act if act is True else act if isinstance(act, nn.Module) else nn.Identity()

        def forward(self, x):
            return self.act(self.bn(self.conv(x)))

    class TinyYolo(nn.Module):
        """A backbone of strided Convs giving P3/8, P4/16 and P5/32 to YOLOv5's Detect head."""

        def __init__(self, nc, anchors):
            super().__init__()
            c3, c4, c5 = ch_widths
            self.stem = nn.Sequential(Conv(3, 4, 3, 2), Conv(4, 8, 3, 2), Conv(8, c3, 3, 2))
            self.p4 = Conv(c3, c4, 3, 2)
            self.p5 = Conv(c4, c5, 3, 2)
            self.model = nn.ModuleList([self.stem, self.p4, self.p5, Detect(nc, anchors, (c3, c4, c5))])
            m = self.model[-1]  # Detect()
            m.stride = torch.tensor([8.0, 16.0, 32.0])
            m.anchors /= m.stride.view(-1, 1, 1)
            self.stride = m.stride
            self._initialize_biases()

        def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
            m = self.model[-1]  # Detect() module
            for mi, s in zip(m.m, m.stride):  # from
                b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
                b.data[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
                b.data[:, 5:5 + m.nc] += math.log(0.6 / (m.nc - 0.99999)) if cf is None else torch.log(cf / cf.sum())
                mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

        def forward(self, x):
            p3 = self.stem(x)
            p4 = self.p4(p3)
            p5 = self.p5(p4)
            return self.model[-1]([p3, p4, p5])

    return TinyYolo(nc, anchors)


def compute_loss_class(torch, utils):
    nn = torch.nn
    smooth_BCE, FocalLoss, bbox_iou = utils["smooth_BCE"], utils["FocalLoss"], utils["bbox_iou"]

    class ComputeLoss:
        sort_obj_iou = False

        # Compute losses
        def __init__(self, model, autobalance=False):
            device = next(model.parameters()).device  # get model device
            h = model.hyp  # hyperparameters

            # Define criteria
            BCEcls = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([h['cls_pw']], device=device))
            BCEobj = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([h['obj_pw']], device=device))

            # Class label smoothing https://arxiv.org/pdf/1902.04103.pdf eqn 3
            self.cp, self.cn = smooth_BCE(eps=h.get('label_smoothing', 0.0))  # positive, negative BCE targets

            # Focal loss
            g = h['fl_gamma']  # focal loss gamma
            if g > 0:
                BCEcls, BCEobj = FocalLoss(BCEcls, g), FocalLoss(BCEobj, g)

            m = model.model[-1]  # Detect() module
            self.balance = {3: [4.0, 1.0, 0.4]}.get(m.nl, [4.0, 1.0, 0.25, 0.06, 0.02])  # P3-P7
            self.ssi = list(m.stride).index(16) if autobalance else 0  # stride 16 index
            self.BCEcls, self.BCEobj, self.gr, self.hyp, self.autobalance = BCEcls, BCEobj, 1.0, h, autobalance
            self.na = m.na  # number of anchors
            self.nc = m.nc  # number of classes
            self.nl = m.nl  # number of layers
            self.anchors = m.anchors
            self.device = device

        def __call__(self, p, targets):  # predictions, targets
            lcls = torch.zeros(1, device=self.device)  # class loss
            lbox = torch.zeros(1, device=self.device)  # box loss
            lobj = torch.zeros(1, device=self.device)  # object loss
            tcls, tbox, indices, anchors = self.build_targets(p, targets)  # targets

            # Losses
            for i, pi in enumerate(p):  # layer index, layer predictions
                b, a, gj, gi = indices[i]  # image, anchor, gridy, gridx
                tobj = torch.zeros(pi.shape[:4], dtype=pi.dtype, device=self.device)  # target obj

                n = b.shape[0]  # number of targets
                if n:
                    # pxy, pwh, _, pcls = pi[b, a, gj, gi].tensor_split((2, 4, 5), dim=1)  # faster, requires torch 1.8.0
                    pxy, pwh, _, pcls = pi[b, a, gj, gi].split((2, 2, 1, self.nc), 1)  # target-subset of predictions

                    # Regression
                    pxy = pxy.sigmoid() * 2 - 0.5
                    pwh = (pwh.sigmoid() * 2) ** 2 * anchors[i]
                    pbox = torch.cat((pxy, pwh), 1)  # predicted box
                    iou = bbox_iou(pbox, tbox[i], CIoU=True).squeeze()  # iou(prediction, target)
                    lbox += (1.0 - iou).mean()  # iou loss

                    # Objectness
                    iou = iou.detach().clamp(0).type(tobj.dtype)
                    if self.sort_obj_iou:
                        j = iou.argsort()
                        b, a, gj, gi, iou = b[j], a[j], gj[j], gi[j], iou[j]
                    if self.gr < 1:
                        iou = (1.0 - self.gr) + self.gr * iou
                    tobj[b, a, gj, gi] = iou  # iou ratio

                    # Classification
                    if self.nc > 1:  # cls loss (only if multiple classes)
                        t = torch.full_like(pcls, self.cn, device=self.device)  # targets
                        t[range(n), tcls[i]] = self.cp
                        lcls += self.BCEcls(pcls, t)  # BCE

                obji = self.BCEobj(pi[..., 4], tobj)
                lobj += obji * self.balance[i]  # obj loss
                if self.autobalance:
                    self.balance[i] = self.balance[i] * 0.9999 + 0.0001 / obji.detach().item()

            if self.autobalance:
                self.balance = [x / self.balance[self.ssi] for x in self.balance]
            lbox *= self.hyp['box']
            lobj *= self.hyp['obj']
            lcls *= self.hyp['cls']
            bs = tobj.shape[0]  # batch size

            return (lbox + lobj + lcls) * bs, torch.cat((lbox, lobj, lcls)).detach()

        def build_targets(self, p, targets):
            # Build targets for compute_loss(), input targets(image,class,x,y,w,h)
            na, nt = self.na, targets.shape[0]  # number of anchors, targets
            tcls, tbox, indices, anch = [], [], [], []
            gain = torch.ones(7, device=self.device)  # normalized to gridspace gain
            ai = torch.arange(na, device=self.device).float().view(na, 1).repeat(1, nt)  # same as .repeat_interleave(nt)
            targets = torch.cat((targets.repeat(na, 1, 1), ai[..., None]), 2)  # append anchor indices

            g = 0.5  # bias
            off = torch.tensor(
                [
                    [0, 0],
                    [1, 0],
                    [0, 1],
                    [-1, 0],
                    [0, -1],  # j,k,l,m
                    # [1, 1], [1, -1], [-1, 1], [-1, -1],  # jk,jm,lk,lm
                ],
                device=self.device).float() * g  # offsets

            for i in range(self.nl):
                anchors, shape = self.anchors[i], p[i].shape
                gain[2:6] = torch.tensor(shape)[[3, 2, 3, 2]]  # xyxy gain

                # Match targets to anchors
                t = targets * gain  # shape(3,n,7)
                if nt:
                    # Matches
                    r = t[..., 4:6] / anchors[:, None]  # wh ratio
                    j = torch.max(r, 1 / r).max(2)[0] < self.hyp['anchor_t']  # compare
                    # j = wh_iou(anchors, t[:, 4:6]) > model.hyp['iou_t']  # iou(3,n)=wh_iou(anchors(3,2), gwh(n,2))
                    t = t[j]  # filter

                    # Offsets
                    gxy = t[:, 2:4]  # grid xy
                    gxi = gain[[2, 3]] - gxy  # inverse
                    j, k = ((gxy % 1 < g) & (gxy > 1)).T
                    l, m = ((gxi % 1 < g) & (gxi > 1)).T
                    j = torch.stack((torch.ones_like(j), j, k, l, m))
                    t = t.repeat((5, 1, 1))[j]
                    offsets = (torch.zeros_like(gxy)[None] + off[:, None])[j]
                else:
                    t = targets[0]
                    offsets = 0

                # Define
                bc, gxy, gwh, a = t.chunk(4, 1)  # (image, class), grid xy, grid wh, anchors
                a, (b, c) = a.long().view(-1), bc.long().T  # anchors, image, class
                gij = (gxy - offsets).long()
                gi, gj = gij.T  # grid indices

                # Append
                indices.append((b, a, gj.clamp_(0, shape[2] - 1), gi.clamp_(0, shape[3] - 1)))  # image, anchor, grid
                tbox.append(torch.cat((gxy - gij, gwh), 1))  # box
                anch.append(anchors[a])  # anchors
                tcls.append(c)  # class

            return tcls, tbox, indices, anch

    return ComputeLoss


def yolov5_training(torch, init=None, steps=3, batch_size=4, imgsz=64, nc=3):
    nn = torch.nn
    utils = yolov5_utils(torch)
    ComputeLoss = compute_loss_class(torch, utils)
    torch.manual_seed(0)
    anchors = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]]
    hyp = {'lr0': 0.01, 'momentum': 0.937, 'weight_decay': 0.0005, 'box': 0.05, 'cls': 0.5, 'cls_pw': 1.0,
           'obj': 1.0, 'obj_pw': 1.0, 'anchor_t': 4.0, 'fl_gamma': 1.5, 'label_smoothing': 0.1}
    model = yolov5_model(torch, nc, anchors)
    result = {}
    start_from(torch, model, init, result)
    # train.py: nl scaling of the hyperparameters
    nl = model.model[-1].nl
    hyp['box'] *= 3 / nl
    hyp['cls'] *= nc / 80 * 3 / nl
    hyp['obj'] *= (imgsz / 640) ** 2 * 3 / nl
    model.nc = nc
    model.hyp = hyp

    # smart_optimizer: three parameter groups
    g = [], [], []  # optimizer parameter groups
    bn = tuple(v for k, v in nn.__dict__.items() if 'Norm' in k)  # normalization layers, i.e. BatchNorm2d()
    for v in model.modules():
        for p_name, p in v.named_parameters(recurse=0):
            if p_name == 'bias':  # bias (no decay)
                g[2].append(p)
            elif p_name == 'weight' and isinstance(v, bn):  # weight (no decay)
                g[1].append(p)
            else:
                g[0].append(p)  # weight (with decay)
    optimizer = torch.optim.SGD(g[2], lr=hyp['lr0'], momentum=hyp['momentum'], nesterov=True)
    optimizer.add_param_group({'params': g[0], 'weight_decay': hyp['weight_decay']})  # add g0 with weight_decay
    optimizer.add_param_group({'params': g[1], 'weight_decay': 0.0})  # add g1 (BatchNorm2d weights)
    compute_loss = ComputeLoss(model)

    rng = np.random.default_rng(0)
    images = rng.uniform(0, 1, (steps * batch_size, 3, imgsz, imgsz)).astype(np.float32)
    losses, items = [], []
    for step in range(steps):
        rows = []
        for img in range(batch_size):
            k = int(rng.integers(1, 5))
            wh = rng.uniform(0.05, 0.6, (k, 2))
            xy = rng.uniform(0.1, 0.9, (k, 2))
            cls = rng.integers(0, nc, (k, 1))
            rows.append(np.concatenate([np.full((k, 1), img), cls, xy, wh], 1))
        targets = torch.from_numpy(np.concatenate(rows).astype(np.float32))
        imgs = torch.from_numpy(images[step * batch_size:(step + 1) * batch_size])
        pred = model(imgs)  # forward
        loss, loss_items = compute_loss(pred, targets)  # loss scaled by batch_size
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        items.append(numpy_of(loss_items))

    model.eval()
    with torch.no_grad():
        preds, train_out = model(torch.from_numpy(images[:batch_size]))
    nms = utils["non_max_suppression"]
    dets = {
        "single": nms(preds.clone(), 0.001, 0.6),
        "multi": nms(preds.clone(), 0.001, 0.6, multi_label=True),
        "agnostic_classes": nms(preds.clone(), 0.001, 0.5, classes=[0, 2], agnostic=True, max_det=20),
        "merge": nms(preds.clone(), 0.001, 0.6, merge=True),
    }
    result.update(losses=losses, items=items, preds=numpy_of(preds), train_out=[numpy_of(t) for t in train_out],
                  dets={k: [numpy_of(d) for d in v] for k, v in dets.items()},
                  state={k: numpy_of(v) for k, v in model.state_dict().items()},
                  focal_reduction=compute_loss.BCEcls.loss_fcn.reduction)
    return result


def box_losses_and_batched_nms(torch, init=None):
    ops = torchvision_ops(torch)
    utils = yolov5_utils(torch)
    rng = np.random.default_rng(5)

    def xyxy(n, scale=100.0):
        xy = rng.uniform(0, scale, (n, 2))
        wh = rng.uniform(1, scale / 3, (n, 2))
        return np.concatenate([xy, xy + wh], 1).astype(np.float32)

    result = {}
    a, b = torch.tensor(xyxy(12), requires_grad=True), torch.from_numpy(xyxy(12))
    for name, loss_fn in dict(giou=ops.generalized_box_iou_loss, diou=ops.distance_box_iou_loss).items():
        for reduction in ("none", "mean", "sum"):
            loss = loss_fn(a, b, reduction=reduction)
            (grad,) = torch.autograd.grad(loss.sum(), a)
            result[f"{name}_{reduction}"] = {"loss": numpy_of(loss), "grad": numpy_of(grad)}
    result["giou_empty_mean"] = ops.generalized_box_iou_loss(a[:0], b[:0], reduction="mean").item()
    ciou = utils["bbox_iou"](a, b, xywh=False, CIoU=True)
    (grad,) = torch.autograd.grad(ciou.sum(), a)
    result.update(ciou=numpy_of(ciou), ciou_grad=numpy_of(grad),
                  giou_xyxy=numpy_of(utils["bbox_iou"](a, b, xywh=False, GIoU=True)),
                  box_iou=numpy_of(ops.box_iou(a, b)), box_iou_v5=numpy_of(utils["box_iou"](a, b)),
                  generalized_box_iou=numpy_of(ops.generalized_box_iou(a, b)),
                  converted=numpy_of(ops.box_convert(ops.box_convert(b, "xyxy", "cxcywh"), "cxcywh", "xywh")))

    # batched_nms: a few hundred boxes take the coordinate trick, over 1000 the per-class loop
    for n in (300, 1100):
        boxes = torch.from_numpy(xyxy(n, scale=400.0))
        scores = torch.from_numpy(rng.permutation(n).astype(np.float32) / n)
        idxs = torch.from_numpy(rng.integers(0, 4, n))
        keep = ops.batched_nms(boxes, scores, idxs, 0.3)
        result[f"batched_nms_{n}"] = numpy_of(keep)
        result[f"nms_{n}"] = numpy_of(ops.nms(boxes, scores, 0.3))
    return result


def test_yolov5_compute_loss_and_nms():
    ref, got = compare_program(yolov5_training, rtol=1e-3, atol=1e-4)
    assert ref["focal_reduction"] == "none" and len(ref["dets"]["single"]) == 4
    assert all(len(d) > 0 for v in ref["dets"].values() for d in v)


def test_torchvision_box_losses_and_batched_nms():
    ref, got = compare_program(box_losses_and_batched_nms)
    assert ref["giou_empty_mean"] == 0.0 and len(ref["batched_nms_1100"]) > len(ref["nms_1100"])
