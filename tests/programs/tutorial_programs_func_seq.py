"""Programs in the styles of PyTorch's own tutorials, second set: the ``torch.func`` recipes
(per-sample gradients, model ensembling, neural tangent kernels, Jacobians and Hessians) and
translation with attention (the text tutorials are in ``tutorial_programs_text.py``).

Each program re-expresses the calls and habits its tutorial teaches with models, names, sizes
and synthetic data of its own. It takes the module triple (torch, nn, F) of one library, seeds
torch's generator, runs a few steps and returns what it would print (numbers, flags, the
values of small tensors as lists); ``test_public_tutorial_files_b.py`` runs it under both
libraries and compares."""

import copy
import importlib

from program_output import values


# ----- torch.func: per-sample gradients ---------------------------------------------------------

def per_sample_gradients(torch, nn, F):
    """The gradient of the loss of every sample of a batch: a loop of backward calls over
    samples, then one ``vmap(grad(...))`` over ``functional_call`` with the parameters
    detached from the module."""
    functional_call, grad, vmap = torch.func.functional_call, torch.func.grad, torch.func.vmap
    torch.manual_seed(11)

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.fc1 = nn.Linear(4 * 3 * 3, 8)
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):                                     # (N, 1, 8, 8)
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = torch.flatten(x, 1)
            return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)

    model = SimpleCNN()
    data, targets = torch.randn(5, 1, 8, 8), torch.randint(3, (5,))

    def one_sample_by_backward(sample, target):
        model.zero_grad()
        loss = F.nll_loss(model(sample.unsqueeze(0)), target.unsqueeze(0))
        loss.backward()
        return [p.grad.clone() for p in model.parameters()]

    looped = [one_sample_by_backward(data[i], targets[i]) for i in range(len(data))]
    looped = [torch.stack(per_param) for per_param in zip(*looped)]

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        return F.nll_loss(predictions, targets)

    per_sample = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data,
                                                                       targets)
    printed = [list(per_sample), [tuple(g.shape) for g in per_sample.values()]]
    for (name, g), by_loop in zip(per_sample.items(), looped):
        printed += [name, torch.allclose(g, by_loop, atol=1e-6), values(g)]
    # the mean of the per-sample gradients is the batch gradient
    model.zero_grad()
    F.nll_loss(model(data), targets).backward()
    printed += [values(model.fc1.weight.grad), values(per_sample["fc1.weight"].mean(0))]
    return printed


# ----- torch.func: model ensembling -------------------------------------------------------------

def model_ensembling(torch, nn, F, skeleton_device="meta"):
    """Several copies of one architecture with their states stacked by
    ``stack_module_state``, called through ``functional_call`` on a skeleton moved to the
    meta device (``skeleton_device``; None keeps the copy where it is), with one minibatch
    shared (``in_dims=(0, 0, None)``) or one per model (``in_dims=(0, 0, 0)``), against a loop
    over the models."""
    functional_call, vmap = torch.func.functional_call, torch.func.vmap
    stack_module_state = torch.func.stack_module_state
    torch.manual_seed(5)

    class Small(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(7, 9)
            self.outer = nn.Linear(9, 4)

        def forward(self, x):
            return self.outer(F.gelu(self.inner(x)))

    count = 3
    models = [Small() for _ in range(count)]
    shared = torch.randn(6, 7)
    per_model = torch.randn(count, 6, 7)
    looped_shared = [m(shared) for m in models]
    looped_own = [m(x) for m, x in zip(models, per_model)]

    params, buffers = stack_module_state(models)
    skeleton = copy.deepcopy(models[0])
    if skeleton_device is not None:
        skeleton = skeleton.to(skeleton_device)       # the skeleton holds no weights of its own

    def fmodel(params, buffers, x):
        return functional_call(skeleton, (params, buffers), (x,))

    together = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, shared)
    apart = vmap(fmodel, in_dims=(0, 0, 0))(params, buffers, per_model)
    stacked = params["inner.weight"]
    printed = [sorted(params), tuple(stacked.shape), stacked.requires_grad, stacked.is_leaf,
               tuple(together.shape), tuple(apart.shape),
               torch.allclose(together, torch.stack(looped_shared), atol=1e-6),
               torch.allclose(apart, torch.stack(looped_own), atol=1e-6),
               values(together), values(apart)]
    # the stacked parameters are leaves of their own: an ensemble's loss trains them all
    loss = apart.pow(2).mean()
    loss.backward()
    printed += [loss.item(), values(stacked.grad), values(params["outer.bias"].grad)]
    # a deterministic model under randomness="different" gives the same as "error"
    differ = vmap(fmodel, in_dims=(0, 0, None), randomness="different")(params, buffers, shared)
    printed.append(torch.equal(differ, together))
    return printed


def ensembling_with_dropout(torch, nn, F, skeleton_device="meta"):
    """``randomness="different"`` over an ensemble with dropout: each model draws its own
    mask, so the outputs are a dropout pattern per model; "same" gives one pattern for all;
    the default ("error") refuses the random op."""
    functional_call, vmap = torch.func.functional_call, torch.func.vmap
    stack_module_state = torch.func.stack_module_state
    torch.manual_seed(9)
    models = [nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5)) for _ in range(3)]
    for m in models:
        with torch.no_grad():
            m[0].weight.fill_(1.0)
            m[0].bias.fill_(1.0)
    params, buffers = stack_module_state(models)
    skeleton = copy.deepcopy(models[0])
    if skeleton_device is not None:
        skeleton = skeleton.to(skeleton_device)       # the skeleton holds no weights of its own

    def fmodel(params, buffers, x):
        return functional_call(skeleton, (params, buffers), (x,))

    x = torch.ones(2, 4)
    different = vmap(fmodel, in_dims=(0, 0, None), randomness="different")(params, buffers, x)
    same = vmap(fmodel, in_dims=(0, 0, None), randomness="same")(params, buffers, x)
    kept = sorted(set(values(different)))
    printed = [tuple(different.shape), kept, sorted(set(values(same)))]
    printed.append(torch.equal(same[0], same[1]) and torch.equal(same[1], same[2]))
    printed.append(not torch.equal(different[0], different[1]))
    try:
        vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
        printed.append("no error")
    except RuntimeError:
        printed.append("RuntimeError")
    return printed


# ----- torch.func: neural tangent kernels -------------------------------------------------------

def neural_tangent_kernel(torch, nn, F):
    """The empirical NTK of a small network two ways: the Jacobians of every output with
    respect to the parameters (``jacrev`` over a single input, ``vmap`` over the batch) and
    their contraction ``einsum('Naf,Mbf->NMab')``; then the kernel as
    Jacobian-vector products of vector-Jacobian products, over a basis by ``vmap``."""
    functional_call, vmap = torch.func.functional_call, torch.func.vmap
    jacrev, jvp, vjp = torch.func.jacrev, torch.func.jvp, torch.func.vjp
    torch.manual_seed(21)
    net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    x_train, x_test = torch.randn(4, 3), torch.randn(3, 3)

    def ntk_by_jacobians(fnet_single, params, x1, x2, compute="full"):
        jac1 = vmap(jacrev(fnet_single, argnums=0), (None, 0))(params, x1)
        jac1 = [j.flatten(2) for j in jac1.values()]
        jac2 = vmap(jacrev(fnet_single, argnums=0), (None, 0))(params, x2)
        jac2 = [j.flatten(2) for j in jac2.values()]
        if compute == "full":
            terms = [torch.einsum("Naf,Mbf->NMab", j1, j2) for j1, j2 in zip(jac1, jac2)]
        elif compute == "trace":
            terms = [torch.einsum("Naf,Maf->NM", j1, j2) for j1, j2 in zip(jac1, jac2)]
        else:
            terms = [torch.einsum("Naf,Maf->NMa", j1, j2) for j1, j2 in zip(jac1, jac2)]
        return torch.stack(terms).sum(0)

    def ntk_by_products(fnet_single, params, x1, x2):
        def kernel_of_pair(a, b):
            def at_a(p):
                return fnet_single(p, a)

            def at_b(p):
                return fnet_single(p, b)

            output, vjp_fn = vjp(at_a, params)

            def one_row(cotangent):
                (pulled,) = vjp_fn(cotangent)
                return jvp(at_b, (params,), (pulled,))[1]

            basis = torch.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
            return vmap(one_row)(basis)

        return vmap(vmap(kernel_of_pair, (None, 0)), (0, None))(x1, x2)

    full = ntk_by_jacobians(fnet_single, params, x_train, x_test)
    trace = ntk_by_jacobians(fnet_single, params, x_train, x_test, "trace")
    diagonal = ntk_by_jacobians(fnet_single, params, x_train, x_test, "diagonal")
    products = ntk_by_products(fnet_single, params, x_train, x_test)
    return [tuple(full.shape), values(full), values(trace), values(diagonal),
            tuple(products.shape), values(products),
            torch.allclose(products, full, atol=1e-5)]


# ----- torch.func: Jacobians and Hessians -------------------------------------------------------

def jacobians_and_hessians(torch, nn, F):
    """Jacobians of a tanh-of-linear predictor with respect to its input by ``jacrev``
    (``argnums=2``), a loop of ``autograd.grad`` rows, ``autograd.functional.jacobian``,
    ``jacfwd`` and ``chunk_size``; several argnums at once; per-sample Jacobians by ``vmap``
    and by ``is_grads_batched``-free rows; Hessians by ``hessian`` and by ``jacfwd(jacrev)``."""
    jacobian = torch.autograd.functional.jacobian
    func = torch.func
    hessian, jacfwd, jacrev, vjp, vmap = func.hessian, func.jacfwd, func.jacrev, func.vjp, func.vmap
    torch.manual_seed(3)
    D = 5
    weight, bias, x = torch.randn(D, D), torch.randn(D), torch.randn(D)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    # rows of the Jacobian by vjp against the unit vectors
    xp = x.clone().requires_grad_()
    unit_vectors = torch.eye(D)

    def row(v):
        return torch.autograd.grad(predict(weight, bias, xp), xp, v)[0]

    by_rows = torch.stack([row(v) for v in unit_vectors.unbind()])
    _, vjp_fn = vjp(lambda x: predict(weight, bias, x), x)
    by_vmap_vjp = vmap(vjp_fn)(unit_vectors)[0]
    rev = jacrev(predict, argnums=2)(weight, bias, x)
    fwd = jacfwd(predict, argnums=2)(weight, bias, x)
    reference = jacobian(lambda x: predict(weight, bias, x), x)
    chunked = jacrev(predict, argnums=2, chunk_size=2)(weight, bias, x)
    printed = [values(rev), torch.allclose(rev, by_rows), torch.allclose(rev, by_vmap_vjp),
               torch.allclose(rev, fwd), torch.allclose(rev, reference),
               torch.allclose(rev, chunked)]
    d_weight, d_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    printed += [tuple(d_weight.shape), values(d_weight), values(d_bias)]

    # per-sample Jacobians of a batch: vmap over the inputs, or the Jacobian of the summed
    # outputs with the batch moved last
    batch = torch.randn(4, D)
    per_sample = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, batch)
    summed = jacrev(lambda x: predict(weight, bias, x).sum(0))(batch).movedim(1, 0)
    forward_per_sample = vmap(jacfwd(predict, argnums=2), in_dims=(None, None, 0))(weight, bias,
                                                                                  batch)
    printed += [tuple(per_sample.shape), values(per_sample), torch.allclose(per_sample, summed),
                torch.allclose(per_sample, forward_per_sample)]

    hess = hessian(predict, argnums=2)(weight, bias, x)
    fwd_rev = jacfwd(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    reference = torch.autograd.functional.hessian(lambda x: predict(weight, bias, x).sum(), x)
    rev_rev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    printed += [tuple(hess.shape), values(hess), torch.allclose(hess, fwd_rev),
                torch.allclose(hess, rev_rev),
                torch.allclose(hess.sum(0), reference)]

    # the tutorial times the two modes; here only what the measurement holds is compared
    Timer = importlib.import_module(torch.__name__ + ".utils.benchmark").Timer
    timing = Timer(stmt="vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(w, b, x)",
                   globals={"vmap": vmap, "jacrev": jacrev, "predict": predict, "w": weight,
                            "b": bias, "x": batch}).timeit(2)
    printed += [len(timing.times), timing.median > 0, timing.mean > 0]

    # a batched Hessian of a scalar-per-sample loss
    def energy(x):
        return (predict(weight, bias, x) ** 2).sum()

    batched = vmap(hessian(energy))(batch)
    printed += [tuple(batched.shape), values(batched)]
    return printed


# ----- translation with a sequence to sequence network and attention ----------------------------

def seq2seq_attention(torch, nn, F):
    """A GRU encoder and a decoder with additive (Bahdanau) attention, trained with teacher
    forcing on a toy reversal task over a tiny vocabulary, then decoded greedily by ``topk``.
    """
    torch.manual_seed(17)
    SOS, EOS, vocab, length, hidden = 0, 1, 9, 5, 12

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super().__init__()
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, tokens):
            embedded = self.dropout(self.embedding(tokens))
            return self.gru(embedded)

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super().__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            return torch.bmm(weights, keys), weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super().__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS)
            decoder_hidden = encoder_hidden
            outputs, attentions = [], []
            for i in range(length + 1):
                decoder_output, decoder_hidden, attn = self.step(decoder_input, decoder_hidden,
                                                                 encoder_outputs)
                outputs.append(decoder_output)
                attentions.append(attn)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)       # teacher forcing
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            outputs = F.log_softmax(torch.cat(outputs, dim=1), dim=-1)
            return outputs, decoder_hidden, torch.cat(attentions, dim=1)

        def step(self, token, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(token))
            query = hidden.permute(1, 0, 2)
            context, attn = self.attention(query, encoder_outputs)
            output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
            return self.out(output), hidden, attn

    def make_pairs(n):
        source = torch.randint(2, vocab, (n, length))
        eos = torch.full((n, 1), EOS, dtype=torch.long)
        return torch.cat((source, eos), 1), torch.cat((source.flip(1), eos), 1)

    encoder, decoder = EncoderRNN(vocab, hidden), AttnDecoderRNN(hidden, vocab)
    encoder_optimizer = torch.optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    data = torch.utils.data
    train_data = data.TensorDataset(*make_pairs(18))
    train_dataloader = data.DataLoader(train_data, sampler=data.RandomSampler(train_data),
                                       batch_size=6)
    printed = []
    batches = [batch for _ in range(2) for batch in train_dataloader]
    for epoch, (input_tensor, target_tensor) in enumerate(batches[:4]):
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)),
                         target_tensor.view(-1))
        loss.backward()
        if epoch == 0:
            printed += [values(encoder.gru.weight_hh_l0.grad),
                        values(decoder.attention.Va.weight.grad)]
        encoder_optimizer.step()
        decoder_optimizer.step()
        printed.append(loss.item())
    printed.append(values(decoder.attention.Wa.weight))

    encoder.eval()
    decoder.eval()
    with torch.no_grad():
        input_tensor, _ = make_pairs(2)
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, attentions = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
    # the tutorial plots the first sentence's weights as a NumPy array
    shown = attentions[0, :length, :].cpu().numpy()
    printed += [decoded_ids.tolist(), tuple(attentions.shape), shown.shape, str(shown.dtype),
                float(shown.sum()), values(attentions),
                values(decoder_outputs)]
    return printed
