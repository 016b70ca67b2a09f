// Runs on: any thread. Owns: nothing — the topology file's schema and types
// live in lib/topology/schema.ts, beside the SIP topology kinds whose names and
// grid rules it checks; the loaders and the JSON Schema writer import it from here.
export * from '../topology/schema.js';
