"""The layers of timm (timm.models.layers) that the published vision programs import, as timm
writes them: Mlp (fc1, act, drop, fc2, drop), DropPath (the per-sample stochastic depth drawn by
x.new_empty(shape).bernoulli_(keep_prob)) and the ViT family's weight init (trunc_normal_ Linear
weights, zero biases, unit LayerNorms). The programs build them for the library they run on:
`Mlp, DropPath, init_vit_weights = timm_layers(torch)`."""


def timm_layers(torch):
    nn = torch.nn

    def drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
        """Drop paths (Stochastic Depth) per sample (when applied in main path of residual blocks)."""
        if drop_prob == 0. or not training:
            return x
        keep_prob = 1 - drop_prob
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)  # work with diff dim tensors, not just 2D ConvNets
        random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
        if keep_prob > 0.0 and scale_by_keep:
            random_tensor.div_(keep_prob)
        return x * random_tensor

    class DropPath(nn.Module):
        """Drop paths (Stochastic Depth) per sample (when applied in main path of residual blocks)."""

        def __init__(self, drop_prob: float = 0., scale_by_keep: bool = True):
            super(DropPath, self).__init__()
            self.drop_prob = drop_prob
            self.scale_by_keep = scale_by_keep

        def forward(self, x):
            return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

        def extra_repr(self):
            return f'drop_prob={round(self.drop_prob, 3):0.3f}'

    class Mlp(nn.Module):
        def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU, drop=0.):
            super().__init__()
            out_features = out_features or in_features
            hidden_features = hidden_features or in_features
            self.fc1 = nn.Linear(in_features, hidden_features)
            self.act = act_layer()
            self.fc2 = nn.Linear(hidden_features, out_features)
            self.drop = nn.Dropout(drop)

        def forward(self, x):
            x = self.drop(self.act(self.fc1(x)))
            x = self.drop(self.fc2(x))
            return x

    def init_vit_weights(m):
        """The ViT family's _init_weights, applied by model.apply."""
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    return Mlp, DropPath, init_vit_weights
