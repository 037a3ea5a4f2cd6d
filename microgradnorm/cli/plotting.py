"""matplotlib, if it is installed (``pip install "microgradnorm[plot]"``), for the examples.

The package never needs it: ``pyplot()`` returns None and says how to install it.
"""

import os

INSTALL_HINT = 'plots skipped: matplotlib is not installed (pip install "microgradnorm[plot]")'


def pyplot():
    """``matplotlib.pyplot`` with the file-only Agg backend, or None (printing one line)."""
    try:
        import matplotlib
    except ImportError:
        print(INSTALL_HINT)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, out_dir, name):
    """Write ``fig`` to ``out_dir/name``, print where, close it; returns the path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    print(f"wrote {path}")
    return path
