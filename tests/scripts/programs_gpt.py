"""What a small GPT training program reaches: causal self-attention through
scaled_dot_product_attention, tied embeddings, scaled init by parameter name,
AdamW with decay groups, gradient clipping, and top-k sampling."""

import inspect
import math
from contextlib import nullcontext

import torch

nn = torch.nn
F = torch.nn.functional


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class SelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block, flash):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd, self.flash = n_head, n_embd, flash
        self.resid_dropout = nn.Dropout(0.0)
        if not flash:
            self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block, flash):
        super().__init__()
        self.ln_1 = LayerNorm(n_embd, bias=True)
        self.attn = SelfAttention(n_embd, n_head, block, flash)
        self.ln_2 = LayerNorm(n_embd, bias=False)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block, n_layer, n_head, n_embd, flash):
        super().__init__()
        self.block_size = block
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, n_embd),
            wpe=nn.Embedding(block, n_embd),
            drop=nn.Dropout(0.0),
            h=nn.ModuleList([Block(n_embd, n_head, block, flash) for _ in range(n_layer)]),
            ln_f=LayerNorm(n_embd, bias=True),
        ))
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.block_size
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay = [p for n, p in param_dict.items() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay}, {"params": nodecay, "weight_decay": 0.0}]
        print("decayed tensors", len(decay), sum(p.numel() for p in decay))
        print("non-decayed tensors", len(nodecay), sum(p.numel() for p in nodecay))
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        extra_args = dict(fused=True) if fused_available and device_type == "cuda" else dict()
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, **extra_args)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx

    def crop_block_size(self, block_size):
        self.block_size = block_size
        self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])


def get_lr(it, warmup=3, decay_iters=12, lr=1e-2, min_lr=1e-3):
    if it < warmup:
        return lr * (it + 1) / (warmup + 1)
    ratio = (it - warmup) / (decay_iters - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * min(ratio, 1.0))) * (lr - min_lr)


for flash in (True, False):
    torch.manual_seed(1337)
    data = torch.randint(0, 17, (400,), dtype=torch.long)
    model = GPT(vocab=17, block=8, n_layer=2, n_head=2, n_embd=16, flash=flash)
    print("number of parameters:", model.get_num_params())
    optimizer = model.configure_optimizers(0.1, 1e-2, (0.9, 0.95), "cpu")
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    ctx = nullcontext()
    for it in range(12):
        for group in optimizer.param_groups:
            group["lr"] = get_lr(it)
        ix = torch.randint(len(data) - 8, (4,))
        x = torch.stack([data[i:i + 8] for i in ix])
        y = torch.stack([data[i + 1:i + 9] for i in ix])
        with ctx:
            logits, loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if it % 4 == 0:
            print(f"iter {it}: loss {loss.item():.4f} norm {norm.item():.3f}")
    model.eval()
    out = model.generate(torch.zeros((1, 1), dtype=torch.long), 10, temperature=0.8, top_k=5)
    print(out.tolist())
    model.crop_block_size(4)
    print(model.transformer.wpe.weight.shape, model(torch.zeros((2, 4), dtype=torch.long))[0].shape)
