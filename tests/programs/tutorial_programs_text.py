"""Programs in the styles of PyTorch's own text tutorials: character-level name
classification and generation, text classification with ``EmbeddingBag`` and the
``nn.Transformer`` language model (the torch.func recipes and translation with attention are in
``tutorial_programs_func_seq.py``).

Each program re-expresses the calls and habits its tutorial teaches with models, names, sizes
and synthetic data of its own. It takes the module triple (torch, nn, F) of one library, seeds
torch's generator, runs a few steps and returns what it would print;
``test_public_tutorial_files_b.py`` runs it under both libraries and compares."""

import copy
import math
import os
import tempfile

from tutorial_programs_func_seq import values


# ----- character-level RNN: classifying and generating names ------------------------------------

LETTERS = "abcdefghijklmnopqrstuvwxyz '"
CATEGORIES = {"short": ["ana", "bo", "eli", "ida", "uma"],
              "long": ["bartholomew", "cornelius", "evangeline", "maximilian"],
              "quoted": ["o'hara", "d'arcy", "o'neil"]}


def char_rnn_classification(torch, nn, F):
    """A hand-written RNN cell (input and hidden concatenated, ``i2h``, ``h2o``, log-softmax)
    fed one letter at a time as a one-hot row, trained by manual SGD on the parameters' data,
    then the same task with ``nn.RNN`` and ``topk`` predictions."""
    torch.manual_seed(8)
    n_letters, names = len(LETTERS), list(CATEGORIES)

    def line_to_tensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][LETTERS.find(letter)] = 1
        return tensor

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            hidden = F.tanh(self.i2h(torch.cat((input, hidden), 1)))
            return self.softmax(self.h2o(hidden)), hidden

        def init_hidden(self):
            return torch.zeros(1, self.hidden_size)

    rnn = RNN(n_letters, 16, len(names))
    criterion, learning_rate = nn.NLLLoss(), 0.05
    pairs = [(category, line) for category in names for line in CATEGORIES[category]]

    def train(category_tensor, line_tensor):
        hidden = rnn.init_hidden()
        rnn.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        return output, loss.item()

    printed = []
    for _ in range(2):
        for index in torch.randperm(len(pairs)).tolist():
            category, line = pairs[index]
            output, loss = train(torch.tensor([names.index(category)], dtype=torch.long),
                                 line_to_tensor(line))
        top_n, top_i = output.topk(1)
        printed += [loss, top_i[0].item(), top_n.item()]
    printed.append(values(rnn.i2h.weight[:3]))

    class RNNClassifier(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.rnn = nn.RNN(input_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, line_tensor):
            _, hidden = self.rnn(line_tensor)
            return self.softmax(self.h2o(hidden[0]))

    model = RNNClassifier(n_letters, 16, len(names))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(2):
        total = 0.0
        for index in torch.randperm(len(pairs)).tolist():
            category, line = pairs[index]
            output = model(line_to_tensor(line))
            loss = criterion(output, torch.tensor([names.index(category)]))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 3)
            optimizer.step()
            optimizer.zero_grad()
            total += loss.item()
        printed.append(total)
    model.eval()
    train_set, test_set = torch.utils.data.random_split(
        pairs, [0.75, 0.25], generator=torch.Generator().manual_seed(2024))
    confusion = torch.zeros(len(names), len(names))
    with torch.no_grad():
        for category, line in test_set:
            _, top_i = model(line_to_tensor(line)).topk(1)
            confusion[names.index(category)][top_i[0].item()] += 1
    for i in range(len(names)):
        denom = confusion[i].sum()
        if denom > 0:
            confusion[i] = confusion[i] / denom
    printed += [len(train_set), [line for _, line in test_set], values(confusion)]
    with torch.no_grad():
        for line in ["eva", "o'toole", "alexandrina"]:
            top_values, top_indices = model(line_to_tensor(line)).topk(2, 1, True)
            printed += [values(top_values), top_indices.tolist()]
    return printed


def char_rnn_generation(torch, nn, F):
    """A conditional character generator (category one-hot, input letter and hidden in;
    ``i2h``, ``i2o``, ``o2o``, dropout, log-softmax out), trained on every next letter of a
    name with the losses summed over the line, then sampled by ``topk`` and by
    ``multinomial``."""
    torch.manual_seed(14)
    n_letters, names = len(LETTERS) + 1, list(CATEGORIES)        # + end of line
    EOL = n_letters - 1

    class Generator(nn.Module):
        def __init__(self, n_categories, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            both = n_categories + input_size + hidden_size
            self.i2h = nn.Linear(both, hidden_size)
            self.i2o = nn.Linear(both, output_size)
            self.o2o = nn.Linear(hidden_size + output_size, output_size)
            self.dropout = nn.Dropout(0.1)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, category, input, hidden):
            input_combined = torch.cat((category, input, hidden), 1)
            hidden = self.i2h(input_combined)
            output = self.o2o(torch.cat((hidden, self.i2o(input_combined)), 1))
            return self.softmax(self.dropout(output)), hidden

        def init_hidden(self):
            return torch.zeros(1, self.hidden_size)

    def category_tensor(category):
        tensor = torch.zeros(1, len(names))
        tensor[0][names.index(category)] = 1
        return tensor

    def input_tensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][LETTERS.find(letter)] = 1
        return tensor

    def target_tensor(line):
        indexes = [LETTERS.find(line[li]) for li in range(1, len(line))] + [EOL]
        return torch.LongTensor(indexes)

    rnn = Generator(len(names), n_letters, 20, n_letters)
    criterion, learning_rate = nn.NLLLoss(), 0.005
    pairs = [(category, line) for category in names for line in CATEGORIES[category]]
    printed = []
    for index in torch.randperm(len(pairs)).tolist():
        category, line = pairs[index]
        target = target_tensor(line).unsqueeze_(-1)
        inputs, cat = input_tensor(line), category_tensor(category)
        hidden = rnn.init_hidden()
        rnn.zero_grad()
        loss = torch.Tensor([0])
        for i in range(inputs.size(0)):
            output, hidden = rnn(cat, inputs[i], hidden)
            loss += criterion(output, target[i])
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        printed.append(loss.item() / inputs.size(0))
    printed.append(values(rnn.o2o.bias))

    def sample(category, start, greedy, max_length=8):
        with torch.no_grad():
            cat, inputs, hidden = category_tensor(category), input_tensor(start), rnn.init_hidden()
            name = start
            for _ in range(max_length):
                output, hidden = rnn(cat, inputs[0], hidden)
                if greedy:
                    topv, topi = output.topk(1)
                    index = topi[0][0].item()
                else:
                    index = torch.multinomial(output.exp(), 1)[0][0].item()
                if index == EOL:
                    break
                name += LETTERS[index]
                inputs = input_tensor(LETTERS[index])
            return name

    rnn.eval()
    printed += [sample("short", "a", True), sample("long", "m", True)]
    printed += [sample(c, s, False) for c, s in [("quoted", "o"), ("long", "c"), ("short", "e")]]
    return printed


# ----- text classification with EmbeddingBag ----------------------------------------------------

def text_classification(torch, nn, F):
    """Sentences of token ids of different lengths packed into one flat tensor with the
    offsets of their starts, classified by an ``EmbeddingBag`` (mean) and a linear layer,
    trained with SGD, ``StepLR``, gradient clipping, and an accuracy count."""
    torch.manual_seed(23)
    vocab_size, embed_dim, num_class = 30, 8, 3

    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class):
            super().__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
            self.fc = nn.Linear(embed_dim, num_class)
            self.init_weights()

        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            return self.fc(self.embedding(text, offsets))

    def synthetic_sentence(label):
        # each class speaks mostly its own tenth of the vocabulary
        length = int(torch.randint(3, 8, ()).item())
        own = torch.randint(10 * label, 10 * label + 10, (length,))
        noise = torch.randint(0, vocab_size, (length,))
        return torch.where(torch.rand(length) < 0.7, own, noise).tolist()

    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for label, tokens in batch:
            label_list.append(label)
            processed_text = torch.tensor(tokens, dtype=torch.int64)
            text_list.append(processed_text)
            offsets.append(processed_text.size(0))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        return label_list, torch.cat(text_list), offsets

    def dataset(n):
        labels = torch.randint(0, num_class, (n,)).tolist()
        return [(label, synthetic_sentence(label)) for label in labels]

    data = torch.utils.data
    full_train = dataset(36)
    num_train = int(len(full_train) * 0.67)
    split_train, split_valid = data.random_split(full_train,
                                                 [num_train, len(full_train) - num_train])
    train_dataloader = data.DataLoader(split_train, batch_size=8, shuffle=True,
                                       collate_fn=collate_batch)
    valid_data = [split_valid[i] for i in range(len(split_valid))]
    model = TextClassificationModel(vocab_size, embed_dim, num_class)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)

    def evaluate(data):
        model.eval()
        total_acc, total_count = 0, 0
        with torch.no_grad():
            label, text, offsets = collate_batch(data)
            predicted_label = model(text, offsets)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
        return total_acc / total_count, criterion(predicted_label, label).item()

    printed, total_accu = [], None
    for epoch in range(3):
        model.train()
        for idx, (label, text, offsets) in enumerate(train_dataloader):
            optimizer.zero_grad()
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            loss.backward()
            if epoch == 0 and idx == 0:
                printed.append(values(model.embedding.weight.grad))
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            printed.append(loss.item())
        accu_val = evaluate(valid_data)
        if total_accu is not None and total_accu > accu_val[0]:
            scheduler.step()
        else:
            total_accu = accu_val[0]
        printed += [accu_val, scheduler.get_last_lr()]
    printed.append(values(model.fc.weight))
    return printed


# ----- language modelling with nn.Transformer ---------------------------------------------------

def transformer_language_model(torch, nn, F):
    """A TransformerEncoder language model with sinusoidal positions in a registered buffer
    and the square causal mask, trained on a batchified synthetic token stream with
    ``get_batch`` windows, gradient clipping, SGD + ``StepLR``; the best model by validation
    loss kept by ``copy.deepcopy`` and its perplexity printed."""
    torch.manual_seed(31)
    ntokens, emsize, d_hid, nlayers, nhead, dropout, bptt = 13, 16, 24, 2, 2, 0.2, 6

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=64):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe)

        def forward(self, x):                                         # (seq_len, batch, d)
            return self.dropout(x + self.pe[:x.size(0)])

    class TransformerModel(nn.Module):
        def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
            super().__init__()
            self.pos_encoder = PositionalEncoding(d_model, dropout)
            encoder_layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
            self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers,
                                                             enable_nested_tensor=False)
            self.embedding = nn.Embedding(ntoken, d_model)
            self.d_model = d_model
            self.linear = nn.Linear(d_model, ntoken)
            self.init_weights()

        def init_weights(self):
            initrange = 0.1
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.linear.bias.data.zero_()
            self.linear.weight.data.uniform_(-initrange, initrange)

        def forward(self, src, src_mask=None):
            src = self.pos_encoder(self.embedding(src) * math.sqrt(self.d_model))
            if src_mask is None:
                src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
            return self.linear(self.transformer_encoder(src, src_mask))

    def stream(n):
        # a noisy counting sequence: mostly the next token modulo ntokens
        steps = torch.where(torch.rand(n) < 0.8, torch.ones(n, dtype=torch.long),
                            torch.randint(0, ntokens, (n,)))
        return steps.cumsum(0) % ntokens

    def batchify(data, bsz):
        seq_len = data.size(0) // bsz
        data = data[:seq_len * bsz]
        return data.view(bsz, seq_len).t().contiguous()

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i + seq_len]
        target = source[i + 1:i + 1 + seq_len].reshape(-1)
        return data, target

    train_data, val_data = batchify(stream(56), 4), batchify(stream(26), 2)
    model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
    mask = nn.Transformer.generate_square_subsequent_mask(bptt)
    printed = [values(mask), values(model.pos_encoder.pe[:3])]

    def train_epoch(first):
        model.train()
        total_loss = 0.0
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            output = model(data, mask[:data.size(0), :data.size(0)])
            loss = criterion(output.view(-1, ntokens), targets)
            optimizer.zero_grad()
            loss.backward()
            if first and batch == 0:
                printed.append(values(model.linear.weight.grad[:2]))
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            total_loss += loss.item()
        return total_loss

    def evaluate(eval_model, data_source):
        eval_model.eval()
        total_loss = 0.0
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                output = eval_model(data)
                total_loss += len(data) * criterion(output.view(-1, ntokens), targets).item()
        return total_loss / (len(data_source) - 1)

    best_val_loss, best_model = float("inf"), None
    with tempfile.TemporaryDirectory() as tempdir:
        # the best weights kept twice: a deep copy of the model and a saved state dict
        best_model_params_path = os.path.join(tempdir, "best_model_params.pt")
        for epoch in range(3):
            printed.append(train_epoch(epoch == 0))
            val_loss = evaluate(model, val_data)
            printed += [val_loss, math.exp(val_loss), scheduler.get_last_lr()[0]]
            if val_loss < best_val_loss:
                best_val_loss, best_model = val_loss, copy.deepcopy(model)
                torch.save(model.state_dict(), best_model_params_path)
            scheduler.step()
        model.load_state_dict(torch.load(best_model_params_path))
    printed += [evaluate(best_model, val_data), best_model is not model,
                evaluate(model, val_data) == best_val_loss, values(best_model.linear.bias)]
    return printed
