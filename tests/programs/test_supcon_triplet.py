"""Contrastive losses written without all_gather, as their repositories publish them:
- HobbitLong/SupContrast's SupConLoss (losses.py: torch.eq(labels, labels.T) masks, torch.unbind
  over views and torch.cat, contrast_mode "all" and "one", the logits_mask built by torch.scatter on
  ones_like, torch.where on mask_pos_pairs, SimCLR's unsupervised case through an identity mask)
  and main_supcon.py's training step (two augmented views concatenated, torch.split of the
  normalized features, torch.cat of unsqueezed views) on a SupConResNet-style encoder + MLP head
  with F.normalize;
- NegatioN/OnlineMiningTripletLoss's batch_all_triplet_loss and batch_hard_triplet_loss
  (pairwise distances with the masked 1e-16 before sqrt, distances[distances < 0] = 0 on a
  tensor in the graph, the three-way triplet mask from broadcast comparisons, hardest positive and
  negative by max/min, valid_triplets selected by a boolean index).
Both train an embedding for a few steps; losses, gradients and parameters are compared."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def supcon_loss(torch):
    nn = torch.nn

    class SupConLoss(nn.Module):
        """Supervised Contrastive Learning: https://arxiv.org/pdf/2004.11362.pdf.
        It also supports the unsupervised contrastive loss in SimCLR"""

        def __init__(self, temperature=0.07, contrast_mode='all', base_temperature=0.07):
            super(SupConLoss, self).__init__()
            self.temperature = temperature
            self.contrast_mode = contrast_mode
            self.base_temperature = base_temperature

        def forward(self, features, labels=None, mask=None):
            device = (torch.device('cuda') if features.is_cuda else torch.device('cpu'))

            if len(features.shape) < 3:
                raise ValueError('`features` needs to be [bsz, n_views, ...],'
                                 'at least 3 dimensions are required')
            if len(features.shape) > 3:
                features = features.view(features.shape[0], features.shape[1], -1)

            batch_size = features.shape[0]
            if labels is not None and mask is not None:
                raise ValueError('Cannot define both `labels` and `mask`')
            elif labels is None and mask is None:
                mask = torch.eye(batch_size, dtype=torch.float32).to(device)
            elif labels is not None:
                labels = labels.contiguous().view(-1, 1)
                if labels.shape[0] != batch_size:
                    raise ValueError('Num of labels does not match num of features')
                mask = torch.eq(labels, labels.T).float().to(device)
            else:
                mask = mask.float().to(device)

            contrast_count = features.shape[1]
            contrast_feature = torch.cat(torch.unbind(features, dim=1), dim=0)
            if self.contrast_mode == 'one':
                anchor_feature = features[:, 0]
                anchor_count = 1
            elif self.contrast_mode == 'all':
                anchor_feature = contrast_feature
                anchor_count = contrast_count
            else:
                raise ValueError('Unknown mode: {}'.format(self.contrast_mode))

            # compute logits
            anchor_dot_contrast = torch.div(
                torch.matmul(anchor_feature, contrast_feature.T),
                self.temperature)
            # for numerical stability
            logits_max, _ = torch.max(anchor_dot_contrast, dim=1, keepdim=True)
            logits = anchor_dot_contrast - logits_max.detach()

            # tile mask
            mask = mask.repeat(anchor_count, contrast_count)
            # mask-out self-contrast cases
            logits_mask = torch.scatter(
                torch.ones_like(mask),
                1,
                torch.arange(batch_size * anchor_count).view(-1, 1).to(device),
                0
            )
            mask = mask * logits_mask

            # compute log_prob
            exp_logits = torch.exp(logits) * logits_mask
            log_prob = logits - torch.log(exp_logits.sum(1, keepdim=True))

            # compute mean of log-likelihood over positive
            # modified to handle edge cases when there is no positive pair
            # for an anchor point.
            # Edge case e.g.:-
            # features of shape: [4,1,...]
            # labels:            [0,1,1,2]
            # loss before mean:  [nan, ..., ..., nan]
            mask_pos_pairs = mask.sum(1)
            mask_pos_pairs = torch.where(mask_pos_pairs < 1e-6, 1, mask_pos_pairs)
            mean_log_prob_pos = (mask * log_prob).sum(1) / mask_pos_pairs

            # loss
            loss = - (self.temperature / self.base_temperature) * mean_log_prob_pos
            loss = loss.view(anchor_count, batch_size).mean()

            return loss

    return SupConLoss


def online_triplet(torch):
    def _pairwise_distances(embeddings, squared=False):
        """Compute the 2D matrix of distances between all the embeddings."""
        dot_product = torch.matmul(embeddings, embeddings.t())

        # Get squared L2 norm for each embedding. We can just take the diagonal of `dot_product`.
        # This also provides more numerical stability (the diagonal of the result will be exactly 0).
        # shape (batch_size,)
        square_norm = torch.diag(dot_product)

        # Compute the pairwise distance matrix as we have:
        # ||a - b||^2 = ||a||^2  - 2 <a, b> + ||b||^2
        # shape (batch_size, batch_size)
        distances = square_norm.unsqueeze(0) - 2.0 * dot_product + square_norm.unsqueeze(1)

        # Because of computation errors, some distances might be negative so we put everything >= 0.0
        distances[distances < 0] = 0

        if not squared:
            # Because the gradient of sqrt is infinite when distances == 0.0 (ex: on the diagonal)
            # we need to add a small epsilon where distances == 0.0
            mask = distances.eq(0).float()
            distances = distances + mask * 1e-16

            distances = (1.0 - mask) * torch.sqrt(distances)

        return distances

    def _get_triplet_mask(labels):
        """Return a 3D mask where mask[a, p, n] is True iff the triplet (a, p, n) is valid."""
        # Check that i, j and k are distinct
        indices_equal = torch.eye(labels.size(0), device=labels.device).bool()
        indices_not_equal = ~indices_equal
        i_not_equal_j = indices_not_equal.unsqueeze(2)
        i_not_equal_k = indices_not_equal.unsqueeze(1)
        j_not_equal_k = indices_not_equal.unsqueeze(0)

        distinct_indices = (i_not_equal_j & i_not_equal_k) & j_not_equal_k

        label_equal = labels.unsqueeze(0) == labels.unsqueeze(1)
        i_equal_j = label_equal.unsqueeze(2)
        i_equal_k = label_equal.unsqueeze(1)

        valid_labels = ~i_equal_k & i_equal_j

        return valid_labels & distinct_indices

    def _get_anchor_positive_triplet_mask(labels):
        """Return a 2D mask where mask[a, p] is True iff a and p are distinct and have same label."""
        # Check that i and j are distinct
        indices_equal = torch.eye(labels.size(0), device=labels.device).bool()
        indices_not_equal = ~indices_equal

        # Check if labels[i] == labels[j]
        # Uses broadcasting where the 1st argument has shape (1, batch_size) and the 2nd (batch_size, 1)
        labels_equal = labels.unsqueeze(0) == labels.unsqueeze(1)

        return labels_equal & indices_not_equal

    def _get_anchor_negative_triplet_mask(labels):
        """Return a 2D mask where mask[a, n] is True iff a and n have distinct labels."""
        # Check if labels[i] != labels[k]
        # Uses broadcasting where the 1st argument has shape (1, batch_size) and the 2nd (batch_size, 1)

        return ~(labels.unsqueeze(0) == labels.unsqueeze(1))

    def batch_hard_triplet_loss(labels, embeddings, margin, squared=False):
        """Build the triplet loss over a batch of embeddings: for each anchor, the hardest positive
        and the hardest negative."""
        # Get the pairwise distance matrix
        pairwise_dist = _pairwise_distances(embeddings, squared=squared)

        # For each anchor, get the hardest positive
        # First, we need to get a mask for every valid positive (they should have same label)
        mask_anchor_positive = _get_anchor_positive_triplet_mask(labels).float()

        # We put to 0 any element where (a, p) is not valid (valid if a != p and label(a) == label(p))
        anchor_positive_dist = mask_anchor_positive * pairwise_dist

        # shape (batch_size, 1)
        hardest_positive_dist, _ = anchor_positive_dist.max(1, keepdim=True)

        # For each anchor, get the hardest negative
        # First, we need to get a mask for every valid negative (they should have different labels)
        mask_anchor_negative = _get_anchor_negative_triplet_mask(labels).float()

        # We add the maximum value in each row to the invalid negatives (label(a) == label(n))
        max_anchor_negative_dist, _ = pairwise_dist.max(1, keepdim=True)
        anchor_negative_dist = pairwise_dist + max_anchor_negative_dist * (1.0 - mask_anchor_negative)

        # shape (batch_size,)
        hardest_negative_dist, _ = anchor_negative_dist.min(1, keepdim=True)

        # Combine biggest d(a, p) and smallest d(a, n) into final triplet loss
        tl = hardest_positive_dist - hardest_negative_dist + margin
        tl[tl < 0] = 0
        triplet_loss = tl.mean()

        return triplet_loss

    def batch_all_triplet_loss(labels, embeddings, margin, squared=False):
        """Build the triplet loss over a batch of embeddings: all the valid triplets, averaged over
        the positive ones."""
        # Get the pairwise distance matrix
        pairwise_dist = _pairwise_distances(embeddings, squared=squared)

        anchor_positive_dist = pairwise_dist.unsqueeze(2)
        anchor_negative_dist = pairwise_dist.unsqueeze(1)

        # Compute a 3D tensor of size (batch_size, batch_size, batch_size)
        # triplet_loss[i, j, k] will contain the triplet loss of anchor=i, positive=j, negative=k
        # Uses broadcasting where the 1st argument has shape (batch_size, batch_size, 1)
        # and the 2nd (batch_size, 1, batch_size)
        triplet_loss = anchor_positive_dist - anchor_negative_dist + margin

        # Put to zero the invalid triplets
        # (where label(a) != label(p) or label(n) == label(a) or a == p)
        mask = _get_triplet_mask(labels)
        triplet_loss = mask.float() * triplet_loss

        # Remove negative losses (i.e. the easy triplets)
        triplet_loss[triplet_loss < 0] = 0

        # Count number of positive triplets (where triplet_loss > 0)
        valid_triplets = triplet_loss[triplet_loss > 1e-16]
        num_positive_triplets = valid_triplets.size(0)
        num_valid_triplets = mask.sum()

        fraction_positive_triplets = num_positive_triplets / (num_valid_triplets.float() + 1e-16)

        # Get final triplet loss over the positive valid triplets
        triplet_loss = triplet_loss.sum() / (num_positive_triplets + 1e-16)

        return triplet_loss, fraction_positive_triplets

    return batch_all_triplet_loss, batch_hard_triplet_loss


def images_and_views(rng, n, classes=4, size=12):
    """n images of `classes` prototypes plus noise, and two noisy, flipped views of each."""
    protos = rng.standard_normal((classes, 3, size, size)).astype(np.float32)
    labels = rng.integers(0, classes, n)
    base = protos[labels] + 0.5 * rng.standard_normal((n, 3, size, size)).astype(np.float32)
    views = []
    for _ in range(2):
        v = base + 0.3 * rng.standard_normal(base.shape).astype(np.float32)
        flip = rng.uniform(size=n) < 0.5
        v[flip] = v[flip][..., ::-1]
        views.append(np.ascontiguousarray(v))
    return views, labels


def encoder(torch, feat_dim=16):
    nn, F = torch.nn, torch.nn.functional

    class SupConNet(nn.Module):
        """backbone + projection head"""

        def __init__(self, head="mlp", feat_dim=feat_dim):
            super().__init__()
            self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
                                         nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten())
            dim_in = 16
            if head == "linear":
                self.head = nn.Linear(dim_in, feat_dim)
            elif head == "mlp":
                self.head = nn.Sequential(nn.Linear(dim_in, dim_in), nn.ReLU(inplace=True),
                                          nn.Linear(dim_in, feat_dim))
            else:
                raise NotImplementedError("head not supported: {}".format(head))

        def forward(self, x):
            feat = self.encoder(x)
            feat = F.normalize(self.head(feat), dim=1)
            return feat

    return SupConNet()


def supcon_program(torch, init=None, steps=4, bsz=8, method="SupCon"):
    SupConLoss = supcon_loss(torch)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    (v1, v2), labels_np = images_and_views(rng, steps * bsz)
    model = encoder(torch)
    result = {}
    start_from(torch, model, init, result)
    criterion = SupConLoss(temperature=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)

    # the loss on fixed features in each mode
    feats = torch.nn.functional.normalize(torch.from_numpy(rng.standard_normal((6, 2, 5)).astype(np.float32)), dim=2)
    lab = torch.tensor([0, 1, 1, 2, 0, 3])
    fixed = {"all": criterion(feats, lab).item(), "one": SupConLoss(contrast_mode="one")(feats, lab).item(),
             "simclr": criterion(feats).item(),
             "mask": criterion(feats, mask=torch.from_numpy(np.eye(6, k=1) + np.eye(6))).item(),
             "4d": criterion(feats.view(6, 2, 5, 1)).item()}
    for bad in (lambda: criterion(feats[:, 0]), lambda: criterion(feats, lab, mask=torch.eye(6)),
                lambda: criterion(feats, lab[:4]), lambda: SupConLoss(contrast_mode="two")(feats, lab)):
        try:
            bad()
        except ValueError as e:
            fixed.setdefault("errors", []).append(str(e))

    losses = []
    for idx in range(steps):
        images = [torch.from_numpy(v1[idx * bsz:(idx + 1) * bsz]), torch.from_numpy(v2[idx * bsz:(idx + 1) * bsz])]
        labels = torch.from_numpy(labels_np[idx * bsz:(idx + 1) * bsz])
        images = torch.cat([images[0], images[1]], dim=0)
        bsz = labels.shape[0]

        # compute loss
        features = model(images)
        f1, f2 = torch.split(features, [bsz, bsz], dim=0)
        features = torch.cat([f1.unsqueeze(1), f2.unsqueeze(1)], dim=1)
        if method == 'SupCon':
            loss = criterion(features, labels)
        elif method == 'SimCLR':
            loss = criterion(features)
        else:
            raise ValueError('contrastive method not supported: {}'.format(method))

        # SGD
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result.update(fixed=fixed, losses=losses, params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def triplet_program(torch, init=None, steps=4, bsz=12, margin=0.5):
    batch_all_triplet_loss, batch_hard_triplet_loss = online_triplet(torch)
    torch.manual_seed(0)
    rng = np.random.default_rng(2)
    (v1, _), labels_np = images_and_views(rng, steps * bsz, classes=3)
    model = encoder(torch)
    result = {}
    start_from(torch, model, init, result)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    emb = torch.tensor(rng.standard_normal((7, 4)).astype(np.float32), requires_grad=True)
    emb_labels = torch.tensor([0, 0, 1, 1, 2, 0, 1])
    fixed = {}
    for squared in (False, True):
        hard = batch_hard_triplet_loss(emb_labels, emb, margin, squared=squared)
        every, fraction = batch_all_triplet_loss(emb_labels, emb, margin, squared=squared)
        (emb_grad,) = torch.autograd.grad(hard + every, emb)
        fixed[f"squared={squared}"] = {"hard": hard.item(), "all": every.item(), "fraction": fraction.item(),
                                       "grad": numpy_of(emb_grad)}
    # a repeated embedding: the distance on and off the diagonal is exactly 0, its gradient 0
    twin = torch.cat([emb[:1], emb[:1], emb[1:3]]).detach().requires_grad_()
    batch_hard_triplet_loss(torch.tensor([0, 0, 1, 1]), twin, margin).backward()
    fixed["twin_grad"] = numpy_of(twin.grad)

    losses, fractions = [], []
    for idx in range(steps):
        x = torch.from_numpy(v1[idx * bsz:(idx + 1) * bsz])
        labels = torch.from_numpy(labels_np[idx * bsz:(idx + 1) * bsz])
        embeddings = model(x)
        if idx % 2:
            loss = batch_hard_triplet_loss(labels, embeddings, margin=margin)
        else:
            loss, fraction = batch_all_triplet_loss(labels, embeddings, margin=margin)
            fractions.append(fraction.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result.update(fixed=fixed, losses=losses, fractions=fractions,
                  params={k: numpy_of(v) for k, v in model.named_parameters()})
    return result


def test_supcon_loss_training():
    ref, got = compare_program(supcon_program)
    assert len(ref["fixed"]["errors"]) == 4 and ref["fixed"]["errors"][3] == "Unknown mode: two"


def test_simclr_through_supcon_loss():
    compare_program(supcon_program, method="SimCLR")


def test_online_triplet_mining():
    ref, got = compare_program(triplet_program)
    assert np.isfinite(ref["fixed"]["twin_grad"]).all() and 0 < ref["fractions"][0] <= 1
