"""What the classic small example programs reach, each on a few synthetic batches:
a VAE, a DCGAN step, sine-wave LSTMCell prediction with LBFGS, REINFORCE with a
Categorical policy, sub-pixel super-resolution, polynomial regression, an RNN and
a Transformer language model, and a character-level MLP with sampling."""

import math

import numpy as np
import torch

nn = torch.nn
F = torch.nn.functional


def show(name, value):
    print(f"{name}: {value:.4f}")


# ---- variational autoencoder ----------------------------------------------------------------------
torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc21, self.fc22 = nn.Linear(20, 12), nn.Linear(12, 3), nn.Linear(12, 3)
        self.fc3, self.fc4 = nn.Linear(3, 12), nn.Linear(12, 20)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def forward(self, x):
        h = F.relu(self.fc1(x.view(-1, 20)))
        mu, logvar = self.fc21(h), self.fc22(h)
        z = self.reparameterize(mu, logvar)
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar


vae = VAE()
opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
data = torch.rand(8, 4, 5)
for _ in range(3):
    recon, mu, logvar = vae(data)
    bce = F.binary_cross_entropy(recon, data.view(-1, 20), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = bce + kld
    opt.zero_grad()
    loss.backward()
    opt.step()
    show("vae", loss.item() / len(data))
with torch.no_grad():
    print(vae.fc4(F.relu(vae.fc3(torch.randn(2, 3)))).sigmoid().shape)

# ---- DCGAN ------------------------------------------------------------------------------------------
torch.manual_seed(1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


netG = nn.Sequential(
    nn.ConvTranspose2d(4, 8, 4, 1, 0, bias=False), nn.BatchNorm2d(8), nn.ReLU(True),
    nn.ConvTranspose2d(8, 3, 4, 2, 1, bias=False), nn.Tanh(),
)
netD = nn.Sequential(
    nn.Conv2d(3, 8, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(8, 1, 4, 1, 0, bias=False), nn.Sigmoid(),
)
netG.apply(weights_init)
netD.apply(weights_init)
criterion = nn.BCELoss()
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real = torch.rand(2, 3, 8, 8) * 2 - 1
for _ in range(2):
    netD.zero_grad()
    label = torch.full((2,), 1.0, dtype=torch.float)
    errD_real = criterion(netD(real).view(-1), label)
    errD_real.backward()
    fake = netG(torch.randn(2, 4, 1, 1))
    label.fill_(0.0)
    errD_fake = criterion(netD(fake.detach()).view(-1), label)
    errD_fake.backward()
    optD.step()
    netG.zero_grad()
    label.fill_(1.0)
    errG = criterion(netD(fake).view(-1), label)
    errG.backward()
    optG.step()
    show("dcgan D", (errD_real + errD_fake).item())
    show("dcgan G", errG.item())
print(netG)

# ---- sine waves with LSTMCell and LBFGS ----------------------------------------------------------------
np.random.seed(2)
torch.manual_seed(2)
T, L, N = 20, 100, 6
x = np.empty((N, L), np.int64)
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
waves = np.sin(x / 1.0 / T).astype("float64")
inp, target = torch.from_numpy(waves[2:, :-1]), torch.from_numpy(waves[2:, 1:])


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 8)
        self.linear = nn.Linear(8, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 8, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 8, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            output = self.linear(h_t)
            outputs += [output]
        for _ in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            output = self.linear(h_t)
            outputs += [output]
        return torch.cat(outputs, dim=1)


seq = Sequence().double()
optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=4)
mse = nn.MSELoss()
for _ in range(2):
    def closure():
        optimizer.zero_grad()
        loss = mse(seq(inp), target)
        loss.backward()
        return loss
    show("lbfgs", optimizer.step(closure).item())
with torch.no_grad():
    pred = seq(inp[:1], future=5)
print(pred.shape, pred.detach().numpy().shape)

# ---- REINFORCE with a stub environment ----------------------------------------------------------
torch.manual_seed(3)
eps = np.finfo(np.float32).eps.item()


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1, self.dropout, self.affine2 = nn.Linear(4, 16), nn.Dropout(p=0.6), nn.Linear(16, 2)
        self.saved_log_probs, self.rewards = [], []

    def forward(self, x):
        return F.softmax(self.affine2(F.relu(self.dropout(self.affine1(x)))), dim=1)


policy = Policy()
popt = torch.optim.Adam(policy.parameters(), lr=1e-2)
state = np.zeros(4, dtype=np.float32)
for episode in range(3):
    for t in range(6):
        probs = policy(torch.from_numpy(state).float().unsqueeze(0))
        m = torch.distributions.Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        state = state + (action.item() - 0.5) * 0.1
        policy.rewards.append(1.0 - abs(float(state.sum())))
    R, returns = 0, []
    for r in policy.rewards[::-1]:
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_loss = [-log_prob * R for log_prob, R in zip(policy.saved_log_probs, returns)]
    popt.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    popt.step()
    del policy.rewards[:], policy.saved_log_probs[:]
    show("reinforce", policy_loss.item())

# ---- sub-pixel super-resolution ------------------------------------------------------------------------
torch.manual_seed(4)


class SuperRes(nn.Module):
    def __init__(self, upscale):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(8, upscale ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale)
        nn.init.orthogonal_(self.conv1.weight, nn.init.calculate_gain("relu"))
        nn.init.orthogonal_(self.conv2.weight)

    def forward(self, x):
        return self.pixel_shuffle(self.conv2(torch.relu(self.conv1(x))))


sr = SuperRes(2)
sopt = torch.optim.Adam(sr.parameters(), lr=1e-2)
low, high = torch.rand(2, 1, 6, 6), torch.rand(2, 1, 12, 12)
for _ in range(2):
    sopt.zero_grad()
    loss = nn.MSELoss()(sr(low), high)
    loss.backward()
    sopt.step()
    show("super-res psnr", 10 * math.log10(1 / loss.item()))

# ---- polynomial regression ------------------------------------------------------------------------------
torch.manual_seed(5)
W_target, b_target = torch.randn(4, 1) * 5, torch.randn(1) * 5


def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, 5)], 1)


fc = torch.nn.Linear(W_target.size(0), 1)
for _ in range(3):
    bx = make_features(torch.randn(8))
    by = bx.mm(W_target) + b_target.item()
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(bx), by)
    output.backward()
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)
    show("regression", output.item())

# ---- language models ----------------------------------------------------------------------------------
torch.manual_seed(6)


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=0.2)
        self.decoder = nn.Linear(nhid, ntoken)
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=50):
        super().__init__()
        self.dropout = nn.Dropout(p=0.1)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[: x.size(0), :])


class TransformerModel(nn.Module):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp)
        layer = nn.TransformerEncoderLayer(ninp, nhead, nhid, 0.1)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.encoder, self.decoder, self.ninp = nn.Embedding(ntoken, ninp), nn.Linear(ninp, ntoken), ninp

    def forward(self, src):
        mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        src = self.pos_encoder(self.encoder(src) * math.sqrt(self.ninp))
        return F.log_softmax(self.decoder(self.transformer_encoder(src, mask)), dim=-1)


corpus = torch.randint(0, 11, (60,))
batches = corpus[: 60 // 3 * 3].view(3, -1).t().contiguous()
for rnn_type in ("LSTM", "GRU", "RNN_TANH"):
    model = RNNModel("RNN" if rnn_type == "RNN_TANH" else rnn_type, 11, 6, 8, 2)
    hidden = model.init_hidden(3)
    for i in range(0, 12, 4):
        data, targets = batches[i:i + 4], batches[i + 1:i + 5].reshape(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = nn.NLLLoss()(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-20)
        show(f"{rnn_type} ppl", math.exp(loss.item()))
tmodel = TransformerModel(11, 8, 2, 16, 2)
tout = tmodel(batches[:5])
tloss = nn.NLLLoss()(tout.view(-1, 11), batches[1:6].reshape(-1))
tloss.backward()
show("transformer", tloss.item())

# ---- character-level MLP with sampling ---------------------------------------------------------------
g = torch.Generator().manual_seed(2147483647)
C = torch.randn((27, 4), generator=g)
W1, b1 = torch.randn((12, 20), generator=g) * (5 / 3) / 12 ** 0.5, torch.randn(20, generator=g) * 0.01
W2, b2 = torch.randn((20, 27), generator=g) * 0.01, torch.randn(27, generator=g) * 0
bngain, bnbias = torch.ones((1, 20)), torch.zeros((1, 20))
params = [C, W1, b1, W2, b2, bngain, bnbias]
for p in params:
    p.requires_grad = True
Xtr = torch.randint(0, 27, (32, 3), generator=g)
Ytr = torch.randint(0, 27, (32,), generator=g)
for step in range(3):
    ix = torch.randint(0, Xtr.shape[0], (8,), generator=g)
    emb = C[Xtr[ix]]
    hpre = emb.view(emb.shape[0], -1) @ W1 + b1
    hpre = bngain * (hpre - hpre.mean(0, keepdim=True)) / hpre.std(0, keepdim=True) + bnbias
    logits = torch.tanh(hpre) @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in params:
        p.grad = None
    loss.backward()
    for p in params:
        p.data += -0.1 * p.grad
    show("makemore", loss.item())
with torch.no_grad():
    context, out = [0] * 3, []
    for _ in range(8):
        emb = C[torch.tensor([context])]
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        probs = F.softmax(h @ W2 + b2, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
print(out)
