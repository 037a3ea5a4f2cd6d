"""Programs in the styles of public contrastive-learning and distillation code: SimCLR's
NT-Xent loss over two augmented views, a CLIP-style symmetric loss with a learned
temperature, knowledge distillation by the KL divergence of softened outputs, and a triplet
loss with batch-hard mining.

Each program takes one library's module triple (torch, nn, F), seeds torch's generator, runs
on synthetic data in the default dtype and returns what it would print: numbers, flags,
orders, error class names and the values of small tensors as lists.
``test_public_model_families.py`` runs it under both libraries and compares. The models,
names, sizes and constants are the programs' own."""

import copy
import math

from program_output import error_class, values


# ----- SimCLR: NT-Xent over two views ---------------------------------------------------------

def simclr_nt_xent(torch, nn, F):
    """Two views of a batch by noise and random masking, an encoder and a projection head,
    the NT-Xent loss written twice as repositories write it (the diagonal masked with
    ``-9e15`` and with ``-inf``, labels rolled by ``torch.arange``), a few Adam steps and the
    top-1 accuracy of the positives."""
    torch.manual_seed(0)
    printed = []

    class SimCLR(nn.Module):
        def __init__(self, in_dim=8, hidden=16, out_dim=4):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(inplace=True),
                                         nn.Linear(hidden, hidden))
            self.projector = nn.Sequential(nn.Linear(hidden, hidden), nn.BatchNorm1d(hidden),
                                           nn.ReLU(), nn.Linear(hidden, out_dim, bias=False))

        def forward(self, x):
            h = self.encoder(x)
            return h, self.projector(h)

    def augment(x, noise=0.1, drop=0.2):
        keep = (torch.rand_like(x) > drop).float()
        return (x + noise * torch.randn_like(x)) * keep

    def nt_xent(z1, z2, temperature=0.5):
        n = z1.shape[0]
        z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
        sim = z @ z.T / temperature
        mask = torch.eye(2 * n, dtype=torch.bool, device=sim.device)
        sim = sim.masked_fill(mask, -9e15)
        labels = torch.arange(2 * n, device=sim.device).roll(n)
        return F.cross_entropy(sim, labels)

    def info_nce(z1, z2, temperature=0.5):
        z1, z2 = F.normalize(z1, dim=-1), F.normalize(z2, dim=-1)
        features = torch.cat((z1, z2))
        similarity = torch.matmul(features, features.t())
        self_mask = torch.eye(similarity.size(0), dtype=torch.bool)
        similarity.masked_fill_(self_mask, float("-inf"))
        n = z1.size(0)
        positives = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
        logits = similarity / temperature
        loss = -logits[torch.arange(2 * n), positives] + torch.logsumexp(logits, dim=-1)
        ranks = (logits > logits[torch.arange(2 * n), positives][:, None]).sum(dim=1)
        return loss.mean(), (ranks == 0).float().mean()

    model = SimCLR()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-6)
    data = torch.randn(6, 8)
    for _ in range(4):
        x1, x2 = augment(data), augment(data)
        _, z1 = model(x1)
        _, z2 = model(x2)
        loss = nt_xent(z1, z2)
        other, top1 = info_nce(z1, z2)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        printed += [loss.item(), other.item(), top1.item(), math.isclose(
            loss.item(), other.item(), rel_tol=1e-4)]
    printed.append(values(model.projector[-1].weight))
    model.eval()
    with torch.no_grad():
        h, _ = model(data)
    printed += [list(h.shape), values(F.normalize(h, p=2, dim=1).norm(dim=1))]
    return printed


# ----- CLIP: a symmetric loss with a learned temperature --------------------------------------

def clip_symmetric(torch, nn, F):
    """Image and text towers, ``logit_scale`` a parameter initialised to log(1/0.07), its
    ``exp()`` clamped at 100, the symmetric cross entropy over the similarity matrix and its
    transpose, and retrieval accuracy both ways."""
    torch.manual_seed(1)
    printed = []

    class CLIP(nn.Module):
        def __init__(self, image_dim=10, vocab=20, embed_dim=6):
            super().__init__()
            self.visual = nn.Sequential(nn.Linear(image_dim, 12), nn.GELU(),
                                        nn.Linear(12, embed_dim))
            self.token_embedding = nn.Embedding(vocab, 12)
            self.ln_final = nn.LayerNorm(12)
            self.text_projection = nn.Parameter(torch.empty(12, embed_dim))
            self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))
            nn.init.normal_(self.text_projection, std=12 ** -0.5)

        def encode_image(self, image):
            return self.visual(image)

        def encode_text(self, text):
            x = self.ln_final(self.token_embedding(text))
            # the feature of the last token (the end-of-text token in CLIP)
            x = x[torch.arange(x.shape[0]), text.argmax(dim=-1)]
            return x @ self.text_projection

        def forward(self, image, text):
            image_features = self.encode_image(image)
            text_features = self.encode_text(text)
            image_features = image_features / image_features.norm(dim=1, keepdim=True)
            text_features = text_features / text_features.norm(dim=1, keepdim=True)
            logit_scale = self.logit_scale.exp()
            logits_per_image = logit_scale * image_features @ text_features.t()
            return logits_per_image, logits_per_image.t()

    model = CLIP()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.98), eps=1e-6,
                                  weight_decay=0.2)
    images, texts = torch.randn(5, 10), torch.randint(0, 20, (5, 4))
    for _ in range(3):
        logits_per_image, logits_per_text = model(images, texts)
        ground_truth = torch.arange(len(images), dtype=torch.long)
        total_loss = (F.cross_entropy(logits_per_image, ground_truth)
                      + F.cross_entropy(logits_per_text, ground_truth)) / 2
        optimizer.zero_grad()
        total_loss.backward()
        optimizer.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
        printed += [total_loss.item(), model.logit_scale.item(),
                    (logits_per_image.argmax(dim=1) == ground_truth).sum().item(),
                    (logits_per_text.argmax(-1) == ground_truth).float().mean().item()]
    printed.append(values(model.logit_scale.grad))
    scale = model.logit_scale.exp().clamp(max=100)
    printed += [scale.item(), values(model.text_projection.grad.abs().sum(0))]
    probs = logits_per_image.softmax(dim=-1)
    printed += [values(probs.sum(-1)), probs.topk(2, dim=-1).indices.tolist()]
    return printed


# ----- knowledge distillation -----------------------------------------------------------------

def knowledge_distillation(torch, nn, F):
    """A frozen teacher and a small student, Hinton's loss ``KL(softmax(t/T) || softmax(s/T))
    * T * T`` mixed with the hard-label cross entropy, once with probabilities and once with
    ``log_target=True``, the student's steps and the agreement with the teacher."""
    torch.manual_seed(2)
    printed = []
    teacher = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 4))
    student = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 4))
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad = False

    class DistillationLoss(nn.Module):
        def __init__(self, T=4.0, alpha=0.7):
            super().__init__()
            self.T, self.alpha = T, alpha
            self.kl = nn.KLDivLoss(reduction="batchmean")

        def forward(self, student_logits, teacher_logits, labels):
            soft = self.kl(F.log_softmax(student_logits / self.T, dim=1),
                           F.softmax(teacher_logits / self.T, dim=1)) * (self.T * self.T)
            hard = F.cross_entropy(student_logits, labels)
            return self.alpha * soft + (1.0 - self.alpha) * hard, soft, hard

    criterion = DistillationLoss()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    x, y = torch.randn(8, 6), torch.randint(0, 4, (8,))
    T = criterion.T
    for _ in range(4):
        with torch.no_grad():
            teacher_logits = teacher(x)
        student_logits = student(x)
        loss, soft, hard = criterion(student_logits, teacher_logits, y)
        by_log = F.kl_div(F.log_softmax(student_logits / T, dim=-1),
                          F.log_softmax(teacher_logits / T, dim=-1),
                          reduction="batchmean", log_target=True) * T ** 2
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        printed += [loss.item(), soft.item(), hard.item(), by_log.item(),
                    abs(by_log.item() - soft.item()) < 1e-5]
    printed.append(teacher[0].weight.grad is None)
    s, t = student(x), teacher(x)
    printed += [(s.argmax(1) == t.argmax(1)).float().mean().item(),
                F.kl_div(s.log_softmax(-1), t.softmax(-1), reduction="sum").item(),
                values(F.kl_div(s.log_softmax(-1), t.softmax(-1), reduction="none").sum(1)),
                F.kl_div(s.log_softmax(-1), t.softmax(-1), reduction="mean").item(),
                values(student[0].bias.grad)]
    soft_t = F.softmax(t / T, dim=1)
    printed += [error_class(lambda: F.kl_div(s.log_softmax(-1), soft_t, reduction="batch")),
                error_class(lambda: F.kl_div(s.log_softmax(-1), soft_t[:2], reduction="sum")),
                error_class(lambda: F.cross_entropy(s, torch.tensor([0, 1, 2, 4] * 2)))]
    return printed


# ----- triplet loss with batch-hard mining ----------------------------------------------------

def triplet_batch_hard(torch, nn, F):
    """An embedding net trained with ``nn.TripletMarginLoss`` on mined triplets: pairwise
    distances by ``torch.cdist``, the hardest positive by ``masked_fill`` and ``max``, the
    hardest negative by ``min``, and the loss written by hand with ``F.relu`` beside it."""
    torch.manual_seed(3)
    printed = []
    embed = nn.Sequential(nn.Linear(5, 10), nn.PReLU(), nn.Linear(10, 3))
    criterion = nn.TripletMarginLoss(margin=0.3, p=2)
    optimizer = torch.optim.Adam(embed.parameters(), lr=0.01)
    labels = torch.tensor([0, 0, 1, 1, 2, 2, 0, 1])
    x = torch.randn(8, 5) + labels[:, None].float()

    def batch_hard(embeddings, labels, margin=0.3):
        dist = torch.cdist(embeddings, embeddings, p=2)
        same = labels.unsqueeze(0) == labels.unsqueeze(1)
        eye = torch.eye(len(labels), dtype=torch.bool)
        hardest_pos, pos_idx = dist.masked_fill(~same | eye, 0).max(dim=1)
        hardest_neg, neg_idx = dist.masked_fill(same, float("inf")).min(dim=1)
        loss = F.relu(hardest_pos - hardest_neg + margin).mean()
        return loss, pos_idx, neg_idx

    for _ in range(4):
        emb = F.normalize(embed(x), dim=1)
        mined, pos_idx, neg_idx = batch_hard(emb, labels)
        loss = criterion(emb, emb[pos_idx], emb[neg_idx])
        optimizer.zero_grad()
        (loss + mined).backward()
        optimizer.step()
        printed += [loss.item(), mined.item(), pos_idx.tolist(), neg_idx.tolist()]
    a, p, n = emb[:3], emb[3:6], emb[5:8]
    printed += [F.triplet_margin_loss(a, p, n, margin=1.0, swap=True).item(),
                values(F.triplet_margin_loss(a, p, n, reduction="none")),
                nn.TripletMarginLoss(margin=0.5, p=1)(a, p, n).item(),
                values(torch.cdist(a, p)), values(F.pairwise_distance(a, p, keepdim=True)),
                values(embed[1].weight.grad)]
    return printed


# ----- the self-supervised family: SimCLR by diagonals, MoCo, BYOL, SimSiam, Barlow Twins -----

def self_supervised_variants(torch, nn, F):
    """The losses of the other self-supervised repositories on one encoder: SimCLR with the
    positives read off ``torch.diag(sim, ±N)`` and negatives by a boolean mask, MoCo's
    ``einsum`` logits against a queue updated by slicing, BYOL's and MoCo's momentum encoder
    updated through ``.data``, SimSiam's stop-gradient, and Barlow Twins' cross-correlation
    with its off-diagonal view."""
    torch.manual_seed(4)
    printed = []
    encoder = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 4))
    momentum_encoder = copy.deepcopy(encoder)
    for param_k in momentum_encoder.parameters():
        param_k.requires_grad = False
    predictor = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
    optimizer = torch.optim.SGD(list(encoder.parameters()) + list(predictor.parameters()),
                                lr=0.05, momentum=0.9, weight_decay=1e-4)
    queue = F.normalize(torch.randn(4, 10), dim=0)
    queue_ptr, batch_size = 0, 4
    bn = nn.BatchNorm1d(4, affine=False)

    def simclr(z_i, z_j, temperature=0.5):
        N = 2 * batch_size
        z = torch.cat((z_i, z_j), dim=0)
        sim = nn.CosineSimilarity(dim=2)(z.unsqueeze(1), z.unsqueeze(0)) / temperature
        sim_i_j, sim_j_i = torch.diag(sim, batch_size), torch.diag(sim, -batch_size)
        positive_samples = torch.cat((sim_i_j, sim_j_i), dim=0).reshape(N, 1)
        mask = torch.ones((N, N), dtype=bool)
        mask = mask.fill_diagonal_(0)
        for i in range(batch_size):
            mask[i, batch_size + i] = 0
            mask[batch_size + i, i] = 0
        negative_samples = sim[mask].reshape(N, -1)
        labels = torch.zeros(N).to(positive_samples.device).long()
        logits = torch.cat((positive_samples, negative_samples), dim=1)
        return nn.CrossEntropyLoss(reduction="sum")(logits, labels) / N

    def off_diagonal(x):
        n, m = x.shape
        assert n == m
        return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()

    x = torch.randn(batch_size, 6)
    for _ in range(3):
        x1, x2 = x + 0.1 * torch.randn_like(x), x.flip(1) * 0.9
        z1, z2 = encoder(x1), encoder(x2)
        p1, p2 = predictor(z1), predictor(z2)
        with torch.no_grad():
            k = F.normalize(momentum_encoder(x2), dim=1)
        q = F.normalize(z1, dim=1)
        l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", [q, queue.clone().detach()])
        logits = torch.cat([l_pos, l_neg], dim=1) / 0.07
        moco = F.cross_entropy(logits, torch.zeros(logits.shape[0], dtype=torch.long))
        byol = (2 - 2 * (F.normalize(p1, dim=-1, p=2) * k).sum(dim=-1)).mean()
        simsiam = -(F.cosine_similarity(p1, z2.detach(), dim=-1).mean()
                    + F.cosine_similarity(p2, z1.detach(), dim=-1).mean()) * 0.5
        c = bn(z1).T @ bn(z2) / batch_size
        on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
        off_diag = off_diagonal(c).pow_(2).sum()
        loss = simclr(z1, z2) + moco + byol + simsiam + 0.1 * (on_diag + 5e-3 * off_diag)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            for param_q, param_k in zip(encoder.parameters(), momentum_encoder.parameters()):
                param_k.data = param_k.data * 0.99 + param_q.data * (1. - 0.99)
        queue[:, queue_ptr:queue_ptr + batch_size] = k.T
        queue_ptr = (queue_ptr + batch_size) % 8
        printed += [loss.item(), simclr(z1, z2).item(), moco.item(), byol.item(),
                    simsiam.item(), on_diag.item(), off_diag.item(), queue_ptr]
    printed += [values(queue[:, :3]), values(momentum_encoder[3].bias),
                values(encoder[1].running_var), momentum_encoder[0].weight.requires_grad]
    return printed
