"""Programs in the styles of PyTorch's vision examples: an MNIST-like CNN, a hogwild-style
loop, a VAE, a DCGAN-like pair, sub-pixel super-resolution, fast style transfer and a siamese
network.

Each program exercises the calls and habits such examples use, in models, names, sizes and
constants of its own. It takes the module triple (torch, nn, F) of one library, seeds torch's
generator, trains a tiny model on synthetic data for a few steps and returns what it would
print; ``test_pytorch_examples.py`` runs it under both libraries."""

import collections
import math



# ----- the MNIST CNN and the hogwild-style loop ------------------------------------------------

def mnist_cnn(torch, nn, F):
    """A digit classifier of two convolutions, max pooling, dropout on the maps and on the
    hidden layer, and log_softmax, trained by Adadelta under StepLR; after each epoch a held-out
    pass sums nll_loss and counts the argmax hits."""
    optim, data = torch.optim, torch.utils.data
    torch.manual_seed(21)

    class DigitNet(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.stem = nn.Conv2d(1, 5, 3, 1)
            self.deeper = nn.Conv2d(5, 6, 3, 1)
            self.drop_maps = nn.Dropout(0.3)
            self.hidden = nn.Linear(6 * 4 * 4, 12)
            self.drop_hidden = nn.Dropout(0.4)
            self.logits = nn.Linear(12, classes)

        def features(self, x):                                     # (N, 1, 12, 12)
            x = F.relu(self.deeper(F.relu(self.stem(x))))          # (N, 6, 8, 8)
            return torch.flatten(self.drop_maps(F.max_pool2d(x, 2)), 1)   # (N, 96)

        def forward(self, x):
            hidden = self.drop_hidden(F.relu(self.hidden(self.features(x))))
            return F.log_softmax(self.logits(hidden), dim=1)

    def fit_pass(model, loader, optimizer):
        model.train()
        losses = []
        for images, labels in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(images), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    def held_out(model, loader):
        model.eval()
        summed, hits = 0.0, 0
        with torch.no_grad():
            for images, labels in loader:
                log_probs = model(images)
                summed += F.nll_loss(log_probs, labels, reduction="sum").item()
                guess = log_probs.argmax(dim=1, keepdim=True)             # (N, 1)
                hits += guess.eq(labels.view_as(guess)).sum().item()
        return [summed / len(loader.dataset), hits]

    pixels, digits = torch.randn(20, 1, 12, 12), torch.randint(0, 10, (20,))
    seen = data.DataLoader(data.TensorDataset(pixels[:12], digits[:12]), batch_size=6,
                           shuffle=True)
    unseen = data.DataLoader(data.TensorDataset(pixels[12:], digits[12:]), batch_size=4)
    model = DigitNet()
    optimizer = optim.Adadelta(model.parameters(), lr=0.8)
    schedule = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.6)
    printed = []
    for _ in range(2):
        printed += fit_pass(model, seen, optimizer) + held_out(model, unseen)
        printed.append(schedule.get_last_lr()[0])
        schedule.step()
    return printed


def mnist_hogwild(torch, nn, F):
    """Hogwild-style workers run one after another in this process over one model in shared
    memory, each with its own SGD (momentum); Dropout2d, F.dropout with
    ``training=self.training``, every other loss reported."""
    torch.manual_seed(22)

    class SharedNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = nn.Conv2d(1, 4, kernel_size=3)
            self.second = nn.Conv2d(4, 5, kernel_size=3)
            self.channel_drop = nn.Dropout2d()
            self.squeeze = nn.Linear(20, 8)
            self.classify = nn.Linear(8, 10)

        def forward(self, x):                                               # (N, 1, 14, 14)
            x = F.relu(F.max_pool2d(self.first(x), 2))                      # (N, 4, 6, 6)
            x = F.relu(F.max_pool2d(self.channel_drop(self.second(x)), 2))  # (N, 5, 2, 2)
            x = F.dropout(F.relu(self.squeeze(x.view(-1, 20))), training=self.training)
            return F.log_softmax(self.classify(x), dim=1)

    def worker(model, loader, report_every=2):
        # each worker steps the shared weights with momentum buffers of its own
        optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.6)
        model.train()
        reported = []
        for step, (images, labels) in enumerate(loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(images), labels)
            loss.backward()
            optimizer.step()
            if step % report_every == 0:
                reported.append(loss.item())
        return reported

    samples = torch.utils.data.TensorDataset(torch.randn(16, 1, 14, 14),
                                             torch.randint(0, 10, (16,)))
    loader = torch.utils.data.DataLoader(samples, batch_size=4, shuffle=True)
    model = SharedNet()
    model.share_memory()
    printed = [loss for _ in range(2) for loss in worker(model, loader)]
    images, labels = samples.tensors
    model.eval()
    with torch.no_grad():
        log_probs = model(images)
        printed.append(F.nll_loss(log_probs, labels, reduction="sum").item())
        printed.append(log_probs.max(1)[1].eq(labels).sum().item())
    return printed


# ----- generative models -----------------------------------------------------------------------

def vae(torch, nn, F):
    """A variational autoencoder: an encoder giving a mean and a log-variance, a code drawn
    with randn_like (the reparameterisation), the summed binary cross-entropy plus the
    Gaussian KL term, Adam; then codes drawn from the prior and decoded."""
    torch.manual_seed(23)
    side, code = 8, 3
    pixels = side * side

    class GaussianAutoencoder(nn.Module):
        def __init__(self, width=20):
            super().__init__()
            self.enc = nn.Linear(pixels, width)
            self.to_mean = nn.Linear(width, code)
            self.to_logvar = nn.Linear(width, code)
            self.dec = nn.Linear(code, width)
            self.to_pixels = nn.Linear(width, pixels)

        def posterior(self, flat):                       # (N, pixels) -> 2 x (N, code)
            hidden = F.relu(self.enc(flat))
            return self.to_mean(hidden), self.to_logvar(hidden)

        def generate(self, z):                           # (N, code) -> (N, pixels) in (0, 1)
            return torch.sigmoid(self.to_pixels(F.relu(self.dec(z))))

        def forward(self, images):
            mean, logvar = self.posterior(images.view(-1, pixels))
            sigma = torch.exp(logvar / 2)
            # the noise is a constant: the draw stays differentiable in mean and sigma
            z = mean + sigma * torch.randn_like(sigma)
            return self.generate(z), mean, logvar

    def negative_elbo(probs, images, mean, logvar):
        reconstruction = F.binary_cross_entropy(probs, images.view(-1, pixels), reduction="sum")
        # KL(N(mean, sigma²) || N(0, 1)), summed over the code and the batch
        kl = 0.5 * torch.sum(mean.pow(2) + logvar.exp() - logvar - 1)
        return reconstruction + kl

    images = torch.rand(10, 1, side, side)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images), batch_size=5,
                                         shuffle=True)
    model = GaussianAutoencoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    printed = []
    for _ in range(3):
        model.train()
        epoch_total = 0.0
        for (batch,) in loader:
            optimizer.zero_grad()
            probs, mean, logvar = model(batch)
            loss = negative_elbo(probs, batch, mean, logvar)
            loss.backward()
            optimizer.step()
            epoch_total += loss.item()
        printed.append(epoch_total / len(images))
    model.eval()
    with torch.no_grad():
        dreamt = model.generate(torch.randn(3, code)).cpu().view(3, 1, side, side)
        probs, mean, logvar = model(images[:2])
        printed += [dreamt.sum().item(), probs[1, :4].tolist(),
                    negative_elbo(probs, images[:2], mean, logvar).item()]
    return printed


def dcgan(torch, nn, F):
    """An adversarial pair in the DCGAN manner: ConvTranspose2d, BatchNorm2d, LeakyReLU in
    place, weights initialised by class name through ``apply``, BCELoss against one label
    tensor refilled in place, the detached fake for the discriminator's step and two Adams
    with betas."""
    torch.manual_seed(24)
    latent, width = 5, 3

    class Painter(nn.Module):
        """Noise (N, latent, 1, 1) to images (N, 1, 8, 8) in [-1, 1]."""

        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(
                nn.ConvTranspose2d(latent, 2 * width, 4, 1, 0, bias=False),  # (N, 6, 4, 4)
                nn.BatchNorm2d(2 * width),
                nn.ReLU(True),
                nn.ConvTranspose2d(2 * width, 1, 4, 2, 1, bias=False),       # (N, 1, 8, 8)
                nn.Tanh())

        def forward(self, noise):
            return self.layers(noise)

    class Critic(nn.Module):
        """Images (N, 1, 8, 8) to the probability (N,) that each is a real one."""

        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(
                nn.Conv2d(1, width, 4, 2, 1, bias=False),                    # (N, 3, 4, 4)
                nn.LeakyReLU(0.1, inplace=True),
                nn.Conv2d(width, 2 * width, 4, 2, 1, bias=False),            # (N, 6, 2, 2)
                nn.BatchNorm2d(2 * width),
                nn.LeakyReLU(0.1, inplace=True),
                nn.Conv2d(2 * width, 1, 2, 1, 0, bias=False),                # (N, 1, 1, 1)
                nn.Sigmoid())

        def forward(self, images):
            return self.layers(images).view(-1, 1).squeeze(1)

    def init_by_kind(module):
        # apply() visits every submodule: the Sequential and the activations fall through
        kind = module.__class__.__name__
        if kind.find("BatchNorm") != -1:
            nn.init.normal_(module.weight.data, 1.0, 0.05)
            nn.init.constant_(module.bias.data, 0.0)
        elif kind.find("Conv") != -1:                 # Conv2d and ConvTranspose2d alike
            nn.init.normal_(module.weight.data, 0.0, 0.05)

    painter, critic = Painter().apply(init_by_kind), Critic().apply(init_by_kind)
    bce = nn.BCELoss()
    critic_opt = torch.optim.Adam(critic.parameters(), lr=3e-4, betas=(0.6, 0.99))
    painter_opt = torch.optim.Adam(painter.parameters(), lr=3e-4, betas=(0.6, 0.99))
    probe = torch.randn(2, latent, 1, 1)            # the same noise for the last picture

    def critic_step(real, fake, label):
        critic.zero_grad()
        label.fill_(1.0)
        on_real = critic(real)
        loss_real = bce(on_real, label)
        loss_real.backward()                        # the fake half's gradients add to these
        label.fill_(0.0)
        on_fake = critic(fake.detach())             # this step must not reach the painter
        loss_fake = bce(on_fake, label)
        loss_fake.backward()
        critic_opt.step()
        return [(loss_real + loss_fake).item(), on_real.mean().item(), on_fake.mean().item()]

    def painter_step(fake, label):
        painter.zero_grad()
        label.fill_(1.0)                            # the painter wants its fakes called real
        judged = critic(fake)
        loss = bce(judged, label)
        loss.backward()
        painter_opt.step()
        return [loss.item(), judged.mean().item()]

    real_images = torch.utils.data.TensorDataset(torch.rand(12, 1, 8, 8) * 2 - 1)
    printed = []
    for (real,) in torch.utils.data.DataLoader(real_images, batch_size=4, shuffle=True):
        label = torch.full((real.size(0),), 1.0, dtype=real.dtype)
        fake = painter(torch.randn(real.size(0), latent, 1, 1))
        printed += critic_step(real, fake, label) + painter_step(fake, label)
    with torch.no_grad():
        picture = painter(probe).detach().cpu()
    return printed + [picture.sum().item(), picture[1, 0, 0].tolist(),
                      critic.layers[3].running_var.tolist()]


# ----- super_resolution and fast_neural_style --------------------------------------------------

def super_resolution(torch, nn, F):
    """Sub-pixel super-resolution: convolutions given orthogonal initial weights (ReLU's gain
    where a ReLU follows) and a PixelShuffle, trained by Adam on MSE; PSNR reported."""
    init = nn.init
    torch.manual_seed(28)

    class Upscaler(nn.Module):
        def __init__(self, factor):
            super().__init__()
            self.widen = nn.Conv2d(1, 6, (5, 5), (1, 1), (2, 2))
            self.mix = nn.Conv2d(6, 6, (3, 3), (1, 1), (1, 1))
            self.narrow = nn.Conv2d(6, 5, (3, 3), (1, 1), (1, 1))
            self.to_subpixels = nn.Conv2d(5, factor * factor, (3, 3), (1, 1), (1, 1))
            self.shuffle = nn.PixelShuffle(factor)     # (N, f², H, W) -> (N, 1, fH, fW)
            self.act = nn.ReLU()
            gain = init.calculate_gain("relu")
            for conv in self.hidden_convs():
                init.orthogonal_(conv.weight, gain)
            init.orthogonal_(self.to_subpixels.weight)  # no ReLU after it: unit gain

        def hidden_convs(self):
            return self.widen, self.mix, self.narrow

        def forward(self, low):
            for conv in self.hidden_convs():
                low = self.act(conv(low))
            return self.shuffle(self.to_subpixels(low))

    sharp = torch.rand(6, 1, 10, 10)
    blurred = F.avg_pool2d(sharp, 2)                   # (6, 1, 5, 5)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(blurred, sharp),
                                         batch_size=2, shuffle=True)
    model = Upscaler(factor=2)
    mse = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
    printed = []
    for _ in range(2):
        running = 0.0
        for low, high in loader:
            optimizer.zero_grad()
            loss = mse(model(low), high)
            running += loss.item()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            error = mse(model(blurred), sharp).item()
        # peak signal 1: PSNR = 10·log10(1 / MSE)
        printed += [running / len(loader), -10 * math.log10(error)]
    return printed


def fast_neural_style(torch, nn, F):
    """Style transfer in the fast-neural-style manner: reflection-padded convolutions,
    InstanceNorm2d(affine=True), a residual block, nearest upsampling (F.interpolate and
    nn.Upsample), a frozen VGG-like loss network cut into stages by add_module, Gram matrices
    by bmm, an in-place rescale of the images, content and style losses, clamped outputs."""
    torch.manual_seed(29)
    Taps = collections.namedtuple("Taps", ["shallow", "deep"])

    class PaddedConv(nn.Module):
        """Reflection padding then a convolution; with ``scale``, a nearest upsampling first."""

        def __init__(self, c_in, c_out, kernel, stride=1, scale=None):
            super().__init__()
            self.scale = scale
            self.pad = nn.ReflectionPad2d(kernel // 2)
            self.conv = nn.Conv2d(c_in, c_out, kernel, stride)

        def forward(self, x):
            if self.scale is not None:
                x = F.interpolate(x, scale_factor=self.scale, mode="nearest")
            return self.conv(self.pad(x))

    def conv_norm_relu(c_in, c_out, kernel, stride=1, scale=None):
        return [PaddedConv(c_in, c_out, kernel, stride, scale),
                nn.InstanceNorm2d(c_out, affine=True), nn.ReLU()]

    class Residual(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.branch = nn.Sequential(*conv_norm_relu(channels, channels, 3),
                                        PaddedConv(channels, channels, 3),
                                        nn.InstanceNorm2d(channels, affine=True))

        def forward(self, x):
            return x + self.branch(x)

    stylizer = nn.Sequential(
        *conv_norm_relu(3, 4, 5),                       # (N, 4, 8, 8)
        *conv_norm_relu(4, 6, 3, stride=2),             # (N, 6, 4, 4)
        Residual(6),
        *conv_norm_relu(6, 4, 3, scale=2),              # (N, 4, 8, 8)
        nn.Upsample(scale_factor=2, mode="nearest"),    # (N, 4, 16, 16)
        PaddedConv(4, 3, 5, stride=2))                  # (N, 3, 8, 8)

    class LossNet(nn.Module):
        """A small VGG-like stack cut in two stages; both stages' outputs are returned."""

        def __init__(self):
            super().__init__()
            stack = nn.Sequential(nn.Conv2d(3, 5, 3, padding=1), nn.ReLU(inplace=True),
                                  nn.Conv2d(5, 5, 3, padding=1), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(kernel_size=2, stride=2),
                                  nn.Conv2d(5, 6, 3, padding=1), nn.ReLU(inplace=True))
            self.shallow, self.deep = nn.Sequential(), nn.Sequential()
            for index, layer in enumerate(stack):
                stage = self.shallow if index < 4 else self.deep
                stage.add_module(str(index), layer)
            for weight in self.parameters():           # a fixed measure, never trained
                weight.requires_grad = False

        def forward(self, images):
            shallow = self.shallow(images)              # (N, 5, H, W)
            return Taps(shallow, self.deep(shallow))    # deep: (N, 6, H/2, W/2)

    def gram(maps):
        """(N, C, H, W) feature maps to their (N, C, C) channel correlations."""
        n, c, h, w = maps.size()
        flat = maps.view(n, c, h * w)
        return flat.bmm(flat.transpose(1, 2)) / (c * h * w)

    def standardise(images):
        """Pixels in [0, 255] scaled to [0, 1] in place, then centred and spread per channel
        (constants of this program's own)."""
        centre = images.new_tensor([0.5, 0.4, 0.45]).view(-1, 1, 1)
        spread = images.new_tensor([0.3, 0.25, 0.2]).view(-1, 1, 1)
        return (images.div_(255.0) - centre) / spread

    loss_net = LossNet().requires_grad_(False)
    optimizer = torch.optim.Adam(stylizer.parameters(), 2e-3)
    mse = nn.MSELoss()
    content_weight, style_weight = 2e4, 4e9
    style_image = torch.rand(1, 3, 8, 8).mul(255)
    targets = [gram(taps) for taps in loss_net(standardise(style_image.repeat(2, 1, 1, 1)))]
    printed = []
    for _ in range(2):
        photos = torch.rand(2, 3, 8, 8) * 255
        optimizer.zero_grad()
        made = loss_net(standardise(stylizer(photos)))
        seen = loss_net(standardise(photos))
        content = content_weight * mse(made.deep, seen.deep)
        style = sum(mse(gram(mine), target[:len(photos)]) for mine, target in zip(made, targets))
        total = content + style_weight * style
        total.backward()
        optimizer.step()
        printed += [content.item(), style.item(), total.item()]
    with torch.no_grad():
        result = stylizer(torch.rand(1, 3, 8, 8) * 255).clamp(0, 255)
        picture = torch.clamp(result[0].clone(), 0, 255).numpy().transpose(1, 2, 0)  # (H, W, C)
        band = result.clone().clamp_(0.2, 0.6)
    frozen = all(not weight.requires_grad for weight in loss_net.parameters())
    return printed + [picture.sum().item(), picture[0, 0].tolist(), band.mean().item(), frozen]


# ----- siamese_network -------------------------------------------------------------------------

def siamese_network(torch, nn, F):
    """A siamese net: a conv trunk (a backbone's children but its last, in a Sequential) run on
    both images of a pair, the two embeddings concatenated into a sigmoid head trained with
    BCELoss by Adadelta under StepLR; cosine similarity and pairwise distance of the
    embeddings too."""
    torch.manual_seed(30)

    class TinyBackbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 3, 3)
            self.act = nn.ReLU()
            self.pool = nn.AdaptiveAvgPool2d((2, 2))
            self.head = nn.Linear(12, 4)                # a classifier's head: the pair drops it

        def forward(self, x):
            return self.head(torch.flatten(self.pool(self.act(self.conv(x))), 1))

    class PairJudge(nn.Module):
        def __init__(self):
            super().__init__()
            backbone = TinyBackbone()
            width = backbone.head.in_features
            self.trunk = nn.Sequential(*list(backbone.children())[:-1])   # (N, 3, 2, 2)
            self.judge = nn.Sequential(nn.Linear(2 * width, 6), nn.ReLU(inplace=True),
                                       nn.Linear(6, 1), nn.Sigmoid())
            self.judge.apply(self.init_linear)

        @staticmethod
        def init_linear(module):
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                module.bias.data.fill_(0.05)

        def embed(self, images):
            return self.trunk(images).view(images.size()[0], -1)          # (N, 12)

        def forward(self, left, right):
            a, b = self.embed(left), self.embed(right)
            return self.judge(torch.cat((a, b), 1)), a, b

    lefts, rights = torch.randn(10, 1, 7, 7), torch.randn(10, 1, 7, 7)
    same = torch.randint(0, 2, (10,)).to(lefts.dtype)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(lefts, rights, same),
                                         batch_size=5, shuffle=True)
    model = PairJudge()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=0.9)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    bce = nn.BCELoss()
    cosine = nn.CosineSimilarity(dim=1, eps=1e-7)
    printed = []
    for _ in range(2):
        model.train()
        for left, right, target in loader:
            optimizer.zero_grad()
            probs = model(left, right)[0].squeeze()     # (N, 1) -> (N,)
            loss = bce(probs, target)
            loss.backward()
            optimizer.step()
            printed.append(loss.item())
        schedule.step()
        model.eval()
        with torch.no_grad():
            probs, a, b = model(lefts, rights)
            guess = torch.where(probs > 0.5, 1, 0)
            hits = guess.eq(same.view_as(guess)).sum().item()
            printed += [hits, cosine(a, b).tolist(), F.pairwise_distance(a, b).tolist()]
    return printed
