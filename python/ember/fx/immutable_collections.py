"""Lists and dicts that refuse mutation: the argument containers of Nodes."""

__all__ = ["immutable_list", "immutable_dict"]


def _refuse(self, *args, **kwargs):
    raise TypeError(f"'{type(self).__name__}' object does not support mutation. {_HINT}")


_HINT = (
    "If you are attempting to modify the kwargs or args of a torch.fx.Node object,\n"
    "instead create a new copy of it and assign the copy to the node:\n"
    "    new_args = ... # copy and mutate args\n"
    "    node.args = new_args\n"
)


class immutable_list(list):
    __delitem__ = __iadd__ = __imul__ = __setitem__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(iter(self)),))


class immutable_dict(dict):
    __delitem__ = __setitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (dict(self.items()),))
