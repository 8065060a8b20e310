"""ember.utils.model_zoo: the older home of load_url (and of tqdm, which torchvision imports from here)."""

from ember.hub import load_state_dict_from_url as load_url
from ember.hub import tqdm

__all__ = ["load_url", "tqdm"]
