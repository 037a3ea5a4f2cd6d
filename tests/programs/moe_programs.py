"""Programs in the style of public mixture-of-experts code: a Switch Transformer feed-forward
with top-1 routing, an expert capacity and its load-balancing loss, and a Mixtral sparse block
with top-2 routing, weights renormalised over the chosen experts and tokens gathered by
``torch.where`` and scattered back by ``index_add_``, each inside a tiny transformer block.

Each program takes one library's module triple (torch, nn, F), seeds torch's generator, runs
on synthetic data in the default dtype and returns what it would print: numbers, flags,
orders, error class names and the values of small tensors as lists.
``test_public_model_families.py`` runs it under both libraries and compares. The models, names,
sizes and constants are the programs' own."""

from program_output import error_class, values


# ----- Switch Transformer: top-1 routing with a capacity ---------------------------------------

def switch_transformer(torch, nn, F):
    """A Switch feed-forward (router Linear, softmax, top-1 by ``max``, an expert capacity that
    drops the overflow by a cumulative sum of the one-hot dispatch, ``expert(x[idx])``) with
    the load-balancing loss ``E * sum(f_i * P_i)`` and the router z-loss, trained a few steps
    with Adam inside a pre-norm block; the tokens each expert took and dropped are printed."""
    torch.manual_seed(0)
    printed = []

    class SwitchFeedForward(nn.Module):
        def __init__(self, d_model, d_ff, n_experts, capacity_factor=1.0, drop_tokens=True):
            super().__init__()
            self.n_experts = n_experts
            self.capacity_factor = capacity_factor
            self.drop_tokens = drop_tokens
            self.switch = nn.Linear(d_model, n_experts, bias=False)
            self.experts = nn.ModuleList([
                nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(0.1),
                              nn.Linear(d_ff, d_model))
                for _ in range(n_experts)])

        def forward(self, x):
            seq_len, batch_size, d_model = x.shape
            x = x.view(-1, d_model)
            logits = self.switch(x)
            route_prob = torch.softmax(logits, dim=-1)
            route_prob_max, routes = torch.max(route_prob, dim=-1)
            indexes_list = [torch.eq(routes, i).nonzero(as_tuple=True)[0]
                            for i in range(self.n_experts)]
            final_output = x.new_zeros(x.shape)
            capacity = int(self.capacity_factor * len(x) / self.n_experts)
            counts = x.new_tensor([len(indexes_list[i]) for i in range(self.n_experts)])
            dropped = []
            if self.drop_tokens:
                for i in range(self.n_experts):
                    if len(indexes_list[i]) <= capacity:
                        continue
                    indexes_list[i] = indexes_list[i][torch.randperm(len(indexes_list[i]))]
                    dropped.append(indexes_list[i][capacity:])
                    indexes_list[i] = indexes_list[i][:capacity]
            expert_output = [self.experts[i](x[indexes_list[i], :])
                             for i in range(self.n_experts)]
            for i in range(self.n_experts):
                final_output[indexes_list[i], :] = expert_output[i]
            if dropped:
                dropped = torch.cat(dropped)
                final_output[dropped, :] = x[dropped, :]
            final_output = final_output * route_prob_max.view(-1, 1)
            final_output = final_output.view(seq_len, batch_size, d_model)
            return final_output, counts, route_prob.sum(0), len(dropped), logits

    class Block(nn.Module):
        def __init__(self, d_model, n_heads, ff):
            super().__init__()
            self.norm_attn = nn.LayerNorm(d_model)
            self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=0.0)
            self.norm_ff = nn.LayerNorm(d_model)
            self.ff = ff

        def forward(self, x):
            z = self.norm_attn(x)
            x = x + self.attn(z, z, z, need_weights=False)[0]
            ff, counts, route_prob, n_dropped, logits = self.ff(self.norm_ff(x))
            return x + ff, counts, route_prob, n_dropped, logits

    n_experts = 4
    block = Block(8, 2, SwitchFeedForward(8, 16, n_experts, capacity_factor=1.25))
    head = nn.Linear(8, 3)
    params = list(block.parameters()) + list(head.parameters())
    optimizer = torch.optim.Adam(params, lr=3e-3)
    x = torch.randn(6, 2, 8)                        # (seq, batch, d_model)
    y = torch.randint(0, 3, (6, 2))
    for _ in range(4):
        out, counts, route_prob, n_dropped, logits = block(x)
        total = counts.sum()
        route_frac = counts / total
        route_prob = route_prob / total
        load_balancing_loss = n_experts * (route_frac * route_prob).sum()
        z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
        ce = F.cross_entropy(head(out).view(-1, 3), y.view(-1))
        loss = ce + 0.01 * load_balancing_loss + 1e-3 * z_loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, max_norm=1.0)
        optimizer.step()
        printed += [loss.item(), load_balancing_loss.item(), values(counts), n_dropped]
    printed += [block.ff.experts[0][0].weight.grad is not None,
                values(block.ff.switch.weight.grad[:, :3])]

    block.eval()
    with torch.no_grad():
        out, counts, *_ = block(x)
    printed += [list(out.shape), values(out[0, 0]), values(counts)]
    return printed


# ----- Mixtral: top-2 routing, renormalised, gathered by torch.where ----------------------------

def mixtral_sparse_block(torch, nn, F):
    """Mixtral's sparse MoE block as its reference code writes it: ``torch.topk`` of the
    softmax in float, the weights renormalised and cast back, ``F.one_hot(...).permute``
    for the expert mask, ``torch.where`` for the tokens of each expert, ``index_add_`` back
    into the output, router jitter noise in training, and the auxiliary load-balancing loss
    with ``torch.mean`` of the one-hot mask; also the bincount of choices, a capacity-limited
    dispatch by ``cumsum`` and a GShard-style top-2 gate on logits."""
    torch.manual_seed(1)
    printed = []

    class MixtralBlockSparseTop2MLP(nn.Module):
        def __init__(self, hidden_dim, ffn_dim):
            super().__init__()
            self.w1 = nn.Linear(hidden_dim, ffn_dim, bias=False)
            self.w2 = nn.Linear(ffn_dim, hidden_dim, bias=False)
            self.w3 = nn.Linear(hidden_dim, ffn_dim, bias=False)
            self.act_fn = nn.SiLU()

        def forward(self, hidden_states):
            current_hidden_states = self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states)
            return self.w2(current_hidden_states)

    class MixtralSparseMoeBlock(nn.Module):
        def __init__(self, hidden_dim, ffn_dim, num_experts, top_k, jitter_noise=0.0):
            super().__init__()
            self.hidden_dim = hidden_dim
            self.num_experts = num_experts
            self.top_k = top_k
            self.gate = nn.Linear(hidden_dim, num_experts, bias=False)
            self.experts = nn.ModuleList(
                [MixtralBlockSparseTop2MLP(hidden_dim, ffn_dim) for _ in range(num_experts)])
            self.jitter_noise = jitter_noise

        def forward(self, hidden_states):
            batch_size, sequence_length, hidden_dim = hidden_states.shape
            if self.training and self.jitter_noise > 0:
                hidden_states *= torch.empty_like(hidden_states).uniform_(
                    1.0 - self.jitter_noise, 1.0 + self.jitter_noise)
            hidden_states = hidden_states.view(-1, hidden_dim)
            router_logits = self.gate(hidden_states)
            routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
            routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
            routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
            routing_weights = routing_weights.to(hidden_states.dtype)
            final_hidden_states = torch.zeros(
                (batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype,
                device=hidden_states.device)
            expert_mask = torch.nn.functional.one_hot(
                selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
            for expert_idx in expert_hit:
                expert_layer = self.experts[expert_idx]
                idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
                current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
                current_hidden_states = (expert_layer(current_state)
                                         * routing_weights[top_x, idx, None])
                final_hidden_states.index_add_(0, top_x,
                                               current_hidden_states.to(hidden_states.dtype))
            final_hidden_states = final_hidden_states.reshape(
                batch_size, sequence_length, hidden_dim)
            return final_hidden_states, router_logits

    def load_balancing_loss_func(gate_logits, num_experts, top_k):
        compute_device = gate_logits[0].device
        concatenated_gate_logits = torch.cat(
            [layer_gate.to(compute_device) for layer_gate in gate_logits], dim=0)
        routing_weights = torch.nn.functional.softmax(concatenated_gate_logits, dim=-1)
        _, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
        expert_mask = torch.nn.functional.one_hot(selected_experts, num_experts)
        tokens_per_expert = torch.mean(expert_mask.float(), dim=0)
        router_prob_per_expert = torch.mean(routing_weights, dim=0)
        overall_loss = torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0))
        return overall_loss * num_experts

    class RMSNorm(nn.Module):
        def __init__(self, hidden_size, eps=1e-6):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden_size))
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            input_dtype = hidden_states.dtype
            hidden_states = hidden_states.to(torch.float32)
            variance = hidden_states.pow(2).mean(-1, keepdim=True)
            hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
            return self.weight * hidden_states.to(input_dtype)

    class DecoderLayer(nn.Module):
        def __init__(self, hidden, heads, experts, top_k):
            super().__init__()
            self.input_layernorm = RMSNorm(hidden)
            self.self_attn = nn.MultiheadAttention(hidden, heads, batch_first=True)
            self.post_attention_layernorm = RMSNorm(hidden)
            self.block_sparse_moe = MixtralSparseMoeBlock(hidden, 2 * hidden, experts, top_k,
                                                          jitter_noise=0.05)

        def forward(self, x, mask):
            residual = x
            h = self.input_layernorm(x)
            h, _ = self.self_attn(h, h, h, attn_mask=mask, need_weights=False)
            x = residual + h
            h, router_logits = self.block_sparse_moe(self.post_attention_layernorm(x))
            return x + h, router_logits

    num_experts, top_k, seq = 4, 2, 5
    layer = DecoderLayer(8, 2, num_experts, top_k)
    lm_head = nn.Linear(8, 11, bias=False)
    mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
    tokens = torch.randn(3, seq, 8)
    targets = torch.randint(0, 11, (3, seq))
    opt = torch.optim.AdamW(list(layer.parameters()) + list(lm_head.parameters()), lr=1e-2,
                            weight_decay=0.1)
    for _ in range(3):
        out, router_logits = layer(tokens.clone(), mask)
        logits = lm_head(out)
        aux_loss = load_balancing_loss_func((router_logits,), num_experts, top_k)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        total = loss + 0.02 * aux_loss
        opt.zero_grad()
        total.backward()
        opt.step()
        printed += [loss.item(), aux_loss.item()]

    layer.eval()
    moe = layer.block_sparse_moe
    with torch.no_grad():
        h = tokens.view(-1, 8)
        router_logits = moe.gate(h)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        topk_weight, topk_idx = routing_weights.topk(top_k, dim=-1, sorted=True)
        per_expert = torch.bincount(topk_idx.flatten(), minlength=num_experts)
        out, _ = moe(tokens)
        # the same output from a dense loop over every token: the reference to check against
        dense = torch.zeros_like(h)
        for t in range(h.shape[0]):
            weights = topk_weight[t] / topk_weight[t].sum()
            for k in range(top_k):
                dense[t] += weights[k] * moe.experts[topk_idx[t, k].item()](h[t])
    printed += [topk_idx.tolist(), per_expert.tolist(), values(topk_weight[:3]),
                torch.allclose(out.view(-1, 8), dense, atol=1e-5),
                values(out[0, 0]), layer.training, moe.training]

    # a GShard-style top-2 gate on the logits, then softmax over the two; capacity by cumsum
    with torch.no_grad():
        top_logits, top_indices = router_logits.topk(top_k, dim=1)
        top_k_gates = F.softmax(top_logits, dim=1)
        zeros = torch.zeros_like(router_logits, requires_grad=False)
        gates = zeros.scatter(1, top_indices, top_k_gates)
        capacity = 4
        first = F.one_hot(top_indices[:, 0], num_experts)
        position = torch.cumsum(first, dim=0) * first - 1
        kept = first * torch.lt(position, capacity)
        load = (gates > 0).sum(0)
        importance = gates.sum(0)
        cv_squared = importance.float().var() / (importance.float().mean() ** 2 + 1e-10)
    printed += [values(gates[:2]), position.max().item(), kept.sum(0).tolist(),
                load.tolist(), cv_squared.item(),
                error_class(lambda: F.one_hot(top_indices, 2)),
                error_class(lambda: torch.topk(router_logits, num_experts + 1, dim=-1))]
    return printed
