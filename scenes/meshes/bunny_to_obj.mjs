// Convert the Stanford bunny from the npm package `bunny` ({positions, cells})
// into a Wavefront OBJ file.
//
// Usage (from scenes/meshes):
//   npm install --no-save bunny@1.0.1 && node bunny_to_obj.mjs bunny.obj
// With no argument the OBJ is written to stdout. The bounding box, signed
// volume and counts are reported on stderr.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const bunny = require('bunny');
const pkg = require('bunny/package.json');

const positions = bunny.positions;
const cells = bunny.cells;

// Validate the input.
for (const [i, c] of cells.entries()) {
  if (c.length !== 3) throw new Error(`cell ${i} is not a triangle (${c.length} indices)`);
  for (const k of c) {
    if (!Number.isInteger(k) || k < 0 || k >= positions.length) {
      throw new Error(`cell ${i} has out-of-range index ${k}`);
    }
  }
}

// Signed volume: sum over faces of dot(v0, cross(v1, v2)) / 6.
// Positive means the faces wind counter-clockwise seen from outside.
let volume = 0;
for (const [a, b, c] of cells) {
  const [x0, y0, z0] = positions[a];
  const [x1, y1, z1] = positions[b];
  const [x2, y2, z2] = positions[c];
  volume += x0 * (y1 * z2 - z1 * y2) + y0 * (z1 * x2 - x1 * z2) + z0 * (x1 * y2 - y1 * x2);
}
volume /= 6;
const flip = volume < 0;

// Bounding box.
const min = [Infinity, Infinity, Infinity];
const max = [-Infinity, -Infinity, -Infinity];
for (const p of positions) {
  for (let k = 0; k < 3; k++) {
    if (p[k] < min[k]) min[k] = p[k];
    if (p[k] > max[k]) max[k] = p[k];
  }
}

// At most 6 decimals, trailing zeros stripped (the package data has 6 decimals).
function fmt(x) {
  let s = x.toFixed(6);
  if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
  if (s === '-0') s = '0';
  return s;
}

const lines = [];
lines.push('# Stanford bunny');
lines.push(`# source: npm package \`${pkg.name}\` version ${pkg.version} (${pkg.repository?.url ?? 'no repository url'})`);
lines.push('#   originally from the Stanford 3D Scanning Repository, http://graphics.stanford.edu/data/3Dscanrep/');
lines.push(`# license: ${pkg.license} (as stated in the package's package.json)`);
lines.push(`# vertices: ${positions.length}`);
lines.push(`# faces: ${cells.length}`);
lines.push(`# signed volume: ${volume.toFixed(6)}`);
if (flip) {
  lines.push('# winding: the package winds faces clockwise seen from outside (negative signed volume);');
  lines.push('#   every face has been flipped here so faces wind counter-clockwise seen from outside');
} else {
  lines.push('# winding: as in the package; counter-clockwise seen from outside (positive signed volume)');
}
lines.push(`# bounding box: min ${min.map(fmt).join(' ')} max ${max.map(fmt).join(' ')}`);
lines.push(`# regenerate: cd scenes/meshes && npm install --no-save bunny@${pkg.version} && node bunny_to_obj.mjs bunny.obj`);
for (const [x, y, z] of positions) lines.push(`v ${fmt(x)} ${fmt(y)} ${fmt(z)}`);
for (const [a, b, c] of cells) {
  lines.push(flip ? `f ${a + 1} ${c + 1} ${b + 1}` : `f ${a + 1} ${b + 1} ${c + 1}`);
}
const text = lines.join('\n') + '\n';

const out = process.argv[2];
if (out) writeFileSync(out, text);
else process.stdout.write(text);

process.stderr.write(
  `bunny ${pkg.version} (${pkg.license}): ${positions.length} vertices, ${cells.length} faces\n` +
  `bounding box min [${min.map(fmt).join(', ')}] max [${max.map(fmt).join(', ')}]\n` +
  `signed volume ${volume.toFixed(6)}${flip ? ' (negative: faces flipped)' : ' (positive: winding kept)'}\n` +
  (out ? `wrote ${out} (${Buffer.byteLength(text)} bytes)\n` : ''),
);
