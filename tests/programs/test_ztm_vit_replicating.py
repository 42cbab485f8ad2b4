"""mrdbourke's "Zero to Mastery Learn PyTorch" notebook 08 (paper replicating: ViT) as written, at a
small size (32x32 images, patch 8, embedding 48, 2 layers, 4 heads; the notebook's 224/16/768/12),
images from a local array and randomness from torch.manual_seed (both libraries draw PyTorch's CPU
streams): the patch arithmetic (number_of_patches = int((height * width) / patch_size**2), the
embedding layer's input and output shapes), patches cut by image[:, :patch_size, :] and
image[:, patch_height: patch_height+patch_size, patch_width: patch_width+patch_size] index loops;
a Conv2d patcher with kernel_size=stride=patch_size and nn.Flatten(start_dim=2, end_dim=3), its
output .permute(0, 2, 1); the class token nn.Parameter(torch.ones(batch_size, 1, embedding_dimension),
requires_grad=True) and torch.cat(..., dim=1); position embeddings torch.ones(1, number_of_patches+1,
embedding_dimension); PatchEmbedding (the assert on the resolution), MultiheadSelfAttentionBlock
(LayerNorm then nn.MultiheadAttention(batch_first=True) called with query=, key=, value=,
need_weights=False), MLPBlock (Linear, GELU, Dropout, Linear, Dropout), TransformerEncoderBlock with
residuals, its equivalent nn.TransformerEncoderLayer(activation="gelu", batch_first=True,
norm_first=True), the ViT (class_embedding and position_embedding by torch.randn, embedding_dropout,
an nn.Sequential of blocks by a list comprehension, a LayerNorm + Linear classifier on x[:, 0]),
trained with engine.train's train_step/test_step under Adam(lr=3e-3, betas=(0.9, 0.999),
weight_decay=0.3), then a prediction through torch.softmax(..., dim=1).argmax(dim=1). Dropout masks
are PyTorch's streams, so training matches number for number."""

import numpy as np

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def local_images(n, seed):
    """n RGB 32x32 images of three classes (bright left half, bright top half, a centre square)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    x = rng.uniform(0, 0.4, (n, 3, 32, 32)).astype(np.float32)
    for i, c in enumerate(labels):
        [lambda a: a[:, :, :16], lambda a: a[:, :16, :], lambda a: a[:, 8:24, 8:24]][c](x[i])[...] += 0.5
    return x, labels


def vit_replicating(torch, init=None, epochs=3):
    nn = torch.nn
    res = {}
    with captured_run(torch) as out:
        height = 32
        width = 32
        color_channels = 3
        patch_size = 8
        number_of_patches = int((height * width) / patch_size**2)
        print(f"Number of patches (N) with image height (H={height}), width (W={width}) and patch size (P={patch_size}): {number_of_patches}")
        embedding_layer_input_shape = (height, width, color_channels)
        embedding_layer_output_shape = (number_of_patches, patch_size**2 * color_channels)
        print(f"Input shape (single 2D image): {embedding_layer_input_shape}")
        print(f"Output shape (single 2D image flattened into patches): {embedding_layer_output_shape}")

        train_x, train_y = local_images(48, 0)
        test_x, test_y = local_images(12, 1)
        image, label = torch.from_numpy(train_x[0]), int(train_y[0])
        image_permuted = image.permute(1, 2, 0)
        img_size = 32
        patch_size = 8
        print(image_permuted[:patch_size, :, :].shape)
        num_patches = img_size / patch_size
        assert img_size % patch_size == 0, "Image size must be divisible by patch size"
        print(f"Number of patches per row: {num_patches}\nPatch size: {patch_size} pixels x {patch_size} pixels")
        patches = []
        for i, patch_height in enumerate(range(0, img_size, patch_size)):
            for j, patch_width in enumerate(range(0, img_size, patch_size)):
                patches.append(image_permuted[patch_height:patch_height + patch_size,
                                              patch_width:patch_width + patch_size, :])
        res["patch_sums"] = [p.sum().item() for p in patches]

        torch.manual_seed(42)
        conv2d = nn.Conv2d(in_channels=3, out_channels=48, kernel_size=patch_size, stride=patch_size, padding=0)
        image_out_of_conv = conv2d(image.unsqueeze(0))
        print(image_out_of_conv.shape)
        flatten = nn.Flatten(start_dim=2, end_dim=3)
        print(f"Original image shape: {image.shape}")
        image_out_of_conv = conv2d(image.unsqueeze(0))
        print(f"Image feature map shape: {image_out_of_conv.shape}")
        image_out_of_conv_flattened = flatten(image_out_of_conv)
        print(f"Flattened image feature map shape: {image_out_of_conv_flattened.shape}")
        image_out_of_conv_flattened_reshaped = image_out_of_conv_flattened.permute(0, 2, 1)
        print(f"Patch embedding sequence shape: {image_out_of_conv_flattened_reshaped.shape} -> [batch_size, num_patches, embedding_size]")
        single_flattened_feature_map = image_out_of_conv_flattened_reshaped[:, :, 0]
        res["feature_map"] = numpy_of(single_flattened_feature_map)

        class PatchEmbedding(nn.Module):
            """Turns a 2D input image into a 1D sequence learnable embedding vector."""

            def __init__(self, in_channels: int = 3, patch_size: int = 16, embedding_dim: int = 768):
                super().__init__()
                self.patch_size = patch_size
                self.patcher = nn.Conv2d(in_channels=in_channels, out_channels=embedding_dim,
                                         kernel_size=patch_size, stride=patch_size, padding=0)
                self.flatten = nn.Flatten(start_dim=2, end_dim=3)

            def forward(self, x):
                image_resolution = x.shape[-1]
                assert image_resolution % self.patch_size == 0, f"Input image size must be divisble by patch size, image shape: {image_resolution}, patch size: {self.patch_size}"
                x_patched = self.patcher(x)
                x_flattened = self.flatten(x_patched)
                return x_flattened.permute(0, 2, 1)

        torch.manual_seed(42)
        patchify = PatchEmbedding(in_channels=3, patch_size=8, embedding_dim=48)
        print(f"Input image shape: {image.unsqueeze(0).shape}")
        patch_embedded_image = patchify(image.unsqueeze(0))
        print(f"Output patch embedding shape: {patch_embedded_image.shape}")
        try:
            patchify(torch.randn(1, 3, 30, 30))
        except AssertionError as e:
            print(e)
        batch_size = patch_embedded_image.shape[0]
        embedding_dimension = patch_embedded_image.shape[-1]
        class_token = nn.Parameter(torch.ones(batch_size, 1, embedding_dimension), requires_grad=True)
        print(class_token[:, :, :10])
        print(f"Class token shape: {class_token.shape} -> [batch_size, number_of_tokens, embedding_dimension]")
        patch_embedded_image_with_class_embedding = torch.cat((class_token, patch_embedded_image), dim=1)
        print(f"Sequence of patch embeddings with class token prepended shape: {patch_embedded_image_with_class_embedding.shape} -> [batch_size, number_of_patches, embedding_dimension]")
        number_of_patches = int((height * width) / patch_size**2)
        position_embedding = nn.Parameter(torch.ones(1, number_of_patches + 1, embedding_dimension), requires_grad=True)
        patch_and_position_embedding = patch_embedded_image_with_class_embedding + position_embedding
        print(f"Patch embeddings, class token prepended and positional embeddings added shape: {patch_and_position_embedding.shape} -> [batch_size, number_of_patches, embedding_dimension]")
        res["embedding"] = numpy_of(patch_and_position_embedding)

        class MultiheadSelfAttentionBlock(nn.Module):
            """Creates a multi-head self-attention block ("MSA block" for short)."""

            def __init__(self, embedding_dim: int = 768, num_heads: int = 12, attn_dropout: float = 0):
                super().__init__()
                self.layer_norm = nn.LayerNorm(normalized_shape=embedding_dim)
                self.multihead_attn = nn.MultiheadAttention(embed_dim=embedding_dim, num_heads=num_heads,
                                                            dropout=attn_dropout, batch_first=True)

            def forward(self, x):
                x = self.layer_norm(x)
                attn_output, _ = self.multihead_attn(query=x, key=x, value=x, need_weights=False)
                return attn_output

        class MLPBlock(nn.Module):
            """Creates a layer normalized multilayer perceptron block ("MLP block" for short)."""

            def __init__(self, embedding_dim: int = 768, mlp_size: int = 3072, dropout: float = 0.1):
                super().__init__()
                self.layer_norm = nn.LayerNorm(normalized_shape=embedding_dim)
                self.mlp = nn.Sequential(
                    nn.Linear(in_features=embedding_dim, out_features=mlp_size),
                    nn.GELU(),
                    nn.Dropout(p=dropout),
                    nn.Linear(in_features=mlp_size, out_features=embedding_dim),
                    nn.Dropout(p=dropout)
                )

            def forward(self, x):
                x = self.layer_norm(x)
                x = self.mlp(x)
                return x

        class TransformerEncoderBlock(nn.Module):
            """Creates a Transformer Encoder block."""

            def __init__(self, embedding_dim: int = 768, num_heads: int = 12, mlp_size: int = 3072,
                         mlp_dropout: float = 0.1, attn_dropout: float = 0):
                super().__init__()
                self.msa_block = MultiheadSelfAttentionBlock(embedding_dim=embedding_dim, num_heads=num_heads,
                                                             attn_dropout=attn_dropout)
                self.mlp_block = MLPBlock(embedding_dim=embedding_dim, mlp_size=mlp_size, dropout=mlp_dropout)

            def forward(self, x):
                x = self.msa_block(x) + x
                x = self.mlp_block(x) + x
                return x

        torch.manual_seed(42)
        msa_block = MultiheadSelfAttentionBlock(embedding_dim=48, num_heads=4)
        patched_image_through_msa_block = msa_block(patch_and_position_embedding)
        print(f"Output shape MSA block: {patched_image_through_msa_block.shape}")
        mlp_block = MLPBlock(embedding_dim=48, mlp_size=192, dropout=0.1)
        patched_image_through_mlp_block = mlp_block(patched_image_through_msa_block)
        print(f"Output shape MLP block: {patched_image_through_mlp_block.shape}")
        res["msa_mlp"] = numpy_of(patched_image_through_mlp_block)
        transformer_encoder_block = TransformerEncoderBlock(embedding_dim=48, num_heads=4, mlp_size=192)
        torch_transformer_encoder_layer = nn.TransformerEncoderLayer(d_model=48, nhead=4, dim_feedforward=192,
                                                                     dropout=0.1, activation="gelu",
                                                                     batch_first=True, norm_first=True)
        print(torch_transformer_encoder_layer)
        # the same weights in both: the hand-built block and PyTorch's layer agree in eval mode
        block = transformer_encoder_block
        layer = torch_transformer_encoder_layer
        with torch.no_grad():
            layer.self_attn.load_state_dict(block.msa_block.multihead_attn.state_dict())
            layer.norm1.load_state_dict(block.msa_block.layer_norm.state_dict())
            layer.norm2.load_state_dict(block.mlp_block.layer_norm.state_dict())
            layer.linear1.load_state_dict(block.mlp_block.mlp[0].state_dict())
            layer.linear2.load_state_dict(block.mlp_block.mlp[3].state_dict())
        block.eval()
        layer.eval()
        x = patch_and_position_embedding.detach()
        res["block_vs_layer"] = (block(x) - layer(x)).abs().max().item() < 1e-5
        res["layer_out"] = numpy_of(layer(x))

        class ViT(nn.Module):
            """Creates a Vision Transformer architecture with ViT-Base hyperparameters by default."""

            def __init__(self, img_size: int = 224, in_channels: int = 3, patch_size: int = 16,
                         num_transformer_layers: int = 12, embedding_dim: int = 768, mlp_size: int = 3072,
                         num_heads: int = 12, attn_dropout: float = 0, mlp_dropout: float = 0.1,
                         embedding_dropout: float = 0.1, num_classes: int = 1000):
                super().__init__()
                assert img_size % patch_size == 0, f"Image size must be divisible by patch size, image size: {img_size}, patch size: {patch_size}."
                self.num_patches = (img_size * img_size) // patch_size**2
                self.class_embedding = nn.Parameter(data=torch.randn(1, 1, embedding_dim), requires_grad=True)
                self.position_embedding = nn.Parameter(data=torch.randn(1, self.num_patches + 1, embedding_dim),
                                                       requires_grad=True)
                self.embedding_dropout = nn.Dropout(p=embedding_dropout)
                self.patch_embedding = PatchEmbedding(in_channels=in_channels, patch_size=patch_size,
                                                      embedding_dim=embedding_dim)
                self.transformer_encoder = nn.Sequential(*[TransformerEncoderBlock(
                    embedding_dim=embedding_dim, num_heads=num_heads, mlp_size=mlp_size,
                    mlp_dropout=mlp_dropout) for _ in range(num_transformer_layers)])
                self.classifier = nn.Sequential(
                    nn.LayerNorm(normalized_shape=embedding_dim),
                    nn.Linear(in_features=embedding_dim, out_features=num_classes)
                )

            def forward(self, x):
                batch_size = x.shape[0]
                class_token = self.class_embedding.expand(batch_size, -1, -1)
                x = self.patch_embedding(x)
                x = torch.cat((class_token, x), dim=1)
                x = self.position_embedding + x
                x = self.embedding_dropout(x)
                x = self.transformer_encoder(x)
                x = self.classifier(x[:, 0])
                return x

        class_names = ["left", "top", "centre"]
        torch.manual_seed(42)
        random_image_tensor = torch.randn(1, 3, 32, 32)
        vit = ViT(img_size=32, patch_size=8, num_transformer_layers=2, embedding_dim=48, mlp_size=192,
                  num_heads=4, num_classes=len(class_names))
        print(vit(random_image_tensor).shape)

        train_dataloader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.from_numpy(train_x), torch.from_numpy(train_y)),
            batch_size=8, shuffle=True)
        test_dataloader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.from_numpy(test_x), torch.from_numpy(test_y)),
            batch_size=8, shuffle=False)

        def train_step(model, dataloader, loss_fn, optimizer, device):
            model.train()
            train_loss, train_acc = 0, 0
            for batch, (X, y) in enumerate(dataloader):
                X, y = X.to(device), y.to(device)
                y_pred = model(X)
                loss = loss_fn(y_pred, y)
                train_loss += loss.item()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                y_pred_class = torch.argmax(torch.softmax(y_pred, dim=1), dim=1)
                train_acc += (y_pred_class == y).sum().item() / len(y_pred)
            return train_loss / len(dataloader), train_acc / len(dataloader)

        def test_step(model, dataloader, loss_fn, device):
            model.eval()
            test_loss, test_acc = 0, 0
            with torch.inference_mode():
                for batch, (X, y) in enumerate(dataloader):
                    X, y = X.to(device), y.to(device)
                    test_pred_logits = model(X)
                    loss = loss_fn(test_pred_logits, y)
                    test_loss += loss.item()
                    test_pred_labels = test_pred_logits.argmax(dim=1)
                    test_acc += ((test_pred_labels == y).sum().item() / len(test_pred_labels))
            return test_loss / len(dataloader), test_acc / len(dataloader)

        device = "cuda" if torch.cuda.is_available() else "cpu"
        optimizer = torch.optim.Adam(params=vit.parameters(), lr=3e-3, betas=(0.9, 0.999), weight_decay=0.3)
        loss_fn = torch.nn.CrossEntropyLoss()
        torch.manual_seed(42)
        results = {"train_loss": [], "train_acc": [], "test_loss": [], "test_acc": []}
        for epoch in range(epochs):
            train_loss, train_acc = train_step(vit, train_dataloader, loss_fn, optimizer, device)
            test_loss, test_acc = test_step(vit, test_dataloader, loss_fn, device)
            print(f"Epoch: {epoch+1} | train_loss: {train_loss:.4f} | train_acc: {train_acc:.4f} | test_loss: {test_loss:.4f} | test_acc: {test_acc:.4f}")
            for k, v in zip(results, (train_loss, train_acc, test_loss, test_acc)):
                results[k].append(v)
        res["results"] = results
        vit.eval()
        with torch.inference_mode():
            target_image_pred = vit(torch.from_numpy(test_x[:1]).to(device))
        target_image_pred_probs = torch.softmax(target_image_pred, dim=1)
        target_image_pred_label = torch.argmax(target_image_pred_probs, dim=1)
        print(f"Pred: {class_names[target_image_pred_label]} | Prob: {target_image_pred_probs.max():.3f}")
        res["pred_probs"] = numpy_of(target_image_pred_probs)
    res["printed"] = printed_lines(out)
    return res


def test_ztm_08_vit_paper_replicating():
    ref, got = compare_program(vit_replicating, rtol=1e-3, atol=1e-4)
    assert got["block_vs_layer"] is True
    assert "Input image size must be divisble by patch size, image shape: 30, patch size: 8" in got["printed"]
