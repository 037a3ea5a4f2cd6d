"""``torch.autograd.anomaly_mode``: the module path of ``detect_anomaly`` and
``set_detect_anomaly`` (``anomaly.py``'s)."""

from .anomaly import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
