#!/usr/bin/env python3
"""Compares two renderers' linear images of one scene, each rendered with two
seeds: A0 A1 B0 B1, as PFM files of the same size.

Prints, for the whole image and for regions of smallpt's Cornell box (given
as fractions of the image, top-left origin), both means (the channels'
average), B's difference from A in percent and in standard errors of that
difference, and the noise-normalised RMS error: the RMS of the per-pixel
difference of the means over the RMS that the sampling noise alone predicts,
estimated from each renderer's two seeds. About 1 when the images differ
only by noise. The row "without the light" leaves out the pixels whose mean
is above 1 in either image (the light and its edge, where smallpt's tent
filter over sub-pixels and wavepath's box differ by far more than noise).

    scripts/compare_images.py A0.pfm A1.pfm B0.pfm B1.pfm
"""
import array
import math
import sys

# Regions of cornell_smallpt at any size: (name, x0, y0, x1, y1).
REGIONS = [
    ("left wall", 0.02, 0.20, 0.15, 0.60),
    ("right wall", 0.85, 0.20, 0.98, 0.60),
    ("back wall", 0.35, 0.25, 0.60, 0.50),
    ("ceiling", 0.30, 0.00, 0.70, 0.07),
    ("floor", 0.35, 0.86, 0.55, 0.98),
    ("caustic", 0.64, 0.90, 0.76, 0.97),
]


def read_pfm(path):
    """(width, height, floats top row first, RGB interleaved)."""
    with open(path, "rb") as f:
        data = f.read()
    parts = data.split(b"\n", 3)
    if parts[0] != b"PF":
        sys.exit(f"{path}: not a colour PFM")
    width, height = map(int, parts[1].split())
    scale = float(parts[2])
    floats = array.array("f")
    floats.frombytes(parts[3][: width * height * 12])
    if (scale > 0) != (sys.byteorder == "big"):
        floats.byteswap()
    rows = [floats[(height - 1 - y) * width * 3 : (height - y) * width * 3] for y in range(height)]
    return width, height, [v for row in rows for v in row]


def region(width, height, x0, y0, x1, y1):
    """The channel indices of a rectangle given as fractions of the image."""
    xs = range(int(x0 * width), max(int(x0 * width) + 1, int(x1 * width)))
    ys = range(int(y0 * height), max(int(y0 * height) + 1, int(y1 * height)))
    return [3 * (y * width + x) + c for y in ys for x in xs for c in range(3)]


def main(paths):
    images = [read_pfm(p) for p in paths]
    width, height = images[0][:2]
    if any(img[:2] != (width, height) for img in images):
        sys.exit("the images differ in size")
    a0, a1, b0, b1 = (img[2] for img in images)
    whole = ("whole image", 0.0, 0.0, 1.0, 1.0)
    print(f"{'region':<17} {'pixels':>7} {'A mean':>9} {'B mean':>9} {'B - A':>8} {'in SE':>7} {'NN-RMS':>7}")
    everything = list(range(3 * width * height))
    bright = {
        3 * (i // 3) + c
        for i in everything
        if max((a0[i] + a1[i]) / 2, (b0[i] + b1[i]) / 2) > 1.0
        for c in range(3)
    }
    rows = [(name, region(width, height, x0, y0, x1, y1)) for name, x0, y0, x1, y1 in [whole] + REGIONS]
    rows.insert(1, ("without the light", [i for i in everything if i not in bright]))
    for name, idx in rows:
        ma = [(a0[i] + a1[i]) / 2 for i in idx]
        mb = [(b0[i] + b1[i]) / 2 for i in idx]
        va = sum((a0[i] - a1[i]) ** 2 / 4 for i in idx)
        vb = sum((b0[i] - b1[i]) ** 2 / 4 for i in idx)
        n = len(idx)
        mean_a, mean_b = sum(ma) / n, sum(mb) / n
        se = math.sqrt(va + vb) / n
        diff = sum((p - q) ** 2 for p, q in zip(ma, mb))
        nn = math.sqrt(diff / (va + vb)) if va + vb > 0 else float("nan")
        print(
            f"{name:<17} {n // 3:>7} {mean_a:>9.5f} {mean_b:>9.5f} "
            f"{100 * (mean_b / mean_a - 1):>+7.2f}% {(mean_b - mean_a) / se:>+7.2f} {nn:>7.3f}"
        )


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(sys.argv[1:])
