// Runs on: main thread (tap). Covers: how benches/sim/instruction-split.ts reads a
// thread's callgrind_annotate list: each function's instructions to its kind (the first
// kind whose pattern matches its name), what the list leaves out to the rest, and which
// threads are the executors'. The counts themselves need valgrind and minutes; this is
// the arithmetic a figure in docs/benchmarks.md rests on.
import t from 'tap';
import { executorFiles, KINDS, REST, splitByKind } from '../benches/sim/instruction-split.js';

const LIST = `--------------------------------------------------------------------------------
Profiled target:  node --predictable dist/benches/sim/ring-rounds.js 512 1 1 (PID 23376, part 1, thread 12)
Events recorded:  Ir
Thresholds:       100
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
1,000,000 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                    file:function
--------------------------------------------------------------------------------
300,000 (30.00%)  ???:0x00000002d8d5da80 [???]
200,000 (20.00%)  ???:heap::base::SlotCallbackResult v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>(v8::internal::FullHeapObjectSlot) [/usr/bin/node]
150,000 (15.00%)  ???:v8::internal::compiler::GraphReducer::ReduceTop() [/usr/bin/node]
100,000 (10.00%)  ???:void v8::internal::MarkingVisitorBase<v8::internal::MainMarkingVisitor<v8::internal::MarkingState>> [/usr/bin/node]
 50,000 ( 5.00%)  ???:Builtins_AtomicsLoad [/usr/bin/node]
 40,000 ( 4.00%)  ???:Builtins_PromisePrototypeThen [/usr/bin/node]
 30,000 ( 3.00%)  ???:Builtins_RecordWriteSaveFP [/usr/bin/node]
 20,000 ( 2.00%)  ???:v8::internal::Sweeper::RawSweep(v8::internal::Page*) [/usr/bin/node]
 10,000 ( 1.00%)  ???:v8::internal::Scanner::Next() [/usr/bin/node]
  5,000 ( 0.50%)  ???:v8::internal::compiler::NodeMarkerBase::NodeMarkerBase(v8::internal::compiler::Graph*, unsigned int) [/usr/bin/node]
  4,000 ( 0.40%)  ???:unsigned short const* std::find_if<unsigned short const*, v8::internal::Utf16CharacterStream::Something> [/usr/bin/node]
  3,000 ( 0.30%)  ???:v8::internal::Serializer::ObjectSerializer::VisitPointers(v8::internal::HeapObject) [/usr/bin/node]
  2,000 ( 0.20%)  ???:int v8::internal::Deserializer<v8::internal::Isolate>::ReadSingleBytecodeData(unsigned char) [/usr/bin/node]
  1,000 ( 0.10%)  ???:v8::internal::interpreter::BytecodeArrayIterator::SetOffset(int) [/usr/bin/node]
    500 ( 0.05%)  ???:v8::internal::ValueSerializer::WriteObject(v8::internal::Handle<v8::internal::Object>) [/usr/bin/node]
`;

t.test('a thread list splits by kind, and what it leaves out is the rest', async (t) => {
  const k = splitByKind(LIST);
  t.equal(k.get('total'), 1_000_000);
  t.equal(k.get('compiler'), 175_000, "the optimising compiler, the scanner and its UTF-16 search, the code cache's serializers, the bytecode iterator (a compiler's 'Marker' is the compiler's: the first kind wins)");
  t.equal(k.get('young collection'), 200_000);
  t.equal(k.get('old collection'), 120_000, 'marking and sweeping');
  t.equal(k.get('write barrier'), 30_000);
  t.equal(k.get('atomics builtins'), 50_000);
  t.equal(k.get('promise builtins'), 40_000);
  // The JIT address listed, a message's ValueSerializer (not the compiler's), and the 84 500 under the list's threshold.
  t.equal(k.get(REST), 385_000);
  const sum = [...KINDS.map(([x]) => x), REST].reduce((a, x) => a + (k.get(x) ?? 0), 0);
  t.equal(sum, 1_000_000, 'the kinds and the rest add up to the total');
});

t.test('a list with nothing but its total is all rest', async (t) => {
  const k = splitByKind('5,000 (100.0%)  PROGRAM TOTALS\n');
  t.equal(k.get('total'), 5000);
  t.equal(k.get(REST), 5000);
  t.equal(k.get('compiler'), 0);
});

t.test('the executors are the largest threads but main', async (t) => {
  const files = [
    { name: 'r1.out-01', total: 9e9 },
    { name: 'r1.out-12', total: 3e9 },
    { name: 'r1.out-13', total: 4e9 },
    { name: 'r1.out-14', total: 1e9 },
  ];
  t.same(executorFiles(files, 1), ['r1.out-13']);
  t.same(executorFiles(files, 2), ['r1.out-13', 'r1.out-12']);
  t.same(executorFiles(files, 3), ['r1.out-13', 'r1.out-12', 'r1.out-14']);
});
