# A character-level LSTM language model: Embedding, a 2-layer LSTM with
# dropout, RMSprop with a StepLR schedule, gradient clipping, and greedy
# generation.
import torch

nn = torch.nn
F = torch.nn.functional

torch.manual_seed(0)
text = "the quick brown fox jumps over the lazy dog. " * 8
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)


class CharLSTM(nn.Module):
    def __init__(self, vocab, emb=16, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, idx, state=None):
        h, state = self.lstm(self.embed(idx), state)
        return self.out(h), state


model = CharLSTM(len(chars))
print(model)
optimizer = torch.optim.RMSprop(model.parameters(), lr=0.005)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=15, gamma=0.5)
seq, batch = 16, 8
for step in range(40):
    starts = torch.randint(0, len(data) - seq - 1, (batch,))
    x = torch.stack([data[s : s + seq] for s in starts.tolist()])
    y = torch.stack([data[s + 1 : s + seq + 1] for s in starts.tolist()])
    logits, _ = model(x)
    loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    if step % 5 == 0 or step == 39:
        print(f"step {step} loss {loss.item():.5f} grad norm {norm.item():.4f} lr {scheduler.get_last_lr()[0]:.5f}")

model.eval()
idx = torch.tensor([[stoi["t"]]])
state = None
out = "t"
with torch.no_grad():
    for _ in range(20):
        logits, state = model(idx, state)
        idx = logits[:, -1].argmax(-1, keepdim=True)
        out += chars[idx.item()]
print(repr(out))
