"""Programs in the styles of PyTorch's sequence and reinforcement-learning examples: a word
language model (LSTM, GRU, Transformer), sine-wave prediction by stacked LSTM cells fitted
with LBFGS, REINFORCE and actor-critic on a pole-balancing environment.

Each program exercises the calls and habits such examples use, in models, names, sizes and
constants of its own. It takes the module triple (torch, nn, F) of one library, seeds torch's
generator, trains a tiny model on synthetic data for a few steps and returns what it would
print; ``test_pytorch_examples.py`` runs it under both libraries."""

import collections
import math

import numpy as np



# ----- word_language_model ---------------------------------------------------------------------

def word_language_model(torch, nn, F, rnn_type="LSTM"):
    """A word-level language model: an embedding, then a two-layer dropout RNN (LSTM or GRU)
    whose output layer shares the embedding's weight, or a TransformerEncoder behind a
    sinusoidal position buffer and a causal mask; trained by a hand-written SGD step with
    clipped gradients on hidden states cut from their history, then evaluated and sampled one
    word at a time."""
    torch.manual_seed(25)
    vocab, span, max_norm = 11, 4, 0.3
    attention = rnn_type == "Transformer"

    class SinusoidTable(nn.Module):
        """Adds sin and cos of position times geometric frequencies to (T, N, width) inputs."""

        def __init__(self, width, dropout=0.2, longest=32):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            # computed in float32, the way published models build it, then stored in a buffer
            # of the default dtype
            where = torch.arange(longest, dtype=torch.float).unsqueeze(1)      # (longest, 1)
            rates = (torch.arange(0, width, 2).float() * (-math.log(500.0) / width)).exp()
            angles = where * rates                                  # (longest, width / 2)
            table = torch.zeros(longest, width)
            table[:, 1::2] = torch.cos(angles)
            table[:, 0::2] = torch.sin(angles)
            self.register_buffer("table", table.unsqueeze(1))       # (longest, 1, width)

        def forward(self, x):
            return self.dropout(x + self.table[:x.size(0)])

    class RecurrentLM(nn.Module):
        def __init__(self, cell, width, depth, dropout=0.4):
            super().__init__()
            self.cell, self.width, self.depth = cell, width, depth
            self.embed = nn.Embedding(vocab, width)
            self.dropout = nn.Dropout(dropout)
            self.rnn = getattr(nn, cell)(width, width, depth, dropout=dropout)  # nn.LSTM, nn.GRU
            self.readout = nn.Linear(width, vocab)
            self.readout.weight = self.embed.weight   # one (vocab, width) matrix, both ways
            nn.init.uniform_(self.embed.weight, -0.08, 0.08)
            nn.init.zeros_(self.readout.bias)

        def forward(self, tokens, state):                                # tokens (T, N)
            seen, state = self.rnn(self.dropout(self.embed(tokens)), state)  # (T, N, width)
            scores = self.readout(self.dropout(seen))
            return F.log_softmax(scores.view(-1, self.readout.out_features), dim=1), state

        def blank_state(self, streams):
            like = next(self.parameters())           # zeros of the model's dtype and device
            if self.cell != "LSTM":
                return like.new_zeros(self.depth, streams, self.width)
            return tuple(like.new_zeros(self.depth, streams, self.width) for _ in "hc")

    class AttentionLM(nn.Module):
        def __init__(self, width, heads, hidden, depth, dropout=0.4):
            super().__init__()
            self.width, self.mask = width, None
            self.embed = nn.Embedding(vocab, width)
            self.positions = SinusoidTable(width, dropout)
            block = nn.TransformerEncoderLayer(width, heads, hidden, dropout)
            self.encoder = nn.TransformerEncoder(block, depth, enable_nested_tensor=False)
            self.readout = nn.Linear(width, vocab)
            for weight in (self.embed.weight, self.readout.weight):
                nn.init.uniform_(weight, -0.08, 0.08)
            nn.init.zeros_(self.readout.bias)

        def forward(self, tokens, causal=True):                         # tokens (T, N)
            if causal and (self.mask is None or self.mask.size(0) != len(tokens)):
                self.mask = nn.Transformer.generate_square_subsequent_mask(len(tokens))
            x = self.positions(self.embed(tokens) * math.sqrt(self.width))
            x = self.encoder(x, self.mask if causal else None)
            return F.log_softmax(self.readout(x), dim=-1)              # (T, N, vocab)

    def mask_by_hand(size):
        """The causal mask spelled out: 0 where a position may look (itself and earlier ones),
        -inf where it may not."""
        allowed = torch.triu(torch.ones(size, size)).transpose(0, 1) == 1   # lower triangle
        blocked = allowed == 0
        return allowed.float().masked_fill(blocked, float("-inf")).masked_fill(allowed, 0.0)

    def as_columns(stream, columns):
        """A 1-D token stream as ``columns`` parallel streams, (rows, columns); the tokens
        that would not fill a last row are dropped."""
        rows = stream.size(0) // columns
        kept = stream.narrow(0, 0, rows * columns)
        return kept.view(columns, rows).t().contiguous()

    def window(source, start):
        """Inputs (T, N) from row ``start`` on and their next tokens as targets (T*N,)."""
        stop = min(start + span, len(source) - 1)
        return source[start:stop], source[start + 1:stop + 1].reshape(-1)

    def cut_history(state):
        """The same hidden values, detached from the graphs of earlier windows."""
        if not isinstance(state, torch.Tensor):
            return tuple(cut_history(part) for part in state)          # the LSTM's (h, c)
        return state.detach()

    tokens = torch.randint(0, vocab, (60,))
    train_rows = as_columns(tokens[:44], 4)                            # (11, 4)
    valid_rows = as_columns(tokens[44:], 2)                            # (8, 2)
    model = AttentionLM(8, 2, 12, 2) if attention else RecurrentLM(rnn_type, 6, 2)
    nll = nn.NLLLoss()

    def predict(inputs, state):
        """Log-probabilities (T*N, vocab) and the next state, whichever the model."""
        if attention:
            return model(inputs).view(-1, vocab), None
        return model(inputs, state)

    def train_pass(step_size):
        model.train()
        state = None if attention else model.blank_state(4)
        logged = []
        for start in range(0, train_rows.size(0) - 1, span):
            inputs, targets = window(train_rows, start)
            model.zero_grad()
            if state is not None:
                state = cut_history(state)     # backpropagate through this window only
            log_probs, state = predict(inputs, state)
            loss = nll(log_probs, targets)
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            for param in model.parameters():
                param.data.add_(param.grad, alpha=-step_size)
            logged += [loss.item(), norm.item()]
        return logged

    def valid_loss():
        model.eval()
        state = None if attention else model.blank_state(2)
        total = 0.0
        with torch.no_grad():
            for start in range(0, valid_rows.size(0) - 1, span):
                inputs, targets = window(valid_rows, start)
                log_probs, state = predict(inputs, state)
                total += len(inputs) * nll(log_probs, targets).item()
        return total / (len(valid_rows) - 1)

    def sample(count=5, temperature=0.7):
        model.eval()
        history = torch.randint(vocab, (1, 1), dtype=torch.long)
        if not attention:
            model.rnn.flatten_parameters()
            state = model.blank_state(1)
        drawn = []
        with torch.no_grad():
            for _ in range(count):
                if attention:
                    scores = model(history, False)[-1]                 # the last position's
                else:
                    scores, state = model(history, state)
                weights = scores.squeeze().div(temperature).exp().cpu()
                choice = torch.multinomial(weights, 1)[0]
                drawn.append(choice.item())
                if attention:              # the whole prefix again, one word longer
                    history = torch.cat([history, torch.Tensor([[choice]]).long()], 0)
                else:                      # the new word alone: the state holds the rest
                    history.fill_(choice)
        return drawn

    printed, step_size = [], 4.0
    for _ in range(2):
        printed += train_pass(step_size)
        printed.append(valid_loss())
        step_size /= 3.0
    if attention:
        by_hand = mask_by_hand(model.mask.size(0))
        printed += [by_hand.tolist(), torch.equal(by_hand.to(model.mask.dtype), model.mask)]
    return printed + sample()



# ----- time_sequence_prediction ----------------------------------------------------------------

def time_sequence_prediction(torch, nn, F):
    """Two stacked LSTMCells unrolled over shifted sine waves in a double model, fitted by LBFGS
    with a closure, then run past the data on their own predictions."""
    rng = np.random.RandomState(4)
    ticks = np.arange(18) + rng.randint(-60, 60, size=(7, 1))     # (7, 18), int
    waves = np.sin(ticks / 15.0)                                  # float64
    torch.manual_seed(26)
    inputs, targets = torch.from_numpy(waves[2:, :-1]), torch.from_numpy(waves[2:, 1:])
    probe_in, probe_out = torch.from_numpy(waves[:2, :-1]), torch.from_numpy(waves[:2, 1:])

    class StackedCells(nn.Module):
        def __init__(self, hidden=6):
            super().__init__()
            self.hidden = hidden
            self.lower = nn.LSTMCell(1, hidden)
            self.upper = nn.LSTMCell(hidden, hidden)
            self.out = nn.Linear(hidden, 1)

        def blank(self, rows):
            zeros = torch.zeros(rows, self.hidden, dtype=torch.double)
            return zeros, zeros.clone()                           # (h, c)

        def forward(self, series, extra=0):                      # (N, T) -> (N, T + extra)
            low, high = self.blank(series.size(0)), self.blank(series.size(0))
            guesses = []

            def advance(value):                                  # value (N, 1)
                nonlocal low, high
                low = self.lower(value, low)
                high = self.upper(low[0], high)
                return self.out(high[0])

            for column in series.split(1, dim=1):
                guesses.append(advance(column))
            for _ in range(extra):                               # fed its own last guess
                guesses.append(advance(guesses[-1]))
            return torch.cat(guesses, dim=1)

    model = StackedCells()
    model.double()
    mse = nn.MSELoss()
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.7, max_iter=5)
    printed = []

    def closure():
        optimizer.zero_grad()
        loss = mse(model(inputs), targets)
        loss.backward()
        printed.append(loss.item())
        return loss

    for _ in range(2):
        optimizer.step(closure)
        with torch.no_grad():
            future = model(probe_in, extra=3)
        printed.append(mse(future[:, :-3], probe_out).item())
        printed.append(future.detach().numpy()[1, -3:].tolist())
    return printed


# ----- reinforcement_learning ------------------------------------------------------------------

class Balance:
    """A pole balanced on a cart (the classic cart-pole equations of motion, Euler steps of
    20 ms) in NumPy: a reward of 1 a step until the pole leans past 12 degrees or the cart
    leaves the track."""

    GRAVITY, CART_MASS, POLE_MASS, HALF_POLE, PUSH, DT = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=4)    # position, speed, angle, spin
        return self.state.astype(np.float32)

    def step(self, action):
        _, speed, angle, spin = self.state
        mass, moment = self.CART_MASS + self.POLE_MASS, self.POLE_MASS * self.HALF_POLE
        cos, sin = math.cos(angle), math.sin(angle)
        force = self.PUSH if action == 1 else -self.PUSH
        # the push plus the pole's centrifugal pull, per unit of the whole mass
        shared = (force + moment * spin ** 2 * sin) / mass
        spin_rate = (self.GRAVITY * sin - cos * shared) / (
            self.HALF_POLE * (4.0 / 3.0 - self.POLE_MASS * cos ** 2 / mass))
        speed_rate = shared - moment * spin_rate * cos / mass
        self.state = self.state + self.DT * np.array([speed, speed_rate, spin, spin_rate])
        done = abs(self.state[0]) > 2.4 or abs(self.state[2]) > math.radians(12)
        return self.state.astype(np.float32), 1.0, done


def run_episode(env, act, rewards, limit=25):
    """One episode of at most ``limit`` steps, ``act`` choosing an action from each
    observation; the rewards are appended to ``rewards``, their sum returned."""
    observation = env.reset()
    for _ in range(limit):
        observation, reward, done = env.step(act(observation))
        rewards.append(reward)
        if done:
            break
    return sum(rewards)


def standardised_returns(torch, rewards, discount):
    """Each step's discounted return G_t = r_t + discount·G_{t+1}, then shifted and scaled to
    mean 0 and standard deviation 1 (float32's eps keeps a constant episode finite)."""
    ahead, backwards = 0.0, []
    for reward in reversed(rewards):
        ahead = reward + discount * ahead
        backwards.append(ahead)
    returns = torch.tensor(backwards[::-1])
    return (returns - returns.mean()) / (returns.std() + np.finfo(np.float32).eps.item())


def reinforce(torch, nn, F):
    """REINFORCE: a policy with dropout sampled through Categorical, the discounted returns
    standardised, minus each log-probability times its return, concatenated and summed."""
    torch.manual_seed(27)
    env = Balance(27)

    class Actor(nn.Module):
        def __init__(self, hidden=12):
            super().__init__()
            self.hidden = nn.Linear(4, hidden)
            self.drop = nn.Dropout(p=0.5)
            self.choose = nn.Linear(hidden, 2)

        def forward(self, observation):                  # (1, 4) -> (1, 2) probabilities
            hidden = F.relu(self.drop(self.hidden(observation)))
            return F.softmax(self.choose(hidden), dim=1)

    actor = Actor()
    optimizer = torch.optim.Adam(actor.parameters(), lr=2e-2)
    log_probs = []

    def act(observation):
        batch = torch.from_numpy(observation).float().unsqueeze(0)
        choice = torch.distributions.Categorical(actor(batch))
        action = choice.sample()
        log_probs.append(choice.log_prob(action))      # (1,)
        return action.item()

    printed, smoothed = [], 8.0
    for _ in range(4):
        rewards = []
        length = run_episode(env, act, rewards)
        returns = standardised_returns(torch, rewards, 0.97)
        loss = torch.cat([-lp * ret for lp, ret in zip(log_probs, returns)]).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log_probs.clear()
        smoothed = 0.9 * smoothed + 0.1 * length
        printed += [length, smoothed, loss.item()]
    return printed


def actor_critic(torch, nn, F):
    """Actor-critic: one shared layer under an action head and a value head, (log_prob, value)
    namedtuples, advantages from the values as Python floats (no gradient through them),
    smooth_l1_loss of the values against the returns, the two stacked losses summed."""
    Step = collections.namedtuple("Step", ["log_prob", "value"])
    torch.manual_seed(31)
    env = Balance(31)

    class ActorCritic(nn.Module):
        def __init__(self, hidden=12):
            super().__init__()
            self.shared = nn.Linear(4, hidden)
            self.policy = nn.Linear(hidden, 2)
            self.critic = nn.Linear(hidden, 1)

        def forward(self, observation):            # (4,) -> probabilities (2,), value (1,)
            features = F.relu(self.shared(observation))
            return F.softmax(self.policy(features), dim=-1), self.critic(features)

    model = ActorCritic()
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-2)
    steps = []

    def act(observation):
        probs, value = model(torch.from_numpy(observation).float())
        choice = torch.distributions.Categorical(probs)
        action = choice.sample()
        steps.append(Step(choice.log_prob(action), value))
        return action.item()

    printed = []
    for _ in range(4):
        rewards = []
        length = run_episode(env, act, rewards)
        actor_terms, critic_terms = [], []
        for step, ret in zip(steps, standardised_returns(torch, rewards, 0.97)):
            advantage = ret - step.value.item()
            actor_terms.append(-step.log_prob * advantage)
            critic_terms.append(F.smooth_l1_loss(step.value, torch.tensor([ret])))
        loss = torch.stack(actor_terms).sum() + torch.stack(critic_terms).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps.clear()
        printed += [length, loss.item()]
    return printed
