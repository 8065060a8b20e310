import torch

D = torch.distributions


def show(name, d, n=3):
    s = d.sample((n,))
    print(name, d.batch_shape, d.event_shape)
    print(" sample", s)
    print(" log_prob", d.log_prob(s))
    try:
        print(" entropy", d.entropy())
    except NotImplementedError:
        print(" entropy not implemented")


for seed in [0, 1, 123]:
    torch.manual_seed(seed)
    print("seed", seed)
    show("Normal", D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5])))
    show("Categorical", D.Categorical(probs=torch.tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])))
    show("Bernoulli", D.Bernoulli(logits=torch.tensor([-1.0, 0.0, 2.0])))
    show("Uniform", D.Uniform(torch.tensor([0.0, -1.0]), torch.tensor([1.0, 3.0])))
    show("Exponential", D.Exponential(torch.tensor([0.5, 2.0])))
    show("Gamma", D.Gamma(torch.tensor([0.4, 2.0, 9.0]), torch.tensor([1.0, 0.5, 3.0])))
    show("Beta", D.Beta(torch.tensor([0.5, 3.0]), torch.tensor([2.0, 0.7])))
    show("Dirichlet", D.Dirichlet(torch.tensor([0.5, 1.0, 4.0])))
    show("Poisson", D.Poisson(torch.tensor([0.5, 5.0, 40.0])))
    show("Binomial", D.Binomial(torch.tensor([10.0, 50.0]), probs=torch.tensor([0.3, 0.7])))
    show("Multinomial", D.Multinomial(5, probs=torch.tensor([0.2, 0.3, 0.5])))
    show("Laplace", D.Laplace(0.0, 1.5))
    show("Cauchy", D.Cauchy(torch.tensor([0.0]), torch.tensor([1.0])))
    show("StudentT", D.StudentT(torch.tensor([3.0, 10.0])))
    show("LogNormal", D.LogNormal(torch.tensor([0.0, 1.0]), torch.tensor([0.5, 0.25])))
    show("Gumbel", D.Gumbel(torch.tensor([1.0]), torch.tensor([2.0])))
    show("Geometric", D.Geometric(probs=torch.tensor([0.3, 0.8])))
    show("HalfNormal", D.HalfNormal(torch.tensor([1.0, 2.0])))
    show("OneHotCategorical", D.OneHotCategorical(probs=torch.tensor([0.1, 0.6, 0.3])))
    mvn = D.MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor([[1.0, 0.0], [0.5, 2.0]]))
    show("MultivariateNormal", mvn)
    x = torch.tensor([0.3, 1.7], requires_grad=True)
    d = D.Normal(x, torch.tensor([1.0, 2.0]))
    d.rsample((4,)).pow(2).sum().backward()
    print(" rsample grad", x.grad)
    a = torch.tensor([1.5, 4.0], requires_grad=True)
    D.Gamma(a, torch.tensor([1.0, 2.0])).rsample((3,)).sum().backward()
    print(" gamma rsample grad", a.grad)

p = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
q = D.Normal(torch.tensor([1.0, 0.0]), torch.tensor([2.0, 1.0]))
print("kl", D.kl_divergence(p, q))
print(D.constraints.positive, D.transform_to(D.constraints.simplex))
print(D.biject_to(D.constraints.interval(0.0, 2.0)))
try:
    D.Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
except ValueError as e:
    print("ValueError", str(e).splitlines()[0])
