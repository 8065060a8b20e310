"""DDP communication hooks that average a bucket over the group, plainly or
in a 16-bit float to halve the bytes sent."""

import ember
import ember.distributed as dist
from ember.futures import Future

__all__ = [
    "allreduce_hook",
    "bf16_compress_hook",
    "bf16_compress_wrapper",
    "fp16_compress_hook",
    "fp16_compress_wrapper",
]


def _group(process_group):
    return dist.group.WORLD if process_group is None else process_group


def _average(process_group, tensor) -> Future:
    """tensor divided by the group size (first, so 16-bit sums do not overflow), then summed over the group."""
    group = _group(process_group)
    tensor.div_(dist.get_world_size(group))
    work = dist.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket: dist.GradBucket) -> Future[ember.Tensor]:
    """The bucket averaged over the group, as DDP does without a hook."""
    return _average(process_group, bucket.buffer())


def _compressed_average(dtype, process_group, bucket):
    full = bucket[0] if isinstance(bucket, tuple) else bucket.buffer()
    reduced = _average(process_group, full.to(dtype))

    def write_back(fut):
        full.copy_(fut.value())
        return full

    return reduced.then(write_back)


def fp16_compress_hook(process_group, bucket: dist.GradBucket) -> Future[ember.Tensor]:
    """The bucket averaged in float16."""
    return _compressed_average(ember.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket: dist.GradBucket) -> Future[ember.Tensor]:
    """The bucket averaged in bfloat16."""
    return _compressed_average(ember.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook, name):
    def wrapped(hook_state, bucket: dist.GradBucket) -> Future[ember.Tensor]:
        bucket.set_buffer(bucket.buffer().to(dtype))
        fut = hook(hook_state, bucket)

        def write_back(done):
            out = bucket.buffer()
            out.copy_(done.value())
            return out

        return fut.then(write_back)

    wrapped.__name__ = wrapped.__qualname__ = name
    return wrapped


def fp16_compress_wrapper(hook):
    """hook run on the bucket cast to float16, its result cast back."""
    return _compress_wrapper(ember.float16, hook, "fp16_compress_wrapper_hook")


def bf16_compress_wrapper(hook):
    """hook run on the bucket cast to bfloat16, its result cast back."""
    return _compress_wrapper(ember.bfloat16, hook, "bf16_compress_wrapper_hook")
