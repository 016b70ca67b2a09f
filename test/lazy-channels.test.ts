// Runs on: main thread (tap). Covers decision 0226: a PE builds a DMA channel when
// a kernel first uses it (lib/ipcq/channel.ts PeChannels), not the eight of its four
// directions up front; a ring step that sends east and receives from the west builds
// one of each, under every thread layout.
import t from 'tap';
import { TestRuntime } from './helpers/run.js';

const FIXTURE = new URL('./fixtures/lazy-channels.js', import.meta.url).href;
const rt = new TestRuntime({ modules: [FIXTURE] });
t.teardown(() => rt.close());

t.test('a ring step builds one outbound and one inbound channel a PE', async (t) => {
  const { lazyChannelsWorker } = await import('./fixtures/lazy-channels.js');
  for (const threads of [1, 2, 'rank'] as const) {
    const s = await rt.session({ topology: 'ideal', threads, sets: ['system.sips.count=4'] }, (torch) => torch.multiprocessing.spawn(lazyChannelsWorker, { args: [], nprocs: 4 }));
    t.same(s.value, [[1, 1], [1, 1], [1, 1], [1, 1]], `--threads ${threads}: [outbound, inbound] built on each rank's PE`);
  }
});
