"""The widely used VQ-VAE notebook (a PyTorch port of the Sonnet example), smaller: a
VectorQuantizer whose codebook is an nn.Embedding initialised by weight.data.uniform_(-1/K, 1/K),
distances written as |x|^2 + |e|^2 - 2 x e^T, torch.argmin(...).unsqueeze(1), one-hot encodings by
scatter_(1, encoding_indices, 1), the commitment and codebook losses with .detach(), the
straight-through quantized = inputs + (quantized - inputs).detach() and the codebook perplexity;
the EMA variant (a registered _ema_cluster_size buffer, Laplace smoothing, and _ema_w and the
embedding weight replaced by new nn.Parameters inside forward); an Encoder and Decoder of strided
Conv2d/ConvTranspose2d and a ResidualStack over nn.ModuleList with bias-free convs and ReLU(True);
training with recon_error = F.mse_loss(data_recon, data) / data_variance, Adam(amsgrad=False)."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def vqvae(torch, init=None, decay=0.0, steps=5, batch_size=8, num_hiddens=16, num_residual_hiddens=8,
          num_residual_layers=2, embedding_dim=4, num_embeddings=16, commitment_cost=0.25, learning_rate=1e-3):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    # The notebook writes these two parts out in both quantizers' forward.
    def nearest_codes(self, inputs):
        # convert inputs from BCHW -> BHWC
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape
        # Flatten input
        flat_input = inputs.view(-1, self._embedding_dim)
        # Calculate distances
        distances = (torch.sum(flat_input**2, dim=1, keepdim=True)
                     + torch.sum(self._embedding.weight**2, dim=1)
                     - 2 * torch.matmul(flat_input, self._embedding.weight.t()))
        # Encoding
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings, device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)
        # Quantize and unflatten
        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)
        return inputs, flat_input, encodings, quantized

    def straight_through(loss, inputs, quantized, encodings):
        # Straight Through Estimator
        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
        # convert quantized from BHWC -> BCHW
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings

    class VectorQuantizer(nn.Module):
        def __init__(self, num_embeddings, embedding_dim, commitment_cost):
            super(VectorQuantizer, self).__init__()
            self._embedding_dim = embedding_dim
            self._num_embeddings = num_embeddings
            self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
            self._embedding.weight.data.uniform_(-1/self._num_embeddings, 1/self._num_embeddings)
            self._commitment_cost = commitment_cost

        def forward(self, inputs):
            inputs, flat_input, encodings, quantized = nearest_codes(self, inputs)
            # Loss
            e_latent_loss = F.mse_loss(quantized.detach(), inputs)
            q_latent_loss = F.mse_loss(quantized, inputs.detach())
            loss = q_latent_loss + self._commitment_cost * e_latent_loss
            return straight_through(loss, inputs, quantized, encodings)

    class VectorQuantizerEMA(nn.Module):
        def __init__(self, num_embeddings, embedding_dim, commitment_cost, decay, epsilon=1e-5):
            super(VectorQuantizerEMA, self).__init__()
            self._embedding_dim = embedding_dim
            self._num_embeddings = num_embeddings
            self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
            self._embedding.weight.data.normal_()
            self._commitment_cost = commitment_cost
            self.register_buffer('_ema_cluster_size', torch.zeros(num_embeddings))
            self._ema_w = nn.Parameter(torch.Tensor(num_embeddings, self._embedding_dim))
            self._ema_w.data.normal_()
            self._decay = decay
            self._epsilon = epsilon

        def forward(self, inputs):
            inputs, flat_input, encodings, quantized = nearest_codes(self, inputs)
            # Use EMA to update the embedding vectors
            if self.training:
                self._ema_cluster_size = self._ema_cluster_size * self._decay + \
                    (1 - self._decay) * torch.sum(encodings, 0)
                # Laplace smoothing of the cluster size
                n = torch.sum(self._ema_cluster_size.data)
                self._ema_cluster_size = (
                    (self._ema_cluster_size + self._epsilon)
                    / (n + self._num_embeddings * self._epsilon) * n)
                dw = torch.matmul(encodings.t(), flat_input)
                self._ema_w = nn.Parameter(self._ema_w * self._decay + (1 - self._decay) * dw)
                self._embedding.weight = nn.Parameter(self._ema_w / self._ema_cluster_size.unsqueeze(1))
            # Loss
            e_latent_loss = F.mse_loss(quantized.detach(), inputs)
            loss = self._commitment_cost * e_latent_loss
            return straight_through(loss, inputs, quantized, encodings)

    class Residual(nn.Module):
        def __init__(self, in_channels, num_hiddens, num_residual_hiddens):
            super(Residual, self).__init__()
            self._block = nn.Sequential(
                nn.ReLU(True),
                nn.Conv2d(in_channels=in_channels, out_channels=num_residual_hiddens,
                          kernel_size=3, stride=1, padding=1, bias=False),
                nn.ReLU(True),
                nn.Conv2d(in_channels=num_residual_hiddens, out_channels=num_hiddens, kernel_size=1, stride=1, bias=False)
            )

        def forward(self, x):
            return x + self._block(x)

    class ResidualStack(nn.Module):
        def __init__(self, in_channels, num_hiddens, num_residual_layers, num_residual_hiddens):
            super(ResidualStack, self).__init__()
            self._num_residual_layers = num_residual_layers
            self._layers = nn.ModuleList([Residual(in_channels, num_hiddens, num_residual_hiddens)
                                          for _ in range(self._num_residual_layers)])

        def forward(self, x):
            for i in range(self._num_residual_layers):
                x = self._layers[i](x)
            return F.relu(x)

    class Encoder(nn.Module):
        def __init__(self, in_channels, num_hiddens, num_residual_layers, num_residual_hiddens):
            super(Encoder, self).__init__()
            self._conv_1 = nn.Conv2d(in_channels=in_channels, out_channels=num_hiddens//2,
                                     kernel_size=4, stride=2, padding=1)
            self._conv_2 = nn.Conv2d(in_channels=num_hiddens//2, out_channels=num_hiddens,
                                     kernel_size=4, stride=2, padding=1)
            self._conv_3 = nn.Conv2d(in_channels=num_hiddens, out_channels=num_hiddens,
                                     kernel_size=3, stride=1, padding=1)
            self._residual_stack = ResidualStack(in_channels=num_hiddens, num_hiddens=num_hiddens,
                                                 num_residual_layers=num_residual_layers,
                                                 num_residual_hiddens=num_residual_hiddens)

        def forward(self, inputs):
            x = self._conv_1(inputs)
            x = F.relu(x)
            x = self._conv_2(x)
            x = F.relu(x)
            x = self._conv_3(x)
            return self._residual_stack(x)

    class Decoder(nn.Module):
        def __init__(self, in_channels, num_hiddens, num_residual_layers, num_residual_hiddens):
            super(Decoder, self).__init__()
            self._conv_1 = nn.Conv2d(in_channels=in_channels, out_channels=num_hiddens,
                                     kernel_size=3, stride=1, padding=1)
            self._residual_stack = ResidualStack(in_channels=num_hiddens, num_hiddens=num_hiddens,
                                                 num_residual_layers=num_residual_layers,
                                                 num_residual_hiddens=num_residual_hiddens)
            self._conv_trans_1 = nn.ConvTranspose2d(in_channels=num_hiddens, out_channels=num_hiddens//2,
                                                    kernel_size=4, stride=2, padding=1)
            self._conv_trans_2 = nn.ConvTranspose2d(in_channels=num_hiddens//2, out_channels=3,
                                                    kernel_size=4, stride=2, padding=1)

        def forward(self, inputs):
            x = self._conv_1(inputs)
            x = self._residual_stack(x)
            x = self._conv_trans_1(x)
            x = F.relu(x)
            return self._conv_trans_2(x)

    class Model(nn.Module):
        def __init__(self, num_hiddens, num_residual_layers, num_residual_hiddens, num_embeddings, embedding_dim,
                     commitment_cost, decay=0):
            super(Model, self).__init__()
            self._encoder = Encoder(3, num_hiddens, num_residual_layers, num_residual_hiddens)
            self._pre_vq_conv = nn.Conv2d(in_channels=num_hiddens, out_channels=embedding_dim, kernel_size=1, stride=1)
            if decay > 0.0:
                self._vq_vae = VectorQuantizerEMA(num_embeddings, embedding_dim, commitment_cost, decay)
            else:
                self._vq_vae = VectorQuantizer(num_embeddings, embedding_dim, commitment_cost)
            self._decoder = Decoder(embedding_dim, num_hiddens, num_residual_layers, num_residual_hiddens)

        def forward(self, x):
            z = self._encoder(x)
            z = self._pre_vq_conv(z)
            loss, quantized, perplexity, _ = self._vq_vae(z)
            x_recon = self._decoder(quantized)
            return loss, x_recon, perplexity

    model = Model(num_hiddens, num_residual_layers, num_residual_hiddens, num_embeddings, embedding_dim,
                  commitment_cost, decay)
    result = {}
    start_from(torch, model, init, result)
    rng = np.random.default_rng(0)
    # smooth colour images: a few sinusoids per channel, in [-0.5, 0.5] as the notebook's transform makes them
    grid = np.linspace(0, np.pi, 16)
    train = np.stack([np.stack([np.sin(a * grid[:, None] + b * grid[None, :] + c) for a, b, c in
                                rng.uniform(0.5, 3, (3, 3))]) for _ in range(steps * batch_size)]).astype(np.float32) / 2
    data_variance = np.var(train)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate, amsgrad=False)
    model.train()
    train_res_recon_error = []
    train_res_perplexity = []
    for i in range(steps):
        data = torch.from_numpy(train[i * batch_size:(i + 1) * batch_size])
        optimizer.zero_grad()
        vq_loss, data_recon, perplexity = model(data)
        recon_error = F.mse_loss(data_recon, data) / data_variance
        loss = recon_error + vq_loss
        loss.backward()
        optimizer.step()
        train_res_recon_error.append(recon_error.item())
        train_res_perplexity.append(perplexity.item())
    model.eval()
    with torch.no_grad():
        valid_quantize = model._vq_vae(model._pre_vq_conv(model._encoder(torch.from_numpy(train[:4]))))
    _, quantized, _, encodings = valid_quantize
    result.update(recon=train_res_recon_error, perplexity=train_res_perplexity, codes=numpy_of(encodings.argmax(1)),
                  quantized=numpy_of(quantized), state={k: numpy_of(v) for k, v in model.state_dict().items()})
    return result


def test_vqvae():
    ref, got = compare_program(vqvae, rtol=1e-3, atol=1e-4)
    assert ref["quantized"].shape == (4, 4, 4, 4) and 1 <= ref["perplexity"][-1] <= 16


def test_vqvae_ema():
    ref, got = compare_program(vqvae, decay=0.99, rtol=1e-3, atol=1e-4)
    assert "_vq_vae._ema_cluster_size" in ref["state"] and "_vq_vae._ema_w" in ref["state"]
