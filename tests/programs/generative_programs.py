"""Programs in the styles of public generative-model code: a VQ-VAE with a straight-through
vector quantiser and an EMA codebook, a RealNVP normalizing flow trained on two moons, and a
Wasserstein GAN with gradient penalty (and the original weight-clipped WGAN).

Each program takes one library's module triple (torch, nn, F), seeds torch's generator, runs
a few training steps on synthetic data in the default dtype and returns what it would print:
numbers, flags, error class names and the values of small tensors as lists.
``test_public_model_families.py`` runs it under both libraries and compares. The models,
names, sizes and constants are the programs' own."""

import math

from program_output import error_class, values


# ----- VQ-VAE -----------------------------------------------------------------------------------

def vq_vae(torch, nn, F):
    """A conv encoder and decoder around a vector quantiser (distances by the expanded square
    and by ``torch.cdist``, ``argmin``, one-hot by ``scatter_``, the straight-through
    estimator, codebook and commitment losses, perplexity) and its EMA variant with Laplace
    smoothing, trained a few steps on random images."""
    torch.manual_seed(0)
    printed = []

    class VectorQuantizer(nn.Module):
        def __init__(self, num_embeddings, embedding_dim, commitment_cost):
            super().__init__()
            self._embedding_dim = embedding_dim
            self._num_embeddings = num_embeddings
            self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
            self._embedding.weight.data.uniform_(-1 / self._num_embeddings,
                                                 1 / self._num_embeddings)
            self._commitment_cost = commitment_cost

        def forward(self, inputs):
            # convert inputs from BCHW -> BHWC
            inputs = inputs.permute(0, 2, 3, 1).contiguous()
            input_shape = inputs.shape
            flat_input = inputs.view(-1, self._embedding_dim)

            distances = (torch.sum(flat_input ** 2, dim=1, keepdim=True)
                         + torch.sum(self._embedding.weight ** 2, dim=1)
                         - 2 * torch.matmul(flat_input, self._embedding.weight.t()))

            encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
            encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings,
                                    device=inputs.device)
            encodings.scatter_(1, encoding_indices, 1)

            quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)

            e_latent_loss = F.mse_loss(quantized.detach(), inputs)
            q_latent_loss = F.mse_loss(quantized, inputs.detach())
            loss = q_latent_loss + self._commitment_cost * e_latent_loss

            quantized = inputs + (quantized - inputs).detach()
            avg_probs = torch.mean(encodings, dim=0)
            perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))

            return (loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity,
                    encoding_indices)

    class VectorQuantizerEMA(nn.Module):
        def __init__(self, num_embeddings, embedding_dim, commitment_cost, decay,
                     epsilon=1e-5):
            super().__init__()
            self._embedding_dim = embedding_dim
            self._num_embeddings = num_embeddings
            self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
            self._embedding.weight.data.normal_()
            self._commitment_cost = commitment_cost
            self.register_buffer("_ema_cluster_size", torch.zeros(num_embeddings))
            self._ema_w = nn.Parameter(torch.Tensor(num_embeddings, self._embedding_dim))
            self._ema_w.data.normal_()
            self._decay = decay
            self._epsilon = epsilon

        def forward(self, inputs):
            inputs = inputs.permute(0, 2, 3, 1).contiguous()
            input_shape = inputs.shape
            flat_input = inputs.view(-1, self._embedding_dim)

            distances = torch.cdist(flat_input, self._embedding.weight) ** 2
            encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
            encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings,
                                    device=inputs.device)
            encodings.scatter_(1, encoding_indices, 1)
            quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)

            if self.training:
                self._ema_cluster_size = (self._ema_cluster_size * self._decay
                                          + (1 - self._decay) * torch.sum(encodings, 0))
                # Laplace smoothing of the cluster size
                n = torch.sum(self._ema_cluster_size.data)
                self._ema_cluster_size = ((self._ema_cluster_size + self._epsilon)
                                          / (n + self._num_embeddings * self._epsilon) * n)
                dw = torch.matmul(encodings.t(), flat_input)
                self._ema_w.data.mul_(self._decay).add_(dw, alpha=1 - self._decay)
                self._embedding.weight = nn.Parameter(
                    self._ema_w / self._ema_cluster_size.unsqueeze(1))

            e_latent_loss = F.mse_loss(quantized.detach(), inputs)
            loss = self._commitment_cost * e_latent_loss
            quantized = inputs + (quantized - inputs).detach()
            avg_probs = torch.mean(encodings, dim=0)
            perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
            return (loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity,
                    encoding_indices)

    class Model(nn.Module):
        def __init__(self, vq, hidden=8, embedding_dim=4):
            super().__init__()
            self._encoder = nn.Sequential(
                nn.Conv2d(1, hidden, kernel_size=4, stride=2, padding=1), nn.ReLU(True),
                nn.Conv2d(hidden, embedding_dim, kernel_size=1, stride=1))
            self._vq_vae = vq
            self._decoder = nn.Sequential(
                nn.Conv2d(embedding_dim, hidden, kernel_size=3, stride=1, padding=1),
                nn.ReLU(True),
                nn.ConvTranspose2d(hidden, 1, kernel_size=4, stride=2, padding=1))

        def forward(self, x):
            z = self._encoder(x)
            loss, quantized, perplexity, _ = self._vq_vae(z)
            x_recon = self._decoder(quantized)
            return loss, x_recon, perplexity

    data = torch.rand(6, 1, 8, 8)
    data_variance = torch.var(data)
    for vq in (VectorQuantizer(16, 4, 0.25), VectorQuantizerEMA(16, 4, 0.25, 0.99)):
        model = Model(vq)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, amsgrad=False)
        model.train()
        for _step in range(3):
            optimizer.zero_grad()
            vq_loss, data_recon, perplexity = model(data)
            recon_error = F.mse_loss(data_recon, data) / data_variance
            loss = recon_error + vq_loss
            loss.backward()
            optimizer.step()
            printed += [recon_error.item(), vq_loss.item(), perplexity.item()]
        printed += [list(data_recon.shape), values(data_recon[0, 0, 0])]
        model.eval()
        with torch.no_grad():
            _, quantized, _, indices = model._vq_vae(model._encoder(data))
        printed += [indices.view(6, -1)[0].tolist(), values(quantized[0, :, 0, 0]),
                    math.isfinite(quantized.sum().item())]
    printed += [values(vq._ema_cluster_size), values(vq._embedding.weight[:2]),
                type(vq._embedding.weight).__name__]

    # the straight-through gradient: the decoder's gradient reaches the encoder unchanged
    z = torch.randn(2, 4, requires_grad=True)
    codebook = torch.randn(5, 4)
    idx = torch.cdist(z, codebook).argmin(dim=1)
    z_q = z + (codebook[idx] - z).detach()
    (z_q * torch.arange(4.0)).sum().backward()
    printed += [idx.tolist(), values(z.grad),
                values(F.one_hot(idx, num_classes=5).float().sum(0)),
                values(torch.cdist(z, codebook, p=1)), values(torch.cdist(z, codebook)[0])]
    return printed


# ----- normalizing flows ------------------------------------------------------------------------

def make_moons(torch, n_samples, noise):
    """Two interleaving half circles with Gaussian noise, as scikit-learn draws them."""
    n_out = n_samples // 2
    n_in = n_samples - n_out
    outer = torch.linspace(0, math.pi, n_out)
    inner = torch.linspace(0, math.pi, n_in)
    x = torch.cat([torch.cos(outer), 1 - torch.cos(inner)])
    y = torch.cat([torch.sin(outer), 1 - torch.sin(inner) - 0.5])
    points = torch.stack([x, y], dim=1)
    return points + noise * torch.randn_like(points)


def real_nvp(torch, nn, F):
    """RealNVP affine couplings with alternating masks held as buffers and tanh-bounded scales,
    per-sample log-determinants, a MultivariateNormal base, the NLL trained on two moons, the
    inverse pass for sampling, and a TransformedDistribution of Normal through Affine and
    Sigmoid transforms."""
    torch.manual_seed(0)
    distributions = torch.distributions
    printed = []

    class CouplingLayer(nn.Module):
        def __init__(self, dim, hidden, mask):
            super().__init__()
            self.register_buffer("mask", mask)
            self.s = nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(),
                                   nn.Linear(hidden, dim), nn.Tanh())
            self.t = nn.Sequential(nn.Linear(dim, hidden), nn.LeakyReLU(),
                                   nn.Linear(hidden, dim))
            self.scale = nn.Parameter(torch.ones(1, dim))

        def forward(self, x):
            x_masked = x * self.mask
            s = self.s(x_masked) * self.scale * (1 - self.mask)
            t = self.t(x_masked) * (1 - self.mask)
            y = x_masked + (1 - self.mask) * (x * torch.exp(s) + t)
            log_det = s.sum(dim=1)
            return y, log_det

        def inverse(self, y):
            y_masked = y * self.mask
            s = self.s(y_masked) * self.scale * (1 - self.mask)
            t = self.t(y_masked) * (1 - self.mask)
            x = y_masked + (1 - self.mask) * (y - t) * torch.exp(-s)
            return x

    class RealNVP(nn.Module):
        def __init__(self, n_layers=4, dim=2, hidden=16):
            super().__init__()
            masks = [torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0])
                     for i in range(n_layers)]
            self.layers = nn.ModuleList([CouplingLayer(dim, hidden, m) for m in masks])
            self.prior = distributions.MultivariateNormal(torch.zeros(dim), torch.eye(dim))

        def forward(self, x):
            log_det_sum = torch.zeros(x.shape[0])
            for layer in self.layers:
                x, log_det = layer(x)
                log_det_sum += log_det
            return x, log_det_sum

        def inverse(self, z):
            for layer in reversed(self.layers):
                z = layer.inverse(z)
            return z

        def log_prob(self, x):
            z, log_det = self(x)
            return self.prior.log_prob(z) + log_det

        def sample(self, n):
            z = self.prior.sample((n,))
            return self.inverse(z)

    x = make_moons(torch, 64, 0.05)
    flow = RealNVP()
    printed.append([name for name, _ in flow.named_buffers()])
    optimizer = torch.optim.Adam(flow.parameters(), lr=1e-3, weight_decay=1e-5)
    for _epoch in range(5):
        loss = -flow.log_prob(x).mean()
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(flow.parameters(), max_norm=5.0)
        optimizer.step()
        printed.append(loss.item())

    flow.eval()
    with torch.no_grad():
        z, log_det = flow(x[:4])
        x_back = flow.inverse(z)
        samples = flow.sample(3)
    printed += [values(z), values(log_det), torch.allclose(x_back, x[:4], atol=1e-5),
                values(samples), list(samples.shape)]

    base = distributions.Normal(torch.zeros(2), torch.ones(2))
    printed += [values(base.log_prob(z).sum(1)), values(flow.prior.log_prob(z)),
                values(flow.prior.entropy()), list(flow.prior.batch_shape),
                list(flow.prior.event_shape), list(base.batch_shape)]

    logistic = distributions.TransformedDistribution(
        distributions.Uniform(torch.zeros(2), torch.ones(2)),
        [distributions.transforms.SigmoidTransform().inv,
         distributions.transforms.AffineTransform(loc=torch.tensor([0.5, -1.0]),
                                                  scale=torch.tensor([2.0, 0.5]))])
    squashed = distributions.TransformedDistribution(
        base, [distributions.AffineTransform(loc=1.0, scale=3.0),
               distributions.SigmoidTransform()])
    points = torch.tensor([[0.2, 0.7], [0.9, 0.4]])
    printed += [values(logistic.log_prob(points)), values(squashed.log_prob(points)),
                list(logistic.sample((5,)).shape), values(squashed.rsample((2,)))]
    return printed


# ----- WGAN-GP ----------------------------------------------------------------------------------

def compute_gradient_penalty(torch, D, real_samples, fake_samples):
    """The gradient penalty of WGAN-GP on random interpolates of real and fake samples."""
    alpha = torch.rand(real_samples.size(0), 1)
    interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)).requires_grad_(True)
    d_interpolates = D(interpolates)
    gradients = torch.autograd.grad(
        outputs=d_interpolates,
        inputs=interpolates,
        grad_outputs=torch.ones_like(d_interpolates),
        create_graph=True,
        retain_graph=True,
        only_inputs=True,
    )[0]
    gradients = gradients.view(gradients.size(0), -1)
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
    return gradient_penalty


def wgan_gp(torch, nn, F):
    """A generator and a LayerNorm critic trained with the gradient penalty, Adam(0, 0.9),
    n_critic inner steps, detached fakes and the critic frozen by ``requires_grad`` for the
    generator's step; then the original WGAN's weight clipping with RMSprop."""
    torch.manual_seed(0)
    printed = []
    latent_dim, data_dim, batch_size = 4, 2, 16
    lambda_gp, n_critic = 10, 3

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()

            def block(in_feat, out_feat, normalize=True):
                layers = [nn.Linear(in_feat, out_feat)]
                if normalize:
                    layers.append(nn.BatchNorm1d(out_feat, 0.8))
                layers.append(nn.LeakyReLU(0.2, inplace=True))
                return layers

            self.model = nn.Sequential(*block(latent_dim, 16, normalize=False),
                                       *block(16, 16), nn.Linear(16, data_dim))

        def forward(self, z):
            return self.model(z)

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Sequential(
                nn.Linear(data_dim, 16), nn.LayerNorm(16), nn.LeakyReLU(0.2, inplace=True),
                nn.Linear(16, 16), nn.LeakyReLU(0.2, inplace=True), nn.Linear(16, 1))

        def forward(self, x):
            validity = self.model(x)
            return validity

    real_data = torch.randn(64, data_dim) * 0.5 + torch.tensor([2.0, -1.0])
    generator, discriminator = Generator(), Critic()
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.0, 0.9))
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=1e-3, betas=(0.0, 0.9))
    batches = torch.split(real_data[torch.randperm(64)], batch_size)
    for real_imgs in batches:
        for p in discriminator.parameters():
            p.requires_grad = True
        for _ in range(n_critic):
            optimizer_D.zero_grad()
            z = torch.randn(real_imgs.shape[0], latent_dim)
            fake_imgs = generator(z)
            real_validity = discriminator(real_imgs)
            fake_validity = discriminator(fake_imgs.detach())
            gradient_penalty = compute_gradient_penalty(torch, discriminator, real_imgs.data,
                                                        fake_imgs.data)
            d_loss = (-torch.mean(real_validity) + torch.mean(fake_validity)
                      + lambda_gp * gradient_penalty)
            d_loss.backward()
            optimizer_D.step()
        for p in discriminator.parameters():
            p.requires_grad_(False)
        optimizer_G.zero_grad()
        fake_imgs = generator(torch.randn(batch_size, latent_dim))
        g_loss = -torch.mean(discriminator(fake_imgs))
        g_loss.backward()
        optimizer_G.step()
        printed += [d_loss.item(), g_loss.item(), gradient_penalty.item(),
                    all(p.grad is None or not p.grad.abs().sum().item()
                        for p in discriminator.parameters())]
    printed.append([p.requires_grad for p in discriminator.parameters()])

    # the gradient of the penalty itself: a second derivative through LayerNorm and LeakyReLU
    for p in discriminator.parameters():
        p.requires_grad_(True)
    discriminator.zero_grad(set_to_none=True)
    penalty = compute_gradient_penalty(torch, discriminator, real_data[:8],
                                       generator(torch.randn(8, latent_dim)).detach())
    penalty.backward()
    printed += [penalty.item(), values(discriminator.model[0].weight.grad),
                values(discriminator.model[1].weight.grad[:4])]

    # the original WGAN: RMSprop and the critic's weights clipped after each step
    clip_value = 0.01
    critic = Critic()
    optimizer = torch.optim.RMSprop(critic.parameters(), lr=5e-3)
    for _step in range(4):
        optimizer.zero_grad()
        fake = generator(torch.randn(batch_size, latent_dim)).detach()
        loss_D = -torch.mean(critic(real_data[:batch_size])) + torch.mean(critic(fake))
        loss_D.backward()
        optimizer.step()
        for p in critic.parameters():
            p.data.clamp_(-clip_value, clip_value)
        printed.append(loss_D.item())
    printed += [max(p.abs().max().item() for p in critic.parameters()) <= clip_value,
                values(critic.model[0].weight)]
    return printed


# ----- VQ-VAE-2 style quantiser -----------------------------------------------------------------

def vq_vae_2(torch, nn, F):
    """The VQ-VAE-2 style quantiser: the codebook a (dim, n_embed) buffer, distances by
    ``addmm`` and the expanded square, ``(-dist).max(1)``, ``F.one_hot(...).type(dtype)``, the
    EMA update by ``mul_``/``add_(alpha=)`` and ``copy_`` under ``no_grad``, lookups by
    ``F.embedding``; dead codes restarted from random inputs, and a Gumbel-softmax variant."""
    torch.manual_seed(2)
    printed = []

    class Quantize(nn.Module):
        def __init__(self, dim, n_embed, decay=0.99, eps=1e-5):
            super().__init__()
            self.dim = dim
            self.n_embed = n_embed
            self.decay = decay
            self.eps = eps
            embed = torch.randn(dim, n_embed)
            self.register_buffer("embed", embed)
            self.register_buffer("cluster_size", torch.zeros(n_embed))
            self.register_buffer("embed_avg", embed.clone())

        def forward(self, input):
            flatten = input.reshape(-1, self.dim)
            dist = (flatten.pow(2).sum(1, keepdim=True) - 2 * flatten @ self.embed
                    + self.embed.pow(2).sum(0, keepdim=True))
            _, embed_ind = (-dist).max(1)
            embed_onehot = F.one_hot(embed_ind, self.n_embed).type(flatten.dtype)
            embed_ind = embed_ind.view(*input.shape[:-1])
            quantize = self.embed_code(embed_ind)

            if self.training:
                embed_onehot_sum = embed_onehot.sum(0)
                embed_sum = flatten.transpose(0, 1) @ embed_onehot
                self.cluster_size.data.mul_(self.decay).add_(
                    embed_onehot_sum, alpha=1 - self.decay)
                self.embed_avg.data.mul_(self.decay).add_(embed_sum, alpha=1 - self.decay)
                n = self.cluster_size.sum()
                cluster_size = ((self.cluster_size + self.eps)
                                / (n + self.n_embed * self.eps) * n)
                embed_normalized = self.embed_avg / cluster_size.unsqueeze(0)
                self.embed.data.copy_(embed_normalized)

            diff = (quantize.detach() - input).pow(2).mean()
            quantize = input + (quantize - input).detach()
            return quantize, diff, embed_ind

        def embed_code(self, embed_id):
            return F.embedding(embed_id, self.embed.transpose(0, 1))

    class ResBlock(nn.Module):
        def __init__(self, in_channel, channel):
            super().__init__()
            self.conv = nn.Sequential(
                nn.ReLU(),
                nn.Conv2d(in_channel, channel, 3, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(channel, in_channel, 1),
            )

        def forward(self, input):
            out = self.conv(input)
            out += input
            return out

    encoder = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2, padding=1), ResBlock(8, 4),
                            nn.ReLU(inplace=True))
    quantize_conv = nn.Conv2d(8, 4, 1)
    quantize = Quantize(4, 12)
    decoder = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), ResBlock(8, 4),
                            nn.ReLU(inplace=True), nn.ConvTranspose2d(8, 3, 4, stride=2,
                                                                      padding=1))
    params = [*encoder.parameters(), *quantize_conv.parameters(), *decoder.parameters()]
    optimizer = torch.optim.Adam(params, lr=3e-4)
    criterion = nn.MSELoss()
    img = torch.rand(4, 3, 8, 8) * 2 - 1
    for _i in range(3):
        optimizer.zero_grad()
        quant = quantize_conv(encoder(img)).permute(0, 2, 3, 1)
        quant, diff, ind = quantize(quant)
        out = decoder(quant.permute(0, 3, 1, 2))
        recon_loss = criterion(out, img)
        latent_loss = diff.mean()
        loss = recon_loss + 0.25 * latent_loss
        loss.backward()
        optimizer.step()
        printed += [recon_loss.item(), latent_loss.item(), list(ind.shape)]
    printed += [values(quantize.cluster_size), values(quantize.embed[:, :3]),
                ind[0].tolist(), torch.bincount(ind.flatten(), minlength=12).tolist()]

    # the zalando-style distances by addmm, against the expanded square and cdist
    z = torch.randn(10, 4)
    codebook = nn.Embedding(6, 4)
    nn.init.uniform_(codebook.weight, -1 / 6, 1 / 6)
    e = codebook.weight
    by_addmm = torch.addmm(torch.sum(z ** 2, dim=1, keepdim=True) + torch.sum(e ** 2, dim=1),
                           z, e.t(), beta=1.0, alpha=-2.0)
    by_square = (torch.sum(z ** 2, dim=1, keepdim=True) + torch.sum(e ** 2, dim=1)
                 - 2 * torch.matmul(z, e.t()))
    by_cdist = torch.cdist(z.unsqueeze(0), e.unsqueeze(0)).squeeze(0) ** 2
    printed += [torch.allclose(by_addmm, by_square), torch.allclose(by_cdist, by_square,
                                                                     atol=1e-5),
                torch.argmin(by_addmm, dim=1, keepdim=True).view(-1).tolist(),
                values(by_addmm[:2])]

    # dead codes: those under a usage threshold restarted from random encoder outputs
    usage = torch.bincount(torch.argmin(by_square, dim=1), minlength=6).float()
    dead = torch.where(usage < 1.0)[0]
    with torch.no_grad():
        picks = torch.randperm(z.shape[0])[: len(dead)]
        codebook.weight.data[dead] = z[picks]
        codebook.weight.index_copy_(0, dead[:1], z[:1] * 0.5)
    printed += [dead.tolist(), values(codebook.weight[dead]), usage.tolist()]

    # a Gumbel-softmax quantiser: hard one-hot codes with the soft gradient
    logits = torch.randn(5, 6, requires_grad=True)
    soft_one_hot = F.gumbel_softmax(logits, tau=0.9, hard=True, dim=1)
    z_q = torch.einsum("bn,nd->bd", soft_one_hot, codebook.weight)
    qy = F.softmax(logits, dim=1)
    kl = torch.sum(qy * torch.log(qy * 6 + 1e-10), dim=1).mean()
    (z_q.sum() + kl).backward()
    avg_probs = soft_one_hot.mean(0)
    perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
    printed += [soft_one_hot.argmax(1).tolist(), values(soft_one_hot.sum(1)), kl.item(),
                values(logits.grad[0]), perplexity.item(),
                torch.distributions.Categorical(probs=qy).entropy().mean().item()]
    return printed


# ----- Glow and MAF flows -----------------------------------------------------------------------

def glow_maf(torch, nn, F):
    """Glow's pieces (ActNorm with data-dependent initialisation, an invertible 1x1 map by its
    LU factors, an affine coupling by ``chunk`` and ``sigmoid(s + 2)``), a MADE-masked linear
    for a MAF, checkerboard masks by ``arange``, an ``Independent`` Normal base, and the
    transforms' own log-determinants."""
    torch.manual_seed(3)
    distributions = torch.distributions
    printed = []

    class ActNorm(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.loc = nn.Parameter(torch.zeros(1, dim))
            self.log_scale = nn.Parameter(torch.zeros(1, dim))
            self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

        @torch.no_grad()
        def initialize(self, x):
            mean = x.mean(dim=0, keepdim=True)
            std = x.std(dim=0, keepdim=True)
            self.loc.data.copy_(-mean)
            self.log_scale.data.copy_(torch.log(1 / (std + 1e-6)))

        def forward(self, x):
            if self.initialized.item() == 0:
                self.initialize(x)
                self.initialized.fill_(1)
            y = (x + self.loc) * torch.exp(self.log_scale)
            return y, torch.sum(self.log_scale).expand(x.shape[0])

    class InvertibleLinearLU(nn.Module):
        def __init__(self, dim):
            super().__init__()
            weight = torch.linalg.qr(torch.randn(dim, dim))[0]
            w_p, w_l, w_u = torch.linalg.lu(weight)
            w_s = torch.diag(w_u)
            self.register_buffer("w_p", w_p)
            self.register_buffer("u_mask", torch.triu(torch.ones_like(w_u), 1))
            self.register_buffer("l_mask", self.u_mask.T.contiguous())
            self.register_buffer("s_sign", torch.sign(w_s))
            self.register_buffer("l_eye", torch.eye(dim))
            self.w_l = nn.Parameter(w_l)
            self.w_s = nn.Parameter(torch.log(torch.abs(w_s)))
            self.w_u = nn.Parameter(torch.triu(w_u, 1))

        def calc_weight(self):
            return self.w_p @ (self.w_l * self.l_mask + self.l_eye) @ (
                (self.w_u * self.u_mask) + torch.diag(self.s_sign * torch.exp(self.w_s)))

        def forward(self, x):
            weight = self.calc_weight()
            return F.linear(x, weight), torch.sum(self.w_s).expand(x.shape[0])

        def inverse(self, y):
            return F.linear(y, torch.inverse(self.calc_weight()))

    class AffineCoupling(nn.Module):
        def __init__(self, dim, hidden):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(dim // 2, hidden), nn.ReLU(inplace=True),
                                     nn.Linear(hidden, dim))
            self.net[-1].weight.data.zero_()
            self.net[-1].bias.data.zero_()

        def forward(self, x):
            in_a, in_b = x.chunk(2, 1)
            log_s, t = self.net(in_a).chunk(2, 1)
            s = torch.sigmoid(log_s + 2)
            out_b = (in_b + t) * s
            logdet = torch.sum(torch.log(s).view(x.shape[0], -1), 1)
            return torch.cat([in_a, out_b], 1), logdet

    class MaskedLinear(nn.Linear):
        def __init__(self, in_features, out_features, bias=True):
            super().__init__(in_features, out_features, bias)
            self.register_buffer("mask", torch.ones(out_features, in_features))

        def set_mask(self, mask):
            self.mask.data.copy_(mask.T)

        def forward(self, input):
            return F.linear(input, self.mask * self.weight, self.bias)

    dim = 4
    x = torch.cat([make_moons(torch, 32, 0.1), torch.randn(32, 2) * 0.3], dim=1)
    layers = nn.ModuleList([ActNorm(dim), InvertibleLinearLU(dim), AffineCoupling(dim, 8)])
    base = distributions.Independent(distributions.Normal(torch.zeros(dim), torch.ones(dim)), 1)
    with torch.no_grad():                      # ActNorm's data-dependent init on its own batch
        layers[0](torch.cat([make_moons(torch, 16, 0.1), torch.randn(16, 2) * 0.3], dim=1))
    optimizer = torch.optim.Adam(layers.parameters(), lr=1e-2)
    for _step in range(4):
        z, logdet = x, torch.zeros(x.shape[0])
        for layer in layers:
            z, ld = layer(z)
            logdet = logdet + ld
        loss = -(base.log_prob(z) + logdet).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        printed.append(loss.item())
    lu = layers[1]
    weight = lu.calc_weight()
    sign, logabsdet = torch.linalg.slogdet(weight)
    printed += [sign.item(), logabsdet.item(), lu.w_s.sum().item(),
                torch.log(torch.abs(torch.det(weight))).item(),
                values(lu.inverse(F.linear(x[:2], weight))), values(x[:2]),
                layers[0].initialized.item(), values(layers[0].loc),
                list(base.batch_shape), list(base.event_shape), values(base.log_prob(z[:3]))]

    # MADE degrees and masks for a MAF layer; the autoregressive property by the Jacobian
    in_degrees = torch.arange(1, dim + 1)
    hidden_degrees = torch.arange(8) % (dim - 1) + 1
    mask_hidden = (hidden_degrees[None, :] >= in_degrees[:, None]).float()
    mask_out = (in_degrees[None, :] > hidden_degrees[:, None]).float()
    first, second = MaskedLinear(dim, 8), MaskedLinear(8, 2 * dim)
    first.set_mask(mask_hidden)
    second.set_mask(mask_out.repeat(1, 2))
    made = nn.Sequential(first, nn.Tanh(), second)
    jacobian = torch.autograd.functional.jacobian(lambda v: made(v)[:dim], x[0])
    mu, alpha = made(x).chunk(2, dim=1)
    u = (x - mu) * torch.exp(-alpha)
    log_det = -alpha.sum(dim=1)
    printed += [torch.equal(torch.triu(jacobian), torch.zeros_like(jacobian)),
                values(mask_hidden), values(u[:2]), values(log_det[:4])]

    # checkerboard masks by arange, permutations and their inverses
    mask = (torch.arange(dim) % 2).float()
    perm = torch.randperm(dim)
    inverse_perm = torch.argsort(perm)
    printed += [values(mask), values(1 - mask), torch.equal(x[:, perm][:, inverse_perm], x),
                values(torch.flip(x[:1], dims=(1,)))]

    # the transforms' own log-determinants, a composition and its inverse
    compose = distributions.transforms.ComposeTransform(
        [distributions.transforms.AffineTransform(loc=0.5, scale=2.0),
         distributions.transforms.TanhTransform(cache_size=1)])
    y = compose(x[:3, :2])
    printed += [values(y), values(compose.log_abs_det_jacobian(x[:3, :2], y)),
                torch.allclose(compose.inv(y), x[:3, :2], atol=1e-4),
                values(distributions.transforms.ExpTransform().log_abs_det_jacobian(
                    x[:1], x[:1].exp()))]
    flow = distributions.TransformedDistribution(
        distributions.Normal(torch.zeros(2), torch.ones(2)),
        [distributions.transforms.AffineTransform(torch.zeros(2), torch.tensor([1.5, 0.5])),
         distributions.transforms.TanhTransform()])
    printed += [values(flow.log_prob(torch.tensor([[0.1, -0.3], [0.5, 0.2]]))),
                values(flow.sample((2,))), list(flow.event_shape)]
    return printed


# ----- a convolutional WGAN-GP as older public code writes it ---------------------------------

def wgan_gp_conv(torch, nn, F):
    """A DCGAN-sized WGAN-GP as older public files write it: ``Tensor = torch.FloatTensor``,
    ``Variable``, NumPy noise, ``weights_init`` by class name, an InstanceNorm and
    LayerNorm([C, H, W]) critic, the penalty through convolutions by ``autograd.grad`` with
    ``grad_outputs`` filled by ``fill_(1.0)``, ``backward(mone)`` habits, and the critic's
    parameters frozen for the generator."""
    import numpy as np

    autograd = torch.autograd                  # from torch import autograd
    Variable = torch.autograd.Variable         # from torch.autograd import Variable

    torch.manual_seed(4)
    np.random.seed(4)
    printed = []
    Tensor = torch.DoubleTensor if torch.get_default_dtype() == torch.float64 else (
        torch.FloatTensor)
    latent_dim, img_shape = 6, (1, 8, 8)

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            m.weight.data.normal_(0.0, 0.02)
        elif classname.find("Norm") != -1 and getattr(m, "weight", None) is not None:
            m.weight.data.normal_(1.0, 0.02)
            m.bias.data.fill_(0)

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.init_size = 2
            self.l1 = nn.Sequential(nn.Linear(latent_dim, 8 * self.init_size ** 2))
            self.conv_blocks = nn.Sequential(
                nn.Upsample(scale_factor=2),
                nn.Conv2d(8, 8, 3, stride=1, padding=1),
                nn.BatchNorm2d(8, 0.8),
                nn.LeakyReLU(0.2, inplace=True),
                nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(4, img_shape[0], 3, stride=1, padding=1),
                nn.Tanh(),
            )

        def forward(self, z):
            out = self.l1(z)
            out = out.view(out.shape[0], 8, self.init_size, self.init_size)
            img = self.conv_blocks(out)
            return img

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Sequential(
                nn.Conv2d(1, 4, 3, 2, 1), nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(4, 8, 3, 2, 1), nn.InstanceNorm2d(8, affine=True),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(8, 8, 3, 1, 1), nn.LayerNorm([8, 2, 2]), nn.ELU())
            self.adv_layer = nn.Linear(8 * 2 * 2, 1)

        def forward(self, img):
            out = self.model(img)
            out = out.view(out.shape[0], -1)
            validity = self.adv_layer(out)
            return validity

    def compute_gradient_penalty(D, real_samples, fake_samples):
        alpha = Tensor(np.random.random((real_samples.size(0), 1, 1, 1)))
        interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)).requires_grad_(
            True)
        d_interpolates = D(interpolates)
        fake = Variable(Tensor(real_samples.shape[0], 1).fill_(1.0), requires_grad=False)
        gradients = autograd.grad(outputs=d_interpolates, inputs=interpolates,
                                  grad_outputs=fake, create_graph=True, retain_graph=True,
                                  only_inputs=True)[0]
        gradients = gradients.view(gradients.size(0), -1)
        slopes = torch.sqrt(torch.sum(gradients ** 2, dim=1) + 1e-12)
        return ((slopes - 1) ** 2).mean()

    generator, discriminator = Generator(), Discriminator()
    generator.apply(weights_init)
    discriminator.apply(weights_init)
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.0, 0.9))
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.0, 0.9))
    one = torch.tensor(1, dtype=torch.get_default_dtype())
    mone = one * -1
    images = torch.rand(8, *img_shape) * 2 - 1
    for _i in range(2):
        real_imgs = Variable(images.type(Tensor))
        for p in discriminator.parameters():
            p.requires_grad = True
        for _ in range(2):
            discriminator.zero_grad()
            z = Variable(Tensor(np.random.normal(0, 1, (images.shape[0], latent_dim))))
            fake_imgs = generator(z)
            d_real = discriminator(real_imgs).mean()
            d_real.backward(mone)
            d_fake = discriminator(fake_imgs.detach()).mean()
            d_fake.backward(one)
            gradient_penalty = compute_gradient_penalty(discriminator, real_imgs.data,
                                                        fake_imgs.data)
            (10 * gradient_penalty).backward()
            optimizer_D.step()
            printed += [d_real.item(), d_fake.item(), gradient_penalty.item(),
                        (d_fake - d_real + 10 * gradient_penalty).item()]
        for p in discriminator.parameters():
            p.requires_grad = False
        generator.zero_grad()
        g_cost = discriminator(generator(z)).mean()
        g_cost.backward(mone)
        optimizer_G.step()
        printed += [-g_cost.item(), (d_real - d_fake).item()]
    printed += [values(discriminator.model[3].weight), values(generator.l1[0].bias[:4]),
                values(generator.conv_blocks[2].running_mean),
                error_class(lambda: d_real.backward(torch.ones(1))),
                isinstance(real_imgs, Variable), discriminator.model[0].weight.requires_grad,
                values(discriminator.adv_layer.weight.grad[0, :4])]
    return printed
