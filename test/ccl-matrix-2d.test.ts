// The all-reduce correctness matrix's points on the 2-D topology files (torus_2d_2x3,
// torus_2d_3x2, mesh_2d_2x3; six ranks), every buffer kind and dtype under
// --threads 1: test/helpers/ccl-matrix.ts says what a point checks, and
// test/ccl-matrix.test.ts runs the rest of the matrix in another group.
import t from 'tap';
import { points, testPoint } from './helpers/ccl-matrix.js';
import { TestRuntime } from './helpers/run.js';

const rt = new TestRuntime();
t.teardown(() => rt.close());

for (const p of points.filter((p) => p.topology !== 'ring_1d_6')) testPoint(t, rt, p);
