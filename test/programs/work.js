// work.js - test_real_programs.py's node case: three worker threads each
// build 100,000 small objects and a Map while the main thread builds its
// own; prints what each made.  node links V8 with its code in several
// executable segments and debug information for libuv's objects only.
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

function build(n, tag) {
  const m = new Map();
  for (let i = 0; i < n; i++) m.set(tag + i, { k: 'x'.repeat(i % 40), i });
  let sum = 0;
  for (const v of m.values()) sum += v.i + v.k.length;
  return sum;
}

if (isMainThread) {
  const results = [build(50000, 'main')];
  let done = 0;
  for (let w = 0; w < 3; w++) {
    const worker = new Worker(__filename, { workerData: w });
    worker.on('message', (v) => {
      results.push(v);
      if (++done === 3) console.log(results.sort((a, b) => a - b).join(' '));
    });
  }
} else {
  parentPort.postMessage(build(100000, 'w' + workerData));
}
