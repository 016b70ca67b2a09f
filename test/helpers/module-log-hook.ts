// Runs on: the module hooks thread of a Worker that registered it (test/isolate-startup.test.ts).
// Owns: telling that Worker the URL of every module its isolate loads, in load
// order, through the port it was given; a 'flush' on the port is answered after
// every URL before it, so the Worker knows it has them all.
import type { MessagePort } from 'node:worker_threads';

let port: MessagePort | undefined;

export function initialize(data: { port: MessagePort }): void {
  port = data.port;
  port.on('message', () => port?.postMessage({ flushed: true }));
  port.unref();
}

type Next = (url: string, context: unknown) => Promise<unknown>;

export async function load(url: string, context: unknown, next: Next): Promise<unknown> {
  port?.postMessage(url);
  return next(url, context);
}
