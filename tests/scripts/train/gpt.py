# A tiny GPT: token and position embeddings, pre-norm transformer blocks with
# causal self-attention, GELU MLP, AdamW with a linear warm-up then cosine
# annealing (SequentialLR), gradient clipping,
# and sampling with multinomial.
import math

import torch

nn = torch.nn
F = torch.nn.functional

torch.manual_seed(0)
text = "to be or not to be that is the question whether tis nobler in the mind to suffer "
chars = sorted(set(text))
vocab, block = len(chars), 16
data = torch.tensor([chars.index(c) for c in text])


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, dim=32, heads=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block, dim)
        self.blocks = nn.Sequential(*[Block(dim, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        t = idx.size(1)
        x = self.tok(idx) + self.pos(torch.arange(t))
        logits = self.head(self.ln(self.blocks(x)))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, vocab), targets.view(-1))
        return logits, loss


model = GPT()
print(sum(p.numel() for p in model.parameters()), "parameters")
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                              lr=3e-3, betas=(0.9, 0.95))
steps, warmup = 40, 5
scheduler = torch.optim.lr_scheduler.SequentialLR(
    optimizer,
    [torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.2, total_iters=warmup),
     torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps - warmup, eta_min=1e-4)],
    milestones=[warmup],
)
for step in range(steps):
    ix = torch.randint(len(data) - block - 1, (8,))
    x = torch.stack([data[i : i + block] for i in ix])
    y = torch.stack([data[i + 1 : i + block + 1] for i in ix])
    _, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    if step % 8 == 0 or step == steps - 1:
        print(f"step {step} loss {loss.item():.5f} lr {scheduler.get_last_lr()[0]:.6f}")

model.eval()
idx = torch.zeros((1, 1), dtype=torch.long)
with torch.no_grad():
    for _ in range(24):
        logits, _ = model(idx[:, -block:])
        probs = F.softmax(logits[:, -1, :], dim=-1)
        idx = torch.cat([idx, torch.multinomial(probs, num_samples=1)], dim=1)
print(repr("".join(chars[i] for i in idx[0].tolist())))
