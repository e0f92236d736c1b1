"""Learning-curve PNGs for the README (matplotlib is only needed here)."""


def plot_curves(curves, path, title, ylabel="greedy eval return", xlabel="minutes", hline=None, hline_label=None):
    """curves: {label: [(x, y), ...]}; hline: a dashed reference level (e.g. the uniform-random policy's return)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    many = len(curves) > 6  # the legend goes beside the axes, where it hides no curve
    fig, ax = plt.subplots(figsize=(9.5, 4.2) if many else (6, 3.6), dpi=120)
    if len(curves) > 10:  # the default cycle repeats its 10 colors
        ax.set_prop_cycle(color=plt.cm.tab20.colors)
    for label, pts in curves.items():
        if pts:
            # a run that stopped at its first eval has one point: a marker, or it would not show
            ax.plot(
                [p[0] for p in pts], [p[1] for p in pts], label=label, lw=1.5, marker="o" if len(pts) == 1 else None
            )
    if hline is not None:
        ax.axhline(hline, color="gray", ls="--", lw=1, label=hline_label)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1)) if many else ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
