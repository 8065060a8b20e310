# The seed's quick test: a tiny Linear+Sigmoid network and its MSE loss.
import torch

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Sigmoid())
print(net)
x = torch.tensor([0.5, -1.0, 2.0])
y = net(x)
print(y)
loss = torch.nn.MSELoss()(y, torch.tensor([1.0]))
print(loss)
loss.backward()
print(net[0].weight.grad)
print(net[0].bias.grad)
for name, p in net.named_parameters():
    print(name, p)
opt = torch.optim.SGD(net.parameters(), lr=0.5)
opt.step()
print(net(x))
