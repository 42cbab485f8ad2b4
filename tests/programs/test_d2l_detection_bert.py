"""The d2l book's (1.0 edition) object-detection and BERT sections as written:
anchor boxes (multibox_prior through torch.meshgrid(..., indexing='ij'), torch.stack(...).T.repeat(
in_height * in_width, 1) and repeat_interleave; box_corner_to_center/box_center_to_corner; box_iou by
torch.max/torch.min of broadcast corners and clamp(min=0); assign_anchor_to_bbox with torch.full(
(num_anchors,), -1, dtype=torch.long), torch.nonzero, a column/row discard loop over torch.argmax;
offset_boxes and offset_inverse; multibox_target's bbox_mask.unsqueeze(-1).repeat(1, 4) and
indices_true assignments; nms by torch.argsort(descending=True) and torch.nonzero(iou <= iou_threshold)
.reshape(-1); multibox_detection's torch.unique(return_counts=True), torch.cat((keep, all_idx)),
conf[non_keep] = 0 and torch.cat((class_id.unsqueeze(1), conf.unsqueeze(1), predicted_bb), dim=1))
on the book's dog-and-cat example; the single-shot detector's heads (cls_predictor/bbox_predictor
Conv2d, flatten_pred by permute(0, 2, 3, 1) and start_dim=1, concat_preds, a small TinySSD with
setattr/getattr blocks, the cls + bbox loss over CrossEntropyLoss(reduction='none') and
L1Loss(reduction='none') times masks) trained a few steps; BERT (get_tokens_and_segments,
BERTEncoder with nn.Parameter(torch.randn(1, max_len, num_hiddens)) positions and add_module blocks,
MaskLM gathering X[batch_idx, pred_positions] with torch.arange(0, batch_size).repeat_interleave,
NextSentencePred, the pretraining loss over lazy layers materialised by a first batch). Seeds are
torch.manual_seed in both libraries."""

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def anchors(torch):
    def multibox_prior(data, sizes, ratios):
        """Generate anchor boxes with different shapes centered on each pixel."""
        in_height, in_width = data.shape[-2:]
        device, num_sizes, num_ratios = data.device, len(sizes), len(ratios)
        boxes_per_pixel = (num_sizes + num_ratios - 1)
        size_tensor = torch.tensor(sizes, device=device)
        ratio_tensor = torch.tensor(ratios, device=device)
        # Offsets are required to move the anchor to the center of a pixel.
        offset_h, offset_w = 0.5, 0.5
        steps_h = 1.0 / in_height  # Scaled steps in y axis
        steps_w = 1.0 / in_width  # Scaled steps in x axis
        # Generate all center points for the anchor boxes
        center_h = (torch.arange(in_height, device=device) + offset_h) * steps_h
        center_w = (torch.arange(in_width, device=device) + offset_w) * steps_w
        shift_y, shift_x = torch.meshgrid(center_h, center_w, indexing='ij')
        shift_y, shift_x = shift_y.reshape(-1), shift_x.reshape(-1)
        # Generate `boxes_per_pixel` number of heights and widths that are later
        # used to create anchor box corner coordinates (xmin, xmax, ymin, ymax)
        w = torch.cat((size_tensor * torch.sqrt(ratio_tensor[0]),
                       sizes[0] * torch.sqrt(ratio_tensor[1:]))) * in_height / in_width  # Handle rectangular inputs
        h = torch.cat((size_tensor / torch.sqrt(ratio_tensor[0]),
                       sizes[0] / torch.sqrt(ratio_tensor[1:])))
        # Divide by 2 to get half height and half width
        anchor_manipulations = torch.stack((-w, -h, w, h)).T.repeat(in_height * in_width, 1) / 2
        # Each center point will have `boxes_per_pixel` number of anchor boxes, so
        # generate a grid of all anchor box centers with `boxes_per_pixel` repeats
        out_grid = torch.stack([shift_x, shift_y, shift_x, shift_y],
                               dim=1).repeat_interleave(boxes_per_pixel, dim=0)
        output = out_grid + anchor_manipulations
        return output.unsqueeze(0)

    def box_corner_to_center(boxes):
        """Convert from (upper-left, lower-right) to (center, width, height)."""
        x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
        cx = (x1 + x2) / 2
        cy = (y1 + y2) / 2
        w = x2 - x1
        h = y2 - y1
        boxes = torch.stack((cx, cy, w, h), axis=-1)
        return boxes

    def box_center_to_corner(boxes):
        """Convert from (center, width, height) to (upper-left, lower-right)."""
        cx, cy, w, h = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
        x1 = cx - 0.5 * w
        y1 = cy - 0.5 * h
        x2 = cx + 0.5 * w
        y2 = cy + 0.5 * h
        boxes = torch.stack((x1, y1, x2, y2), axis=-1)
        return boxes

    def box_iou(boxes1, boxes2):
        """Compute pairwise IoU across two lists of anchor or bounding boxes."""
        box_area = lambda boxes: ((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]))  # noqa: E731
        areas1 = box_area(boxes1)
        areas2 = box_area(boxes2)
        inter_upperlefts = torch.max(boxes1[:, None, :2], boxes2[:, :2])
        inter_lowerrights = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
        inters = (inter_lowerrights - inter_upperlefts).clamp(min=0)
        inter_areas = inters[:, :, 0] * inters[:, :, 1]
        union_areas = areas1[:, None] + areas2 - inter_areas
        return inter_areas / union_areas

    def assign_anchor_to_bbox(ground_truth, anchors, device, iou_threshold=0.5):
        """Assign closest ground-truth bounding boxes to anchor boxes."""
        num_anchors, num_gt_boxes = anchors.shape[0], ground_truth.shape[0]
        jaccard = box_iou(anchors, ground_truth)
        anchors_bbox_map = torch.full((num_anchors,), -1, dtype=torch.long, device=device)
        # Assign ground-truth bounding boxes according to the threshold
        max_ious, indices = torch.max(jaccard, dim=1)
        anc_i = torch.nonzero(max_ious >= iou_threshold).reshape(-1)
        box_j = indices[max_ious >= iou_threshold]
        anchors_bbox_map[anc_i] = box_j
        col_discard = torch.full((num_anchors,), -1)
        row_discard = torch.full((num_gt_boxes,), -1)
        for _ in range(num_gt_boxes):
            max_idx = torch.argmax(jaccard)  # Find the largest IoU
            box_idx = (max_idx % num_gt_boxes).long()
            anc_idx = (max_idx / num_gt_boxes).long()
            anchors_bbox_map[anc_idx] = box_idx
            jaccard[:, box_idx] = col_discard
            jaccard[anc_idx, :] = row_discard
        return anchors_bbox_map

    def offset_boxes(anchors, assigned_bb, eps=1e-6):
        """Transform for anchor box offsets."""
        c_anc = box_corner_to_center(anchors)
        c_assigned_bb = box_corner_to_center(assigned_bb)
        offset_xy = 10 * (c_assigned_bb[:, :2] - c_anc[:, :2]) / c_anc[:, 2:]
        offset_wh = 5 * torch.log(eps + c_assigned_bb[:, 2:] / c_anc[:, 2:])
        offset = torch.cat([offset_xy, offset_wh], axis=1)
        return offset

    def multibox_target(anchors, labels):
        """Label anchor boxes using ground-truth bounding boxes."""
        batch_size, anchors = labels.shape[0], anchors.squeeze(0)
        batch_offset, batch_mask, batch_class_labels = [], [], []
        device, num_anchors = anchors.device, anchors.shape[0]
        for i in range(batch_size):
            label = labels[i, :, :]
            anchors_bbox_map = assign_anchor_to_bbox(label[:, 1:], anchors, device)
            bbox_mask = ((anchors_bbox_map >= 0).float().unsqueeze(-1)).repeat(1, 4)
            # Initialize class labels and assigned bounding box coordinates with zeros
            class_labels = torch.zeros(num_anchors, dtype=torch.long, device=device)
            assigned_bb = torch.zeros((num_anchors, 4), dtype=torch.float32, device=device)
            # Label classes of anchor boxes using their assigned ground-truth
            # bounding boxes. If an anchor box is not assigned any, we label its
            # class as background (the value remains zero)
            indices_true = torch.nonzero(anchors_bbox_map >= 0)
            bb_idx = anchors_bbox_map[indices_true]
            class_labels[indices_true] = label[bb_idx, 0].long() + 1
            assigned_bb[indices_true] = label[bb_idx, 1:]
            # Offset transformation
            offset = offset_boxes(anchors, assigned_bb) * bbox_mask
            batch_offset.append(offset.reshape(-1))
            batch_mask.append(bbox_mask.reshape(-1))
            batch_class_labels.append(class_labels)
        bbox_offset = torch.stack(batch_offset)
        bbox_mask = torch.stack(batch_mask)
        class_labels = torch.stack(batch_class_labels)
        return (bbox_offset, bbox_mask, class_labels)

    def offset_inverse(anchors, offset_preds):
        """Predict bounding boxes based on anchor boxes with predicted offsets."""
        anc = box_corner_to_center(anchors)
        pred_bbox_xy = (offset_preds[:, :2] * anc[:, 2:] / 10) + anc[:, :2]
        pred_bbox_wh = torch.exp(offset_preds[:, 2:] / 5) * anc[:, 2:]
        pred_bbox = torch.cat((pred_bbox_xy, pred_bbox_wh), axis=1)
        predicted_bbox = box_center_to_corner(pred_bbox)
        return predicted_bbox

    def nms(boxes, scores, iou_threshold):
        """Sort confidence scores of predicted bounding boxes."""
        B = torch.argsort(scores, dim=-1, descending=True)
        keep = []  # Indices of predicted bounding boxes that will be kept
        while B.numel() > 0:
            i = B[0]
            keep.append(i)
            if B.numel() == 1:
                break
            iou = box_iou(boxes[i, :].reshape(-1, 4), boxes[B[1:], :].reshape(-1, 4)).reshape(-1)
            inds = torch.nonzero(iou <= iou_threshold).reshape(-1)
            B = B[inds + 1]
        return torch.tensor(keep, device=boxes.device)

    def multibox_detection(cls_probs, offset_preds, anchors, nms_threshold=0.5, pos_threshold=0.009999999):
        """Predict bounding boxes using non-maximum suppression."""
        device, batch_size = cls_probs.device, cls_probs.shape[0]
        anchors = anchors.squeeze(0)
        num_classes, num_anchors = cls_probs.shape[1], cls_probs.shape[2]
        out = []
        for i in range(batch_size):
            cls_prob, offset_pred = cls_probs[i], offset_preds[i].reshape(-1, 4)
            conf, class_id = torch.max(cls_prob[1:], 0)
            predicted_bb = offset_inverse(anchors, offset_pred)
            keep = nms(predicted_bb, conf, nms_threshold)
            # Find all non-`keep` indices and set the class to background
            all_idx = torch.arange(num_anchors, dtype=torch.long, device=device)
            combined = torch.cat((keep, all_idx))
            uniques, counts = combined.unique(return_counts=True)
            non_keep = uniques[counts == 1]
            all_id_sorted = torch.cat((keep, non_keep))
            class_id[non_keep] = -1
            class_id = class_id[all_id_sorted]
            conf, predicted_bb = conf[all_id_sorted], predicted_bb[all_id_sorted]
            # Here `pos_threshold` is a threshold for positive (non-background) predictions
            below_min_idx = (conf < pos_threshold)
            class_id[below_min_idx] = -1
            conf[below_min_idx] = 1 - conf[below_min_idx]
            pred_info = torch.cat((class_id.unsqueeze(1), conf.unsqueeze(1), predicted_bb), dim=1)
            out.append(pred_info)
        return torch.stack(out)

    return dict(multibox_prior=multibox_prior, box_iou=box_iou, multibox_target=multibox_target,
                multibox_detection=multibox_detection, nms=nms, offset_inverse=offset_inverse)


def anchor_boxes(torch, init=None):
    a = anchors(torch)
    result = {}
    h, w = 6, 8
    X = torch.rand(size=(1, 3, h, w))
    Y = a["multibox_prior"](X, sizes=[0.75, 0.5, 0.25], ratios=[1, 2, 0.5])
    boxes = Y.reshape(h, w, 5, 4)
    result["prior"] = numpy_of(Y)
    result["box_250"] = numpy_of(boxes[2, 2, 0, :])
    ground_truth = torch.tensor([[0, 0.1, 0.08, 0.52, 0.92], [1, 0.55, 0.2, 0.9, 0.88]])
    anchors_ = torch.tensor([[0, 0.1, 0.2, 0.3], [0.15, 0.2, 0.4, 0.4], [0.63, 0.05, 0.88, 0.98],
                             [0.66, 0.45, 0.8, 0.8], [0.57, 0.3, 0.92, 0.9]])
    labels = a["multibox_target"](anchors_.unsqueeze(dim=0), ground_truth.unsqueeze(dim=0))
    result["target"] = [numpy_of(t) for t in labels]
    anchors_ = torch.tensor([[0.1, 0.08, 0.52, 0.92], [0.08, 0.2, 0.56, 0.95],
                             [0.15, 0.3, 0.62, 0.91], [0.55, 0.2, 0.9, 0.88]])
    offset_preds = torch.tensor([0] * anchors_.numel())
    cls_probs = torch.tensor([[0] * 4,  # Predicted background likelihood
                              [0.9, 0.8, 0.7, 0.1],  # Predicted dog likelihood
                              [0.1, 0.2, 0.3, 0.9]])  # Predicted cat likelihood
    output = a["multibox_detection"](cls_probs.unsqueeze(dim=0), offset_preds.unsqueeze(dim=0),
                                     anchors_.unsqueeze(dim=0), nms_threshold=0.5)
    result["detection"] = numpy_of(output)
    result["kept"] = [numpy_of(i).tolist() for i in output[0] if i[0] != -1]
    return result


def tiny_ssd(torch, init=None, steps=3):
    nn = torch.nn
    F = torch.nn.functional
    a = anchors(torch)

    def cls_predictor(num_inputs, num_anchors, num_classes):
        return nn.Conv2d(num_inputs, num_anchors * (num_classes + 1), kernel_size=3, padding=1)

    def bbox_predictor(num_inputs, num_anchors):
        return nn.Conv2d(num_inputs, num_anchors * 4, kernel_size=3, padding=1)

    def flatten_pred(pred):
        return torch.flatten(pred.permute(0, 2, 3, 1), start_dim=1)

    def concat_preds(preds):
        return torch.cat([flatten_pred(p) for p in preds], dim=1)

    def down_sample_blk(in_channels, out_channels):
        blk = []
        for _ in range(2):
            blk.append(nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1))
            blk.append(nn.BatchNorm2d(out_channels))
            blk.append(nn.ReLU())
            in_channels = out_channels
        blk.append(nn.MaxPool2d(2))
        return nn.Sequential(*blk)

    def base_net():
        blk = []
        num_filters = [3, 4, 8]
        for i in range(len(num_filters) - 1):
            blk.append(down_sample_blk(num_filters[i], num_filters[i + 1]))
        return nn.Sequential(*blk)

    def get_blk(i):
        if i == 0:
            blk = base_net()
        elif i == 1:
            blk = down_sample_blk(8, 8)
        else:
            blk = nn.AdaptiveMaxPool2d((1, 1))
        return blk

    def blk_forward(X, blk, size, ratio, cls_predictor, bbox_predictor):
        Y = blk(X)
        anchors = a["multibox_prior"](Y, sizes=size, ratios=ratio)
        cls_preds = cls_predictor(Y)
        bbox_preds = bbox_predictor(Y)
        return (Y, anchors, cls_preds, bbox_preds)

    sizes = [[0.2, 0.272], [0.37, 0.447], [0.54, 0.619]]
    ratios = [[1, 2, 0.5]] * 3
    num_anchors = len(sizes[0]) + len(ratios[0]) - 1

    class TinySSD(nn.Module):
        def __init__(self, num_classes, **kwargs):
            super(TinySSD, self).__init__(**kwargs)
            self.num_classes = num_classes
            idx_to_in_channels = [8, 8, 8]
            for i in range(3):
                # Equivalent to the assignment statement `self.blk_i = get_blk(i)`
                setattr(self, f'blk_{i}', get_blk(i))
                setattr(self, f'cls_{i}', cls_predictor(idx_to_in_channels[i], num_anchors, num_classes))
                setattr(self, f'bbox_{i}', bbox_predictor(idx_to_in_channels[i], num_anchors))

        def forward(self, X):
            anchors, cls_preds, bbox_preds = [None] * 3, [None] * 3, [None] * 3
            for i in range(3):
                # Here `getattr(self, 'blk_%d' % i)` accesses `self.blk_i`
                X, anchors[i], cls_preds[i], bbox_preds[i] = blk_forward(
                    X, getattr(self, f'blk_{i}'), sizes[i], ratios[i],
                    getattr(self, f'cls_{i}'), getattr(self, f'bbox_{i}'))
            anchors = torch.cat(anchors, dim=1)
            cls_preds = concat_preds(cls_preds)
            cls_preds = cls_preds.reshape(cls_preds.shape[0], -1, self.num_classes + 1)
            bbox_preds = concat_preds(bbox_preds)
            return anchors, cls_preds, bbox_preds

    torch.manual_seed(0)
    net = TinySSD(num_classes=1)
    result = {}
    start_from(torch, net, init, result)
    trainer = torch.optim.SGD(net.parameters(), lr=0.2, weight_decay=5e-4)
    cls_loss = nn.CrossEntropyLoss(reduction='none')
    bbox_loss = nn.L1Loss(reduction='none')

    def calc_loss(cls_preds, cls_labels, bbox_preds, bbox_labels, bbox_masks):
        batch_size, num_classes = cls_preds.shape[0], cls_preds.shape[2]
        cls = cls_loss(cls_preds.reshape(-1, num_classes), cls_labels.reshape(-1)).reshape(batch_size, -1).mean(dim=1)
        bbox = bbox_loss(bbox_preds * bbox_masks, bbox_labels * bbox_masks).mean(dim=1)
        return cls + bbox

    def cls_eval(cls_preds, cls_labels):
        # Because the class prediction results are on the final dimension, `argmax` needs to specify this dimension
        return float((cls_preds.argmax(dim=-1).type(cls_labels.dtype) == cls_labels).sum())

    def bbox_eval(bbox_preds, bbox_labels, bbox_masks):
        return float((torch.abs((bbox_labels - bbox_preds) * bbox_masks)).sum())

    rng = np.random.default_rng(0)
    X = torch.tensor(rng.uniform(size=(4, 3, 16, 16)).astype(np.float32))
    corners = rng.uniform(0.1, 0.45, size=(4, 1, 2))
    Y = torch.tensor(np.concatenate([np.zeros((4, 1, 1)), corners, corners + 0.4], axis=2).astype(np.float32))
    metrics = []
    net.train()
    for step in range(steps):
        trainer.zero_grad()
        anchors_, cls_preds, bbox_preds = net(X)
        bbox_labels, bbox_masks, cls_labels = a["multibox_target"](anchors_, Y)
        l = calc_loss(cls_preds, cls_labels, bbox_preds, bbox_labels, bbox_masks)  # noqa: E741
        l.mean().backward()
        trainer.step()
        metrics.append([cls_eval(cls_preds, cls_labels), cls_labels.numel(),
                        bbox_eval(bbox_preds, bbox_labels, bbox_masks), bbox_labels.numel(), l.mean().item()])
    net.eval()
    anchors_, cls_preds, bbox_preds = net(X[:1])
    cls_probs = F.softmax(cls_preds, dim=2).permute(0, 2, 1)
    output = a["multibox_detection"](cls_probs, bbox_preds, anchors_)
    idx = [i for i, row in enumerate(output[0]) if row[0] != -1]
    result.update(metrics=metrics, n_kept=len(idx), anchors=numpy_of(anchors_),
                  state={k: numpy_of(v) for k, v in net.state_dict().items()})
    return result


def bert(torch, init=None, steps=3):
    nn = torch.nn

    def get_tokens_and_segments(tokens_a, tokens_b=None):
        """Get tokens of the BERT input sequence and their segment IDs."""
        tokens = ['<cls>'] + tokens_a + ['<sep>']
        # 0 and 1 are marking segment A and B, respectively
        segments = [0] * (len(tokens_a) + 2)
        if tokens_b is not None:
            tokens += tokens_b + ['<sep>']
            segments += [1] * (len(tokens_b) + 1)
        return tokens, segments

    class BERTEncoder(nn.Module):
        """BERT encoder."""
        def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout,
                     max_len=1000, **kwargs):
            super(BERTEncoder, self).__init__(**kwargs)
            self.token_embedding = nn.Embedding(vocab_size, num_hiddens)
            self.segment_embedding = nn.Embedding(2, num_hiddens)
            self.blks = nn.Sequential()
            for i in range(num_blks):
                self.blks.add_module(f"{i}", nn.TransformerEncoderLayer(
                    num_hiddens, num_heads, ffn_num_hiddens, dropout, batch_first=True))
            # In BERT, positional embeddings are learnable, thus we create a
            # parameter of positional embeddings that are long enough
            self.pos_embedding = nn.Parameter(torch.randn(1, max_len, num_hiddens))

        def forward(self, tokens, segments, valid_lens):
            # Shape of `X` remains unchanged in the following code snippet:
            # (batch size, max sequence length, `num_hiddens`)
            X = self.token_embedding(tokens) + self.segment_embedding(segments)
            X = X + self.pos_embedding[:, :X.shape[1], :]
            mask = torch.arange(X.shape[1])[None, :] >= valid_lens[:, None]
            for blk in self.blks:
                X = blk(X, src_key_padding_mask=mask)
            return X

    class MaskLM(nn.Module):
        """The masked language model task of BERT."""
        def __init__(self, vocab_size, num_hiddens, **kwargs):
            super(MaskLM, self).__init__(**kwargs)
            self.mlp = nn.Sequential(nn.LazyLinear(num_hiddens), nn.ReLU(), nn.LayerNorm(num_hiddens),
                                     nn.LazyLinear(vocab_size))

        def forward(self, X, pred_positions):
            num_pred_positions = pred_positions.shape[1]
            pred_positions = pred_positions.reshape(-1)
            batch_size = X.shape[0]
            batch_idx = torch.arange(0, batch_size)
            # Suppose that `batch_size` = 2, `num_pred_positions` = 3, then
            # `batch_idx` is `torch.tensor([0, 0, 0, 1, 1, 1])`
            batch_idx = torch.repeat_interleave(batch_idx, num_pred_positions)
            masked_X = X[batch_idx, pred_positions]
            masked_X = masked_X.reshape((batch_size, num_pred_positions, -1))
            mlm_Y_hat = self.mlp(masked_X)
            return mlm_Y_hat

    class NextSentencePred(nn.Module):
        """The next sentence prediction task of BERT."""
        def __init__(self, **kwargs):
            super(NextSentencePred, self).__init__(**kwargs)
            self.output = nn.LazyLinear(2)

        def forward(self, X):
            # `X` shape: (batch size, `num_hiddens`)
            return self.output(X)

    class BERTModel(nn.Module):
        """The BERT model."""
        def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout, max_len=1000):
            super(BERTModel, self).__init__()
            self.encoder = BERTEncoder(vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout,
                                       max_len=max_len)
            self.hidden = nn.Sequential(nn.LazyLinear(num_hiddens), nn.Tanh())
            self.mlm = MaskLM(vocab_size, num_hiddens)
            self.nsp = NextSentencePred()

        def forward(self, tokens, segments, valid_lens=None, pred_positions=None):
            encoded_X = self.encoder(tokens, segments, valid_lens)
            if pred_positions is not None:
                mlm_Y_hat = self.mlm(encoded_X, pred_positions)
            else:
                mlm_Y_hat = None
            # The hidden layer of the MLP classifier for next sentence prediction.
            # 0 is the index of the '<cls>' token
            nsp_Y_hat = self.nsp(self.hidden(encoded_X[:, 0, :]))
            return encoded_X, mlm_Y_hat, nsp_Y_hat

    def _get_batch_loss_bert(net, loss, vocab_size, tokens_X, segments_X, valid_lens_x, pred_positions_X,
                             mlm_weights_X, mlm_Y, nsp_y):
        # Forward pass
        _, mlm_Y_hat, nsp_Y_hat = net(tokens_X, segments_X, valid_lens_x.reshape(-1), pred_positions_X)
        # Compute masked language model loss
        mlm_l = loss(mlm_Y_hat.reshape(-1, vocab_size), mlm_Y.reshape(-1)) * mlm_weights_X.reshape(-1, 1)
        mlm_l = mlm_l.sum() / (mlm_weights_X.sum() + 1e-8)
        # Compute next sentence prediction loss
        nsp_l = loss(nsp_Y_hat, nsp_y)
        l = mlm_l + nsp_l  # noqa: E741
        return mlm_l, nsp_l, l

    torch.manual_seed(0)
    vocab = ['<pad>', '<cls>', '<sep>', '<mask>'] + "a b c d e f g h".split()
    vocab_size, num_hiddens, ffn_num_hiddens, num_heads = len(vocab), 16, 32, 2
    net = BERTModel(vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks=2, dropout=0.0, max_len=20)
    tokens, segments = get_tokens_and_segments("a b c".split(), "d e".split())
    stoi = {t: i for i, t in enumerate(vocab)}
    rng = np.random.default_rng(1)
    B, L = 4, 10
    tokens_X = torch.tensor([[stoi[t] for t in tokens] + [0] * (L - len(tokens))] * B)
    tokens_X[:, 1:5] = torch.tensor(rng.integers(4, vocab_size, size=(B, 4)))
    segments_X = torch.tensor([segments + [0] * (L - len(segments))] * B)
    valid_lens_x = torch.tensor([len(tokens)] * B, dtype=torch.float32)
    pred_positions_X = torch.tensor(rng.integers(1, 8, size=(B, 3)))
    mlm_weights_X = torch.tensor([[1.0, 1.0, 0.0]] * B)
    mlm_Y = torch.tensor(rng.integers(4, vocab_size, size=(B, 3)))
    nsp_y = torch.tensor(rng.integers(0, 2, size=B))
    # lazy layers materialise on a first batch, as d2l's train_bert does
    net(tokens_X, segments_X, valid_lens_x.reshape(-1), pred_positions_X)
    result = {"tokens": tokens, "segments": segments}
    start_from(torch, net, init, result)
    trainer = torch.optim.Adam(net.parameters(), lr=0.01)
    loss = nn.CrossEntropyLoss(reduction='none')
    losses = []
    for step in range(steps):
        trainer.zero_grad()
        mlm_l, nsp_l, l = _get_batch_loss_bert(net, loss, vocab_size, tokens_X, segments_X, valid_lens_x,
                                               pred_positions_X, mlm_weights_X, mlm_Y, nsp_y)
        l.mean().backward()
        trainer.step()
        losses.append([mlm_l.item(), nsp_l.mean().item()])
    encoded_X, _, _ = net(tokens_X[:1], segments_X[:1], valid_lens_x[:1])
    result.update(losses=losses, encoded=numpy_of(encoded_X[0, :len(tokens)]),
                  state={k: key_bias_left_out(k, numpy_of(v)) for k, v in net.state_dict().items()})
    return result


def key_bias_left_out(name, value):
    """A state entry with the key third of an in_proj_bias removed: that bias adds one constant to a
    query's scores, which softmax cancels, so its gradient is rounding alone (Adam steps on it)."""
    if not name.endswith("in_proj_bias"):
        return value
    third = value.shape[0] // 3
    return np.concatenate([value[:third], value[2 * third:]])


def test_anchor_boxes():
    ref, got = compare_program(anchor_boxes, rtol=1e-5, atol=1e-6)
    assert [int(r[0]) for r in ref["kept"]] == [0, 1]  # the book's dog and cat


def test_tiny_ssd():
    compare_program(tiny_ssd, rtol=1e-3, atol=1e-4)


def test_bert_pretraining():
    ref, got = compare_program(bert, rtol=1e-3, atol=1e-4)
    assert got["tokens"] == ['<cls>', 'a', 'b', 'c', '<sep>', 'd', 'e', '<sep>']

