// perfetto_query.js - loads a trace into Perfetto's trace processor and prints what SQL
// queries return, one JSON line per query: {"columns": [...], "rows": [[...], ...],
// "error": "..."}. The trace processor is the one Perfetto's UI runs (its WebAssembly
// engine, engine_bundle.js beside trace_processor.wasm), run here under node as the web
// worker it was built for; requests and replies are its RPC protocol
// (protos/perfetto/trace_processor/trace_processor.proto), encoded by hand below.
//
// usage: node perfetto_query.js ENGINE_DIR TRACE.json "SQL" ["SQL" ...]
'use strict';
const fs = require('fs'), path = require('path'), vm = require('vm');
const [dir, tracePath, ...queries] = process.argv.slice(2);

// ---- the engine, as a web worker sees the world ----
globalThis.self = globalThis;
globalThis.WorkerGlobalScope = function () {};
globalThis.location = { href: 'file://' + dir + '/engine_bundle.js', protocol: 'file:', host: '' };
globalThis.XMLHttpRequest = class { // the worker fetches its .wasm synchronously
  open(method, url) { this.url = url; }
  send() {
    const b = fs.readFileSync(path.join(dir, String(this.url).split('/').pop()));
    this.response = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    this.status = 200;
  }
};
const proc = process;
globalThis.process = undefined; // else Emscripten's glue takes this for node and refuses
const quiet = console.warn;
console.warn = () => {}; // its unsupported-syscall notes
vm.runInThisContext(fs.readFileSync(path.join(dir, 'engine_bundle.js'), 'utf8'));
globalThis.process = proc;

// ---- protobuf, the little the RPC needs ----
function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}
function field(num, wire, payload) { // payload: bytes for wire 2, a number for wire 0
  const key = varint((num << 3) | wire);
  if (wire === 0) return [...key, ...varint(payload)];
  return [...key, ...varint(payload.length), ...payload];
}
let seq = 0;
function rpc(method, argField, argBytes) { // one TraceProcessorRpc, framed as stream field 1
  let msg = [...field(1, 0, seq++), ...field(2, 0, method)];
  if (argField) msg = msg.concat(field(argField, 2, argBytes));
  return Uint8Array.from(field(1, 2, msg));
}
function* fields(buf) { // (number, wire, value) of one message
  let i = 0;
  const readVarint = () => {
    let v = 0n, shift = 0n;
    for (;;) {
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if (!(b & 0x80)) return v;
    }
  };
  while (i < buf.length) {
    const key = Number(readVarint()), num = key >> 3, wire = key & 7;
    if (wire === 0) yield [num, wire, readVarint()];
    else if (wire === 1) { yield [num, wire, buf.slice(i, i + 8)]; i += 8; }
    else if (wire === 2) { const n = Number(readVarint()); yield [num, wire, buf.slice(i, i + n)]; i += n; }
    else if (wire === 5) { yield [num, wire, buf.slice(i, i + 4)]; i += 4; }
    else throw new Error('wire type ' + wire);
  }
}
function unpackVarints(b) {
  const out = [];
  let i = 0;
  while (i < b.length) {
    let v = 0n, shift = 0n, c;
    do { c = b[i++]; v |= BigInt(c & 0x7f) << shift; shift += 7n; } while (c & 0x80);
    out.push(BigInt.asIntN(64, v));
  }
  return out;
}
const text = (b) => new TextDecoder().decode(b);

// ---- talking to it ----
const replies = [];
const port = { postMessage: (bytes) => replies.push(bytes) };
function send(bytes) {
  port.onmessage({ data: bytes });
}
function messages() { // every TraceProcessorRpc replied so far
  const all = [];
  for (const r of replies.splice(0)) for (const [num, , v] of fields(r)) if (num === 1) all.push(v);
  return all;
}
function queryResult(msgs) {
  const res = { columns: [], rows: [], error: null };
  const cells = [];
  for (const m of msgs)
    for (const [num, , v] of fields(m)) {
      if (num === 5) res.error = text(v); // fatal_error
      if (num !== 203) continue;
      for (const [qn, , qv] of fields(v)) {
        if (qn === 1) res.columns.push(text(qv));
        else if (qn === 2 && qv.length) res.error = text(qv);
        else if (qn === 3) {
          let types = [], ints = [], floats = [], strings = [];
          for (const [bn, bw, bv] of fields(qv)) {
            if (bn === 1) types = bw === 2 ? unpackVarints(bv).map(Number) : [Number(bv)];
            else if (bn === 2) ints = bw === 2 ? unpackVarints(bv) : [BigInt.asIntN(64, bv)];
            else if (bn === 3) for (let k = 0; k + 8 <= bv.length; k += 8) floats.push(new DataView(bv.buffer, bv.byteOffset + k, 8).getFloat64(0, true));
            else if (bn === 5) strings = text(bv).split('\0');
          }
          let a = 0, b = 0, c = 0;
          for (const t of types) cells.push(t === 1 ? null : t === 2 ? Number(ints[a++]) : t === 3 ? floats[b++] : t === 4 ? strings[c++] : '?');
        }
      }
    }
  const n = res.columns.length || 1;
  for (let k = 0; k < cells.length; k += n) res.rows.push(cells.slice(k, k + n));
  return res;
}

function run() {
  self.onmessage({ data: port });
  const trace = fs.readFileSync(tracePath);
  send(rpc(1, 101, [...trace])); // TPM_APPEND_TRACE_DATA
  for (const m of messages())
    for (const [num, , v] of fields(m))
      if (num === 201)
        for (const [an, , av] of fields(v))
          if (an === 2 && av.length) console.log(JSON.stringify({ load_error: text(av) }));
  send(rpc(2)); // TPM_FINALIZE_TRACE_DATA
  messages();
  for (const q of queries) {
    send(rpc(3, 103, [...field(1, 2, [...new TextEncoder().encode(q)])])); // TPM_QUERY_STREAMING
    console.log(JSON.stringify(queryResult(messages())));
  }
  console.warn = quiet;
}

// the engine instantiates its wasm synchronously and sets up its RPC in a promise's
// continuation: a timer runs after it
setTimeout(() => {
  try {
    run();
  } catch (e) {
    console.warn = quiet;
    console.error(String((e && e.stack) || e));
    proc.exitCode = 1;
  }
}, 0);
