// The file-tool benchmark as an agent's client sees it: the TypeScript MCP SDK over
// stdio, the three servers started side by side and called in turn (interleaved, so
// the machine's noise falls on all of them alike), each reply checked for the right
// bytes on disk or in the text. Run by `make bench` (scripts/bench-ts); prints a
// Markdown table per mode: without a conversation id (what most agents send) and
// with the one mcpdiff handed out on the first edit. With MCPDIFF_BEFORE set to another
// mcpdiff binary (the build before a change), it runs as a fourth server, "before", in
// the same turns: a change is measured against its parent on the same noise.
//
//   node bench.mjs SDK_DIR MCPDIFF_BIN REFERENCE_BIN MARK3LABS_BIN [REPS]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";

const [sdkDir, mcpdiffBin, referenceBin, mark3labsBin, repsArg] = process.argv.slice(2);
const reps = Number(repsArg || 15);
const { Client } = await import(path.join(sdkDir, "dist/esm/client/index.js"));
const { StdioClientTransport } = await import(path.join(sdkDir, "dist/esm/client/stdio.js"));

const mcpdiff = (name, command) => ({
  name,
  command,
  args: (dir) => ["serve", "--root", dir],
  read: (p) => ["read_text_file", { path: p }],
  edit: (p, o, n) => ["edit_file", { path: p, old_string: o, new_string: n }],
  conversations: true,
});
const servers = [
  mcpdiff("mcpdiff", mcpdiffBin),
  {
    name: "reference",
    command: referenceBin,
    args: (dir) => [dir],
    read: (p) => ["read_text_file", { path: p }],
    edit: (p, o, n) => ["edit_file", { path: p, edits: [{ oldText: o, newText: n }] }],
  },
  {
    name: "mark3labs",
    command: mark3labsBin,
    args: (dir) => [dir],
    read: (p) => ["read_file", { path: p }],
    edit: (p, o, n) => ["modify_file", { path: p, find: o, replace: n }],
  },
];
if (process.env.MCPDIFF_BEFORE) servers.push(mcpdiff("before", process.env.MCPDIFF_BEFORE));

// Files: code-like lines, numbered so that most lines are unique.
function codeLines(n, from = 0) {
  const out = [];
  for (let i = from; i < from + n; i++) out.push(`\tvalue${i} := compute(ctx, "key-${i}", ${i}) // line ${i}`);
  return out;
}
function bytesOf(size) {
  const lines = [];
  let n = 0;
  for (let i = 0; n < size; i++) {
    const l = `\tvalue${i} := compute(ctx, "key-${i}", ${i}) // line ${i}`;
    lines.push(l);
    n += l.length + 1;
  }
  return lines;
}
const target = (k) => `\tbenchTarget := "version ${k}" // the line the benchmark edits`;

function setup(dir) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "small.go"), codeLines(10).join("\n") + "\n");
  fs.writeFileSync(path.join(dir, "big.go"), codeLines(10000).join("\n") + "\n");
  for (const [name, size] of [["1mb.go", 1 << 20], ["11mb.go", 11 << 20]]) {
    const lines = bytesOf(size);
    lines.splice(lines.length >> 1, 0, target(0));
    fs.writeFileSync(path.join(dir, name), lines.join("\n") + "\n");
  }
  fs.writeFileSync(path.join(dir, "shared.go"), codeLines(1000).join("\n") + "\n");
}

async function connect(srv, dir) {
  const transport = new StdioClientTransport({ command: srv.command, args: srv.args(dir), cwd: dir, stderr: "pipe" });
  const client = new Client({ name: "mcpdiff-bench", version: "1" });
  await client.connect(transport);
  return { srv, client, transport, dir, conv: "", pid: transport.pid, peak: 0 };
}

function text(res) {
  return (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

async function call(cn, [tool, args], useConv) {
  if (useConv && cn.srv.conversations && cn.conv) args = { ...args, mcp_conversation_id: cn.conv };
  const t0 = process.hrtime.bigint();
  const res = await cn.client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120000 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const out = text(res);
  if (res.isError) throw new Error(`${cn.srv.name} ${tool}: ${out}`);
  if (useConv && cn.srv.conversations && !cn.conv) {
    const m = out.match(/mcp_conversation_id: (\S+)/);
    if (m) cn.conv = m[1];
  }
  samplePeak(cn);
  return { ms, out };
}

// Peak resident memory of the server process (VmHWM), as the kernel keeps it.
function samplePeak(cn) {
  try {
    const status = fs.readFileSync(`/proc/${cn.pid}/status`, "utf8");
    const m = status.match(/VmHWM:\s+(\d+) kB/);
    if (m) cn.peak = Math.max(cn.peak, Number(m[1]) * 1024);
  } catch {}
}

// The client's own garbage is collected between the timed calls (node --expose-gc,
// scripts/bench-ts), and the edited files are checked in one buffer read into again
// and again: decoding 11 MB into a string each round grew the client's heap, and its
// collector then added 1.5 ms to the next 10,000-line read of whichever server came
// next; a fresh 11 MB Buffer each round did the same to the concurrent edits.
const collect = globalThis.gc ?? (() => {});
const scratch = Buffer.allocUnsafe(16 << 20);
function readBytes(file) {
  const fd = fs.openSync(file, "r");
  try {
    let n = 0;
    for (let got; (got = fs.readSync(fd, scratch, n, scratch.length - n, n)) > 0; ) n += got;
    if (n === scratch.length) throw new Error(`${file} is larger than the check's buffer`);
    return scratch.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

// `sync` runs in one shell started here, once, and asked for each flush: spawning it
// for each repetition forked this client, and the copy-on-write faults that followed
// (about 1,100) added some 20 ms to the next 10,000-line read of every server alike,
// which hid the servers' own times (docs/benchmarks.md).
const syncer = spawn("sh", ["-c", "while read -r _; do sync; echo; done"], { stdio: ["pipe", "pipe", "inherit"] });
const synced = [];
syncer.stdout.on("data", (d) => {
  for (let i = 0; i < d.length; i++) synced.shift()?.();
});
const syncDisks = () => new Promise((resolve) => (synced.push(resolve), syncer.stdin.write("\n")));

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const range = (xs) => [Math.min(...xs), Math.max(...xs)];

// Per run: workload → server → the times of its calls; workload → server → edits lost.
let times, lost;
const add = (row, name, ms) => ((times[row] ??= {})[name] ??= []).push(ms);

// Twenty edits of different lines of file, all sent at once; the time per edit, and
// the edits lost.
async function concurrentEdits(cn, row, file, r, useConv) {
  const lines = fs.readFileSync(file, "utf8").split("\n");
  collect();
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 20 }, (_, i) => {
      const line = lines[i * 50];
      return call(cn, cn.srv.edit(file, line, line + ` // r${r}`), useConv).catch(() => null);
    }),
  );
  add(row, cn.srv.name, Number(process.hrtime.bigint() - t0) / 1e6 / 20);
  const after = fs.readFileSync(file, "utf8");
  let miss = 0;
  for (let i = 0; i < 20; i++) if (!after.includes(lines[i * 50] + ` // r${r}\n`)) miss++;
  ((lost[row] ??= {})[cn.srv.name] ??= 0), (lost[row][cn.srv.name] += miss);
}

async function run(useConv) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "mcpdiff-bench-ts-"));
  const conns = [];
  for (const srv of servers) {
    const dir = path.join(base, srv.name);
    setup(dir);
    conns.push(await connect(srv, dir));
  }
  const small = codeLines(10);
  const big = codeLines(10000);
  times = {};
  lost = {};
  const version = {};
  for (let r = 0; r < reps; r++) {
    for (const cn of conns) {
      collect();
      const p = (f) => path.join(cn.dir, f);
      let { ms, out } = await call(cn, cn.srv.read(p("small.go")), useConv);
      if (!small.every((l) => out.includes(l.trim()))) throw new Error(`${cn.srv.name}: wrong 10-line read`);
      add("read, 10-line file", cn.srv.name, ms);
      ({ ms, out } = await call(cn, cn.srv.read(p("big.go")), useConv));
      if (!out.includes(big[9999].trim()) || !out.includes(big[0].trim())) throw new Error(`${cn.srv.name}: wrong 10,000-line read`);
      add("read, 10,000-line file", cn.srv.name, ms);
      for (const [row, f] of [["one-line edit, 1 MB", "1mb.go"], ["one-line edit, 11 MB", "11mb.go"]]) {
        const k = (version[cn.srv.name + f] ??= 0);
        ({ ms } = await call(cn, cn.srv.edit(p(f), target(k), target(k + 1)), useConv));
        version[cn.srv.name + f] = k + 1;
        const onDisk = readBytes(p(f));
        if (!onDisk.includes(target(k + 1) + "\n") || onDisk.includes(target(k) + "\n")) throw new Error(`${cn.srv.name}: the edit of ${f} did not land`);
        add(row, cn.srv.name, ms);
      }
      // 20 edits of different lines of one 1,000-line file, all sent at once: a file
      // edited in every repetition, then a fresh one the history has never seen,
      // written and flushed to disk (sync) just before.
      await concurrentEdits(cn, "20 concurrent edits, 1,000 lines", p("shared.go"), r, useConv);
      const fresh = p(`fresh${r}.go`);
      fs.writeFileSync(fresh, codeLines(1000).join("\n") + "\n");
      await syncDisks();
      await concurrentEdits(cn, "20 concurrent edits, fresh 1,000-line file", fresh, r, useConv);
    }
  }
  for (const cn of conns) {
    samplePeak(cn);
    await cn.client.close();
  }
  fs.rmSync(base, { recursive: true, force: true });
  const names = servers.map((s) => s.name);
  const fmt = (xs) => {
    const [lo, hi] = range(xs);
    return `${median(xs).toFixed(2)} ms (${lo.toFixed(1)}–${hi.toFixed(1)})`;
  };
  console.log(`\n### File tools through the TypeScript MCP SDK over stdio, ${useConv ? "with" : "without"} a conversation id (median of ${reps}, range)\n`);
  const others = names.slice(1);
  const ratios = (of) => others.map((n) => `${(of[n] / of.mcpdiff).toFixed(2)}x`).join(" | ");
  console.log(`| workload | ${names.join(" | ")} | ${others.map((n) => `${n} ÷ mcpdiff`).join(" | ")} |`);
  console.log(`|---|${names.map(() => "---|").join("")}${others.map(() => "---|").join("")}`);
  for (const [row, by] of Object.entries(times)) {
    const m = Object.fromEntries(names.map((n) => [n, median(by[n])]));
    let cells = names.map((n) => fmt(by[n]));
    if (lost[row]) cells = cells.map((c, i) => `${c}, ${lost[row][names[i]]} lost`);
    console.log(`| ${row} | ${cells.join(" | ")} | ${ratios(m)} |`);
  }
  const peaks = Object.fromEntries(conns.map((c) => [c.srv.name, c.peak / 1e6]));
  console.log(`| peak RSS | ${names.map((n) => `${peaks[n].toFixed(1)} MB`).join(" | ")} | ${ratios(peaks)} |`);
}

await run(false);
await run(true);
syncer.stdin.end();
