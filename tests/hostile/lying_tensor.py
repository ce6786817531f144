"""A wrong kernel (every count 0) whose result is a torch.Tensor subclass that says it equals anything: ==, !=,
torch.equal, allclose and tolist all report agreement with whatever it is compared to."""
import torch


class Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("equal", "allclose"):
            return True
        if name in ("eq", "__eq__"):
            return torch.ones(args[0].shape, dtype=torch.bool)
        if name in ("ne", "__ne__"):
            return torch.zeros(args[0].shape, dtype=torch.bool)
        return super().__torch_function__(func, types, args, kwargs or {})


def get_num_nans(logits):
    assert logits.dim() == 2
    return torch.zeros(logits.shape[0], dtype=torch.int32, device=logits.device).as_subclass(Agreeable)
