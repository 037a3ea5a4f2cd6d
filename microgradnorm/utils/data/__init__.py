"""Datasets, samplers and the DataLoader with ``torch.utils.data``'s names and semantics: the
same seed gives the same shuffles and splits as torch's (``mg.manual_seed`` or a
``mg.Generator``)."""

from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "default_collate", "default_convert",
           "get_worker_info", "random_split"]
