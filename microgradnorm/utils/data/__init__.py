"""Datasets, samplers and the DataLoader with ``torch.utils.data``'s names and semantics: the
same seed gives the same shuffles and splits as torch's (``mg.manual_seed`` or a
``mg.Generator``)."""

from .dataloader import DataLoader, default_collate, default_convert
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, DistributedSampler, RandomSampler, Sampler,
                      SequentialSampler, SubsetRandomSampler, WeightedRandomSampler)
from .workers import WorkerInfo, get_worker_info

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate",
           "default_convert", "get_worker_info", "random_split"]
