"""Which studies split their images over GPUs themselves, for
`scripts/gpu-study pack --spread/--ranks` (its header says when): such a
study runs once, unspread.

    scripts/gpu_study_splits.py NAME...

reads experiments/NAME.toml of each NAME as TOML (tomllib, so a key is a
key however it is quoted, and a description is text, never a setting) and
prints, one a line, each NAME of which a setting `gpus` is above 1
anywhere in the config (a study's `fixed`, `per_backend` or `sweep`
table): a run of it renders one image on several GPUs. A config that
cannot be read or is not TOML exits 1 with one line naming the file, the
line and what was expected. Needs Python 3.11 or later (tomllib).
"""
import sys

from input_file import BadInput, read_text

try:
    import tomllib
except ImportError:
    sys.exit("gpu-study: pack --spread and --ranks need Python 3.11 or later (tomllib)")


def above_one(value):
    """Whether the setting's value, or one value of its sweep, is a whole
    number above 1."""
    values = value if isinstance(value, list) else [value]
    return any(isinstance(v, int) and not isinstance(v, bool) and v > 1 for v in values)


def splits(node):
    """Whether the parsed TOML `node` sets `gpus` above 1 anywhere in it."""
    if isinstance(node, dict):
        return any((key == "gpus" and above_one(value)) or splits(value) for key, value in node.items())
    if isinstance(node, list):
        return any(splits(value) for value in node)
    return False


def config(name):
    """experiments/NAME.toml, parsed."""
    path = f"experiments/{name}.toml"
    text = read_text(path, "an experiment config (TOML)")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise BadInput(f"{path}: not TOML: {e}") from None


def main(names):
    try:
        print("".join(f"{name}\n" for name in names if splits(config(name))), end="")
    except BadInput as e:
        sys.exit(f"gpu-study: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
