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
A figure with nothing to divide by (a mean of 0, no noise, no pixels) is
n/a. An image that cannot be compared (missing, a FIFO or a device, not a
colour PFM, its pixels short, long or not finite, more than MAX_PIXELS) or
four images not of one size exit 1 with one line naming the file and what
was expected.

    scripts/compare_images.py A0.pfm A1.pfm B0.pfm B1.pfm
"""
import array
import math
import sys

from input_file import BadInput, read_bytes

# Regions of cornell_smallpt at any size: (name, x0, y0, x1, y1).
REGIONS = [
    ("left wall", 0.02, 0.20, 0.15, 0.60),
    ("right wall", 0.85, 0.20, 0.98, 0.60),
    ("back wall", 0.35, 0.25, 0.60, 0.50),
    ("ceiling", 0.30, 0.00, 0.70, 0.07),
    ("floor", 0.35, 0.86, 0.55, 0.98),
    ("caustic", 0.64, 0.90, 0.76, 0.97),
]
# The most pixels of an image: 2^20 (1024x1024). The comparison runs over
# every channel in Python: a second for 256x192, about 20 s at the limit.
MAX_PIXELS = 1 << 20
EXPECTED = "a colour PFM (PF, then WIDTH HEIGHT, then the scale, then the floats)"


def read_pfm(path):
    """(width, height, floats top row first, RGB interleaved)."""
    data = read_bytes(path, EXPECTED)
    parts = data.split(b"\n", 3)
    if len(parts) < 4 or parts[0] != b"PF":
        raise BadInput(f"{path}: not a colour PFM; expected {EXPECTED}")
    size = parts[1].split()
    if len(size) != 2 or not all(v.isdigit() and int(v) > 0 for v in size):
        raise BadInput(f"{path}:2: `{parts[1].decode(errors='replace')}` is not WIDTH HEIGHT; expected two whole numbers above 0")
    width, height = map(int, size)
    if width * height > MAX_PIXELS:
        raise BadInput(f"{path}:2: {width}x{height} is {width * height} pixels; at most {MAX_PIXELS} are compared")
    try:
        scale = float(parts[2])
    except ValueError:
        scale = math.nan
    if not math.isfinite(scale) or scale == 0:
        raise BadInput(f"{path}:3: scale `{parts[2].decode(errors='replace')}`; expected a number other than 0 (negative: little-endian)")
    if len(parts[3]) != width * height * 12:
        raise BadInput(f"{path}: {len(parts[3])} bytes of pixels; expected {width * height * 12} ({width}x{height}, three 4-byte floats each)")
    floats = array.array("f")
    floats.frombytes(parts[3])
    if (scale > 0) != (sys.byteorder == "big"):
        floats.byteswap()
    for i, v in enumerate(floats):
        if not math.isfinite(v):
            x, y = (i // 3) % width, height - 1 - (i // 3) // width
            raise BadInput(f"{path}: pixel ({x}, {y}) is not finite ({v}); expected linear radiance")
    top_first = array.array("f")
    for y in range(height):
        top_first.extend(floats[(height - 1 - y) * width * 3 : (height - y) * width * 3])
    return width, height, top_first


def region(width, height, x0, y0, x1, y1):
    """The channel indices of a rectangle given as fractions of the image."""
    xs = range(int(x0 * width), max(int(x0 * width) + 1, int(x1 * width)))
    ys = range(int(y0 * height), max(int(y0 * height) + 1, int(y1 * height)))
    return [3 * (y * width + x) + c for y in ys for x in xs for c in range(3)]


def figures(name, idx, a0, a1, b0, b1):
    """One row of the table: the region `name` over the channels `idx`."""
    n = len(idx)
    if n == 0:
        return f"{name:<17} {0:>7} (no pixels)"
    ma = [(a0[i] + a1[i]) / 2 for i in idx]
    mb = [(b0[i] + b1[i]) / 2 for i in idx]
    va = sum((a0[i] - a1[i]) ** 2 / 4 for i in idx)
    vb = sum((b0[i] - b1[i]) ** 2 / 4 for i in idx)
    mean_a, mean_b = sum(ma) / n, sum(mb) / n
    se = math.sqrt(va + vb) / n
    diff = sum((p - q) ** 2 for p, q in zip(ma, mb))
    change = f"{100 * (mean_b / mean_a - 1):+.2f}%" if mean_a else "n/a"
    in_se = f"{(mean_b - mean_a) / se:+.2f}" if se else "n/a"
    nn = f"{math.sqrt(diff / (va + vb)):.3f}" if va + vb > 0 else "n/a"
    return f"{name:<17} {n // 3:>7} {mean_a:>9.5f} {mean_b:>9.5f} {change:>8} {in_se:>7} {nn:>7}"


def main(paths):
    images = [read_pfm(p) for p in paths]
    width, height = images[0][:2]
    for path, image in zip(paths[1:], images[1:]):
        if image[:2] != (width, height):
            raise BadInput(f"{path} is {image[0]}x{image[1]} and {paths[0]} {width}x{height}; expected four images of one size")
    a0, a1, b0, b1 = (img[2] for img in images)
    whole = ("whole image", 0.0, 0.0, 1.0, 1.0)
    print(f"{'region':<17} {'pixels':>7} {'A mean':>9} {'B mean':>9} {'B - A':>8} {'in SE':>7} {'NN-RMS':>7}")
    everything = range(3 * width * height)
    bright = {
        3 * (i // 3) + c
        for i in everything
        if max((a0[i] + a1[i]) / 2, (b0[i] + b1[i]) / 2) > 1.0
        for c in range(3)
    }
    rows = [(name, region(width, height, x0, y0, x1, y1)) for name, x0, y0, x1, y1 in [whole] + REGIONS]
    rows.insert(1, ("without the light", [i for i in everything if i not in bright]))
    for name, idx in rows:
        print(figures(name, idx, a0, a1, b0, b1))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    try:
        main(sys.argv[1:])
    except BadInput as e:
        sys.exit(f"compare_images: {e}")
