import torch

mp = torch.multiprocessing
torch.set_num_threads(1)  # the processes below are forked


def worker(inbox, outbox, done):
    while True:
        item = inbox.get()
        if item is None:
            break
        kind, value = item
        if kind == "add":
            value.add_(1)  # the sender sees this: same memory
            outbox.put(("added", value.is_shared()))
        elif kind == "views":
            a, b = value
            a[0] = 100.0  # a and b view one storage
            outbox.put(("views", b.tolist(), a.storage_offset(), b.stride()))
        elif kind == "module":
            with torch.no_grad():
                for p in value.parameters():
                    p.mul_(2)
            outbox.put(("module", [type(p).__name__ for p in value.parameters()], value.weight.requires_grad))
        elif kind == "grad":
            outbox.put(("grad", value.requires_grad, value.is_leaf, value.grad))
        elif kind == "make":
            t = torch.arange(6, dtype=torch.float64).view(2, 3) * value
            outbox.put(("made", t))
        elif kind == "storage":
            value[0] = 7
            outbox.put(("storage", value.is_shared()))
    done.wait(30)


def run(strategy):
    mp.set_sharing_strategy(strategy)
    print("strategy:", mp.get_sharing_strategy())
    ctx = mp.get_context("fork")
    inbox, outbox, done = ctx.Queue(), ctx.Queue(), ctx.Event()
    p = ctx.Process(target=worker, args=(inbox, outbox, done))
    p.start()

    t = torch.zeros(2, 3)
    print("before send:", t.is_shared())
    inbox.put(("add", t))
    print(outbox.get(timeout=30))
    print(t, t.is_shared())

    base = torch.arange(8.0)
    inbox.put(("views", (base[1:5], base[::2])))
    print(outbox.get(timeout=30))
    print(base)

    model = torch.nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.copy_(torch.arange(6.0).view(2, 3))
        model.bias.fill_(0.5)
    model.share_memory()
    print("module shared:", [p.is_shared() for p in model.parameters()])
    inbox.put(("module", model))
    print(outbox.get(timeout=30))
    print(model.weight, model.bias)

    leaf = torch.ones(3, requires_grad=True)
    inbox.put(("grad", leaf))
    print(outbox.get(timeout=30))
    try:
        inbox._writer.send  # noqa: B018
        from multiprocessing.reduction import ForkingPickler

        ForkingPickler.dumps(leaf * 2)
    except RuntimeError as e:
        print("RuntimeError:", e)

    inbox.put(("make", 3))
    kind, made = outbox.get(timeout=30)
    print(kind, made, made.dtype, made.is_shared())

    storage = torch.zeros(4, dtype=torch.uint8).untyped_storage()
    storage.share_memory_()
    inbox.put(("storage", storage))
    print(outbox.get(timeout=30), storage.tolist())

    inbox.put(None)
    done.set()
    p.join(30)
    print("exit code:", p.exitcode)


def square(x):
    return x * x


if __name__ == "__main__":
    for strategy in sorted(mp.get_all_sharing_strategies()):
        run(strategy)
    mp.set_sharing_strategy("file_descriptor")
    with mp.get_context("fork").Pool(2) as pool:
        print(pool.map(square, [torch.tensor([1.0, 2.0]), torch.tensor([3.0])]))
    a, b = mp.Pipe()
    shared = torch.full((2,), 5.0)
    a.send(shared)
    got = b.recv()
    got += 1
    print(shared, got.is_shared())
    try:
        mp.set_sharing_strategy("nope")
    except AssertionError as e:
        print("AssertionError:", str(e).split(",")[0])
