#!/usr/bin/env node
// Runs one test file (or a few) without a full build:
//   node scripts/test-file.js test/runs/lifecycle.test.ts [runs/activities/apply-host.test.ts ...]
// Every TypeScript source newer than its compiled file in dist/ is transpiled on its own
// (TypeScript's transpileModule: no type check, milliseconds per file), then the named tests run
// from dist/ through scripts/run-tests.js, as `make test` runs them. Programs the tests start
// (bin/keeper, bin/soul, the workflow bundle) load dist/ too, so they run the code just edited.
// Type errors are not reported here: `make build` (tsc) checks types, and `make test` builds first.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const ts = require('typescript');

const root = path.resolve(__dirname, '..');
const files = process.argv.slice(2);
if (files.length === 0 || files.some((f) => f === '-h' || f === '--help')) {
  console.error('usage: node scripts/test-file.js <path/to/x.test.ts> [...]   (paths from the project root)');
  process.exit(2);
}

// proto/generated/ first, so an edited .proto reaches the transpiled code as `make build` has it.
const gen = spawnSync(process.execPath, [path.join(__dirname, 'gen-proto.js')], { cwd: root, stdio: 'inherit' });
if (gen.status !== 0) process.exit(2);

const configPath = path.join(root, 'tsconfig.json');
const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
if (error) {
  console.error(`test-file: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
  process.exit(2);
}
const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root);
const outDir = parsed.options.outDir ?? path.join(root, 'dist');
const distOf = (src) => path.join(outDir, path.relative(root, src)).replace(/\.ts$/, '.js');

// The project is CommonJS (package.json has no "type": "module"), so every file is emitted as a
// CommonJS module, as tsc does with module nodenext here.
const options = { ...parsed.options, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, noEmit: false, declaration: false };
let transpiled = 0;
for (const src of parsed.fileNames) {
  if (!src.endsWith('.ts') || src.endsWith('.d.ts')) continue;
  const out = distOf(src);
  const srcTime = fs.statSync(src).mtimeMs;
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs >= srcTime) continue;
  const r = ts.transpileModule(fs.readFileSync(src, 'utf8'), { compilerOptions: options, fileName: src, reportDiagnostics: true });
  const syntax = (r.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (syntax.length > 0) {
    for (const d of syntax) {
      const pos = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      console.error(`${path.relative(root, src)}${pos ? `:${pos.line + 1}:${pos.character + 1}` : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    }
    process.exit(2);
  }
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, r.outputText);
  if (r.sourceMapText) fs.writeFileSync(`${out}.map`, r.sourceMapText);
  transpiled++;
}
console.error(`test-file: transpiled ${transpiled} changed file(s) into ${path.relative(root, outDir)}/ (no type check: make build does that)`);

const targets = files.map((f) => {
  const abs = path.resolve(root, f);
  if (!fs.existsSync(abs)) {
    console.error(`test-file: ${f} does not exist`);
    process.exit(2);
  }
  return path.relative(root, abs.endsWith('.ts') ? distOf(abs) : abs);
});
const r = spawnSync(process.execPath, [path.join(__dirname, 'run-tests.js'), ...targets], { cwd: root, stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
