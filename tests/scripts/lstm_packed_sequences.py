# A sequence classifier on variable-length sequences: the batch is padded,
# packed (unsorted, so the packing sorts it), run through a bidirectional
# 2-layer LSTM and unpacked again; the loss uses the final hidden states and
# the mean of the padded output over each sequence's own length.
import torch

nn = torch.nn
rnn_utils = torch.nn.utils.rnn

torch.manual_seed(0)


def make_batch(n):
    lengths = torch.randint(1, 9, (n,))
    seqs = [torch.randn(int(k), 3) for k in lengths]
    labels = torch.tensor([int(s[:, 0].sum() > 0) for s in seqs])
    return seqs, lengths, labels


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 12, num_layers=2, bidirectional=True, dropout=0.1)
        self.head = nn.Linear(2 * 12 + 2 * 12, 2)

    def forward(self, seqs, lengths):
        padded = rnn_utils.pad_sequence(seqs)
        packed = rnn_utils.pack_padded_sequence(padded, lengths, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        out, out_lengths = rnn_utils.pad_packed_sequence(out, padding_value=0.0)
        mean = out.sum(0) / out_lengths.unsqueeze(1).to(out.dtype)
        last = torch.cat([h[-2], h[-1]], 1)
        return self.head(torch.cat([mean, last], 1))


model = Classifier()
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
for step in range(30):
    seqs, lengths, labels = make_batch(6)
    logits = model(seqs, lengths)
    loss = loss_fn(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if step % 5 == 0 or step == 29:
        print(f"step {step} loss {loss.item():.5f}")

model.eval()
seqs, lengths, labels = make_batch(5)
with torch.no_grad():
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    print(packed.batch_sizes.tolist(), packed.sorted_indices.tolist(), packed.unsorted_indices.tolist())
    out, (h, c) = model.lstm(packed)
    back = rnn_utils.unpack_sequence(out)
    print([tuple(t.shape) for t in back])
    print(f"{h.abs().sum().item():.4f} {c.abs().sum().item():.4f}")
    print(model(seqs, lengths).argmax(1).tolist(), labels.tolist())
