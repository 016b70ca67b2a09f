#!/usr/bin/env node
// Runs on: main. The installed command: runs the compiled CLI (npm ci builds it
// through the `prepare` script).
import { cli } from '../dist/bin/cli.js';

await cli(process.argv.slice(2));
